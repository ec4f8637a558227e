# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""YAML documents with the line and column of every key and item, so a finding can say file:line:column.

Anchors, aliases and merge keys (``<<: *defaults``) are resolved by PyYAML's own constructor before any
rule runs; a value that comes from an alias or a merge points at the line where it is written (the anchor).
PyYAML is imported when first needed (Python 3.8 syntax).
"""

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import LintError


def _yaml():
    try:
        import yaml
    except ImportError:
        raise LintError("PyYAML is needed to read YAML files")
    return yaml


def _text_mark(node, path, marks):
    """path + ('<text>',): the line of the first line of a literal block scalar (`|`), whose lines map one to one
    to the file's (an inline script's line N is on file line <text> + N - 1); other styles fold lines."""
    if getattr(node, "style", None) == "|":
        marks.setdefault(path + ("<text>",), (node.start_mark.line + 2, 0))


def _walk(node, path, marks, active):
    yaml = _yaml()
    if id(node) in active:  # a recursive alias: its own lines are already recorded
        return
    active = active | {id(node)}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key.value)
            sub = path + (str(name),)
            marks.setdefault(sub, (key.start_mark.line + 1, key.start_mark.column + 1))
            marks.setdefault(sub + ("<value>",), (value.start_mark.line + 1, value.start_mark.column + 1))
            _text_mark(value, sub, marks)
            _walk(value, sub, marks, active)
    elif isinstance(node, yaml.SequenceNode):
        for index, value in enumerate(node.value):
            sub = path + (index,)
            marks.setdefault(sub, (value.start_mark.line + 1, value.start_mark.column + 1))
            _text_mark(value, sub, marks)
            _walk(value, sub, marks, active)


def load_all(text, where=""):
    """[(document, marks, first_line)] of a YAML stream. marks maps a path (keys as str, indexes as int)
    to (line, column) of its key (or item); path + ('<value>',) to where its value starts."""
    yaml = _yaml()
    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_cls(text)
    out = []
    try:
        while loader.check_node():
            node = loader.get_node()
            data = loader.construct_document(node)  # resolves aliases, flattens merge keys in the node tree
            marks = {}
            _walk(node, (), marks, frozenset())
            out.append((data, marks, node.start_mark.line + 1))
    except yaml.YAMLError as exc:
        raise LintError("%s is not valid YAML: %s" % (where or "the text", str(exc).replace("\n", " ")))
    finally:
        loader.dispose()
    return out


def load_plain(text, where=""):
    """The documents only (yaml.safe_load_all with the same errors as load_all)."""
    return [doc for doc, _marks, _line in load_all(text, where)]


def line_of(marks, path, first_line=1):
    """(line, column) of the deepest part of `path` that has a mark; (first_line, 0) when none has."""
    path = tuple(str(p) if not isinstance(p, int) else p for p in path)
    while path:
        if path in marks:
            return marks[path]
        path = path[:-1]
    return first_line, 0
