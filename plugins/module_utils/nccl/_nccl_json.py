# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nccl-tests JSON results (``-J`` / ``--output_file``, nccl-tests 2.17.3 and later), standard library only.

The format is the one written by nccl-tests' src/util.cu (v2.19.6, JSON_FILE_VERSION 3):
``{version, start_time, args [..], env ["NAME=value", ..], nccl_version (code), config {.., devices
[{rank, group, pid, hostname, device, device_hex, device_info}]}, results [{size, count, type, redop,
root (a padded string), out_of_place|in_place {time|cpu_time, alg_bw, bus_bw, nwrong|null},
actual_iterations, experiment_name, [out_of_place_per_iter, in_place_per_iter]}], out_of_bounds {count,
okay}, average_bus_bandwidth {bandwidth, okay}, errors [..], end_time}``. Quirks of that writer handled
here: doubles are printed with ``%lf``, so an infinite value is a bare ``inf`` (not JSON) and NaN the
string ``"nan"``; booleans of ``config`` are the strings ``"true"``/``"false"``; a run that crashed
leaves the document unterminated (then the text log is used).

The MPIJob launcher prints the file on one line after ``JSON_MARKER`` (roles/runner/templates/
mpijob.yml.j2); ``_nccl_parser.NcclLogParser`` finds that line and calls :func:`tables_from_json`.
A standalone ``-J`` file, or a directory of them, is read by ``_nccl_json_files`` (above the parser; this
module is below it, so the two never import each other).
The environment is redacted here, before anything is stored or reported (:func:`redact_env`).
"""

from __future__ import annotations

import json
import math
import os
import re

JSON_MARKER = "rlstack nccl-tests JSON: "
MAX_ENV = 256                   # environment entries kept (the rest are counted)
REDACTED = "<redacted>"
# A variable whose name says it holds a credential; its value is never kept.
_SECRET_NAME_RX = re.compile(
    r"(?:SECRET|TOKEN|PASSW(?:OR)?D|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|SESSION|COOKIE|"
    r"SIGNATURE|_KEY$|^KEY$)", re.IGNORECASE)
_URL_USERINFO_RX = re.compile(r"(://[^/\s:@]+:)[^@/\s]+@")
_AWS_KEY_ID_RX = re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")
_BARE_INF_RX = re.compile(r"([:\[,])(-?)inf(?=[,\]}])")
_ARG_SECRET_RX = re.compile(r"^(--?[\w.\-]*(?:token|secret|password|passwd|key)[\w.\-]*=).+$", re.IGNORECASE)


class NcclTestsJsonError(ValueError):
    """The marker line does not hold a usable nccl-tests JSON document."""


def redact_value(text):
    """A value with URL passwords and AWS access key ids replaced by <redacted>."""
    text = _URL_USERINFO_RX.sub(lambda m: m.group(1) + REDACTED + "@", text)
    return _AWS_KEY_ID_RX.sub(REDACTED, text)


def redact_env(entries):
    """``NAME=value`` strings with credentials removed: a secret-like NAME loses its value, any other value
    loses URL passwords and AWS key ids. Returns (kept entries, number of entries dropped beyond MAX_ENV)."""
    out = []
    for entry in list(entries or [])[:MAX_ENV]:
        text = str(entry)
        name, sep, value = text.partition("=")
        if sep and _SECRET_NAME_RX.search(name):
            out.append(name + "=" + REDACTED)
        else:
            out.append(name + sep + redact_value(value) if sep else redact_value(text))
    return out, max(0, len(list(entries or [])) - MAX_ENV)


def redact_args(args):
    return [_ARG_SECRET_RX.sub(lambda m: m.group(1) + REDACTED, redact_value(str(a))) for a in (args or [])]


def _num(value):
    """A finite float, or None (null, "nan", inf written as null, anything else)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _flag(value):
    """The writer's booleans are the strings "true"/"false"."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in ("true", "false"):
        return value == "true"
    return value


def _side(side):
    if not isinstance(side, dict):
        return None
    time_value = side.get("time", side.get("cpu_time"))
    wrong = side.get("nwrong")
    return {"time_us": _num(time_value), "algbw": _num(side.get("alg_bw")), "busbw": _num(side.get("bus_bw")),
            "wrong": _int(wrong) if wrong is not None else None, "error": None}


def load(text):
    """The JSON document of a marker line (inf tolerated), or NcclTestsJsonError with one sentence."""
    text = text.strip()
    if not text.startswith("{"):
        raise NcclTestsJsonError("the nccl-tests JSON line does not start with '{'")
    try:
        doc = json.loads(_BARE_INF_RX.sub(r"\1null", text))
    except ValueError as exc:
        raise NcclTestsJsonError("the nccl-tests JSON is not complete or not valid (%s); the run may have "
                                 "stopped before nccl-tests closed the file" % exc)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise NcclTestsJsonError("the nccl-tests JSON has no 'results' list")
    return doc


def _version_text(code):
    code = _int(code)
    if code is None or code <= 0:
        return None
    if code < 10000:            # NCCL_VERSION code of NCCL <= 2.8: X*1000 + Y*100 + Z
        return "%d.%d.%d" % (code // 1000, (code // 100) % 10, code % 100)
    return "%d.%d.%d" % (code // 10000, (code // 100) % 100, code % 100)


def tables_from_json(doc, line_no):
    """(table in the parser's shape, facts) from a loaded document. facts: version, nccl_version,
    start_time, end_time, args and env (redacted), env_omitted, config, devices, errors, line_no."""
    args = [str(a) for a in doc.get("args") or []]
    test = os.path.basename(args[0]) if args else None
    rows = []
    for item in doc["results"]:
        if not isinstance(item, dict) or _int(item.get("size")) is None:
            continue
        rows.append({
            "size": _int(item.get("size")), "count": _int(item.get("count")),
            "type": item.get("type") if isinstance(item.get("type"), str) else None,
            "redop": item.get("redop") if isinstance(item.get("redop"), str) else None,
            "root": _int(item.get("root")),
            "out_of_place": _side(item.get("out_of_place")),
            "in_place": _side(item.get("in_place")),
        })
    bounds = doc.get("out_of_bounds") if isinstance(doc.get("out_of_bounds"), dict) else {}
    average = doc.get("average_bus_bandwidth") if isinstance(doc.get("average_bus_bandwidth"), dict) else {}
    oob = _int(bounds.get("count"))
    table = {
        "test": test if test and test.endswith(("_perf", "_perf_mpi")) else None,
        "test_inferred": False, "rows": rows,
        "avg_busbw": _num(average.get("bandwidth")),
        "oob_values": oob, "oob_status": None if oob is None else ("OK" if oob == 0 else "FAILED"),
        # the footer objects are written after the last row, end_time when the file was closed
        "complete": bool(bounds) and "end_time" in doc,
        "line_no": line_no, "rows_omitted": 0,
    }
    if table["test"] and table["test"].endswith("_mpi"):
        table["test"] = table["test"][:-4]
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    devices = []
    for device in config.get("devices") or []:
        if isinstance(device, dict):
            devices.append({"rank": _int(device.get("rank")), "hostname": str(device.get("hostname") or ""),
                            "device": _int(device.get("device")), "device_info": str(device.get("device_info") or "")})
    env, omitted = redact_env(doc.get("env"))
    facts = {
        "version": _int(doc.get("version")),
        "nccl_version": _version_text(doc.get("nccl_version")),
        "start_time": doc.get("start_time"), "end_time": doc.get("end_time"),
        "args": redact_args(args), "env": env, "env_omitted": omitted,
        "config": dict((k, _flag(v)) for k, v in config.items() if k != "devices"),
        "devices": devices,
        "errors": [redact_value(str(e)) for e in doc.get("errors") or []],
        "line_no": line_no,
    }
    return table, facts


def compare_with_text(json_table, text_table):
    """Sizes whose out-of-place or in-place busbw differ between the JSON and the text table of one run,
    beyond the text's printing precision (nccl-tests prints busbw with %6.2f, or fewer decimals when wider)."""
    text_rows = {}
    for row in text_table.get("rows") or []:
        text_rows[row.get("size")] = row
    differ = []
    for row in json_table.get("rows") or []:
        other = text_rows.get(row["size"])
        if other is None:
            differ.append(row["size"])
            continue
        for key in ("out_of_place", "in_place"):
            a, b = row.get(key), other.get(key)
            if a is None or b is None:
                if (a is None) != (b is None):
                    differ.append(row["size"])
                break
            x, y = a.get("busbw"), b.get("busbw")
            if x is None or y is None:
                if (x is None) != (y is None):
                    differ.append(row["size"])
                    break
                continue
            if abs(x - y) > max(0.0051, abs(x) * 5e-4):
                differ.append(row["size"])
                break
    return differ
