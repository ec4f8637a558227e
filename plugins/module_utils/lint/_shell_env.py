# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read a ``.env`` file (or the assignments of a script) the way the shell would, without running anything.

What is read (issue 31): ``NAME=value``, ``export NAME=value``, ``readonly``/``declare [-x]``/``local`` forms,
several assignments on one line, ``#`` comments, ``'single'`` quotes (literal), ``"double"`` quotes and bare
words with ``$A``, ``${A}``, ``${A:-word}``, ``${A-word}``, ``${A:=word}``, ``${A=word}``, ``${A:+word}``,
``${A+word}`` expanded from the values read so far (the caller's environment first, as the shell starts with
it). What is not run: commands (``$(...)``, backquotes, ``$((...))``), other parameter forms (``${A%x}``,
``${#A}``), and every line inside ``if``/``case``/loops/functions: a name they assign is **unknown** (with the
reason), never a missing value. A value built from a variable without a value is left out (the variable it
needs is named), so the manifest reports that name rather than a half value.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import re

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ASSIGN = re.compile(r"(%s)=" % _NAME)
_PREFIX = re.compile(r"^(?:export|readonly|local|declare(?:\s+-[A-Za-z]+)*|typeset(?:\s+-[A-Za-z]+)*)\s+")
_OPENERS = re.compile(r"^(?:if|case|for|while|until|select)\b|^(?:function\s+)?%s\s*\(\s*\)\s*\{?\s*$|^function\s+%s"
                      % (_NAME, _NAME))
_CLOSERS = re.compile(r"^(?:fi|esac|done|\})\s*(?:[;&|#].*)?$")
_PARAM = re.compile(r"\$\{(?P<name>%s)(?:(?P<op>:?[-=+])(?P<word>[^}]*))?\}|\$(?P<bare>%s)" % (_NAME, _NAME))


class _Unknown(Exception):
    """A value that needs a command or a form not read here (the reason)."""


class _Missing(Exception):
    """A value built from a variable without a value (its name)."""


def _expand(text, env, unknown):
    """The text with its parameters expanded (double-quote or bare-word rules)."""
    if re.search(r"\$\(|`", text):
        raise _Unknown("it runs a command (%s)" % text.strip()[:60])
    out, pos = [], 0
    for match in re.finditer(r"\$\{[^}]*\}|\$%s|\$." % _NAME, text):
        out.append(text[pos:match.start()])
        pos = match.end()
        part = _PARAM.fullmatch(match.group(0))
        if not part:
            if match.group(0) in ("$$", "$?", "$!", "$#", "$@", "$*", "$-") or match.group(0)[1:].isdigit():
                raise _Unknown("it uses %s, known only when the shell runs" % match.group(0))
            if match.group(0).startswith("${"):
                raise _Unknown("%s is not read by local mode" % match.group(0))
            out.append(match.group(0))
            continue
        name = part.group("name") or part.group("bare")
        if name in unknown:
            raise _Unknown("it uses %s, whose value is unknown" % name)
        op, word = part.group("op"), part.group("word") or ""
        has, value = name in env, env.get(name, "")
        if op in (":-", ":="):
            value = value if has and value != "" else _expand(word, env, unknown)
        elif op in ("-", "="):
            value = value if has else _expand(word, env, unknown)
        elif op == ":+":
            value = _expand(word, env, unknown) if has and value != "" else ""
        elif op == "+":
            value = _expand(word, env, unknown) if has else ""
        elif not has:
            raise _Missing(name)
        if op in (":=", "=") and not (has and (value != "" or op == "=")):
            env[name] = value
        out.append(value)
    out.append(text[pos:])
    return "".join(out)


def _word(text, pos, env, unknown):
    """(value, end) of one shell word starting at pos (quotes joined, stops at blank, ; & | or #)."""
    out = []
    while pos < len(text):
        char = text[pos]
        if char in " \t;&|":
            break
        if char == "'":
            end = text.find("'", pos + 1)
            if end < 0:
                raise _Unknown("an unclosed quote")
            out.append(text[pos + 1:end])
            pos = end + 1
        elif char == '"':
            end = pos + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                raise _Unknown("an unclosed quote")
            out.append(_expand(re.sub(r'\\([$`"\\])', r"\1", text[pos + 1:end]), env, unknown))
            pos = end + 1
        elif char == "\\" and pos + 1 < len(text):
            out.append(text[pos + 1])
            pos += 2
        else:
            match = re.match(r"""(?:\$\{[^}]*\}|\$\([^)]*\)|[^\s;&|'"\\])+""", text[pos:])
            out.append(_expand(match.group(0), env, unknown))
            pos += match.end()
    return "".join(out), pos


def _commit(env, unknown, missing, pending):
    for name, value in pending:
        env[name] = value
        unknown.pop(name, None)
        missing.pop(name, None)


def logical_lines(text):
    """(line number, text) with each backslash-newline removed, as the shell reads a script."""
    lines = str(text).split("\n")
    index = 0
    while index < len(lines):
        start, current = index + 1, lines[index]
        while current.rstrip().endswith("\\") and index + 1 < len(lines):
            index += 1
            current = current.rstrip()[:-1] + lines[index]
        yield start, current
        index += 1


def read(text, environ=None, where="the file"):
    """(values, unknown, missing) of a .env file or script read as the shell would, without running it.

    environ: the values it starts with (the caller's environment); values: {NAME: value} of every name the
    text assigns and that could be read, environ included; unknown: {NAME: why} (a command, a condition, a
    form not read); missing: {NAME: the variable without a value that its value needs}. Lines that are not
    assignments (commands, `source`, `set -e`) are not run and say nothing."""
    env = dict(environ or {})
    unknown, missing = {}, {}
    depth = 0
    for number, line in logical_lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if _CLOSERS.match(stripped):
            depth = max(0, depth - 1)
            continue
        if _OPENERS.match(stripped) and not re.search(r"\b(?:fi|done|esac)\s*;?\s*$|\}\s*;?\s*$", stripped):
            depth += 1
            continue
        body = _PREFIX.sub("", stripped)
        pending, why = [], None  # this line's assignments: kept unless a command follows them (`A=1 cmd`)
        while True:
            match = _ASSIGN.match(body)
            if not match:
                break
            name = match.group(1)
            if depth:
                why = (name, "%s:%d assigns it inside a condition, loop or function, which is not run" % (where, number))
                break
            try:
                value, end = _word(body, match.end(), env, unknown)
            except _Unknown as exc:
                why = (name, "%s:%d: %s" % (where, number, exc))
                break
            except _Missing as exc:
                why = (name, None, str(exc))
                break
            pending.append((name, value))
            body = body[end:].lstrip()
            if body.startswith(";"):  # `A=1; export B=2`: A is set; the next statement starts
                _commit(env, unknown, missing, pending)
                pending = []
                body = _PREFIX.sub("", body[1:].lstrip())
            if not body or body.startswith("#"):
                break
        if pending and body and not body.startswith("#") and why is None:
            continue  # `A=1 command`: the assignment is the command's only
        _commit(env, unknown, missing, pending)
        if why is not None:
            env.pop(why[0], None)
            if why[1] is None:
                missing[why[0]] = why[2]
                unknown.pop(why[0], None)
            else:
                unknown[why[0]] = why[1]
                missing.pop(why[0], None)
    return env, unknown, missing
