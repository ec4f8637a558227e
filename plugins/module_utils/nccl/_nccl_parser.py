# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The streaming NCCL log parser (NcclLogParser): block scan, line dispatch and the result dict.

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

The parser's parts live beside it as mixins: results tables (``_nccl_tables``), environment and network facts
(``_nccl_facts``), failure signatures (``_nccl_signatures``); this module owns the block-level scan and which
part a line goes to. Reading files, bytes and text: ``_nccl``; reading a result: ``_nccl_results``.

See docs/nccl-parser.md for the output keys and the rules behind them. Python 3.8+ syntax only:
this file travels to managed hosts inside the nccl_log_info module.
"""

from __future__ import annotations

import re

from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_facts import FactsMixin
from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_json import JSON_MARKER
from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_results import summarize
from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_signatures import SignaturesMixin
from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_tables import ROW_LAST_CHARS, TablesMixin

MAX_LINE_BYTES = 1 << 20        # longer lines are cut here (the rest of the line is skipped)

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


class NcclLogParser(FactsMixin, SignaturesMixin, TablesMixin):
    """Incremental parser: ``feed()`` bytes in any chunking, then ``close()`` for the result dict."""

    def __init__(self):
        self._carry = b"\n"          # always starts with the newline that ended the previous line
        self._base = 1               # number of the line that starts right after _carry[0]
        self._skipping = False       # inside an over-long line
        self.bytes = 0
        self._init_tables()
        self._init_facts()
        self._init_signatures()

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
            self._info_signatures(text, line_no)
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
        elif self._open and text.rstrip()[-1:] in ROW_LAST_CHARS:
            if self._row(text, line_no):
                return
        if self._facts(text):
            return
        self._signatures(text, line_no)

    # ------------------------------------------------------------------ result
    def result(self):
        result = self._tables_result(self._nranks())
        result.update(self._facts_result())
        result.update(self._signatures_result())
        result["lines"] = self.lines
        result["bytes"] = self.bytes
        result["summary"] = summarize(result)
        return result
