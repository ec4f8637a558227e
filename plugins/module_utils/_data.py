# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plain data: the one place that turns Ansible's tagged and lazy values into builtin types."""

from __future__ import annotations

import json


# A string holding one of these may be a template that Ansible renders when the value is read.
_TEMPLATE_MARKS = ("{{", "{%", "{#")


class _HoldsTemplate(Exception):
    pass


def plain(value):
    """Deep copy as builtin types (Ansible 2.19's tagged and lazy values become dict/list/str/int/float)."""
    stored = _stored_values(value)
    return stored if stored is not _NOT_STORED else _copy(value, stored=False)


_NOT_STORED = object()


def _stored_values(value):
    """A lazy container's stored values as builtin types, read without templating; _NOT_STORED when `value` is no
    lazy container or a string under it may be a template (then every value is read through the templar).

    ansible-core 2.19 hands a filter its variables as lazy containers that run each value through the templar as
    it is read, about 10 us a value: a filter reading 256 node objects or 8,000 checks spent seconds there
    (ansible/ansible#86881; docs/performance.md). Values that hold no template render to themselves, so their
    stored copy (`_non_lazy_copy`, ansible-core 2.19 `_internal/_templating/_lazy_containers.py`) is the same
    data, read 50 to 100 times faster. A version without that method takes the templated path."""
    copy = getattr(value, "_non_lazy_copy", None)
    if not callable(copy):
        return _NOT_STORED
    try:
        return _copy(copy(), stored=True)
    except _HoldsTemplate:
        return _NOT_STORED


def _copy(value, stored):
    """`value` as builtin types. stored: `value` was read from a lazy container's storage without templating, so a
    string that may be a template, or an object only the templar knows (a marker of an undefined value), raises
    _HoldsTemplate, and a nested lazy container is read from its storage too."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        if stored and "{" in value and any(mark in value for mark in _TEMPLATE_MARKS):
            raise _HoldsTemplate()
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    nested = getattr(value, "_non_lazy_copy", None) if stored else None
    if callable(nested):
        value = nested()
    if isinstance(value, dict) or hasattr(value, "items"):
        return dict((str(k), _copy(v, stored)) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_copy(v, stored) for v in value]
    if stored:
        raise _HoldsTemplate()
    return str(value)


def compact_json(value):
    """Builtin `value` as compact JSON text (no spaces, UTF-8 kept): the one form the collection hands large data
    over in (json_text here; a probe's outcomes, workloads/_probe_pods.outcomes_text)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def json_text(value):
    """`value` as compact JSON text, read as plain() reads it.

    Why: ansible-core 2.19 finalizes a list or dict that a template gives a task's argument value by value (about
    0.5 s of the controller's CPU for a level's 8,196 checks over 256 nodes, measured), and its to_json filter walks
    the value in Python as well; one string it passes as it is (0.06 s in all, this included)."""
    return compact_json(plain(value))
