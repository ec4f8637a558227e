# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Compare evidence with expectations and build the level result of docs/architecture.md.

Standard library only, no Ansible imports, Python 3.8 syntax: the module ``level_assert`` is a thin
wrapper around :func:`build_level_result`, and the report callback reads what this builds.

Every check evaluates to one entry::

    {name, node, op, expected, actual, unit, passed, message, hint, evidence_missing}

plus, on a failed check that has one, ``excerpt``: the lines of a log that show the cause (a failed L5/L6
run's traceback, CUDA/NCCL line and last lines, redacted; _log_excerpt.py), at most MAX_EXCERPT of them.

A check never raises: a value that cannot be compared (a non-numeric string for ``ge``, a bad regex, a
tolerance of 10 instead of 0.1) makes the check fail with a message that says what to fix.
"""

from __future__ import annotations

import json
import math
import re
import time
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain as _plain

OPS = (
    "eq", "ne", "ge", "gt", "le", "lt", "in", "not_in", "contains", "not_contains",
    "matches", "version_ge", "true", "false", "info",
)
NUMERIC_OPS = ("ge", "gt", "le", "lt")
STATUSES = ("PASS", "FAIL", "SKIPPED")
MAX_EXCERPT = 40  # lines of a check's excerpt kept in the result

EVIDENCE_MISSING = "could not collect the evidence"
EVIDENCE_HINT = (
    "this says nothing about the workload itself: the probe crashed, printed no JSON, or the log could "
    "not be read; look at the probe's stderr, the pod events and the namespace of the log collection"
)
CONFIG_HINT = "fix the expectation (inventory group_vars, extra vars or AWX survey answer)"

_TRUE = ("true", "yes", "y", "on", "1")
_FALSE = ("false", "no", "n", "off", "0")


class VerdictError(ValueError):
    """A value cannot be compared; the text says what is wrong and is used as the check message."""


# --------------------------------------------------------------------------------------------------
# value helpers


def fmt_value(value, unit=""):
    """Human text of a value: 8, 437.5 GB/s, 'NVIDIA H100 80GB HBM3', [efa, ib], nothing."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float):
            if math.isnan(value) or math.isinf(value):
                text = str(value)
            elif value == int(value) and abs(value) < 1e15:
                text = str(int(value))
            else:
                text = format(value, ".6g")
        else:
            text = str(value)
        return text + (" " + unit if unit else "")
    if isinstance(value, str):
        number = _maybe_number(value)
        if number is not None and unit:
            return fmt_value(number, unit)
        return "'" + value + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(fmt_value(v, unit) for v in value) + "]"
    try:
        text = json.dumps(_plain(value), sort_keys=True)
    except (TypeError, ValueError):
        text = str(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _maybe_number(value):
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            pass
        try:
            return float(text)
        except ValueError:
            return None
    return None


def to_number(value, what="value"):
    """Coerce an int, float or numeric string (extra vars, survey answers arrive as strings)."""
    number = _maybe_number(value)
    if number is None:
        raise VerdictError("%s %s is not a number" % (what, fmt_value(value)))
    return number


def to_bool(value, what="value"):
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    raise VerdictError("%s %s is not a boolean (true/false)" % (what, fmt_value(value)))


def loose_eq(left, right):
    """Equality that forgives the string/number/bool mix-ups of Ansible variables."""
    if left is None or right is None:
        return left is None and right is None
    if isinstance(left, bool) or isinstance(right, bool):
        try:
            return to_bool(left) == to_bool(right)
        except VerdictError:
            return False
    left_n, right_n = _maybe_number(left), _maybe_number(right)
    if left_n is not None and right_n is not None and (
        isinstance(left, (int, float)) or isinstance(right, (int, float))
    ):
        return left_n == right_n
    if isinstance(left, str) and isinstance(right, str):
        return left.strip() == right.strip()
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(loose_eq(a, b) for a, b in zip(left, right))
    return _plain(left) == _plain(right)


_VERSION_RE = re.compile(r"\d+(?:\.\d+)*")


def parse_version(value):
    """'2.11.0+cu130' -> (2, 11, 0); 'NCCL version 2.18.5+cuda12.2' -> (2, 18, 5); 'v1.2' -> (1, 2).

    The local part after '+' and pre-release tags (rc1, a0, dev) are ignored, so '2.5.0rc1' counts as
    2.5.0. Write versions as strings in YAML: an unquoted 2.10 is the float 2.1.
    """
    if value is None or isinstance(value, bool):
        raise VerdictError("%s is not a version" % fmt_value(value))
    text = str(value).strip().split("+", 1)[0]
    match = _VERSION_RE.search(text)
    if not match:
        raise VerdictError("%s is not a version (no digits)" % fmt_value(str(value)))
    return tuple(int(part) for part in match.group(0).split("."))


def version_cmp(left, right):
    a, b = parse_version(left), parse_version(right)
    width = max(len(a), len(b))
    a = a + (0,) * (width - len(a))
    b = b + (0,) * (width - len(b))
    return (a > b) - (a < b)


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)
_SIZE_MULT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def parse_size(value):
    """Bytes from 1073741824, '1G', '1GB', '1GiB', '16g', '512M', '8'.

    K/M/G/T suffixes are binary with or without 'i', as nccl-tests reads '-e 16G' (16 * 2**30).
    """
    if isinstance(value, bool) or value is None:
        raise VerdictError("message size %s is not a size (write 1073741824, '1G' or '16GiB')" % fmt_value(value))
    if isinstance(value, (int, float)):
        if value < 0:
            raise VerdictError("message size %s is negative" % fmt_value(value))
        return int(value)
    match = _SIZE_RE.match(str(value))
    if not match:
        raise VerdictError("message size %s is not a size (write 1073741824, '1G' or '16GiB')" % fmt_value(str(value)))
    return int(float(match.group(1)) * _SIZE_MULT[match.group(2).lower()])


def format_size(size_bytes):
    """1073741824 -> '1GiB', 17179869184 -> '16GiB', 1000 -> '1000B'."""
    size_bytes = int(size_bytes)
    for suffix, mult in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size_bytes >= mult and size_bytes % mult == 0:
            return "%d%s" % (size_bytes // mult, suffix)
    return "%dB" % size_bytes


# --------------------------------------------------------------------------------------------------
# one check


def _expected_text(op, expected, unit, tolerance_text=""):
    value = fmt_value(expected, unit)
    if op == "eq":
        return value
    if op == "ne":
        return "not " + value
    if op in NUMERIC_OPS:
        sign = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}[op]
        return "%s %s%s" % (sign, value, tolerance_text)
    if op == "in":
        return "one of " + ", ".join(fmt_value(v, unit) for v in as_list(expected))
    if op == "not_in":
        return "none of " + ", ".join(fmt_value(v, unit) for v in as_list(expected))
    if op == "contains":
        return "to contain " + value
    if op == "not_contains":
        return "not to contain " + value
    if op == "matches":
        return "to match /%s/" % expected
    if op == "version_ge":
        return "version >= " + fmt_value(str(expected) if expected is not None else None)
    if op == "true":
        return "true"
    if op == "false":
        return "false"
    return value


def as_list(value):
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    return [value]


def _tolerance(value):
    if value in (None, ""):
        return 0.0
    tol = to_number(value, "tolerance")
    if tol < 0 or tol >= 1:
        raise VerdictError(
            "tolerance %s is not a fraction between 0 and 1 (write 0.1 for 10%%)" % fmt_value(value)
        )
    return float(tol)


def _compare(op, actual, expected, tolerance):
    """Return (passed, effective_threshold_text). Raises VerdictError when values can't be compared."""
    if op in NUMERIC_OPS:
        exp_n = _maybe_number(expected)
        if exp_n is None:
            raise VerdictError("expected value %s is not a number" % fmt_value(expected))
        act_n = _maybe_number(actual)
        if act_n is None:
            raise VerdictError("saw %s, which is not a number" % fmt_value(actual))
        tol = _tolerance(tolerance)
        extra = ""
        if op in ("ge", "gt"):
            limit = exp_n * (1.0 - tol)
        else:
            limit = exp_n * (1.0 + tol)
        if tol:
            limit = round(limit, 9)  # 100 * 1.1 is 110.00000000000001
        if tol:
            extra = " (%s %s with the %s%% tolerance)" % (
                {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}[op], fmt_value(round(limit, 6)),
                fmt_value(round(tol * 100, 4)))
        passed = {
            "ge": act_n >= limit, "gt": act_n > limit, "le": act_n <= limit, "lt": act_n < limit,
        }[op]
        if isinstance(act_n, float) and math.isnan(act_n):
            passed = False
        return passed, extra
    if op == "eq":
        return loose_eq(actual, expected), ""
    if op == "ne":
        return not loose_eq(actual, expected), ""
    if op in ("in", "not_in"):
        if expected is None:
            raise VerdictError("expected value is empty: '%s' needs a list" % op)
        found = any(loose_eq(actual, item) for item in as_list(expected))
        return (found if op == "in" else not found), ""
    if op in ("contains", "not_contains"):
        if isinstance(actual, str):
            found = str(expected) in actual
        elif isinstance(actual, (list, tuple, set, frozenset)):
            found = any(loose_eq(item, expected) for item in actual)
        elif isinstance(actual, dict) or hasattr(actual, "keys"):
            found = expected in actual
        else:
            found = str(expected) in str(actual)
        return (found if op == "contains" else not found), ""
    if op == "matches":
        if not isinstance(expected, str) or not expected:
            raise VerdictError("expected value %s is not a regular expression" % fmt_value(expected))
        try:
            pattern = re.compile(expected)
        except re.error as exc:
            raise VerdictError("expected value %s is not a valid regular expression (%s)" % (fmt_value(expected), exc))
        return pattern.search(str(actual)) is not None, ""
    if op == "version_ge":
        try:
            parse_version(expected)
        except VerdictError as exc:
            raise VerdictError("expected " + str(exc))
        try:
            parse_version(actual)
        except VerdictError as exc:
            raise VerdictError("saw " + str(exc))
        return version_cmp(actual, expected) >= 0, ""
    if op in ("true", "false"):
        try:
            value = to_bool(actual, "saw")
        except VerdictError:
            raise VerdictError("saw %s, which is not true or false" % fmt_value(actual))
        return (value if op == "true" else not value), ""
    raise VerdictError("unknown op %s (use one of %s)" % (fmt_value(op), ", ".join(OPS)))


SEVERITIES = ("fail", "warn")


def evaluate_check(spec):
    """Evaluate one check spec (a dict) and return the check entry of the level result.

    spec keys: name (required), node, op (default eq), actual, expected, tolerance, unit, hint,
    fail_msg (custom failure text; ``message`` is accepted too), evidence_missing (bool), severity
    ("fail", the default, or "warn": a warn check that does not hold is kept with ``warning: true`` and
    its message, but counts as passed, so it never fails the level).

    op ``info`` records an observation that is not judged (a found but allowed signature, busbw not
    measurable on one GPU): it always passes and its message is ``<name>: <fail_msg>``.
    """
    spec = dict(spec or {})
    severity = str(spec.get("severity") or "fail")
    entry = _evaluate(spec)
    if severity not in SEVERITIES:
        text = "%s: unknown severity %s (use one of %s)" % (entry["name"], fmt_value(severity), ", ".join(SEVERITIES))
        entry.update(passed=False, hint=CONFIG_HINT, message=text)
    elif severity == "warn":
        entry["severity"] = "warn"
        if not entry["passed"]:
            entry.update(passed=True, warning=True, message="WARNING " + entry["message"])
    excerpt = spec.get("excerpt")
    if excerpt and not entry["passed"]:
        entry["excerpt"] = [str(line) for line in (excerpt if isinstance(excerpt, (list, tuple)) else [excerpt])][
            :MAX_EXCERPT]
    return entry


def _evaluate(spec):
    name = str(spec.get("name") or "check")
    node = str(spec.get("node") or "")
    op = str(spec.get("op") or "eq")
    actual = _plain(spec.get("actual"))
    expected = _plain(spec.get("expected"))
    unit = str(spec.get("unit") or "")
    hint = str(spec.get("hint") or "")
    custom = str(spec.get("fail_msg") or spec.get("message") or "")
    if op in ("true", "false") and expected is None:
        expected = op == "true"

    entry = {
        "name": name, "node": node, "op": op, "expected": expected, "actual": actual,
        "unit": unit, "passed": False, "message": "", "hint": hint, "evidence_missing": False,
    }

    if op == "info":
        entry["passed"] = True
        entry["hint"] = ""
        entry["message"] = "%s: %s" % (name, custom or fmt_value(actual, unit))
        return entry

    missing = False
    try:
        missing = to_bool(spec.get("evidence_missing") or False, "evidence_missing")
    except VerdictError:
        missing = True
    if missing or actual is None:
        entry["evidence_missing"] = True
        detail = custom or ("no value for %s" % name)
        entry["message"] = "%s: %s (%s)" % (name, EVIDENCE_MISSING, detail)
        entry["hint"] = hint or EVIDENCE_HINT
        return entry

    if op not in OPS:
        entry["message"] = "%s: unknown op %s (use one of %s)" % (name, fmt_value(op), ", ".join(OPS))
        entry["hint"] = hint or CONFIG_HINT
        return entry

    try:
        tol_text = ""
        passed, tol_text = _compare(op, actual, expected, spec.get("tolerance"))
    except VerdictError as exc:
        text = str(exc)
        entry["message"] = "%s: cannot check %s: %s" % (name, _expected_text(op, expected, unit), text)
        if text.startswith("expected") or text.startswith("tolerance") or text.startswith("unknown"):
            entry["hint"] = CONFIG_HINT + (" — " + hint if hint else "")
        else:
            entry["hint"] = hint or "the evidence has an unexpected format; look at the probe output"
        return entry

    shown_actual, shown_expected = actual, expected
    if op in ("eq", "ne") + NUMERIC_OPS:
        # show '8' as 8 when it was compared as a number
        if isinstance(expected, (int, float)) and not isinstance(expected, bool) and _maybe_number(actual) is not None:
            shown_actual = _maybe_number(actual)
        if isinstance(actual, (int, float)) and not isinstance(actual, bool) and _maybe_number(expected) is not None:
            shown_expected = _maybe_number(expected)
    exp_text = _expected_text(op, shown_expected, unit, tol_text)
    act_text = fmt_value(shown_actual, unit)
    entry["passed"] = bool(passed)
    if passed:
        entry["message"] = "%s: %s (expected %s)" % (name, act_text, exp_text)
    elif custom:
        entry["message"] = "%s: %s (expected %s, saw %s)" % (name, custom, exp_text, act_text)
    else:
        entry["message"] = "%s expected %s, saw %s" % (name, exp_text, act_text)
    return entry


# --------------------------------------------------------------------------------------------------
# the level result


_LEVEL_RE = re.compile(r"^l(\d+(?:[._]\d+)?)", re.IGNORECASE)


def derive_level(level_id):
    """'l3_multi_gpu' -> 'L3', 'l3_5_efa' -> 'L3.5', 'local_checks' -> 'LOCAL'."""
    text = str(level_id or "")
    if text.lower().startswith("local"):
        return "LOCAL"
    match = _LEVEL_RE.match(text)
    if match:
        return "L" + match.group(1).replace("_", ".")
    return text.split("/", 1)[0].upper() or "?"


def derive_order(level):
    """'L3.5' -> 3.5, 'L0' -> 0.0, 'LOCAL' -> -1.0, anything else -> 99.0."""
    text = str(level or "").strip().upper()
    if text == "LOCAL":
        return -1.0
    match = re.match(r"^L(\d+(?:\.\d+)?)$", text)
    if match:
        return float(match.group(1))
    return 99.0


def failed_line(check):
    node = check.get("node") or "cluster"
    line = "- %s: %s" % (node, check.get("message") or check.get("name"))
    if check.get("hint"):
        line += " — " + str(check["hint"])
    return line


def build_level_result(level_id, level=None, name=None, order=None, checks=None,
                       skip_reason="", duration_s=None, started=None, now=None):
    """Evaluate everything and return the level result (docs/architecture.md, docs/verdicts.md)."""
    level_id = str(level_id)
    level = str(level) if level not in (None, "") else derive_level(level_id)
    name = str(name) if name not in (None, "") else level_id
    if order in (None, ""):
        order = derive_order(level)
    order = float(to_number(order, "order"))
    if duration_s not in (None, ""):
        duration = float(to_number(duration_s, "duration_s"))
    elif started not in (None, ""):
        duration = (now if now is not None else time.time()) - float(to_number(started, "started"))
    else:
        duration = 0.0
    duration = round(max(duration, 0.0), 1)

    result = {
        "id": level_id, "level": level, "name": name, "order": order, "status": "PASS", "reason": "",
        "duration_s": duration, "checks": [], "nodes": {},
        "summary": {"passed": 0, "failed": 0, "total": 0, "evidence_missing": 0},
    }
    if skip_reason:
        result["status"] = "SKIPPED"
        result["reason"] = str(skip_reason)
        return result

    entries = []
    for spec in checks or []:
        entries.append(evaluate_check(spec))

    if not entries:
        entries.append({
            "name": "checks", "node": "", "op": "ge", "expected": 1, "actual": 0, "unit": "",
            "passed": False, "evidence_missing": False,
            "message": "nothing was checked: a level with no checks is not a pass",
            "hint": "the role passed no checks to level_assert; give checks or nccl, or a skip_reason",
        })

    result["checks"] = entries
    nodes = {}
    for entry in entries:
        if entry["node"]:
            info = nodes.setdefault(entry["node"], {"status": "PASS", "passed": 0, "failed": 0,
                                                    "failed_checks": []})
            if entry["passed"]:
                info["passed"] += 1
            else:
                info["failed"] += 1
                info["status"] = "FAIL"
                info["failed_checks"].append(entry["name"])
    result["nodes"] = nodes
    failed = [e for e in entries if not e["passed"]]
    result["summary"] = {
        "passed": len(entries) - len(failed), "failed": len(failed), "total": len(entries),
        "evidence_missing": len([e for e in entries if e["evidence_missing"]]),
        "warnings": len([e for e in entries if e.get("warning")]),
    }
    if failed:
        result["status"] = "FAIL"
        result["reason"] = failed_line(failed[0])[2:]
    return result


def failed_lines(result):
    return [failed_line(c) for c in result.get("checks") or [] if not c.get("passed")]


def summary_message(result):
    """'L0 Infrastructure: 2 of 9 checks failed\\n- node: ...' / ': PASS, 9 of 9 checks passed'."""
    title = "%s %s" % (result.get("level"), result.get("name"))
    status = result.get("status")
    summary = result.get("summary") or {}
    if status == "SKIPPED":
        return "%s: SKIPPED (%s)" % (title, result.get("reason"))
    if status == "PASS":
        return "%s: PASS, %d of %d checks passed" % (title, summary.get("passed", 0), summary.get("total", 0))
    lines = failed_lines(result)
    head = "%s: %d of %d checks failed" % (title, len(lines), summary.get("total", len(lines)))
    return "\n".join([head] + lines)
