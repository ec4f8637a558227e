# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Pure rendering of validation results: the VALIDATION RESULTS table, report.json and junit.xml.

Standard library only. Input is the ``rlstack_validation`` statistics of docs/architecture.md::

    {<cluster>: {run_id, plan: [{id, level, name, order, selected}], levels: {<id>: <level result>}}}

The callback ``rlstack.validation.report`` is a thin wrapper around :func:`build_reports`,
:func:`render_table`, :func:`report_json`, :func:`junit_xml` and :func:`write_atomic`.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain

RULE = "=" * 40
STATUSES = ("PASS", "FAIL", "SKIPPED")
NOT_SELECTED = "not selected (--tags)"
NO_RESULT = "no result: the play stopped before this level reported (see the errors above)"
NO_DATA = (
    "no validation results were recorded for this cluster: the play failed or stopped before planning "
    "(see the task errors above)"
)
SCHEMA_VERSION = 1


def _number(value, default=None):
    if isinstance(value, bool) or value is None:
        return default
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def _status(value):
    text = str(value or "").strip().upper()
    return text if text in STATUSES else "FAIL"


# --------------------------------------------------------------------------------------------------
# normalising


def _level_row(level_id, result, plan_item, index):
    result = dict(result or {})
    plan_item = dict(plan_item or {})
    row = {
        "id": str(level_id),
        "level": str(result.get("level") or plan_item.get("level") or level_id),
        "name": str(result.get("name") or plan_item.get("name") or level_id),
        "order": _number(result.get("order"), _number(plan_item.get("order"), 99.0)),
        "status": _status(result.get("status")),
        "reason": str(result.get("reason") or ""),
        "duration_s": _number(result.get("duration_s"), 0.0),
        "checks": [dict(c) for c in (result.get("checks") or []) if isinstance(c, dict)],
        "nodes": dict(result.get("nodes") or {}),
        "summary": dict(result.get("summary") or {}),
        "planned": bool(plan_item),
        "selected": _selected(plan_item) if plan_item else True,
        "has_result": True,
        "_index": index,
    }
    return row


def _selected(plan_item):
    value = plan_item.get("selected", True)
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "no", "0", "off", "")
    return bool(value)


def cluster_report(cluster, data, run_start=None, run_end=None):
    """One cluster's rows (sorted, planned-but-missing levels as SKIPPED with a reason) and counts."""
    data = plain(data) if data is not None else None
    report = {
        "cluster": str(cluster), "run_id": "", "status": "FAIL", "has_data": False, "levels": [],
        "summary": {"passed": 0, "failed": 0, "skipped": 0, "total": 0}, "levels_duration_s": 0.0,
        "incomplete": [], "start": run_start, "duration_s": None,
    }
    if run_start is not None and run_end is not None:
        report["duration_s"] = round(max(run_end - run_start, 0.0), 1)
    if not isinstance(data, dict) or not (data.get("plan") or data.get("levels")):
        return report
    report["has_data"] = True
    report["run_id"] = str(data.get("run_id") or "")
    plan = [p for p in (data.get("plan") or []) if isinstance(p, dict) and p.get("id") is not None]
    levels = data.get("levels") if isinstance(data.get("levels"), dict) else {}
    plan_by_id = dict((str(p["id"]), (i, p)) for i, p in enumerate(plan))

    rows = []
    for level_id, result in levels.items():
        index, plan_item = plan_by_id.get(str(level_id), (len(plan) + len(rows), None))
        rows.append(_level_row(level_id, result, plan_item, index))
    for level_id, (index, plan_item) in plan_by_id.items():
        if level_id in levels:
            continue
        row = _level_row(level_id, {"status": "SKIPPED"}, plan_item, index)
        row["has_result"] = False
        row["duration_s"] = None
        rows.append(row)
    rows.sort(key=lambda r: (r["order"], r["_index"], r["id"]))

    for position, row in enumerate(rows):
        if row["has_result"]:
            continue
        if not row["selected"]:
            row["reason"] = NOT_SELECTED
            continue
        earlier = [r for r in rows[:position] if r["status"] == "FAIL" and r["has_result"]]
        if earlier:
            row["reason"] = "not run: %s failed" % earlier[0]["level"]
        else:
            row["reason"] = NO_RESULT
            report["incomplete"].append(row["id"])

    for row in rows:
        row.pop("_index", None)
    report["levels"] = rows
    summary = {"passed": 0, "failed": 0, "skipped": 0, "total": len(rows)}
    for row in rows:
        summary[{"PASS": "passed", "FAIL": "failed", "SKIPPED": "skipped"}[row["status"]]] += 1
    report["summary"] = summary
    report["levels_duration_s"] = round(sum(r["duration_s"] or 0.0 for r in rows), 1)
    if summary["failed"] or report["incomplete"]:
        report["status"] = "FAIL"
    elif summary["passed"]:
        report["status"] = "PASS"
    else:
        report["status"] = "SKIPPED"
    return report


