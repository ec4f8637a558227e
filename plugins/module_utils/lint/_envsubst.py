# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Render ``${VAR}`` placeholders as ``envsubst < file | kubectl apply -f -`` would, with the user's values.

Semantics:

* ``$NAME`` and ``${NAME}`` (GNU gettext ``envsubst``); names are ``[A-Za-z_][A-Za-z0-9_]*``.
* The shell's default forms that a8m/envsubst (the tool aws-samples/awsome-distributed-training's
  READMEs install) also understands: ``${NAME:-word}`` (unset or empty), ``${NAME-word}`` (unset),
  ``${NAME:=word}``, ``${NAME=word}``, ``${NAME:+word}``, ``${NAME+word}``.
* Restricted form, ``envsubst '${A} ${B}'``: only the variables named are replaced, every other ``$X``
  is left as it is (and is not reported), exactly as GNU envsubst's SHELL-FORMAT argument does.
* A placeholder whose variable has no value (and no default) is left in the text, so the rules still
  show what is there, and is reported once per variable with every line that uses it (envsubst itself
  would write an empty string there).

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import re

from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import LintError

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PLACEHOLDER = re.compile(r"\$(?:\{(?P<braced>%s)(?:(?P<op>:?[-=+])(?P<word>[^}]*))?\}|(?P<bare>%s))" % (_NAME, _NAME))
_SHELL_FORMAT = re.compile(r"\$\{?(%s)\}?" % _NAME)


def shell_format_names(spec):
    """The variable names of a restriction: a list of names, or the SHELL-FORMAT text of
    ``envsubst '${A} ${B}'`` ('$A,$B' and 'A B' work too). None or '' means unrestricted (None)."""
    if spec is None:
        return None
    if isinstance(spec, (list, tuple)):
        names = []
        for item in spec:
            names.extend(shell_format_names(str(item)) or [])
        return names or None
    text = str(spec).strip()
    if not text:
        return None
    names = _SHELL_FORMAT.findall(text)
    if not names:
        names = [n for n in re.split(r"[\s,]+", text) if n]
    bad = [n for n in names if not re.match("^%s$" % _NAME, n)]
    if bad:
        raise LintError("envsubst variables %s are not variable names" % ", ".join(bad))
    return names


def merged_values(environ=None, file_values=None, values=None):
    """The values of a render, weakest first: the exported environment (what the user's own
    ``envsubst`` sees), then the values file (--values), then the values given by name (--set)."""
    out = dict((str(k), str(v)) for k, v in (environ or {}).items())
    out.update(file_values or {})
    out.update(dict((str(k), v) for k, v in (values or {}).items()))
    return out


def placeholders(text):
    """Names of the variables a text uses, in order of first use."""
    seen = []
    for match in _PLACEHOLDER.finditer(str(text)):
        name = match.group("braced") or match.group("bare")
        if name not in seen:
            seen.append(name)
    return seen


def substitute(text, values, only=None, comment_prefix="#"):
    """(rendered text, unset) where unset is {NAME: [line, ...]} of the placeholders left as they were
    because the variable has no value. values: {NAME: value}; only: names of the restricted form.
    Placeholders on comment lines (first non-blank character comment_prefix) are replaced too, as envsubst
    does, but an unset one there is not reported: it has no effect."""
    values = dict((str(k), "" if v is None else str(v)) for k, v in (values or {}).items())
    allowed = set(only) if only else None
    unset = {}
    text = str(text)
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_at(offset):
        low, high = 0, len(line_starts) - 1
        while low < high:
            mid = (low + high + 1) // 2
            if line_starts[mid] <= offset:
                low = mid
            else:
                high = mid - 1
        return low + 1

    def replace(match):
        name = match.group("braced") or match.group("bare")
        if allowed is not None and name not in allowed:
            return match.group(0)
        op, word = match.group("op"), match.group("word") or ""
        has = name in values
        value = values.get(name, "")
        if op in (":-", ":="):
            return value if has and value != "" else word
        if op in ("-", "="):
            return value if has else word
        if op == ":+":
            return word if has and value != "" else ""
        if op == "+":
            return word if has else ""
        if has:
            return value
        line = line_at(match.start())
        if comment_prefix and text[line_starts[line - 1]:match.start()].lstrip().startswith(comment_prefix):
            return match.group(0)
        lines = unset.setdefault(name, [])
        if line not in lines:
            lines.append(line)
        return match.group(0)

    return _PLACEHOLDER.sub(replace, text), unset
