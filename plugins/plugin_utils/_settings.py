# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check every setting of a run before anything is created: one sentence per bad value.

The settings are the options of the argument specs (the runner's `plan` entry point for the run-wide
`validation_*` settings, each level role's `main` for its own); this module adds what argument specs cannot
say, the allowed range of each number (RANGES, and a rule by name for the rest). It is stricter than
Ansible's own argument-spec check (which converts a list to a string, a string to a list, and accepts
true as an integer): what passes here also passes the roles' own check, and is usable by their tasks,
which coerce with | int and | bool but never parse a string into a list or a dict.

Controller-only code (the `setting_errors` lookup runs it).
"""

from __future__ import annotations

import decimal
import json
import math

# Numbers a setting may take, (lowest, highest), both included. Settings not listed follow the rule of
# range_of(): tolerances 0 to 1, MiB 0 to 2**24, timeouts and deadlines 1 s to 7 days, other durations 0 s to
# 7 days, counts 0 to 100000.
WEEK_S = 7 * 24 * 3600
RANGES = {
    # the lease must outlast the tasks between a wait and the one that moves it: 20 s ran out on a loaded
    # 2-core controller before L5 extended it, and the run's own L5 Job was deleted (2026-12-05)
    "validation_lease_margin_s": (60, WEEK_S),
    # 0 turns it off; the watchdog renews it every 2 s (_run_lease.RENEW_EVERY_S)
    "validation_renewed_lease_s": (0, 3600),
    "validation_api_timeout_s": (6, 3600),
    "validation_api_connect_timeout_s": (1, 300),
    "validation_api_read_timeout_s": (1, 3600),
    "validation_host_efa": (0, 64),
    "validation_host_gpus": (0, 64),
    "validation_probe_concurrency": (1, 256),
    "validation_run_as_user": (0, 2 ** 31 - 1),  # a Linux uid; 0 leaves the image's user
    "l1_runtime_gpus": (0, 64),
    "l3_multi_gpu_gpus": (0, 64),
    "l4_rollout_gpus": (0, 64),
    "l3_multi_gpu_sweep_max_bytes": (1, 2 ** 40),
    # KiB as `ulimit -l` prints them: a limit of gigabytes is millions of KiB, more than a count's 100000
    "l0_infrastructure_efa_memlock_min_kib": (0, 2 ** 40),
    "phase0_efa_nodes": (1, 100000),
    "l2_single_gpu_min_params": (0, 1e15),
    "l6_evaluation_floor": (0, 1),
    "validation_phase0_compare_nodes": (1, 100000),
    "validation_phase0_gate_threshold_usd": (0, 1e6),
    "validation_phase0_max_age_h": (0, 24 * 366),
}
MAX_COUNT = 100000
SHOWN = 60  # characters of a bad value the sentence shows

_TRUE = ("y", "yes", "on", "1", "true", "t")
_FALSE = ("n", "no", "off", "0", "false", "f")


def range_of(name, kind):
    """The (lowest, highest) a number setting may take, or None for a setting that is not a number. A key of a
    dict setting is named <setting>.<key> (<setting>[<index>].<key> in a list) and follows the same rules."""
    if kind not in ("int", "float"):
        return None
    if name in RANGES:
        return RANGES[name]
    if name.endswith("tolerance"):  # a fraction allowed below a floor, as every *_tolerance setting
        return (0, 1)
    if name.endswith(("_mib", "_mib_min")):  # memory in MiB, as nvidia-smi prints it: an H200 has 143771
        return (0, 2 ** 24)
    if name.endswith(("_timeout_s", "_deadline_s")):
        return (1, WEEK_S)
    if name.endswith("_s"):
        return (0, WEEK_S)
    if kind == "float":
        return (0, 1e15)
    return (0, MAX_COUNT)


def show(value):
    """A bad value as the sentence quotes it: JSON-like, at most SHOWN characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > SHOWN:
        text = "%s... (%d characters)" % (text[:SHOWN], len(text))
    return text


def _number_text(number):
    if isinstance(number, float) and number.is_integer() and abs(number) < 1e15:
        number = int(number)
    if isinstance(number, int) and number >= 10 ** 6 and number == 2 ** (number.bit_length() - 1):
        return "2**%d" % (number.bit_length() - 1)
    return "%g" % number if isinstance(number, float) else str(number)


def allowed(name, spec):
    """What the setting may be, as the end of a sentence ("an integer from 1 to 604800")."""
    kind = spec.get("type") or "raw"
    if spec.get("choices") is not None:
        return "one of %s" % ", ".join(json.dumps(c) if c == "" else str(c) for c in spec["choices"] if c is not None)
    words = {"str": "a string", "path": "a path (a string)", "bool": "true or false", "dict": "a dict (a mapping)",
             "raw": "any value", "int": "an integer", "float": "a number"}
    if kind == "list":
        elements = spec.get("elements")
        text = "a list" + ({"str": " of strings", "dict": " of dicts (mappings)", "int": " of integers",
                            "float": " of numbers", "path": " of paths"}.get(elements, ""))
        return text
    text = words.get(kind, "a %s" % kind)
    bounds = range_of(name, kind)
    if bounds:
        text += " from %s to %s" % (_number_text(bounds[0]), _number_text(bounds[1]))
    return text


