# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""report.html: the report.json document as one self-contained HTML page (docs/reports.md).

Standard library only, controller-only (the report callback writes it). No script, no external asset: inline
CSS, inline SVG charts, and a Content-Security-Policy that forbids everything else, so a node name or a log line
that slipped through escaping still could not load or run anything. Every text from the run goes through
:func:`esc` (node names, messages and hints come from the cluster and its logs).

Per cluster: the level table (status, time, reason) with the footer and the cost lines of the console table,
the per-node matrix (node x check, the failing message as the cell's title), the pair matrix and suspects of an
isolation run (``isolation`` of the cluster's statistics), and per NCCL sweep busbw against message size (log2
axis) with its floors and the physical limit of the instance type (``_profiles.busbw_limit``).
"""

from __future__ import annotations

import html
import math
import re

from ansible_collections.rlstack.validation.plugins.module_utils.gpu import _profiles
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._report import also_failed_text, cost_lines, \
    failed_groups, summary_line

# A matrix wider than this many checks, or taller than this many nodes, is cut with a note; report.json
# keeps everything. 512 nodes x 200 checks is ~100k cells, a few MB of HTML, still quick in a browser.
MAX_MATRIX_NODES = 512
MAX_MATRIX_CHECKS = 200
MAX_PAIR_NODES = 128

CSS = """
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #dde}
h3{font-size:15px;margin:18px 0 6px}.meta{color:#556;margin:0 0 12px}
table{border-collapse:collapse;margin:4px 0 8px}th,td{border:1px solid #d5d9e2;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f2f4f8}.num{text-align:right;font-variant-numeric:tabular-nums}
.st{font-weight:600;border-radius:3px;padding:1px 6px;white-space:nowrap}
.PASS{background:#d9f2df;color:#145a24}.FAIL{background:#fbdada;color:#8a1212}
.SKIPPED{background:#eceef2;color:#4a5160}.NO_DATA{background:#fbdada;color:#8a1212}
.reason{color:#333;max-width:70ch}.checks{margin:2px 0 0 0;padding-left:18px;color:#6b1010}.also{color:#556}
.foot{font-family:ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;background:#f7f8fa;
border:1px solid #e3e6ec;padding:8px;margin:8px 0}
table.mx td,table.mx th{padding:1px 4px;font-size:12px;text-align:center}
table.mx th.n{text-align:left;white-space:nowrap}.scroll{overflow-x:auto;max-width:100%}
table.mx th.c{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;font-weight:500}
td.p{background:#d9f2df;color:#145a24}td.f{background:#f3a5a5;color:#6b0000;font-weight:700}
td.w{background:#fde9b5;color:#6b4a00}td.m{background:#fbd0a8;color:#6b3000}td.i{background:#eef1f6;color:#667}
td.x{background:#fff}td.slow{background:#f3a5a5;color:#6b0000}td.ok{background:#d9f2df;color:#145a24}
td.self{background:#e4e7ee}.legend span{display:inline-block;margin-right:10px}
.legend i{display:inline-block;width:12px;height:12px;vertical-align:-2px;margin-right:3px;border:1px solid #ccd}
.note{color:#556;font-size:12px}pre.excerpt{font:12px/1.35 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;
word-break:break-all;background:#f7f8fa;border:1px solid #e3e6ec;color:#1d2330;padding:4px 6px;margin:4px 0;max-width:110ch}
svg{background:#fff;border:1px solid #e3e6ec;margin:4px 0}
svg text{font:11px system-ui,sans-serif;fill:#333}
"""

CELL = {"pass": ("p", "\u2713"), "fail": ("f", "\u2717"), "warn": ("w", "!"), "missing": ("m", "?"),
        "info": ("i", "i"), "none": ("x", "")}


def esc(value):
    """Text from the run as HTML text or attribute value (quotes too); None as ''."""
    return html.escape("" if value is None else str(value), quote=True)


def _status(value):
    text = str(value or "").upper()
    return text if text in ("PASS", "FAIL", "SKIPPED") else "FAIL"


def _badge(status):
    status = str(status or "")
    css = status if status in ("PASS", "FAIL", "SKIPPED", "NO_DATA") else "FAIL"
    return '<span class="st %s">%s</span>' % (css, esc(status))


def _seconds(value):
    if value is None:
        return "-"
    try:
        return "%ds" % int(round(float(value)))
    except (TypeError, ValueError):
        return "-"


def _num(value):
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def natural(text):
    """Sort key that puts node-2 before node-10."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", str(text))]


def human_size(size):
    """'8 B', '1 KiB', '16 GiB' for the chart's axis."""
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    value, unit = float(size), 0
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024.0
        unit += 1
    return ("%d %s" if value == int(value) else "%.1f %s") % (value, units[unit])


# --------------------------------------------------------------------------------------------------
# the level table


def level_table(report):
    rows = []
    for row in report.get("levels") or []:
        groups = failed_groups(row.get("checks"))
        reason = esc(row.get("reason") or "")
        if row.get("status") == "FAIL" and groups:
            items = "".join("<li>%s: %s%s%s</li>" % (
                esc(c.get("node") or "cluster"), esc(c.get("message") or c.get("name")),
                '<div class="also">%s</div>' % esc(also_failed_text(c, others)) if others else "", _excerpt(c))
                for c, others in groups[:10])
            left = sum(1 + len(others) for _check, others in groups[10:])
            more = "<li>... and %d more (see the node matrix)</li>" % left if left else ""
            reason = '<ul class="checks">%s%s</ul>' % (items, more)
        rows.append('<tr><td>%s</td><td>%s</td><td>%s</td><td class="num">%s</td><td class="reason">%s</td></tr>' % (
            esc(row.get("level")), esc(row.get("name")), _badge(_status(row.get("status"))),
            esc(_seconds(row.get("duration_s"))), reason))
    head = "<tr><th>Level</th><th>Name</th><th>Status</th><th>Time</th><th>Reason</th></tr>"
    footer = [summary_line(report)] if report.get("summary") and "levels_duration_s" in report else []
    footer += cost_lines(report.get("cost"))
    gate = report.get("phase0_gate")
    if isinstance(gate, dict) and gate.get("message"):
        footer.append("Phase 0 gate (%s): %s" % (gate.get("action") or "-", gate.get("message")))
    foot = '<div class="foot">%s</div>' % esc("\n".join(footer)) if footer else ""
    return '<table class="levels">%s%s</table>%s' % (head, "".join(rows), foot)


def _excerpt(check):
    """The log lines a failed check carries (a failed L5/L6 run's cause and last lines, redacted), as a block."""
    lines = [str(line) for line in check.get("excerpt") or []]
    if not lines:
        return ""
    return '<pre class="excerpt">%s</pre>' % esc("\n".join(lines))


# --------------------------------------------------------------------------------------------------
# the node matrix


def _cell_kind(check):
    if check.get("evidence_missing"):
        return "missing"
    if check.get("op") == "info":
        return "info"
    if not check.get("passed"):
        return "fail"
    if check.get("warning"):
        return "warn"
    return "pass"


def _cell_title(node, check):
    parts = ["%s: %s" % (node, check.get("message") or check.get("name"))]
    if not check.get("passed") or check.get("warning"):
        for key in ("expected", "actual"):
            if check.get(key) not in (None, ""):
                parts.append("%s: %s" % (key, check.get(key)))
        if check.get("hint"):
            parts.append("hint: %s" % check["hint"])
        parts.extend(str(line) for line in (check.get("excerpt") or [])[:5])
    return "\n".join(parts)


def node_matrix_data(report):
    """(columns [(row id, check name)], nodes [name], cells {(node, column): check}); '(cluster)' for checks
    without a node. Columns are per level row (the L5 rows of two examples are two groups), and the last check
    of a (node, row, name) wins."""
    columns, nodes, cells = [], [], {}
    seen_columns, seen_nodes = set(), set()
    for row in report.get("levels") or []:
        for check in row.get("checks") or []:
            if not isinstance(check, dict):
                continue
            column = (str(row.get("id") or row.get("level")), str(check.get("name") or "check"))
            node = str(check.get("node") or "(cluster)")
            if column not in seen_columns:
                seen_columns.add(column)
                columns.append(column)
            if node not in seen_nodes:
                seen_nodes.add(node)
                nodes.append(node)
            cells[(node, column)] = check
    nodes.sort(key=lambda n: (n != "(cluster)", natural(n)))
    return columns, nodes, cells


def _group_label(title, span):
    """A level group's header: 'L5 trl-eval-low' cut to what its columns can hold (the title has it all)."""
    room = max(3, span * 3)
    return title if len(title) <= room else title[:room - 1] + "…"


def node_matrix(report):
    columns, nodes, cells = node_matrix_data(report)
    if not columns:
        return '<p class="note">No checks were recorded.</p>'
    notes = []
    if len(columns) > MAX_MATRIX_CHECKS:
        notes.append("first %d of %d checks shown" % (MAX_MATRIX_CHECKS, len(columns)))
        columns = columns[:MAX_MATRIX_CHECKS]
    failing = [n for n in nodes if any(not cells[(n, c)].get("passed") for c in columns if (n, c) in cells)]
    if len(nodes) > MAX_MATRIX_NODES:
        keep = failing[:MAX_MATRIX_NODES]
        keep += [n for n in nodes if n not in keep][:MAX_MATRIX_NODES - len(keep)]
        notes.append("%d of %d nodes shown, failing nodes first" % (len(keep), len(nodes)))
        nodes = [n for n in nodes if n in set(keep)]
    titles = dict((str(row.get("id") or row.get("level")), "%s %s" % (row.get("level") or "", row.get("name") or ""))
                  for row in report.get("levels") or [])
    groups, last = [], None
    for row_id, _name in columns:
        if groups and last == row_id:
            groups[-1][1] += 1
        else:
            groups.append([row_id, 1])
        last = row_id
    head1 = "<tr><th></th>%s</tr>" % "".join('<th colspan="%d" title="%s">%s</th>' % (
        span, esc(titles.get(row_id, row_id)), esc(_group_label(titles.get(row_id, row_id), span)))
        for row_id, span in groups)
    head2 = '<tr><th class="n">node</th>%s</tr>' % "".join('<th class="c">%s</th>' % esc(name) for _lv, name in columns)
    body = []
    for node in nodes:
        tds = []
        for column in columns:
            check = cells.get((node, column))
            if check is None:
                tds.append('<td class="x"></td>')
                continue
            css, mark = CELL[_cell_kind(check)]
            tds.append('<td class="%s" title="%s">%s</td>' % (css, esc(_cell_title(node, check)), mark))
        body.append('<tr><th class="n">%s</th>%s</tr>' % (esc(node), "".join(tds)))
    legend = ('<p class="legend"><span><i class="p" style="background:#d9f2df"></i>pass</span>'
              '<span><i style="background:#f3a5a5"></i>fail</span><span><i style="background:#fde9b5"></i>warning'
              '</span><span><i style="background:#fbd0a8"></i>evidence missing</span><span><i style="background:'
              '#eef1f6"></i>recorded, not judged</span> hover a cell for its message</p>')
    note = '<p class="note">%s (report.json has all)</p>' % esc("; ".join(notes)) if notes else ""
    summary = '<p class="meta">%d node(s), %d with a failed check</p>' % (len(nodes), len(failing))
    return '%s%s<div class="scroll"><table class="mx">%s%s%s</table></div>%s' % (
        summary, legend, head1, head2, "".join(body), note)


# --------------------------------------------------------------------------------------------------
# the pair matrix of an isolation run


def _suspects(isolation):
    out = []
    for item in isolation.get("suspects") or []:
        if isinstance(item, dict):
            out.append({"node": str(item.get("node") or ""), "confidence": item.get("confidence"),
                        "evidence": [str(e) for e in item.get("evidence") or []]})
        else:
            out.append({"node": str(item), "confidence": None, "evidence": []})
    return out


def isolation_pairs(isolation):
    """The 2-node pairs of an isolation record as [{a, b, busbw_gbps, status, reason}].

    Takes the documented ``pairs: [{a, b, busbw_gbps, status}]`` and the isolate role's own records
    (``_isolate.outcome``: ``{nodes: [a, b], phase, busbw_gbps, crashed, error, slow}``); bisection steps (groups of
    more than two nodes) are not pairs and are left to the evidence lines.
    """
    out = []
    for item in isolation.get("pairs") or []:
        if not isinstance(item, dict):
            continue
        if item.get("a") and item.get("b"):
            out.append({"a": str(item["a"]), "b": str(item["b"]), "busbw_gbps": _num(item.get("busbw_gbps")),
                        "status": str(item.get("status") or ""), "reason": str(item.get("reason") or "")})
            continue
        nodes = item.get("nodes")
        if not isinstance(nodes, list) or len(nodes) != 2 or item.get("phase") == "bisect":
            continue
        status = "crashed" if item.get("crashed") else ("slow" if item.get("slow") else "ok")
        reason = "; ".join(str(x) for x in (item.get("phase") and "%s round %s" % (item["phase"], item.get("round")),
                                            item.get("slow"), item.get("error"), item.get("job")) if x)
        out.append({"a": str(nodes[0]), "b": str(nodes[1]), "busbw_gbps": _num(item.get("busbw_gbps")),
                    "status": status, "reason": reason})
    return out


def pair_matrix(isolation):
    """The isolation section: suspects with evidence, then the node x node matrix of the pairs' busbw."""
    if not isinstance(isolation, dict):
        return ""
    pairs = isolation_pairs(isolation)
    suspects = _suspects(isolation)
    parts = ["<h3>Bad-node isolation</h3>"]
    facts = []
    for key, label in (("nodes", "nodes"), ("rounds", "rounds"), ("round_bound", "round bound"),
                       ("floor_gbps", "pair floor GB/s"), ("gpu_minutes", "GPU-min")):
        if isolation.get(key) is not None:
            facts.append("%s %s" % (label, isolation[key]))
    facts.append("%d pair(s)" % len(pairs))
    parts.append('<p class="meta">%s</p>' % esc(", ".join(facts)))
    if isolation.get("note"):
        parts.append('<p class="note">%s</p>' % esc(isolation["note"]))
    if suspects:
        items = []
        for s in suspects:
            conf = " (confidence %s)" % s["confidence"] if s["confidence"] else ""
            evidence = "".join("<li>%s</li>" % esc(e) for e in s["evidence"])
            items.append("<li><b>%s</b>%s%s</li>" % (esc(s["node"]), esc(conf),
                                                     "<ul>%s</ul>" % evidence if evidence else ""))
        parts.append('<p>Suspect node(s):</p><ul class="suspects">%s</ul>' % "".join(items))
    else:
        parts.append('<p class="suspects">No suspect node: every node had a fast pair.</p>')
    if not pairs:
        return "".join(parts)
    nodes = sorted({p["a"] for p in pairs} | {p["b"] for p in pairs}, key=natural)
    suspect_names = {s["node"] for s in suspects}
    if len(nodes) > MAX_PAIR_NODES:
        keep = [n for n in nodes if n in suspect_names][:MAX_PAIR_NODES]
        keep += [n for n in nodes if n not in keep][:MAX_PAIR_NODES - len(keep)]
        parts.append('<p class="note">%s</p>' % esc("%d of %d nodes shown, suspects first" % (len(keep), len(nodes))))
        nodes = sorted(keep, key=natural)
    matrix = {}
    for p in pairs:
        matrix[(p["a"], p["b"])] = p  # a verification pair after a ring pair of the same nodes wins
        matrix[(p["b"], p["a"])] = p
    head = '<tr><th class="n">busbw GB/s</th>%s</tr>' % "".join('<th class="c">%s</th>' % esc(n) for n in nodes)
    body = []
    for a in nodes:
        tds = []
        for b in nodes:
            if a == b:
                tds.append('<td class="self"></td>')
                continue
            p = matrix.get((a, b))
            if p is None:
                tds.append('<td class="x"></td>')
                continue
            bw = p["busbw_gbps"]
            status = p["status"]
            css = "ok" if status.lower() in ("ok", "pass", "fast") else "slow"
            text = "%.0f" % bw if bw is not None else "\u2717"
            title = "%s - %s: %s, %s" % (a, b, "%.2f GB/s" % bw if bw is not None else "no bandwidth", status or "?")
            if p.get("reason"):
                title += "\n" + str(p["reason"])
            tds.append('<td class="%s" title="%s">%s</td>' % (css, esc(title), esc(text)))
        mark = " *" if a in suspect_names else ""
        body.append('<tr><th class="n">%s</th>%s</tr>' % (esc(a + mark), "".join(tds)))
    parts.append('<div class="scroll"><table class="mx pairs">%s%s</table></div><p class="note">* suspect; red: slow or crashed pair, green: '
                 'fast pair; hover a cell for the pair</p>' % (head, "".join(body)))
    return "".join(parts)


# --------------------------------------------------------------------------------------------------
# busbw against message size


def sweep_limit(sweep, fingerprint=None):
    """The physical limit of a sweep from the instance profile, or None (unknown instance type)."""
    itype = sweep.get("instance_type") or (fingerprint or {}).get("instance_type")
    if not itype or "," in str(itype):
        return None
    return _profiles.busbw_limit(itype, sweep.get("nnodes"), sweep.get("nranks"))


def busbw_chart(sweep, limit=None, width=640, height=300):
    """An SVG line chart: busbw (GB/s) over message size on a log2 axis, floors and the limit as lines."""
    points = [(int(p["size"]), float(p["busbw"])) for p in sweep.get("points") or []
              if isinstance(p, dict) and _num(p.get("size")) and _num(p.get("size")) > 0 and _num(p.get("busbw")) is not None]
    if not points:
        return ""
    floors = [(int(f["size"]), float(f["floor"])) for f in sweep.get("floors") or []
              if isinstance(f, dict) and _num(f.get("size")) and _num(f.get("floor")) is not None]
    left, right, top, bottom = 56, 150, 16, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [math.log2(p[0]) for p in points] + [math.log2(f[0]) for f in floors if f[0] > 0]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    if x1 == x0:
        x1 = x0 + 1
    y_top = max([p[1] for p in points] + [f[1] for f in floors] + ([limit["gbps"]] if limit else []) + [1e-9])
    y_top = _nice(y_top * 1.08)

    def px(size):
        return left + (math.log2(size) - x0) / float(x1 - x0) * plot_w

    def py(value):
        return top + plot_h - (max(value, 0.0) / y_top) * plot_h

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" '
           'aria-label="%s">' % (width, height, width, height, esc("busbw against message size: " + _sweep_title(sweep)))]
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#fbfcfe" stroke="#c9ceda"/>' % (left, top, plot_w, plot_h))
    step = max(1, int(math.ceil((x1 - x0) / 10.0)))
    for e in range(x0, x1 + 1, step):
        x = px(2 ** e)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e6e9f0"/>' % (x, top, x, top + plot_h))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x, top + plot_h + 14, esc(human_size(2 ** e))))
    for i in range(0, 6):
        value = y_top * i / 5.0
        y = py(value)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e6e9f0"/>' % (left, y, left + plot_w, y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 4, y + 4, esc(_fmt_gbps(value))))
    out.append('<text x="%d" y="%d" text-anchor="middle">message size (log2)</text>' % (left + plot_w // 2, height - 6))
    out.append('<text x="12" y="%d" transform="rotate(-90 12 %d)" text-anchor="middle">busbw GB/s</text>'
               % (top + plot_h // 2, top + plot_h // 2))
    if limit:
        y = py(limit["gbps"])
        out.append('<line class="limit" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#6b3fa0" stroke-width="1.5" '
                   'stroke-dasharray="8 4"><title>%s</title></line>' % (
                       left, y, left + plot_w, y, esc("physical limit %.1f GB/s (%s): %s" % (
                           limit["gbps"], limit["link"], limit["rule"]))))
        out.append('<text x="%d" y="%.1f" fill="#6b3fa0">limit %s GB/s</text>' % (
            left + plot_w + 6, y + 4, esc(_fmt_gbps(limit["gbps"]))))
    for size, floor in floors:
        y = py(floor)
        x = px(size) if size > 0 else left
        out.append('<line class="floor" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#c0392b" stroke-width="1.5" '
                   'stroke-dasharray="3 3"><title>%s</title></line>' % (
                       left, y, left + plot_w, y, esc("floor %s GB/s at %s" % (_fmt_gbps(floor), human_size(size)))))
        out.append('<circle cx="%.1f" cy="%.1f" r="4" fill="none" stroke="#c0392b" stroke-width="2"/>' % (x, y))
        out.append('<text x="%d" y="%.1f" fill="#c0392b">floor %s GB/s @ %s</text>' % (
            left + plot_w + 6, y + 4, esc(_fmt_gbps(floor)), esc(human_size(size))))
    path = " ".join("%.1f,%.1f" % (px(s), py(bw)) for s, bw in points)
    out.append('<polyline class="busbw" points="%s" fill="none" stroke="#1f6fd1" stroke-width="2"/>' % path)
    for size, bw in points:
        out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="#1f6fd1"><title>%s</title></circle>' % (
            px(size), py(bw), esc("%s: %.2f GB/s" % (human_size(size), bw))))
    out.append("</svg>")
    return "".join(out)


def _nice(value):
    """The next 'round' number at or above value (1, 2, 2.5, 5 x 10^k) for the y axis."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for factor in (1, 2, 2.5, 5, 10):
        if factor * power >= value:
            return float(factor * power)
    return float(10 * power)


def _fmt_gbps(value):
    if value == 0 or (value >= 10 and value == int(value)):
        return "%.0f" % value
    return ("%.1f" % value) if value >= 10 else ("%.2f" % value)


def _sweep_title(sweep):
    bits = [str(sweep.get("name") or "nccl")]
    if sweep.get("test"):
        bits.append(str(sweep["test"]))
    if sweep.get("node"):
        bits.append("on " + str(sweep["node"]))
    if sweep.get("nranks"):
        bits.append("%s ranks" % sweep["nranks"])
    if sweep.get("nnodes"):
        bits.append("%s node(s)" % sweep["nnodes"])
    if sweep.get("instance_type"):
        bits.append(str(sweep["instance_type"]))
    return ", ".join(bits)


def sweeps_section(report):
    parts = []
    for row in report.get("levels") or []:
        for sweep in row.get("sweeps") or []:
            if not isinstance(sweep, dict):
                continue
            limit = sweep_limit(sweep, row.get("fingerprint"))
            chart = busbw_chart(sweep, limit)
            if not chart:
                continue
            note = ("physical limit: %.1f GB/s, %s (%s)" % (limit["gbps"], limit["link"], limit["source"]) if limit
                    else "physical limit: not drawn (no instance profile for this sweep)")
            parts.append('<h3>%s %s: %s</h3>%s<p class="note">%s</p>' % (
                esc(row.get("level")), esc(row.get("name")), esc(_sweep_title(sweep)), chart, esc(note)))
    if not parts:
        return ""
    return "<h3>busbw against message size</h3>" + "".join(parts)


# --------------------------------------------------------------------------------------------------
# the page


def cluster_section(report):
    title = "%s %s" % (esc(report.get("cluster")), _badge(report.get("status") if report.get("has_data") else "NO_DATA"))
    meta = []
    for key, label in (("run_id", "run"), ("start", "start")):
        if report.get(key):
            meta.append("%s %s" % (label, report[key]))
    if report.get("duration_s") is not None:
        meta.append("wall clock %s" % _seconds(report["duration_s"]))
    parts = ['<section class="cluster"><h2>%s</h2><p class="meta">%s</p>' % (title, esc(", ".join(meta)))]
    if not report.get("has_data"):
        parts.append("<p>No validation results were recorded for this cluster: the play failed or stopped before "
                     "planning (see the task errors of the run).</p></section>")
        return "".join(parts)
    parts.append("<h3>Levels</h3>")
    parts.append(level_table(report))
    parts.append("<h3>Nodes and checks</h3>")
    parts.append(node_matrix(report))
    parts.append(pair_matrix(report.get("isolation")))
    parts.append(sweeps_section(report))
    parts.append("</section>")
    return "".join(parts)


def render_html(document):
    """report.html for a report.json document (``_report.report_json``); returns the text."""
    document = document if isinstance(document, dict) else {}
    clusters = [c for c in document.get("clusters") or [] if isinstance(c, dict)]
    status = str(document.get("status") or "FAIL")
    when = ", ".join("%s %s" % (label, document[key]) for key, label in (("start", "start"), ("end", "end"))
                     if document.get(key))
    body = "".join(cluster_section(c) for c in clusters) or "<p>No cluster reported a result.</p>"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<title>%s</title><style>%s</style></head><body>"
        "<h1>Validation report %s</h1><p class=\"meta\">%s</p>%s"
        "<p class=\"note\">Written by %s (schema %s) next to report.json and junit.xml.</p></body></html>\n"
    ) % (esc("Validation report: %s" % status), CSS, _badge(status), esc(when), body,
         esc(document.get("generator") or "rlstack.validation.report"), esc(document.get("schema_version")))
