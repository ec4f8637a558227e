# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Pure rendering of validation results: the VALIDATION RESULTS table, report.json and junit.xml.

Standard library only. Input is the ``rlstack_validation`` statistics of docs/architecture.md::

    {<cluster>: {run_id, plan: [{id, level, name, order, selected}], levels: {<id>: <level result>}}}

The callback ``rlstack.validation.report`` is a thin wrapper around :func:`build_reports`,
:func:`render_table`, :func:`report_json`, :func:`junit_xml` and :func:`write_atomic`; report.html is
rendered by ``plugins/plugin_utils/_report_html.py`` (controller-only) from the report.json document.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import tempfile
import textwrap
import xml.etree.ElementTree as ET
from ansible_collections.rlstack.validation.plugins.module_utils.fleet import _cost
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _gate
from ansible_collections.rlstack.validation.plugins.module_utils import _levels
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
        "sweeps": [dict(s) for s in (result.get("sweeps") or []) if isinstance(s, dict)],
        "gpu": _gpu(result.get("gpu")),
        "fingerprint": dict(result["fingerprint"]) if isinstance(result.get("fingerprint"), dict) else None,
        # a row that is not a level of the registry (the Baseline comparison, the Phase 0 gate): reported on its
        # own line under the table and not counted in "N/M passed"
        "diagnostic": str(level_id) in _levels.DIAGNOSTIC_ROWS,
        "planned": bool(plan_item),
        "selected": _selected(plan_item) if plan_item else True,
        "has_result": True,
        "_index": index,
    }
    return row


def _gpu(value):
    """A level's GPU time: one gpu_usage result, or the list a level accumulates (one per wait)."""
    if isinstance(value, list):
        value = _cost.merge_usage([v for v in value if isinstance(v, dict)]) if value else None
    return dict(value) if isinstance(value, dict) and value.get("gpu_seconds") is not None else {}


def _selected(plan_item):
    value = plan_item.get("selected", True)
    if isinstance(value, str):
        return value.strip().lower() not in ("false", "no", "0", "off", "")
    return bool(value)


def levels_duration(rows):
    """The levels' time: each level counted once. The rows of one level (L5's and L6's, one per example) run side by
    side and each carries the level's time, so a level's time is the longest of its rows, as the console says it."""
    longest = {}
    for row in rows:
        level = _levels.row_level(row["id"])
        longest[level] = max(longest.get(level, 0.0), row["duration_s"] or 0.0)
    return round(sum(longest.values()), 1)


def cluster_report(cluster, data, run_start=None, run_end=None):
    """One cluster's rows (sorted, planned-but-missing levels as SKIPPED with a reason) and counts."""
    data = plain(data) if data is not None else None
    report = {
        "cluster": str(cluster), "run_id": "", "status": "FAIL", "has_data": False, "levels": [],
        "summary": {"passed": 0, "failed": 0, "skipped": 0, "total": 0}, "levels_duration_s": 0.0,
        "incomplete": [], "start": run_start, "duration_s": None, "cost": None, "phase0_gate": None,
        "isolation": None,
    }
    if run_start is not None and run_end is not None:
        report["duration_s"] = round(max(run_end - run_start, 0.0), 1)
    if not isinstance(data, dict) or not (data.get("plan") or data.get("levels") or data.get("isolation")):
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

    gate = data.get("phase0_gate") if isinstance(data.get("phase0_gate"), dict) else {}
    for position, row in enumerate(rows):
        row["_position"] = (_run_key(row), position)
    for row in rows:
        if row["has_result"]:
            continue
        if not row["selected"]:
            row["reason"] = NOT_SELECTED
            continue
        if _gate.skip_reason(gate, row["id"]):
            row["reason"] = _gate.skip_reason(gate, row["id"])
            continue
        # earlier in the order the levels ran (Phase 0 runs before L3), not in the table's order
        earlier = sorted((r for r in rows if r["status"] == "FAIL" and r["has_result"]
                          and r["_position"] < row["_position"]), key=lambda r: r["_position"])
        if earlier:
            row["reason"] = "not run: %s failed" % earlier[0]["level"]
        else:
            row["reason"] = NO_RESULT
            report["incomplete"].append(row["id"])

    for row in rows:
        row.pop("_index", None)
        row.pop("_position", None)
    report["levels"] = rows
    counted = [row for row in rows if not row["diagnostic"]]
    summary = {"passed": 0, "failed": 0, "skipped": 0, "total": len(counted)}
    for row in counted:
        summary[{"PASS": "passed", "FAIL": "failed", "SKIPPED": "skipped"}[row["status"]]] += 1
    report["summary"] = summary
    report["levels_duration_s"] = levels_duration(rows)
    report["phase0_gate"] = dict(gate) if gate else None
    isolation = data.get("isolation")
    report["isolation"] = dict(isolation) if isinstance(isolation, dict) else None
    report["cost"] = run_cost(rows, data.get("prices") if isinstance(data.get("prices"), dict) else {},
                              data.get("phase0_compare") if isinstance(data.get("phase0_compare"), dict) else {},
                              gate.get("instance_type") or "")
    if summary["failed"] or report["incomplete"] or any(r["status"] == "FAIL" for r in rows) or (report["isolation"] or {}).get("suspects"):
        report["status"] = "FAIL"
    elif summary["passed"]:
        report["status"] = "PASS"
    else:
        report["status"] = "SKIPPED"
    return report