def _as_int(value):
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        raise ValueError
    if isinstance(value, str):
        exact = decimal.Decimal(value.strip())  # raises decimal.InvalidOperation (an ArithmeticError)
        if not exact.is_finite() or exact != int(exact):
            raise ValueError
        return int(exact)
    raise ValueError


def _as_float(value):
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        number = float(value.strip())
    else:
        raise ValueError
    if not math.isfinite(number):
        raise ValueError
    return number


def _as_bool(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise ValueError


def _as_str(value):
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError
    return value if isinstance(value, str) else str(value)


def _as_list(value, elements):
    if not isinstance(value, list):
        raise ValueError
    if elements:
        convert = _CONVERT[elements]
        return [convert(item) for item in value]
    return value


def _as_dict(value):
    if not isinstance(value, dict):
        raise ValueError
    return value


_CONVERT = {"int": _as_int, "float": _as_float, "bool": _as_bool, "str": _as_str, "path": _as_str,
            "dict": _as_dict}


def check(name, value, spec, source=""):
    """One sentence saying why `value` is not allowed for the setting `name`, or None when it is."""
    kind = spec.get("type") or "raw"
    where = " (%s)" % source if source else ""
    if value is None and spec.get("default") in ("", None) and not spec.get("required"):
        # An empty answer: AWX writes an empty survey answer to the job's extra vars as !unsafe '', which
        # ansible-core 2.19 reads back as null (seen on AWX 24.6.1); it means "not set", as "" does.
        return None
    try:
        if kind == "raw":
            converted = value
        elif kind == "list":
            converted = _as_list(value, spec.get("elements"))
        elif kind in _CONVERT:
            converted = _CONVERT[kind](value)
        else:
            return None
        if spec.get("choices") is not None and converted not in spec["choices"]:
            raise ValueError
        bounds = range_of(name, kind)
        if bounds and not bounds[0] <= converted <= bounds[1]:
            raise ValueError
    except (ValueError, TypeError, ArithmeticError):
        return "%s%s is %s, but it must be %s." % (name, where, show(value), allowed(name, spec))
    return keys_problem(name, converted, spec, source)


def keys_problem(name, value, spec, source=""):
    """The first sentence about the keys of a dict setting, or of each dict of a list of dicts, whose spec lists
    them (`options`, as an Ansible argument spec's suboptions): a key it does not list (a typo would be ignored,
    and a level pass on what it was not told to check), a required key missing, a key's value not allowed."""
    options = spec.get("options")
    if not options:
        return None
    where = " (%s)" % source if source else ""
    entries = [(name, value)] if isinstance(value, dict) else list(
        ("%s[%d]" % (name, index), item) for index, item in enumerate(value or []))
    for entry, item in entries:
        unknown = sorted(str(key) for key in item if key not in options)
        if unknown:
            return "%s%s has %s %s, but its keys are %s." % (
                entry, where, "keys" if len(unknown) > 1 else "key", ", ".join(unknown), ", ".join(sorted(options)))
        for key in sorted(options):
            if key not in item:
                if options[key].get("required"):
                    return "%s%s has no %s, which it needs." % (entry, where, key)
                continue
            sentence = check("%s.%s" % (entry, key), item[key], options[key], source)
            if sentence:
                return sentence
    return None


def check_all(settings):
    """Sentences for every bad setting. `settings` is a list of (name, value, spec, source), in order; a
    value of the marker UNREADABLE (its template failed) gives the sentence that the lookup put there."""
    errors = []
    for name, value, spec, source in settings:
        if isinstance(value, Unreadable):
            where = " (%s)" % source if source else ""
            errors.append("%s%s could not be read: %s." % (name, where, value.reason.rstrip(".")))
            continue
        sentence = check(name, value, spec, source)
        if sentence:
            errors.append(sentence)
    return errors


class Unreadable:
    """A setting whose template could not be evaluated (an undefined variable, a syntax error)."""

    def __init__(self, reason):
        self.reason = " ".join(str(reason).split())[:300]


def configuration_rows(options):
    """Rows of the run-wide settings table in docs/configuration.md, from the `plan` argument spec:
    [(setting, allowed, default, meaning)]."""
    rows = []
    for name in sorted(options):
        spec = options[name]
        default = spec.get("default")
        if default is None or default == "":
            shown_default = "(none)" if "default" not in spec else "(empty)"
        elif isinstance(default, (dict, list)):
            shown_default = "`%s`" % json.dumps(default, sort_keys=True)
        else:
            shown_default = "`%s`" % (str(default).lower() if isinstance(default, bool) else default)
        description = spec.get("description") or ""
        if isinstance(description, list):
            description = " ".join(description)
        rows.append(("`%s`" % name, allowed(name, spec), shown_default, " ".join(description.split())))
    return rows


def configuration_table(options):
    """The markdown table of configuration_rows()."""
    lines = ["| setting | allowed | default | meaning |", "|---|---|---|---|"]
    for row in configuration_rows(options):
        lines.append("| %s |" % " | ".join(cell.replace("|", "\\|") for cell in row))
    return "\n".join(lines)