def build_reports(stats_data, hosts=(), run_start=None, run_end=None):
    """Reports for every cluster of the statistics, plus the given hosts that have no data at all."""
    stats_data = plain(stats_data) if isinstance(stats_data, dict) or hasattr(stats_data, "items") else {}
    names = list(stats_data)
    for host in hosts or ():
        if str(host) not in names:
            names.append(str(host))
    return [cluster_report(name, stats_data.get(name), run_start, run_end) for name in sorted(names)]


# --------------------------------------------------------------------------------------------------
# the table


def _seconds(value):
    if value is None:
        return "-"
    return "%ds" % int(round(value))


def _failed_check_lines(row, indent, limit):
    failed = [c for c in row["checks"] if not c.get("passed")]
    lines = []
    for check in failed[:limit]:
        node = check.get("node") or "cluster"
        lines.append("%s%s: %s" % (indent, node, check.get("message") or check.get("name")))
        if check.get("hint"):
            lines.append("%s  -> %s" % (indent, check["hint"]))
    if len(failed) > limit:
        lines.append("%s... and %d more failed checks (see report.json)" % (indent, len(failed) - limit))
    if not failed and row["reason"]:
        lines.append("%s%s" % (indent, row["reason"]))
    return lines


def render_table(report, max_failed_checks=10):
    """The seed's VALIDATION RESULTS table for one cluster, as a list of lines (no trailing newlines)."""
    return [text for text, _kind in render_table_kinds(report, max_failed_checks)]


def render_table_kinds(report, max_failed_checks=10):
    """Like render_table, as (line, kind) pairs; kind is PASS/FAIL/SKIPPED for a level row and the lines
    under it, NO_DATA for the no-data text, None for rules, header and footer (for colouring)."""
    lines = [(RULE, None), ("VALIDATION RESULTS: %s" % report["cluster"], None), (RULE, None)]
    if not report["has_data"]:
        lines.append((NO_DATA, "NO_DATA"))
        lines.append((RULE, None))
        return lines
    rows = report["levels"]
    level_w = max([5] + [len(r["level"]) for r in rows]) + 3
    name_w = max([24] + [len(r["name"]) for r in rows])
    lines.append(("%s%s %s%s" % ("Level".ljust(level_w), "Name".ljust(name_w), "Status".ljust(9), "Time"), None))
    lines.append(("%s%s %s%s" % (("-" * 5).ljust(level_w), "-" * name_w, ("-" * 6).ljust(9), "----"), None))
    indent = " " * level_w
    for row in rows:
        time_text = _seconds(row["duration_s"])
        line = "%s%s %s%s" % (row["level"].ljust(level_w), row["name"].ljust(name_w),
                              row["status"].ljust(9), time_text)
        if row["status"] == "SKIPPED" and row["reason"]:
            line = "%s%s" % (line.ljust(level_w + name_w + 1 + 9 + 6), row["reason"])
        lines.append((line, row["status"]))
        if row["status"] == "FAIL":
            lines.extend((text, "FAIL") for text in _failed_check_lines(row, indent, max_failed_checks))
    lines.append((RULE, None))
    for level_id in report["incomplete"]:
        row = [r for r in rows if r["id"] == level_id][0]
        lines.append(("note: %s %s was selected but has no result; the run is incomplete"
                      % (row["level"], row["name"]), "FAIL"))
    summary = report["summary"]
    footer = "%d/%d passed" % (summary["passed"], summary["total"])
    if summary["failed"]:
        footer += ", %d failed" % summary["failed"]
    if summary["skipped"]:
        footer += ", %d skipped" % summary["skipped"]
    footer += " in %s" % _seconds(report["levels_duration_s"])
    lines.append((footer, None))
    return lines


# --------------------------------------------------------------------------------------------------
# report.json


def _iso(epoch):
    if epoch is None:
        return None
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def overall_status(reports):
    if not reports:
        return "FAIL"
    statuses = [r["status"] for r in reports]
    if "FAIL" in statuses:
        return "FAIL"
    if "PASS" in statuses:
        return "PASS"
    return "SKIPPED"