PHASE0_ID = "phase0_efa"


def _run_key(row):
    """When a row ran, as a sort key: its order, except for a level that runs ahead of its place (Phase 0 runs
    before L3: just under L3's order)."""
    try:
        level = _levels.by_id(row["id"])
    except KeyError:
        return row["order"]
    if level.get("runs_before"):
        return _levels.by_id(level["runs_before"])["order"] - 0.5
    return row["order"]


# What Phase 0's cost is compared with when neither validation_phase0_compare_instance_type nor the Phase 0 gate names
# the expensive instances: a type with a dated on-demand price in _profiles.py.
PHASE0_COMPARE_DEFAULT = "p5en.48xlarge"


def run_cost(rows, prices=None, phase0_compare=None, gated_instance_type=""):
    """GPU time per level and for the run, the money at the instance types' prices, and for Phase 0 what the
    same time on the expensive instances would have cost: phase0_compare {instance_type, nodes}, its instance type
    when set, else the one the Phase 0 gate guards (`gated_instance_type`: the run's GPU nodes'), else
    PHASE0_COMPARE_DEFAULT; so the footer compares with the instances the gate line names."""
    by_level = {}
    for row in rows:
        if row.get("gpu"):
            by_level[row["id"]] = {"level": row["level"], "gpu_minutes": row["gpu"].get("gpu_minutes", 0.0),
                                   "money": _cost.money(row["gpu"], prices)}
    total = _cost.merge_usage([row["gpu"] for row in rows if row.get("gpu")])
    cost = {"gpu_seconds": total["gpu_seconds"], "gpu_minutes": total["gpu_minutes"],
            "by_instance_type": total["by_instance_type"], "by_level": by_level,
            "money": _cost.money(total, prices), "phase0": None}
    phase0 = [r for r in rows if r["id"] == PHASE0_ID and r.get("gpu")]
    phase0_compare = phase0_compare or {}
    compare_type = phase0_compare.get("instance_type") or gated_instance_type or PHASE0_COMPARE_DEFAULT
    if phase0:
        row = phase0[0]
        cost["phase0"] = {
            "status": row["status"], "seconds": row["duration_s"] or 0.0,
            "usd": by_level[row["id"]]["money"]["usd"],
            "instance_types": sorted(row["gpu"].get("by_instance_type") or {}),
            "expensive": _cost.what_if(row["duration_s"] or 0.0, compare_type, phase0_compare.get("nodes") or 2,
                                       prices),
        }
    return cost


# The columns a price line of the console's footer fits in, its price source cut to fit (a 120-column terminal wrapped
# it; the report's HTML and JSON keep the whole source). On a narrower terminal every longer line of the table is wrapped
# at a space to its width (wrap_line); piped (CI logs, AWX) the lines stay whole.
FOOTER_WIDTH = 120


# Where a price source may be cut so that what is left reads whole: its clauses end at these.
_CLAUSE_ENDS = (", ", "; ", " (")


def _fit(text, width):
    """`text` cut to `width` characters (at least 12), ending in "..." when cut: after its last whole clause that
    fits ("EC2 Capacity Blocks pricing...", not "...(aws.amazon.com/ec2/capac..."), else after a whole word."""
    width = max(width, 12)
    if len(text) <= width:
        return text
    room = text[:width - 3]
    cut = max(room.rfind(end) for end in _CLAUSE_ENDS)
    if cut < 12:
        cut = room.rfind(" ")
    return (text[:cut] if cut >= 12 else room).rstrip(" ,;") + "..."


