"""The launcher log of one 2-node nccl-tests MPIJob of a bad-node isolation run (docs/isolation.md).

A pair's log is a real 2 x p5.48xlarge nccl-tests log with its bandwidth scaled to what that pair would
reach, not a log written by hand:

* source: `sim/replay/logs/l3-efa-healthy.log` (composed by `compose_logs.py` from the public logs in
  `sim/replay/sources/`; its all_reduce table is the 2-node p5 EKS MPIJob run of
  `allreduce-p5-eks-mpijob-launcher-excerpt.log`, 313.29 GB/s at 1 GiB; `sim/replay/logs/SOURCES.md`);
* the pair's ratio is the smallest `busbw_ratio` of its two nodes in the scenario's `pairs:` (1.0 for a
  node the scenario does not name): a ring all-reduce between two nodes runs at the pace of the slower
  node's network, so a pair with a degraded node is as slow as that node;
* in every row of the results table, algbw and busbw (out-of-place and in-place) are multiplied by the
  ratio and the time divided by it (busbw = algbw x 2(n-1)/n and algbw = size / time, so the three stay
  consistent); the "Avg bus bandwidth" footer is multiplied by the ratio. Every other line (NCCL INFO,
  the header, sizes, counts, #wrong) is the source's, byte for byte, and each number keeps its column
  width and its number of decimals;
* a pair with a node whose scenario entry says `crash: true` gets `l3-nccl-crash.log` unchanged (the
  healthy log cut after 64 MiB, UCX's "Caught signal 11" line and the public backtrace), and its launcher
  fails with exit code 139 (simctl.py's `sim-outcome-pair-crash` stage).
"""
from __future__ import annotations

import re
from pathlib import Path

LOGS = Path(__file__).resolve().parent / "logs"
HEALTHY = LOGS / "l3-efa-healthy.log"
CRASH = LOGS / "l3-nccl-crash.log"

# size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong (nccl-tests >= 2.13)
_ROW = re.compile(r"^(?P<prefix>.*?(?:<stdout>:)?)(?P<body>\s+\d+\s+\d+\s+"
                  r"(?:float|double|half|bfloat16|u?int8|u?int32|u?int64|f8e4m3|f8e5m2)\s+"
                  r"(?:sum|prod|max|min|avg|none)\s+-?\d+(?:\s+\S+){8})\s*$")
_AVG = re.compile(r"^(?P<head>.*# Avg bus bandwidth\s*:\s*)(?P<value>[0-9.]+)(?P<tail>\s*)$")
# positions (in the row's whitespace-separated fields) of time, algbw, busbw of both halves
_TIME, _BW = (5, 9), (6, 7, 10, 11)


def _fmt(token: str, value: float) -> str:
    decimals = len(token.split(".")[1]) if "." in token else 0
    return "%.*f" % (decimals, value)


def _scale_row(body: str, ratio: float) -> str:
    spans = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", body)]
    out, last = [], 0
    for index, (start, end, token) in enumerate(spans):
        try:
            number = float(token)
        except ValueError:
            number = None
        new = token
        if number is not None and index in _BW:
            new = _fmt(token, number * ratio)
        elif number is not None and index in _TIME and ratio > 0:
            new = _fmt(token, number / ratio)
        # right-aligned columns: a longer number takes the space in front of it
        gap = body[last:start]
        if len(new) > len(token):
            gap = gap[:max(1, len(gap) - (len(new) - len(token)))]
        elif len(new) < len(token):
            gap = gap + " " * (len(token) - len(new))
        out.append(gap + new)
        last = end
    return "".join(out) + body[last:]


def scale(text: str, ratio: float) -> str:
    """The log with its nccl-tests bandwidth scaled by `ratio` (see the module docstring)."""
    if ratio == 1.0:
        return text
    lines = []
    for line in text.split("\n"):
        row = _ROW.match(line)
        avg = _AVG.match(line)
        if row:
            line = row.group("prefix") + _scale_row(row.group("body"), ratio)
        elif avg:
            line = avg.group("head") + _fmt(avg.group("value"), float(avg.group("value")) * ratio) + avg.group("tail")
        lines.append(line)
    return "\n".join(lines)


def node_entry(pairs: dict, node: str, node_variant) -> dict:
    """The scenario's entry for `node` (keys as in `replay:`: a name, a comma list, a pattern or "*")."""
    entry = node_variant(pairs or {}, node)
    return entry if isinstance(entry, dict) else {}


def pair_log(pairs: dict, nodes: list, node_variant) -> tuple:
    """(log text, crashed) of a pair MPIJob whose workers ran on `nodes`, under the scenario's `pairs:`."""
    entries = [node_entry(pairs, n, node_variant) for n in nodes]
    if any(e.get("crash") for e in entries):
        return CRASH.read_text(encoding="utf-8"), True
    ratio = min([float(e.get("busbw_ratio", 1.0)) for e in entries] or [1.0])
    return scale(HEALTHY.read_text(encoding="utf-8"), ratio), False
