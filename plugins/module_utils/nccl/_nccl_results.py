# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Readers of a parse result for its consumers (level_assert's checks, reports, isolate, baselines).

The one rule for which row answers for a size (``row_at_size``), the busbw read from a row, the largest size,
``#wrong`` of a table, human-readable sizes and the one-line ``summarize``. They take the plain result dict of
``_nccl_parser.NcclLogParser`` (or facts an inventory made in its shape) and import no other ``_nccl*`` module.
Python 3.8+ syntax, standard library only (travels to managed hosts).
"""

from __future__ import annotations

SIZE_MATCH = 0.9   # a row answers for a size when it is at most 10% below it (see row_at_size)


def _size_of(row):
    size = row.get("size") if isinstance(row, dict) else None
    if isinstance(size, bool) or not isinstance(size, (int, float)):
        return None
    return size


def last_table(result, test=None):
    """The last table with rows (of one test when given), the one the checks and the report judge; or None."""
    for table in reversed(result.get("tables") or ()):
        if not isinstance(table, dict):
            continue
        if test is not None and table.get("test") != test:
            continue
        if table.get("rows"):
            return table
    return None


def row_at_size(result, size_bytes, test=None):
    """Row of the last table with rows (of one test when given) that answers for size_bytes, or None.

    The one rule (used by the checks of L3/Phase 0 and by reports): look at the last table in the
    log that has rows, restricted to tables whose ``test`` equals ``test`` when given; among its
    rows take those with ``SIZE_MATCH * size_bytes <= size <= size_bytes`` and return the one with
    the largest size; when that size was printed more than once (two processes' output), the row
    printed last wins. "At or below" because nccl-tests rounds sizes down to a multiple of the rank
    count for all_gather, alltoall and reduce_scatter (17179868160 B instead of 16 GiB); "at most
    10% below" so that a sweep that stopped at 512 MiB never answers for 1 GiB.
    """
    if size_bytes is None:
        return None
    chosen = last_table(result, test)
    if chosen is None:
        return None
    best = None
    low = size_bytes * SIZE_MATCH
    for row in chosen["rows"]:
        size = _size_of(row)
        if size is None or size > size_bytes or size < low:
            continue
        if best is None or size >= best["size"]:
            best = row
    return best


def busbw_at_size(result, size_bytes, test=None):
    """Out-of-place busbw (GB/s, as printed) of row_at_size(); the in-place one when out-of-place is N/A."""
    return row_busbw(row_at_size(result, size_bytes, test))


def row_busbw(row):
    """Out-of-place busbw (GB/s, as printed) of one row; the in-place one when out-of-place is N/A."""
    if not isinstance(row, dict):
        return None
    for key in ("out_of_place", "in_place"):
        side = row.get(key)
        if isinstance(side, dict) and isinstance(side.get("busbw"), (int, float)):
            return side["busbw"]
    flat = row.get("busbw")         # a row given as {size, busbw} (inventory-made facts)
    return flat if isinstance(flat, (int, float)) and not isinstance(flat, bool) else None


def largest_size(result, test=None):
    """Largest message size of any row (of one test when given), or None."""
    largest = None
    for table in result.get("tables") or ():
        if not isinstance(table, dict) or (test is not None and table.get("test") != test):
            continue
        for row in table.get("rows") or ():
            size = _size_of(row)
            if size is not None and (largest is None or size > largest):
                largest = size
    return largest


def human_size(size):
    """'16 GiB', '512 MiB', '1.50 KiB', '8 B'."""
    if size is None:
        return "?"
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    value = float(size)
    unit = 0
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024.0
        unit += 1
    if value == int(value):
        return "%d %s" % (int(value), units[unit])
    return "%.2f %s" % (value, units[unit])


def _gbps(value):
    text = "%.2f" % value
    text = text.rstrip("0").rstrip(".")
    return text


def summarize(result):
    """One human-readable line about a parse result."""
    tables = result.get("tables") or []
    head = tables[-1]["test"] if tables and tables[-1].get("test") else (
        "nccl-tests" if tables else "no nccl-tests results table")
    facts = []
    if result.get("nranks") is not None:
        facts.append("%d ranks" % result["nranks"])
    if result.get("nnodes") is not None:
        facts.append("on %d node%s" % (result["nnodes"], "" if result["nnodes"] == 1 else "s"))
    if result.get("network"):
        facts.append("over %s" % result["network"])
    parts = [head + (": " + " ".join(facts) if facts else "")]
    if tables:
        if len(tables) > 1:
            parts.append("%d tables" % len(tables))
        if result.get("peak_busbw") is not None:
            parts.append("peak busbw %s GB/s" % _gbps(result["peak_busbw"]))
        if result.get("busbw_at_largest_size") is not None:
            parts.append("busbw at %s %s GB/s" % (human_size(result.get("largest_size")),
                                                  _gbps(result["busbw_at_largest_size"])))
        if not tables[-1]["rows"]:
            parts.append("no rows")
        if result.get("wrong_total") is not None:
            parts.append("#wrong %d" % result["wrong_total"])
        parts.append("complete" if result.get("complete") else "incomplete")
    elif result.get("nccl_version"):
        parts.append("NCCL %s" % result["nccl_version"])
    ids = result.get("signature_ids") or []
    if ids:
        parts.append("signatures: %s" % ", ".join(ids))
    return ", ".join(parts)


def table_wrong(table):
    """#wrong total of one table; the 'Out of bounds' count for tables without a #wrong column."""
    total = None
    for row in table["rows"]:
        for side in (row["out_of_place"], row["in_place"]):
            if side is not None and side["wrong"] is not None:
                total = (total or 0) + side["wrong"]
    if total is None:
        return table["oob_values"]
    return total