def cost_lines(cost):
    """The cost footer of the table (GPU time, money per instance type, Phase 0), as lines."""
    if not cost or not cost.get("gpu_seconds"):
        return []
    per_level = {}  # the rows of one level (L5 per example) as one number
    for entry in cost["by_level"].values():
        per_level[entry["level"]] = per_level.get(entry["level"], 0.0) + (entry["gpu_minutes"] or 0.0)
    # a level under 0.05 GPU-min (probe pods that ran a second) would read "L1 0.0": the total counts it
    levels = ", ".join("%s %.1f" % (level, minutes) for level, minutes in per_level.items() if round(minutes, 1))
    money = cost["money"]
    text = "GPU time: %.1f GPU-min (%s); estimated %s" % (cost["gpu_minutes"], levels, _cost.usd(money["usd"]))
    lines = [text + (" at the prices below" if money["usd"] is not None else
                     " (no price for %s)" % ", ".join(money["unpriced"]))]
    for itype, info in sorted(money["by_instance_type"].items()):
        if info["price_per_gpu_hour_usd"] is None:
            lines.append("  %s: %.1f GPU-min, %s" % (itype, info["gpu_minutes"] or 0.0, info["source"]))
            continue
        head = "  %s: %.1f GPU-min x $%.4f/GPU-h = %s" % (
            itype, info["gpu_minutes"] or 0.0, info["price_per_gpu_hour_usd"], _cost.usd(info["usd"]))
        as_of = ", " + str(info["as_of"]) if info["as_of"] else ""
        lines.append("%s (%s%s)" % (head, _fit(info["source"], FOOTER_WIDTH - len(head) - len(as_of) - 3), as_of))
    phase0 = cost.get("phase0")
    if phase0:
        expensive = phase0["expensive"]
        lines.append("Phase 0 %s: %s on %s; the same %ds on %d x %s would have cost %s" % (
            phase0["status"], _cost.usd(phase0["usd"]), ", ".join(phase0["instance_types"]) or "-",
            int(round(phase0["seconds"])), expensive["nodes"], expensive["instance_type"],
            _cost.usd(expensive["usd"])))
    return lines


def wrap_line(text, width=None, continuation=None):
    """One line of the console's table as lines of at most `width` columns (a terminal's; None: the line whole),
    wrapped at spaces; a continuation is indented by `continuation`, by default two more than the line (a word longer
    than the width stays whole)."""
    if not width or len(text) <= width:
        return [text]
    indent = text[:len(text) - len(text.lstrip())]
    return textwrap.wrap(text.lstrip(), width, initial_indent=indent,
                         subsequent_indent=indent + "  " if continuation is None else continuation,
                         break_long_words=False, break_on_hyphens=False) or [text]


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


def failed_groups(checks):
    """The failed checks as [(first check, [the other nodes where the same check failed])], one group per check name
    and hint, in the order they first fail: a fleet that fails one way (every node cordoned, an image no node can
    pull) is one group, not a line per node. A check of the whole cluster (no node) is a group of its own."""
    groups = {}
    for index, check in enumerate(checks or []):
        if not isinstance(check, dict) or check.get("passed"):
            continue
        key = (check.get("name"), check.get("hint")) if check.get("node") else index
        if key in groups:
            groups[key][1].append(check["node"])
        else:
            groups[key] = (check, [])
    return list(groups.values())


def also_failed_text(check, others, shown=3):
    """'<check> also failed on N more nodes: a, b, c and M more' for a group of failed_groups with others."""
    names = ", ".join(others[:shown]) + (" and %d more" % (len(others) - shown) if len(others) > shown else "")
    nodes = "%d more node%s" % (len(others), "" if len(others) == 1 else "s")
    return "%s also failed on %s: %s" % (check.get("name"), nodes, names)


def _failed_check_lines(row, indent, limit):
    groups = failed_groups(row["checks"])
    lines = []
    for check, others in groups[:limit]:
        node = check.get("node") or "cluster"
        lines.append("%s%s: %s" % (indent, node, check.get("message") or check.get("name")))
        if others:
            lines.append("%s  %s" % (indent, also_failed_text(check, others)))
        if check.get("hint"):
            lines.append("%s  -> %s" % (indent, check["hint"]))
    left = sum(1 + len(others) for _check, others in groups[limit:])
    if left:
        lines.append("%s... and %d more failed checks (see report.json)" % (indent, left))
    if not groups and row["reason"]:
        lines.append("%s%s" % (indent, row["reason"]))
    return lines