def report_json(reports, run_start=None, run_end=None):
    """The report.json document (a dict of plain types)."""
    duration = None
    if run_start is not None and run_end is not None:
        duration = round(max(run_end - run_start, 0.0), 1)
    clusters = []
    for report in reports:
        item = dict(report)
        item["start"] = _iso(report.get("start"))
        clusters.append(item)
    return {
        "schema_version": SCHEMA_VERSION,
        "generator": "rlstack.validation.report",
        "status": overall_status(reports),
        "start": _iso(run_start),
        "end": _iso(run_end),
        "duration_s": duration,
        "clusters": clusters,
    }


def dumps_json(document):
    return json.dumps(plain(document), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------------------------------
# junit.xml

_XML_BAD = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _x(text):
    return _XML_BAD.sub("?", str(text if text is not None else ""))


def _case(parent, classname, name, seconds):
    return ET.SubElement(parent, "testcase", {
        "classname": _x(classname), "name": _x(name), "time": "%.1f" % (seconds or 0.0),
    })


def junit_xml(reports, run_start=None):
    """A testsuite per cluster, a testcase per level and per (node, check); returns the XML text."""
    root = ET.Element("testsuites", {"name": "rlstack.validation"})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    for report in reports:
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        suite = ET.SubElement(root, "testsuite", {"name": _x(report["cluster"])})
        if run_start is not None:
            suite.set("timestamp", _iso(run_start).rstrip("Z"))
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", {"name": "run_id", "value": _x(report.get("run_id") or "")})
        ET.SubElement(props, "property", {"name": "status", "value": report["status"]})
        base = "rlstack.validation.%s" % report["cluster"]
        if not report["has_data"]:
            case = _case(suite, base, "validation results", 0.0)
            ET.SubElement(case, "error", {"message": _x(NO_DATA), "type": "NO_DATA"}).text = _x(NO_DATA)
            counts["tests"] += 1
            counts["errors"] += 1
        for row in report["levels"]:
            title = "%s %s" % (row["level"], row["name"])
            case = _case(suite, base, title, row["duration_s"])
            counts["tests"] += 1
            failed = [c for c in row["checks"] if not c.get("passed")]
            if row["status"] == "FAIL":
                text = "\n".join(_failed_text(c) for c in failed) or row["reason"]
                ET.SubElement(case, "failure", {"message": _x(row["reason"] or "FAIL"), "type": "FAIL"}).text = _x(text)
                counts["failures"] += 1
            elif row["id"] in report["incomplete"]:
                ET.SubElement(case, "error", {"message": _x(row["reason"]), "type": "NO_RESULT"}).text = _x(row["reason"])
                counts["errors"] += 1
            elif row["status"] == "SKIPPED":
                ET.SubElement(case, "skipped", {"message": _x(row["reason"] or "skipped")})
                counts["skipped"] += 1
            for check in row["checks"]:
                name = check.get("name") or "check"
                if check.get("node"):
                    name = "%s: %s" % (check["node"], name)
                sub = _case(suite, "%s.%s" % (base, row["id"]), name, 0.0)
                counts["tests"] += 1
                if not check.get("passed"):
                    ET.SubElement(sub, "failure", {
                        "message": _x(check.get("message") or "failed"),
                        "type": "EVIDENCE_MISSING" if check.get("evidence_missing") else "FAIL",
                    }).text = _x(_failed_text(check))
                    counts["failures"] += 1
                elif check.get("message"):
                    ET.SubElement(sub, "system-out").text = _x(check["message"])
        seconds = report.get("levels_duration_s") or 0.0
        total_time += seconds
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("time", "%.1f" % seconds)
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", "%.1f" % total_time)
    if hasattr(ET, "indent"):
        ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _failed_text(check):
    parts = ["%s: %s" % (check.get("node") or "cluster", check.get("message") or check.get("name"))]
    parts.append("  expected: %s" % _short(check.get("expected")))
    parts.append("  actual: %s" % _short(check.get("actual")))
    if check.get("hint"):
        parts.append("  hint: %s" % check["hint"])
    return "\n".join(parts)


def _short(value):
    try:
        text = json.dumps(plain(value), sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        text = str(value)
    return text if len(text) <= 300 else text[:297] + "..."


# --------------------------------------------------------------------------------------------------
# files


def write_atomic(path, text):
    """Write text to path through a temporary file in the same directory and os.replace (mode 0644)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def write_reports(directory, reports, run_start=None, run_end=None):
    """Write report.json and junit.xml into directory; returns the two paths."""
    directory = os.path.expanduser(str(directory))
    json_path = write_atomic(os.path.join(directory, "report.json"),
                             dumps_json(report_json(reports, run_start, run_end)))
    junit_path = write_atomic(os.path.join(directory, "junit.xml"), junit_xml(reports, run_start))
    return [json_path, junit_path]
