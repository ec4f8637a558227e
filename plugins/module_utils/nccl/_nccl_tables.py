# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nccl-tests results tables: header and row parsing, and the parser's part that keeps tables.

``_parse_header``/``_parse_row`` read one line of any header generation since NCCL 1 (columns found by
name: -C, -I and -S tables too); ``TablesMixin`` (part of ``_nccl_parser.NcclLogParser``) keeps the tables of
each output stream (rank labels), their footers and bounds, the table the launcher printed as nccl-tests JSON
(``_nccl_json``), and makes the table part of the result dict. Python 3.8+ syntax, standard library only
(travels to managed hosts).
"""

from __future__ import annotations

import math
import re

from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_base import MAX_HOSTS, MAX_STREAMS
from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_json import (
    NcclTestsJsonError,
    compare_with_text,
    load as load_tests_json,
    tables_from_json,
)
from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_results import table_wrong

MAX_TABLES = 256                # most recent tables kept (older ones are counted in tables_omitted)
MAX_ROWS_PER_TABLE = 4096       # rows kept per table (more are counted in rows_omitted)
MAX_ROWS_TOTAL = 8192           # rows kept over all tables; the oldest tables are dropped beyond

_OOB_RX = re.compile(r"Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?")
_AVG_RX = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)")
_LABEL_RX = re.compile(r"(?:\[\d+,\d+\](?:<\w+>)?|\[rank\d+\]|[\w.\-]+):")

_LEAD_NAMES = {
    "size": "size", "bytes": "size",
    "count": "count", "n": "count", "elements": "count",
    "type": "type",
    "redop": "redop", "op": "redop",
    "root": "root",
}
_TIME_NAMES = ("time", "cputime")
_DATE_RX = re.compile(r"\d{4}-\d\d-\d\d\Z")
_COUNT_NAMES = ("wrong", "errors")
_ERROR_NAMES = ("error", "res", "maxerr")
_WORD_RX = re.compile(r"[A-Za-z_][\w.\-]*\Z")
_INT_RX = re.compile(r"-?\d+\Z")
ROW_LAST_CHARS = frozenset("0123456789Anf")   # a row ends with a number, N/A, nan or inf


def _number(token):
    """Float value of a token, None for N/A or a non-finite value, raise ValueError otherwise."""
    if token in ("N/A", "n/a", "-"):
        return None
    value = float(token)
    if math.isnan(value) or math.isinf(value):
        return None
    return value


def _is_number(token):
    try:
        float(token)
    except ValueError:
        return False
    return True


def _stream_key(tokens):
    """Rank labels among prefix tokens ('[1,0]<stdout>:', '13:', '[rank0]:'), as a tuple."""
    key = []
    for token in tokens:
        token = token.rstrip("#")
        if token and _LABEL_RX.fullmatch(token):
            key.append(token)
    return tuple(key)


class _Header(object):
    """Column layout of one nccl-tests results table."""

    __slots__ = ("lead", "groups", "trailing", "width", "time_scale")

    def __init__(self, lead, groups, time_scale, trailing=0):
        self.lead = lead            # names of the leading columns (size, count, type, redop, root, ...)
        # per measurement group: (kind of the 4th column: "count" | "error" | None, number of -I
        # per-iteration columns i_min i_max i_p99 i_cv% after it)
        self.groups = groups
        self.trailing = trailing    # tokens after the last group: 2 for the -S timestamp (date, time)
        self.width = len(lead) + sum(3 + (kind is not None) + extra for kind, extra in groups) + trailing
        self.time_scale = time_scale

    def same_as(self, other):
        return (other is not None and self.lead == other.lead and self.groups == other.groups
                and self.trailing == other.trailing)


def _parse_header(tokens):
    """Return (_Header, index of the first header token) or None."""
    start = None
    for index, token in enumerate(tokens):
        name = token.rsplit("#", 1)[-1].lower()
        if name in ("size", "bytes"):
            start = index
            break
    if start is None:
        return None
    names = [tokens[start].rsplit("#", 1)[-1].lower()]
    names.extend(token.lstrip("#").lower() for token in tokens[start + 1:])
    times = [i for i, name in enumerate(names) if name in _TIME_NAMES]
    if not times:
        return None
    first_time = times[0]
    lead = []
    for name in names[:first_time]:
        lead.append(_LEAD_NAMES.get(name, name))
    if len(lead) < 3 or lead[0] != "size" or lead[1] != "count" or "type" not in lead:
        return None
    # Columns are found by name, so -C (cputime), -I (i_min i_max i_p99 i_cv% per side) and -S (a
    # trailing timestamp) tables parse like plain ones (nccl-tests src/util.cu writeResultHeader).
    groups = []
    trailing = 0
    rest = names[first_time:]
    while rest:
        if rest == ["timestamp"]:
            trailing = 2
            break
        if len(rest) < 3 or rest[0] not in _TIME_NAMES or rest[1] != "algbw" or rest[2] != "busbw":
            return None
        index = 3
        kind = None
        if len(rest) > 3 and rest[3] not in _TIME_NAMES and rest[3] != "timestamp" and not rest[3].startswith("i_"):
            fourth = rest[3]
            if fourth in _COUNT_NAMES:
                kind = "count"
            elif fourth in _ERROR_NAMES:
                kind = "error"
            else:
                return None
            index = 4
        extra = 0
        while index < len(rest) and rest[index].startswith("i_"):
            extra += 1
            index += 1
        groups.append((kind, extra))
        rest = rest[index:]
        if len(groups) > 2:
            return None
    # NCCL 1 era tables ("bytes N type op") printed milliseconds; nccl-tests 2.x prints
    # microseconds and says so in the units line below the header.
    scale = 1000.0 if names[0] == "bytes" else 1.0
    return _Header(tuple(lead), tuple(groups), scale, trailing), start


def _parse_row(tokens, header):
    """Return a row dict from the last header.width tokens, or None when they are not a row."""
    width = header.width
    if len(tokens) < width:
        return None
    if len(tokens) > width and _is_number(tokens[-width - 1]):
        return None          # more numeric columns than the header has: not one of its rows
    cells = tokens[-width:]
    if header.trailing:
        if not _DATE_RX.match(cells[-2]):
            return None
        cells = cells[:-header.trailing]
    row = {"size": None, "count": None, "type": None, "redop": None, "root": None}
    index = 0
    for name in header.lead:
        cell = cells[index]
        index += 1
        if name in ("size", "count"):
            if not cell.isdigit():
                if name == "size" and index == 1 and ":" in cell:
                    cell = cell.rsplit(":", 1)[1]       # label glued to the size: "[1,0]<stdout>:8"
                if not cell.isdigit():
                    return None
            row[name] = int(cell)
        elif name == "root":
            if not _INT_RX.match(cell):
                return None
            row["root"] = int(cell)
        elif name in ("type", "redop"):
            if not _WORD_RX.match(cell):
                return None
            row[name] = cell
    sides = []
    for kind, extra in header.groups:
        side = _parse_side(cells[index:index + 3 + (kind is not None) + extra], kind, header.time_scale)
        if side is None:
            return None
        index += 3 + (kind is not None) + extra
        sides.append(side)
    row["out_of_place"] = sides[0]
    row["in_place"] = sides[1] if len(sides) > 1 else None
    return row


def _parse_side(cells, kind, time_scale):
    """One measurement group of a row (time, algbw, busbw, [#wrong | error], [-I columns]), or None."""
    try:
        time_value = _number(cells[0])
        algbw = _number(cells[1])
        busbw = _number(cells[2])
    except ValueError:
        return None
    side = {
        "time_us": None if time_value is None else round(time_value * time_scale, 6),
        "algbw": algbw,
        "busbw": busbw,
        "wrong": None,
        "error": None,
    }
    index = 3
    if kind is not None:
        cell = cells[index]
        index += 1
        if kind == "count":
            if cell.isdigit():
                side["wrong"] = int(cell)
            elif cell not in ("N/A", "n/a", "-"):
                try:
                    side["error"] = _number(cell)      # nccl-tests printing a float here
                except ValueError:
                    return None
        else:
            try:
                side["error"] = _number(cell)
            except ValueError:
                return None
    for cell in cells[index:]:
        try:
            _number(cell)               # -I per-iteration statistics: checked, not kept
        except ValueError:
            return None
    return side


class _Stream(object):
    __slots__ = ("header", "table", "closed")

    def __init__(self):
        self.header = None
        self.table = None
        self.closed = True


def _infer_test(table, nranks):
    """Name the collective of a table printed without any test name, when the columns tell."""
    rows = table["rows"]
    if not rows:
        return None
    first = rows[0]
    ratio = None
    for row in rows:
        side = row["out_of_place"]
        if side["algbw"] and side["busbw"] is not None and side["algbw"] >= 1.0:
            ratio = side["busbw"] / side["algbw"]
    redop = first["redop"]
    root = first["root"]
    real_op = redop is not None and redop != "none"
    if redop is None and root is None:
        return "all_gather_perf"                     # old format: all_gather has neither column
    if root is not None and root >= 0:
        if redop is None or redop == "none":
            return "broadcast_perf" if redop is None else None
        return "reduce_perf"
    if real_op and ratio is not None:
        if ratio > 1.02:
            return "all_reduce_perf"                 # 2(n-1)/n
        if ratio < 0.98:
            return "reduce_scatter_perf"             # (n-1)/n
        if nranks == 2:
            return "all_reduce_perf"
    return None


class TablesMixin(object):
    """The results tables of NcclLogParser: per-stream tables, rows, footers and bounds, the launcher's JSON."""

    def _init_tables(self):
        self._tables = []
        self._tables_omitted = 0
        self._kept_rows = 0
        self._omitted_wrong = None
        self._streams = {}
        self._open = 0               # number of streams with an open table
        self._test = None            # last test name seen (command line, banner, marker)
        self._peak = None
        # nccl-tests JSON printed by the launcher (the last complete document wins)
        self._json_table = None
        self._json_facts = None
        self._json_error = None

    @property
    def json_error(self):
        return self._json_error

    def tests_json(self, text, line_no):
        """Read one nccl-tests JSON document (a standalone -J file); see parse_json_document()."""
        self._tests_json(text, line_no)

    def _tests_json(self, text, line_no):
        """The nccl-tests JSON document the MPIJob launcher printed after JSON_MARKER."""
        try:
            doc = load_tests_json(text)
        except NcclTestsJsonError as exc:
            self._json_error = "line %d: %s" % (line_no, exc)
            return
        self._json_table, self._json_facts = tables_from_json(doc, line_no)
        self._json_error = None
        for device in self._json_facts["devices"]:
            if device["hostname"] and len(self._hosts) < MAX_HOSTS:
                self._hosts.add(device["hostname"])

    def _stream_for(self, key, create=False):
        stream = self._streams.get(key)
        if stream is None:
            if create:
                if len(self._streams) >= MAX_STREAMS:
                    return None
                stream = self._streams[key] = _Stream()
            elif self._open == 1:
                # a row or footer whose prefix differs from its header's (one open table only)
                for candidate in self._streams.values():
                    if not candidate.closed:
                        return candidate
        return stream

    def _header(self, text, line_no):
        tokens = text.split()
        parsed = _parse_header(tokens)
        if parsed is None:
            return False
        header, start = parsed
        prefix = tokens[:start]
        if "#" in tokens[start]:
            prefix.append(tokens[start].rsplit("#", 1)[0])      # "[1,0]<stdout>:#size"
        key = _stream_key(prefix)
        stream = self._stream_for(key, create=True)
        if stream is None:
            return True
        table = stream.table
        if (not stream.closed and table is not None and not table["rows"] and header.same_as(stream.header)):
            return True          # the same header printed again (a second process): keep the table
        if not stream.closed:
            self._open -= 1
        table = {
            "test": self._test,
            "test_inferred": False,
            "rows": [],
            "avg_busbw": None,
            "oob_values": None,
            "oob_status": None,
            "complete": False,
            "line_no": line_no,
            "rows_omitted": 0,
        }
        stream.header = header
        stream.table = table
        stream.closed = False
        self._open += 1
        self._tables.append(table)
        if len(self._tables) > MAX_TABLES:
            self._drop_oldest_table()
        return True

    def _drop_oldest_table(self):
        """Forget the oldest table (bounded memory); its #wrong still counts in wrong_total."""
        dropped = self._tables.pop(0)
        self._tables_omitted += 1
        self._kept_rows -= len(dropped["rows"])
        wrong = table_wrong(dropped)
        if wrong is not None:
            self._omitted_wrong = (self._omitted_wrong or 0) + wrong
        for stream in self._streams.values():
            if stream.table is dropped:
                stream.table = None
                stream.header = None
                if not stream.closed:
                    stream.closed = True
                    self._open -= 1

    def _units(self, text):
        """The '(B) (elements) (us) (GB/s)' line below a header: time unit of the table."""
        stream = self._stream_for(_stream_key(text.split("(B)", 1)[0].split()))
        if stream is None or stream.header is None or stream.closed:
            return False
        if "(ms)" in text:
            stream.header.time_scale = 1000.0
        elif "(us)" in text:
            stream.header.time_scale = 1.0
        return True

    def _row(self, text, line_no):
        if "NCCL" in text:
            return False
        tokens = text.split()
        stream = None
        # Which stream: the labels before the row's own columns.
        candidates = []
        for stream_key, candidate in self._streams.items():
            if not candidate.closed and candidate.header is not None:
                candidates.append((stream_key, candidate))
        for stream_key, candidate in candidates:
            width = candidate.header.width
            if len(tokens) >= width and _stream_key(tokens[:-width]) == stream_key:
                stream = candidate
                break
        if stream is None:
            if len(candidates) != 1:
                return False
            stream = candidates[0][1]
        row = _parse_row(tokens, stream.header)
        if row is None:
            return False
        table = stream.table
        busbws = [side["busbw"] for side in (row["out_of_place"], row["in_place"])
                  if side is not None and side["busbw"] is not None]
        if busbws:
            top = max(busbws)
            if self._peak is None or top > self._peak:
                self._peak = top
        wrong = [side["wrong"] for side in (row["out_of_place"], row["in_place"])
                 if side is not None and side["wrong"]]
        if wrong:
            self._signature("wrong_results", line_no, text)
        if len(table["rows"]) < MAX_ROWS_PER_TABLE:
            table["rows"].append(row)
            self._kept_rows += 1
            while self._kept_rows > MAX_ROWS_TOTAL and self._tables[0] is not table:
                self._drop_oldest_table()
        else:
            table["rows_omitted"] += 1
        return True

    def _footer_stream(self, text, marker):
        prefix = text.split(marker, 1)[0].split()
        stream = self._stream_for(_stream_key(prefix))
        if stream is None or stream.table is None:
            return None
        return stream

    def _footer_oob(self, text):
        match = _OOB_RX.search(text)
        if not match:
            return
        stream = self._footer_stream(text, "Out of bounds values")
        if stream is None:
            return
        table = stream.table
        if table["oob_values"] is None:
            table["oob_values"] = int(match.group(1))
            table["oob_status"] = match.group(2)
        table["complete"] = True
        if not stream.closed:
            stream.closed = True
            self._open -= 1

    def _footer_avg(self, text):
        match = _AVG_RX.search(text)
        if not match:
            return
        stream = self._footer_stream(text, "Avg bus bandwidth")
        if stream is None:
            return
        table = stream.table
        if table["avg_busbw"] is None:
            try:
                table["avg_busbw"] = _number(match.group(1))
            except ValueError:
                pass
        table["complete"] = True
        if not stream.closed:
            stream.closed = True
            self._open -= 1

    # ------------------------------------------------------------------ result

    # ------------------------------------------------------------------ result
    def _tables_result(self, nranks):
        """The table keys of the result dict (tables .. complete), in the result's order."""
        text_tables = self._tables
        for table in text_tables:
            if table["test"] is None:
                inferred = _infer_test(table, nranks)
                if inferred is not None:
                    table["test"] = inferred
                    table["test_inferred"] = True
        tables = text_tables
        json_mismatch = None
        if self._json_table is not None:
            # the JSON has the exact numbers of the same run: it wins; the text table (same run, printed
            # by the same nccl-tests call) must agree with it within its printing precision
            text_last = None
            for table in reversed(text_tables):
                if table["rows"]:
                    text_last = table
                    break
            if text_last is not None:
                json_mismatch = compare_with_text(self._json_table, text_last)
            tables = [self._json_table]
        last = tables[-1] if tables else None
        largest_size = None
        busbw_largest = None
        if last is not None and last["rows"]:
            best = None
            for row in last["rows"]:
                if best is None or row["size"] >= best["size"]:
                    best = row
            largest_size = best["size"]
            side = best["out_of_place"] or best["in_place"] or {}
            busbw_largest = side.get("busbw")
        peak, wrong_total = self._peak_and_wrong(tables)
        return {
            "tables": tables,
            "tables_omitted": self._tables_omitted,
            "results_source": ("json" if self._json_table is not None else "text") if tables else None,
            "nccl_tests_json": self._json_facts,
            "nccl_tests_json_error": self._json_error,
            "json_text_mismatch": json_mismatch,
            "peak_busbw": peak,
            "busbw_at_largest_size": busbw_largest,
            "largest_size": largest_size,
            "avg_busbw_reported": last["avg_busbw"] if last is not None else None,
            "wrong_total": wrong_total,
            "complete": (all(table["complete"] for table in tables) if tables else None),
        }

    def _peak_and_wrong(self, tables):
        """Peak busbw and #wrong total: of every text row seen (dropped tables included), or of the JSON's."""
        peak = self._peak
        wrong_total = self._omitted_wrong
        if self._json_table is not None:
            peak = None
            wrong_total = None
            for row in self._json_table["rows"]:
                for side in (row["out_of_place"], row["in_place"]):
                    if side is not None and side["busbw"] is not None and (peak is None or side["busbw"] > peak):
                        peak = side["busbw"]
        for table in tables:
            wrong = table_wrong(table)
            if wrong is not None:
                wrong_total = (wrong_total or 0) + wrong
        return peak, wrong_total
