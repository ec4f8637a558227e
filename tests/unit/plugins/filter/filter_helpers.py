# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers (not a conftest: module names must stay unique across test folders) for the filter plugin tests."""

from __future__ import annotations

from ansible.template import trust_as_template


def tagged(value):
    """The value as Ansible 2.19 hands it to a filter: every string tagged (a str subclass)."""
    if isinstance(value, dict):
        return {trust_as_template(k): tagged(v) for k, v in value.items()}
    if isinstance(value, list):
        return [tagged(v) for v in value]
    if isinstance(value, tuple):
        return tuple(tagged(v) for v in value)
    if isinstance(value, str):
        return trust_as_template(value)
    return value
