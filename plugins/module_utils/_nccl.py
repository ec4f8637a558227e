# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Streaming parser for nccl-tests output and NCCL_DEBUG=INFO logs (standard library only).

The parser reads bytes in blocks, decodes the lines it looks at with ``errors='replace'`` and
keeps only bounded state, so memory does not grow with the size of the log. It returns one
plain dict (see ``NcclLogParser.result``) with:

* every nccl-tests results table (any collective, any header generation since NCCL 1),
  its rows, footer values and completeness;
* facts from NCCL_DEBUG=INFO lines: NCCL version, network in use, ranks, nodes, hosts;
* failure signatures from the catalog in ``_nccl_catalog.py`` (id, line number, line, hint).

Hot path: most lines of a big NCCL_DEBUG=INFO log are ``NCCL INFO`` lines that carry nothing we
need (channels, rings, trees, proxies). One compiled regular expression, run over a whole block
in C, skips those lines and stops only at lines that are not ``NCCL INFO`` lines or whose message
starts with a word we care about; only those lines are decoded and looked at in Python.
Line numbers are kept by counting newlines between the stops (``bytes.count``, also in C).

See docs/nccl-parser.md for the output keys and the rules behind them. Python 3.8+ syntax only:
this file travels to managed hosts inside the nccl_log_info module.
"""

from __future__ import annotations

import math
import os
import re
import stat

from ansible_collections.rlstack.validation.plugins.module_utils._nccl_json import (
    JSON_MARKER,
    NcclTestsJsonError,
    compare_with_text,
    load as load_tests_json,
    tables_from_json,
)
from ansible_collections.rlstack.validation.plugins.module_utils._nccl_catalog import (
    CATALOG,
    HINTS,
    SIGNATURE_IDS,
)

READ_BLOCK = 1 << 20            # bytes read per block
MAX_LINE_BYTES = 1 << 20        # longer lines are cut here (the rest of the line is skipped)
MAX_LINE_CHARS = 400            # characters of a line kept in a signature entry
MAX_SIGNATURES_PER_ID = 20      # signature entries kept per id (all are counted)
MAX_TABLES = 256                # most recent tables kept (older ones are counted in tables_omitted)
MAX_ROWS_PER_TABLE = 4096       # rows kept per table (more are counted in rows_omitted)
MAX_ROWS_TOTAL = 8192           # rows kept over all tables; the oldest tables are dropped beyond
MAX_HOSTS = 1024                # distinct host names kept
MAX_STREAMS = 4096              # distinct output streams (rank labels) tracked
MAX_RANK_INDEXES = 1 << 16      # distinct rank indexes remembered from rank lists
MAX_NET_CHANNELS = 2048         # NET channel lines read for the network name and GPUDirect RDMA
BINARY_SNIFF_BYTES = 8192       # a NUL byte in the first block of this size means "binary"
MAX_JSON_BYTES = 64 << 20       # a standalone nccl-tests JSON file (-J) is one document, read whole
MAX_JSON_FILES = 256            # *.json files read from a directory (in name order; the rest are counted)

COLLECTIVES = (
    "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
    "reduce", "sendrecv", "scatter", "gather", "hypercube",
)

# --------------------------------------------------------------------------------------------
# Block-level skip expression (the hot path).
#
# It matches a newline whose following line must be looked at: any line that is not an
# "NCCL INFO" line, or an INFO line whose message starts with one of _INFO_WORDS. (A line where
# two writers' output merged is skipped when any of its INFO messages is one we do not need.)
# Greedy "[^\n]*" then backtracking to "NCCL INFO " is the fastest form measured with CPython's
# re (lazy scans, possessive "unrolled" loops and run-consuming forms were slower or equal).
# Counting-based shortcuts (newlines minus "NCCL INFO" per range) were rejected: a line where two
# writers' output merged holds two INFO markers and can hide a real line from the count.
_INFO_WORDS = (
    rb"NCCL version|Using network|NET/OFI (?:Selected|Using transport protocol|No eligible)|NET/IB|"
    rb"NET/Plugin ?: ?(?:Loaded|dlerror|Could not find|No plugin)|"
    rb"comm 0x[0-9a-f]+ rank [0-9]+ nRanks|comm 0x[^\n]*Init COMPLETE|"
    rb"Failed to initialize NET|NCCL_NET "
)
_STOP_RX = re.compile(rb"\n(?![^\n]*NCCL INFO (?!" + _INFO_WORDS + rb"))")
# Same, but also stops at channel lines that go over the network ("via NET/<name>/<dev>[/GDRDMA]"):
# they name the network in logs that never print "Using network" and say, per host, whether GPUDirect
# RDMA is used (src/transport/net.cc: "via NET/%s/%d%s%s%s", PXN "via NET/%s/%d(%d)%s%s"). NCCL prints
# them while a communicator is set up, so the first MAX_NET_CHANNELS of them are read and the rest of
# the log is scanned with _STOP_RX alone. The channel part is spelled out ("Channel 00/0 : 0[0] -> 8[0]
# [send] via NET/"; before 2.8 "Channel 00 : 7[a0] -> 8[10] ...") so that the many ring and P2P channel
# lines fail after a few bytes.
_NET_CHANNEL = rb"Channel [0-9]+(?:/[0-9]+)? : [0-9]+\[[0-9a-f]+\] -> [0-9]+\[[0-9a-f]+\] \[(?:send|receive)\] via NET/"
_STOP_RX_CHANNELS = re.compile(
    rb"\n(?![^\n]*NCCL INFO (?!" + _INFO_WORDS + rb"|" + _NET_CHANNEL + rb"))"
)

# --------------------------------------------------------------------------------------------
# Line-level expressions (run only on the lines the block scan stops at).
_VERSION_RX = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_LIBRARY_CODE_RX = re.compile(r"nccl-library=(\d{4,6})\b")
_TESTS_VERSION_RX = re.compile(r"nccl-tests version (\d+\.\d+\.\d+)")
_PROVIDER_RX = re.compile(r"Selected [Pp]rovider is ([\w.\-]+)")
_FABRIC_RX = re.compile(r"fabric is ([\w.\-]+)")
_NICS_RX = re.compile(r"\(found (\d+) nics?\)")
_PROTOCOL_RX = re.compile(r"Using transport protocol (\w+)(?: \((\w+) set\))?")
_CHANNEL_NET_RX = re.compile(r"via NET/([^/\s][^/]*?)/\d+(?:\(\d+\))?(/GDRDMA)?")   # "/1(2)": PXN proxy rank
_WARN_TIME_RX = re.compile(r"\[(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)\] (?=\S+:\d+:\d+ )")
_WARN_SOURCE_RX = re.compile(r":\d+:\d+ \[\d+\] (.+?) NCCL WARN")
_NRANKS_RX = re.compile(r"\bn[Rr]anks[ =:]+(\d+)")
_NNODES_RX = re.compile(r"\bnNodes[ =:]+(\d+)")
_NETWORK_NAME_RX = re.compile(r"\s*([^:\[\r\n]{0,40})")     # "AWS Libfabric"; stops at merged text
_LOADED_PLUGIN_RX = re.compile(r"Loaded net plugin (\S+)")
_NCCL_NET_ENV_RX = re.compile(r"NCCL_NET set by environment to (\S+)")
_HOST_RX = re.compile(r"(?<![\w.\-])([A-Za-z0-9][\w.\-]*):\d+:\d+ \[\d+\] ")
_RANK_LINE_RX = re.compile(
    r"#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?(?:Pid\s+\d+\s+)?on\s+(\S+)\s+device\s+(\d+)"
)
_NTHREAD_RX = re.compile(r"nThread\s+(\d+)\s+nGpus\s+(\d+)")
_TEST_NAME_RX = re.compile(r"\b(" + "|".join(
    ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv",
     "scatter", "gather", "hypercube", "reduce")) + r")_(?:perf|test)(?:_mpi)?\b")
_TEST_FLAG_RX = re.compile(r"run_nccl_tests\.sh\b.*?\s-t\s+(" + "|".join(COLLECTIVES) + r")\b")
_LAUNCHER_RX = re.compile(r"\b(?:mpirun|mpiexec|orterun|prterun)\b")
_NP_RX = re.compile(r"(?:^|\s)(?:-np|--np|-n|--n)\s+(\d+)\b")
_OOB_RX = re.compile(r"Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?")
_AVG_RX = re.compile(r"Avg bus bandwidth\s*:\s*(\S+)")
_LABEL_RX = re.compile(r"(?:\[\d+,\d+\](?:<\w+>)?|\[rank\d+\]|[\w.\-]+):")

# (id, trigger substrings, compiled patterns) per catalog entry with line patterns.
_SIGNATURES = tuple(
    (entry["id"], tuple(entry["triggers"]), re.compile("|".join("(?:%s)" % p for p in entry["patterns"])))
    for entry in CATALOG if entry["patterns"]
)


def _gate(triggers):
    """Smallest set of substrings such that a line containing any trigger contains one of them."""
    unique = sorted(set(triggers), key=len)
    kept = []
    for trigger in unique:
        if not any(other in trigger for other in kept):
            kept.append(trigger)
    return tuple(kept)


_GATE = _gate(trigger for entry in _SIGNATURES for trigger in entry[1])
# NCCL prints failures as WARN lines; an INFO line can only carry one when two writers merged
# their output into it, or in the few plugin messages below.
_INFO_GATE = ("WARN", "nitialization failed", "plugin failed", "Got async", "Got completion",
              "register memory", "REG_MR")

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
_ROW_LAST_CHARS = frozenset("0123456789Anf")   # a row ends with a number, N/A, nan or inf


class NcclLogError(Exception):
    """A log that cannot be parsed at all (missing, empty, unreadable, binary)."""


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


def _clip(text):
    text = text.strip()
    if len(text) > MAX_LINE_CHARS:
        return text[:MAX_LINE_CHARS - 3] + "..."
    return text


def looks_binary(head):
    """True when the first bytes of a file hold a NUL byte (the rule grep and git use)."""
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


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
        try:
            time_value = _number(cells[index])
            algbw = _number(cells[index + 1])
            busbw = _number(cells[index + 2])
        except ValueError:
            return None
        side = {
            "time_us": None if time_value is None else round(time_value * header.time_scale, 6),
            "algbw": algbw,
            "busbw": busbw,
            "wrong": None,
            "error": None,
        }
        index += 3
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
        for cell in cells[index:index + extra]:
            try:
                _number(cell)               # -I per-iteration statistics: checked, not kept
            except ValueError:
                return None
        index += extra
        sides.append(side)
    row["out_of_place"] = sides[0]
    row["in_place"] = sides[1] if len(sides) > 1 else None
    return row


class _Stream(object):
    __slots__ = ("header", "table", "closed")

    def __init__(self):
        self.header = None
        self.table = None
        self.closed = True


class NcclLogParser(object):
    """Incremental parser: ``feed()`` bytes in any chunking, then ``close()`` for the result dict."""

    def __init__(self):
        self._carry = b"\n"          # always starts with the newline that ended the previous line
        self._base = 1               # number of the line that starts right after _carry[0]
        self._skipping = False       # inside an over-long line
        self.bytes = 0
        # tables
        self._tables = []
        self._tables_omitted = 0
        self._kept_rows = 0
        self._omitted_wrong = None
        self._streams = {}
        self._open = 0               # number of streams with an open table
        self._test = None            # last test name seen (command line, banner, marker)
        self._peak = None
        # facts
        self._version = None
        self._library_version = None
        self._tests_version = None
        self._using_network = None
        self._provider = None
        self._fabric = None
        self._nics = None
        self._nics_by_host = {}
        self._protocol = None
        self._protocol_source = None
        self._no_providers = 0
        self._channel_net = None
        self._want_channels = True
        self._gdr = None
        self._net_channels = 0
        self._hosts_without_gdr = set()
        self._info_nranks = None
        self._info_nnodes = None
        self._rank_max = None
        self._rank_indexes = set()
        self._rank_hosts = set()
        self._hosts = set()
        self._prefix_hosts = {}
        self._np = None
        self._gpus_per_proc = None
        self._strong_attempt = False
        self._weak_attempt = False
        self._socket_intended = False
        self._socket_lines = []
        self._socket_count = 0
        # signatures
        self._sig_entries = {}
        self._sig_counts = {}
        # nccl-tests JSON printed by the launcher (the last complete document wins)
        self._json_table = None
        self._json_facts = None
        self._json_error = None

    # ------------------------------------------------------------------ block handling
    def feed(self, data):
        """Parse the next chunk of bytes."""
        if not data:
            return
        self.bytes += len(data)
        if self._skipping:
            cut = data.find(b"\n")
            if cut < 0:
                return
            data = data[cut:]
            self._skipping = False
            self._carry = b""
            self._base += 1
        first = data.find(b"\n")
        if first < 0:
            self._carry += data
        else:
            if self._carry:
                # finish the line carried over from the previous chunk (small copy)
                head = self._carry + data[:first + 1]
                self._scan(head, 0, len(head) - 1)
            last = data.rfind(b"\n")
            if last > first:
                self._scan(data, first, last)    # the big chunk is scanned in place, not copied
            self._carry = data[last:]
        if len(self._carry) > MAX_LINE_BYTES:
            self._line(self._carry[1:1 + MAX_LINE_BYTES], self._base)
            self._skipping = True
            self._carry = b""

    def _scan(self, buf, begin, end):
        """Look at the interesting lines of buf[begin + 1:end]; buf[begin] and buf[end] are newlines."""
        pos = begin
        mark = begin            # a newline position whose following line has number mark_no
        mark_no = self._base
        count = buf.count
        find = buf.find
        while True:
            want = self._want_channels
            rx = _STOP_RX_CHANNELS if want else _STOP_RX
            for match in rx.finditer(buf, pos, end):
                start = match.start()
                mark_no += count(b"\n", mark + 1, start + 1)
                mark = start
                stop = find(b"\n", start + 1)
                self._line(buf[start + 1:stop], mark_no)
                pos = stop
                if self._want_channels is not want:
                    break                   # state changed: continue with the other expression
            else:
                break
        self._base = mark_no + count(b"\n", mark + 1, end + 1)

    def close(self):
        """Finish the last line and return the result dict."""
        if not self._skipping and len(self._carry) > 1:
            buf = self._carry + b"\n"
            self._scan(buf, 0, len(buf) - 1)
        self._carry = b"\n"
        self._skipping = False
        return self.result()

    @property
    def lines(self):
        return self._base - 1

    # ------------------------------------------------------------------ one line
    def _line(self, raw, line_no):
        text = raw.decode("utf-8", "replace")
        if "\r" in text:
            text = text.rstrip("\r").replace("\r", " ")     # CRLF logs, progress bars
        at = text.find(JSON_MARKER)
        if at >= 0:
            self._tests_json(text[at + len(JSON_MARKER):], line_no)
            return
        at = text.find("NCCL INFO ")
        if at >= 0:
            while at >= 0:                  # more than once: two writers merged into one line
                self._info(text, text[at + 10:], line_no)
                at = text.find("NCCL INFO ", at + 10)
            for trigger in _INFO_GATE:
                if trigger in text:
                    self._check_signatures(text, line_no)
                    break
            return
        if "NCCL WARN" in text:
            self._host(text)
            if "NET/OFI" in text:
                self._strong_attempt = True      # the OFI plugin was loaded (and complains)
            self._signatures(text, line_no)
            return
        if "busbw" in text:
            if self._header(text, line_no):
                return
        elif "Out of bounds values" in text:
            self._footer_oob(text)
            self._signatures(text, line_no)      # "... N FAILED" is a wrong_results signature
            return
        elif "Avg bus bandwidth" in text:
            self._footer_avg(text)
            return
        elif "(B)" in text:
            if self._units(text):
                return
        elif self._open and text.rstrip()[-1:] in _ROW_LAST_CHARS:
            if self._row(text, line_no):
                return
        if self._facts(text):
            return
        self._signatures(text, line_no)

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

    # ------------------------------------------------------------------ facts
    def _host(self, text):
        if len(self._hosts) < MAX_HOSTS:
            match = _HOST_RX.search(text)
            if match:
                self._hosts.add(match.group(1))

    def _info_host(self, text, msg):
        """Host of an INFO line; the 'host:pid:tid [dev] ' prefix repeats, so it is cached."""
        prefix = text[:len(text) - len(msg)]
        host = self._prefix_hosts.get(prefix)
        if host is None:
            match = _HOST_RX.search(prefix)
            host = match.group(1) if match else ""
            if len(self._prefix_hosts) >= MAX_STREAMS:
                self._prefix_hosts.clear()
            self._prefix_hosts[prefix] = host
        if host and len(self._hosts) < MAX_HOSTS:
            self._hosts.add(host)
        return host

    def _info(self, text, msg, line_no):
        """An NCCL INFO line the block scan stopped at; msg is the text after 'NCCL INFO '."""
        if msg.startswith("comm 0x") or msg.startswith("ncclCommInit"):
            self._info_host(text, msg)
            match = _NRANKS_RX.search(msg)
            if match:
                value = int(match.group(1))
                if self._info_nranks is None or value > self._info_nranks:
                    self._info_nranks = value
            if "nNodes" in msg:
                match = _NNODES_RX.search(msg)
                if match:
                    value = int(match.group(1))
                    if self._info_nnodes is None or value > self._info_nnodes:
                        self._info_nnodes = value
        elif msg.startswith("Using network"):
            name = _NETWORK_NAME_RX.match(msg, 13).group(1).strip()
            self._using_network = name
            if name == "Socket":
                self._socket_count += 1
                if len(self._socket_lines) < MAX_SIGNATURES_PER_ID:
                    self._socket_lines.append((line_no, _clip(text)))
            else:
                self._strong_attempt = True
        elif msg.startswith("NET/OFI"):
            self._strong_attempt = True
            if "rovider is" in msg:
                self._selected_provider(text, msg)
            elif "transport protocol" in msg:
                match = _PROTOCOL_RX.search(msg)
                if match:
                    self._protocol = match.group(1)
                    self._protocol_source = match.group(2)
            elif "No eligible providers" in msg:
                self._no_providers += 1
        elif msg.startswith("NET/IB"):
            if "No device found" in msg or "[RO]" in msg:
                self._weak_attempt = True
            elif "Using [" in msg:
                self._strong_attempt = True
        elif msg.startswith("NET/Plugin"):
            loaded = _LOADED_PLUGIN_RX.search(msg)
            if loaded:
                if loaded.group(1) not in ("Socket", "IB"):
                    self._strong_attempt = True
            elif "dlerror" in msg or "Could not find" in msg or "No plugin found" in msg:
                self._weak_attempt = True
        elif msg.startswith("NCCL version"):
            self._info_host(text, msg)
            if self._version is None:
                match = _VERSION_RX.search(msg)
                if match:
                    self._version = match.group(1)
        elif msg.startswith("Failed to initialize NET plugin"):
            if msg.rstrip().endswith(" IB"):
                self._weak_attempt = True
            else:
                self._strong_attempt = True
        elif msg.startswith("NCCL_NET "):
            match = _NCCL_NET_ENV_RX.search(msg)
            if match and match.group(1).strip("'\"").lower() == "socket":
                self._socket_intended = True
        elif self._want_channels and msg.startswith("Channel"):
            match = _CHANNEL_NET_RX.search(msg)
            if match:
                if self._channel_net is None:
                    self._channel_net = match.group(1).strip()
                if match.group(2):
                    if self._gdr is None:
                        self._gdr = True
                else:
                    self._gdr = False
                    host = self._info_host(text, msg)
                    if host and len(self._hosts_without_gdr) < MAX_HOSTS:
                        self._hosts_without_gdr.add(host)
                self._net_channels += 1
                if self._net_channels >= MAX_NET_CHANNELS:
                    self._want_channels = False

    def _selected_provider(self, text, msg):
        """'Selected provider is efa, fabric is efa-direct (found 16 nics)' (aws-ofi-nccl 1.14+) or
        'Selected Provider is efa (found 4 nics)' (older): provider, fabric, and NICs found per host."""
        match = _PROVIDER_RX.search(msg)
        if match:
            self._provider = match.group(1)
        match = _FABRIC_RX.search(msg)
        if match:
            self._fabric = match.group(1)
        match = _NICS_RX.search(msg)
        if match:
            nics = int(match.group(1))
            if self._nics is None or nics < self._nics:
                self._nics = nics
            host = self._info_host(text, msg)
            if host:
                known = self._nics_by_host.get(host)
                if known is None and len(self._nics_by_host) < MAX_HOSTS:
                    self._nics_by_host[host] = nics
                elif known is not None and nics < known:
                    self._nics_by_host[host] = nics

    def _facts(self, text):
        if "Rank" in text:
            match = _RANK_LINE_RX.search(text)
            if match:
                rank = int(match.group(1))
                host = match.group(2)
                if self._rank_max is None or rank > self._rank_max:
                    self._rank_max = rank
                if len(self._rank_indexes) < MAX_RANK_INDEXES:
                    self._rank_indexes.add(rank)
                if len(self._rank_hosts) < MAX_HOSTS:
                    self._rank_hosts.add(host)
                if len(self._hosts) < MAX_HOSTS:
                    self._hosts.add(host)
                return True
        if "NCCL version" in text and self._version is None:
            match = _VERSION_RX.search(text)
            if match:
                self._version = match.group(1)
        if "nccl-" in text:
            if self._tests_version is None:
                match = _TESTS_VERSION_RX.search(text)
                if match:
                    self._tests_version = match.group(1)
            if self._library_version is None:
                match = _LIBRARY_CODE_RX.search(text)
                if match:
                    code = int(match.group(1))
                    self._library_version = "%d.%d.%d" % (code // 10000, (code // 100) % 100, code % 100)
        if "run_nccl_tests" in text:
            match = _TEST_FLAG_RX.search(text)      # GKE wrapper: run_nccl_tests.sh -t all_gather
            if match:
                self._test = match.group(1) + "_perf"
        elif "_perf" in text or "_test" in text:
            match = _TEST_NAME_RX.search(text)
            if match:
                self._test = match.group(1) + "_perf"
            if self._np is None and _LAUNCHER_RX.search(text):
                head = text[:match.start()] if match else text
                np_match = _NP_RX.search(head)
                if np_match:
                    self._np = int(np_match.group(1))
        elif self._np is None and ("mpirun" in text or "mpiexec" in text):
            match = _NP_RX.search(text)
            if match and _LAUNCHER_RX.search(text):
                self._np = int(match.group(1))
        if "nThread" in text:
            match = _NTHREAD_RX.search(text)
            if match:
                per_proc = int(match.group(1)) * int(match.group(2))
                if self._gpus_per_proc is None or per_proc > self._gpus_per_proc:
                    self._gpus_per_proc = per_proc
        elif "anks" in text and self._info_nranks is None:
            match = _NRANKS_RX.search(text)
            if match:
                self._info_nranks = int(match.group(1))
        return False

    # ------------------------------------------------------------------ signatures
    def _signatures(self, text, line_no):
        for trigger in _GATE:
            if trigger in text:
                self._check_signatures(text, line_no)
                return

    def _check_signatures(self, text, line_no):
        for sig_id, triggers, rx in _SIGNATURES:
            for trigger in triggers:
                if trigger in text:
                    if rx.search(text):
                        self._signature(sig_id, line_no, text)
                    break

    def _signature(self, sig_id, line_no, text):
        self._sig_counts[sig_id] = self._sig_counts.get(sig_id, 0) + 1
        entries = self._sig_entries.setdefault(sig_id, [])
        if len(entries) < MAX_SIGNATURES_PER_ID:
            entry = {"id": sig_id, "line_no": line_no, "line": _clip(text), "hint": HINTS[sig_id],
                     "time": None, "source": None}
            if "NCCL WARN" in text:
                # NCCL 2.26+ puts '[%F %T] ' before WARN lines; the code location is 'file:line' (and
                # '(function)' from 2.30.7, or aws-ofi-nccl's 'function():line')
                match = _WARN_TIME_RX.search(text)
                if match:
                    entry["time"] = match.group(1)
                match = _WARN_SOURCE_RX.search(text)
                if match:
                    entry["source"] = _clip(match.group(1))
            entries.append(entry)

    # ------------------------------------------------------------------ tables
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
        wrong = _table_wrong(dropped)
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
    def result(self):
        text_tables = self._tables
        for table in text_tables:
            if table["test"] is None:
                inferred = _infer_test(table, self._nranks())
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
            wrong = _table_wrong(table)
            if wrong is not None:
                wrong_total = (wrong_total or 0) + wrong
        signatures = []
        for sig_id in SIGNATURE_IDS:
            signatures.extend(self._sig_entries.get(sig_id, ()))
        counts = dict(self._sig_counts)
        if self._socket_fallback():
            counts["socket_fallback"] = self._socket_count
            for line_no, line in self._socket_lines:
                signatures.append({"id": "socket_fallback", "line_no": line_no, "line": line,
                                   "hint": HINTS["socket_fallback"], "time": None, "source": None})
        signatures.sort(key=lambda entry: (entry["line_no"], SIGNATURE_IDS.index(entry["id"])))
        result = {
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
            "network": normalize_network(self._network_raw(), self._provider),
            "network_raw": self._network_raw(),
            "ofi_provider": self._provider,
            "ofi_fabric": self._fabric,
            "ofi_nics": self._nics,
            "ofi_nics_by_host": dict(self._nics_by_host),
            "ofi_protocol": self._protocol,
            "ofi_protocol_source": self._protocol_source,
            "ofi_no_eligible_providers": self._no_providers,
            "gdrdma": self._gdr,
            "hosts_without_gdrdma": sorted(self._hosts_without_gdr),
            "nccl_version": self._version or self._library_version or (
                self._json_facts["nccl_version"] if self._json_facts else None),
            "nccl_tests_version": self._tests_version,
            "nranks": self._nranks(),
            "nnodes": self._nnodes(),
            "hosts": sorted(self._hosts),
            "signatures": signatures,
            "signature_counts": counts,
            "signature_ids": [sig_id for sig_id in SIGNATURE_IDS if sig_id in counts],
            "lines": self.lines,
            "bytes": self.bytes,
        }
        result["summary"] = summarize(result)
        return result

    def _network_raw(self):
        """The network name as NCCL printed it ('Socket', 'IB', 'IBext_v8', 'AWS Libfabric'), or None."""
        return self._using_network or self._channel_net

    def _nranks(self):
        candidates = []
        if self._info_nranks is not None:
            candidates.append(self._info_nranks)
        if self._rank_max is not None:
            candidates.append(self._rank_max + 1)
        if self._np is not None:
            candidates.append(self._np * (self._gpus_per_proc or 1))
        return max(candidates) if candidates else None

    def _nnodes(self):
        if self._info_nnodes is not None:
            return self._info_nnodes
        # a rank list counts only when it lists every rank (authors often trim it)
        if self._rank_hosts and len(self._rank_indexes) == self._nranks():
            return len(self._rank_hosts)
        return None

    def _socket_fallback(self):
        if not self._socket_lines or self._using_network != "Socket" or self._socket_intended:
            return False
        if self._strong_attempt:
            return True
        if self._weak_attempt:
            nodes = self._nnodes()
            if nodes is None and len(self._hosts) > 1:
                nodes = len(self._hosts)
            return nodes is not None and nodes > 1
        return False


# Net plugin names as the sources print them ("Using network %s", "via NET/%s/..."): NCCL's built-in "IB" and
# "Socket" (src/transport/net_ib.cc, net_socket.cc, v2.21.5-1 .. v2.30.7-1); aws-ofi-nccl "Libfabric", or
# "AWS Libfabric" when NCCL_NET asks for it (src/nccl_ofi_interface_nvidia.cpp:662,842, v1.21.1; "AWS Libfabric"
# in the real logs of 1.7.3-aws and 1.9.1-aws under tests/unit/fixtures/nccl); nccl-rdma-sharp-plugins "IBext" (src/ib_plugin.c:727), "UCX"
# (src/ucx_plugin.c:805) and "UCX_RMA" (src/ucx_rma_plugin.c:1087, v2.1.0), and NCCL's "IBext_v<N>" spelling.
NETWORKS = ("efa", "ib", "socket", "ucx", "ofi", "ofi:<provider>")
_IB_NAMES = ("ib", "ibext", "ibext_v")


def normalize_network(raw, provider=None):
    """The network in the stable vocabulary of NETWORKS, from NCCL's name and the OFI provider.

    'Socket' -> 'socket'; 'IB', 'IBext', 'IBext_v8' -> 'ib'; 'UCX', 'UCX_RMA' -> 'ucx' (UCX over InfiniBand/RoCE
    verbs, NVIDIA's plugin); 'AWS Libfabric' / 'Libfabric' / 'OFI' ->
    'efa' when the provider is efa, 'ofi:<provider>' for another provider (cxi, tcp), 'ofi' when the log
    does not name it; no name but a provider -> the same as Libfabric; any other name -> lowercased
    with spaces as '-' (a plugin this table does not know). Also applied to expectations, so 'IB' and
    'ib' or 'Libfabric' and 'ofi' mean the same.
    """
    name = str(raw or "").strip()
    prov = str(provider or "").strip().lower()
    if not name:
        if not prov:
            return None
        name = "ofi"
    lowered = name.lower()
    if lowered.startswith("ofi:"):
        prov, lowered = lowered[4:], "ofi"
    if lowered == "socket":
        return "socket"
    if lowered == "efa":
        return "efa"
    if lowered in _IB_NAMES or re.match(r"ibext(_v\d+)?\Z", lowered):
        return "ib"
    if re.match(r"ucx(?:[_-]rma)?\Z", lowered):
        return "ucx"
    if "libfabric" in lowered or lowered == "ofi" or lowered.startswith("aws-ofi"):
        if not prov:
            return "ofi"
        return "efa" if prov == "efa" else "ofi:" + prov
    return re.sub(r"\s+", "-", lowered)


def _table_wrong(table):
    """#wrong total of one table; the 'Out of bounds' count for tables without a #wrong column."""
    total = None
    for row in table["rows"]:
        for side in (row["out_of_place"], row["in_place"]):
            if side is not None and side["wrong"] is not None:
                total = (total or 0) + side["wrong"]
    if total is None:
        return table["oob_values"]
    return total


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


# ---------------------------------------------------------------------------------------------
# Convenience entry points


def parse_stream(stream, block_size=READ_BLOCK):
    """Parse a binary file object (read in blocks)."""
    parser = NcclLogParser()
    while True:
        data = stream.read(block_size)
        if not data:
            break
        parser.feed(data)
    return parser.close()


def parse_bytes(data):
    """Parse a whole log held in memory as bytes."""
    parser = NcclLogParser()
    view = memoryview(data)
    for offset in range(0, len(data), READ_BLOCK):
        parser.feed(bytes(view[offset:offset + READ_BLOCK]))
    return parser.close()


def parse_text(text):
    """Parse a log given as a str (e.g. the module's content option)."""
    return parse_bytes(text.encode("utf-8", "replace"))


def check_content(text):
    """Raise NcclLogError when content given inline is empty or binary."""
    if not text:
        raise NcclLogError("The content option is empty: there is no log to parse.")
    if "\x00" in text[:BINARY_SNIFF_BYTES]:
        raise NcclLogError("The content option holds binary data (NUL bytes), not a text log.")


def parse_file(path, block_size=READ_BLOCK):
    """Parse a log file, raising NcclLogError with one sentence when it cannot be used."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise NcclLogError("The log file %s does not exist." % path)
    except OSError as exc:
        raise NcclLogError("The log file %s cannot be read: %s." % (path, exc.strerror or exc))
    if stat.S_ISDIR(info.st_mode):
        return parse_json_directory(path)
    try:
        stream = open(path, "rb")
    except OSError as exc:
        raise NcclLogError("The log file %s cannot be read: %s." % (path, exc.strerror or exc))
    with stream:
        try:
            head = stream.read(block_size)
            if not head:
                raise NcclLogError("The log file %s is empty." % path)
            if looks_binary(head):
                raise NcclLogError("The log file %s is a binary file, not a text log." % path)
            if looks_like_tests_json(head):
                return _parse_json_stream(path, head, stream)
            parser = NcclLogParser()
            parser.feed(head)
            while True:
                data = stream.read(block_size)
                if not data:
                    break
                parser.feed(data)
        except OSError as exc:
            raise NcclLogError("The log file %s cannot be read: %s." % (path, exc.strerror or exc))
    return parser.close()


_TESTS_JSON_HEAD_RX = re.compile(rb'\A\s*\{\s*"version"\s*:')


def looks_like_tests_json(head):
    """A file written by nccl-tests -J starts with its one JSON document, whose first key is "version"
    (src/util.cu jsonOutputInit, v2.19.6); other JSON (structured log lines) is read as a text log."""
    return _TESTS_JSON_HEAD_RX.match(head) is not None


def _parse_json_stream(path, head, stream):
    data = head + stream.read(MAX_JSON_BYTES + 1 - len(head))
    if len(data) > MAX_JSON_BYTES:
        raise NcclLogError("The nccl-tests JSON file %s is larger than %d MiB." % (path, MAX_JSON_BYTES >> 20))
    return parse_json_document(data, path)


def parse_json_document(data, name):
    """Result of one standalone nccl-tests JSON file (-J / --output_file), in the same shape as a text log's:
    its table is the one the text twin of the same run prints (results_source 'json')."""
    text = data.decode("utf-8", "replace")
    parser = NcclLogParser()
    parser.tests_json(text, 1)
    if parser.json_error is not None:
        raise NcclLogError("The file %s looks like an nccl-tests JSON file (-J) but cannot be used: %s."
                           % (name, parser.json_error.split(": ", 1)[-1]))
    result = parser.close()
    result["lines"] = text.count("\n") + (0 if text.endswith("\n") else 1)
    result["bytes"] = len(data)
    return result


def parse_json_directory(path):
    """A directory of nccl-tests JSON files: one table per *.json file, in name order. The facts of the
    last file describe the result (as the last table of a text log does); lines and bytes are summed."""
    try:
        names = sorted(name for name in os.listdir(path) if name.endswith(".json"))
    except OSError as exc:
        raise NcclLogError("The directory %s cannot be read: %s." % (path, exc.strerror or exc))
    if not names:
        raise NcclLogError("The log path %s is a directory without nccl-tests JSON files (*.json)." % path)
    results = []
    for name in names[:MAX_JSON_FILES]:
        full = os.path.join(path, name)
        try:
            with open(full, "rb") as stream:
                data = stream.read(MAX_JSON_BYTES + 1)
        except OSError as exc:
            raise NcclLogError("The file %s cannot be read: %s." % (full, exc.strerror or exc))
        if len(data) > MAX_JSON_BYTES:
            raise NcclLogError("The nccl-tests JSON file %s is larger than %d MiB." % (full, MAX_JSON_BYTES >> 20))
        results.append(parse_json_document(data, full))
    merged = dict(results[-1])
    peaks = [r["peak_busbw"] for r in results if r["peak_busbw"] is not None]
    wrongs = [r["wrong_total"] for r in results if r["wrong_total"] is not None]
    hosts = set()
    for result in results:
        hosts.update(result["hosts"])
    merged.update(
        tables=[table for result in results for table in result["tables"]],
        tables_omitted=max(0, len(names) - MAX_JSON_FILES),
        peak_busbw=max(peaks) if peaks else None,
        wrong_total=sum(wrongs) if wrongs else None,
        complete=all(result["complete"] for result in results),
        hosts=sorted(hosts),
        lines=sum(result["lines"] for result in results),
        bytes=sum(result["bytes"] for result in results),
        json_files=names[:MAX_JSON_FILES],
    )
    merged["summary"] = summarize(merged)
    return merged


# ---------------------------------------------------------------------------------------------
# Helpers for consumers (level_assert, reports)


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