def _metric_lines(row, indent):
    """The success metrics an L6 row passed on (name, value, floor); the failed ones come with the failures."""
    return ["%s%s = %s (floor %s)" % (indent, c["name"].split(":", 1)[1], _short(c.get("actual")),
                                      _short(c.get("expected")))
            for c in row["checks"] if c.get("name", "").startswith("success_rate:") and c.get("passed")]


def summary_line(report):
    """The footer: '<passed>/<rows> passed[, N failed][, N skipped] in <levels' time>s' (levels_duration)."""
    summary = report["summary"]
    footer = "%d/%d passed" % (summary["passed"], summary["total"])
    if summary["failed"]:
        footer += ", %d failed" % summary["failed"]
    if summary["skipped"]:
        footer += ", %d skipped" % summary["skipped"]
    return footer + " in %s" % _seconds(report["levels_duration_s"])


def render_table(report, max_failed_checks=10, width=None):
    """The seed's VALIDATION RESULTS table for one cluster, as a list of lines (no trailing newlines); with `width` (a
    terminal's columns) a longer line is wrapped to it (wrap_line)."""
    return [text for text, _kind in render_table_kinds(report, max_failed_checks, width)]


def render_table_kinds(report, max_failed_checks=10, width=None):
    """Like render_table, as (line, kind) pairs; kind is PASS/FAIL/SKIPPED for a level row and the lines
    under it, NO_DATA for the no-data text, None for rules, header and footer (for colouring)."""
    lines = [(RULE, None), ("VALIDATION RESULTS: %s" % report["cluster"], None), (RULE, None)]
    if not report["has_data"]:
        lines.extend((part, "NO_DATA") for part in wrap_line(NO_DATA, width))
        lines.append((RULE, None))
        return lines
    rows = [r for r in report["levels"] if not r.get("diagnostic")]
    level_w = max([5] + [len(r["level"]) for r in rows]) + 3
    name_w = max([24] + [len(r["name"]) for r in rows])
    lines.append(("%s%s %s%s" % ("Level".ljust(level_w), "Name".ljust(name_w), "Status".ljust(9), "Time"), None))
    lines.append(("%s%s %s%s" % (("-" * 5).ljust(level_w), "-" * name_w, ("-" * 6).ljust(9), "----"), None))
    indent = " " * level_w
    row_lines = set()  # (wrapped, a level row continues under its name)
    for row in rows:
        time_text = _seconds(row["duration_s"])
        line = "%s%s %s%s" % (row["level"].ljust(level_w), row["name"].ljust(name_w),
                              row["status"].ljust(9), time_text)
        if row["status"] == "SKIPPED" and row["reason"]:
            line = "%s%s" % (line.ljust(level_w + name_w + 1 + 9 + 6), row["reason"])
        row_lines.add(len(lines))
        lines.append((line, row["status"]))
        lines.extend((text, row["status"]) for text in _metric_lines(row, indent))
        if row["status"] == "FAIL":
            lines.extend((text, "FAIL") for text in _failed_check_lines(row, indent, max_failed_checks))
    lines.append((RULE, None))
    for level_id in report["incomplete"]:
        row = [r for r in rows if r["id"] == level_id][0]
        lines.append(("note: %s %s was selected but has no result; the run is incomplete"
                      % (row["level"], row["name"]), "FAIL"))
    lines.append((summary_line(report), None))
    lines.extend(diagnostic_lines(report, max_failed_checks))
    lines.extend((text, None) for text in cost_lines(report.get("cost")))
    gate = report.get("phase0_gate")
    if gate and (gate.get("action") in ("pass", "warn") or gate.get("reason") == "same_run_failed"):
        lines.append(("Phase 0 gate%s: %s" % (" (warn)" if gate["action"] == "warn" else "", gate.get("message")),
                      "FAIL" if gate["action"] == "fail" else None))
    lines.extend(isolation_lines(report.get("isolation")))
    return [(part, kind) for index, (text, kind) in enumerate(lines)
            for part in wrap_line(text, width, indent + "  " if index in row_lines else None)]


def diagnostic_lines(report, max_failed_checks=10):
    """The rows that are not levels (Baseline, the Phase 0 gate), on their own line, failed checks under it."""
    lines = []
    for row in report["levels"]:
        if not row.get("diagnostic"):
            continue
        lines.append(("%s %s (diagnostic, not counted): %s in %s" % (
            row["level"], row["name"], row["status"], _seconds(row["duration_s"])), row["status"]))
        if row["status"] == "FAIL":
            lines.extend((text, "FAIL") for text in _failed_check_lines(row, "  ", max_failed_checks))
    return lines


def isolation_lines(isolation, evidence_per_node=4):
    """What bad-node isolation found, under the table: the suspects with their evidence, or none."""
    if not isinstance(isolation, dict):
        return []
    suspects = isolation.get("suspects") or []
    head = "Bad-node isolation: %d nodes, %s of at most %s rounds, %d MPIJobs, %.1f GPU-min (estimated %s)" % (
        isolation.get("nodes") or 0, isolation.get("rounds"), isolation.get("round_bound"),
        len(isolation.get("pairs") or []), float(isolation.get("gpu_minutes") or 0.0),
        (isolation.get("estimate") or {}).get("gpu_minutes_expected", "?"))
    out = [(head, "FAIL" if suspects else None)]
    for suspect in suspects:
        out.append(("  suspect %s (confidence %s)" % (suspect.get("node"), suspect.get("confidence")), "FAIL"))
        out.extend(("    %s" % line, "FAIL") for line in (suspect.get("evidence") or [])[:evidence_per_node])
    if not suspects:
        out.append(("  no bad node found%s" % (": " + isolation["note"] if isolation.get("note") else ""), None))
    elif isolation.get("note"):
        out.append(("  note: %s" % isolation["note"], None))
    return out


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
        for name, value in _cost_properties(report.get("cost")):
            ET.SubElement(props, "property", {"name": name, "value": _x(value)})
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


def _cost_properties(cost):
    if not cost:
        return []
    props = [("gpu_minutes", "%.2f" % cost["gpu_minutes"]),
             ("estimated_cost_usd", "" if cost["money"]["usd"] is None else "%.4f" % cost["money"]["usd"])]
    for level_id, entry in sorted(cost["by_level"].items()):
        props.append(("gpu_minutes.%s" % level_id, "%.2f" % entry["gpu_minutes"]))
    for itype, info in sorted(cost["money"]["by_instance_type"].items()):
        if info["price_per_hour_usd"] is not None:
            props.append(("price_per_hour_usd.%s" % itype, "%s (%s%s)" % (
                info["price_per_hour_usd"], info["source"], ", " + str(info["as_of"]) if info["as_of"] else "")))
    if cost.get("phase0"):
        expensive = cost["phase0"]["expensive"]
        props.append(("phase0_cost_usd", "" if cost["phase0"]["usd"] is None else "%.4f" % cost["phase0"]["usd"]))
        props.append(("phase0_expensive_equivalent_usd", "" if expensive["usd"] is None else "%.4f" % expensive["usd"]))
    return props


def _failed_text(check):
    parts = ["%s: %s" % (check.get("node") or "cluster", check.get("message") or check.get("name"))]
    parts.append("  expected: %s" % _short(check.get("expected")))
    parts.append("  actual: %s" % _short(check.get("actual")))
    if check.get("hint"):
        parts.append("  hint: %s" % check["hint"])
    if check.get("excerpt"):  # the log lines that show the cause (a failed L5/L6 run), already redacted
        parts.append("  log excerpt:")
        parts.extend("    %s" % line for line in check["excerpt"])
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


def write_reports(directory, reports, run_start=None, run_end=None, render_html=None):
    """Write report.json and junit.xml into directory, and report.html from the report.json document when
    render_html (document -> text, the controller's plugin_utils/_report_html.render_html) is given; returns
    the paths."""
    directory = os.path.expanduser(str(directory))
    document = report_json(reports, run_start, run_end)
    paths = [write_atomic(os.path.join(directory, "report.json"), dumps_json(document)),
             write_atomic(os.path.join(directory, "junit.xml"), junit_xml(reports, run_start))]
    if render_html is not None:
        paths.append(write_atomic(os.path.join(directory, "report.html"), render_html(plain(document))))
    return paths
