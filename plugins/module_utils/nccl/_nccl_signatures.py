# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Failure-signature scanning: the parser's part that tries lines against the catalog and decides socket_fallback.

The catalog (data, with sources) is ``_nccl_catalog.py``; ``SignaturesMixin`` (part of
``_nccl_parser.NcclLogParser``) keeps at most ``MAX_SIGNATURES_PER_ID`` entries per id (all are counted), and
decides ``socket_fallback`` at the end from ``Using network Socket`` plus the evidence the facts part saw
that a plugin, OFI or IB network was attempted. Python 3.8+ syntax, standard library only (travels to managed
hosts).
"""

from __future__ import annotations

import re

from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_catalog import (
    CATALOG,
    HINTS,
    SIGNATURE_IDS,
)

MAX_LINE_CHARS = 400            # characters of a line kept in a signature entry
MAX_SIGNATURES_PER_ID = 20      # signature entries kept per id (all are counted)

_WARN_TIME_RX = re.compile(r"\[(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)\] (?=\S+:\d+:\d+ )")
_WARN_SOURCE_RX = re.compile(r":\d+:\d+ \[\d+\] (.+?) NCCL WARN")

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


def _clip(text):
    text = text.strip()
    if len(text) > MAX_LINE_CHARS:
        return text[:MAX_LINE_CHARS - 3] + "..."
    return text


class SignaturesMixin(object):
    """Signature entries and counts of NcclLogParser, and the socket_fallback decision."""

    def _init_signatures(self):
        self._sig_entries = {}
        self._sig_counts = {}
        # socket_fallback evidence; the attempt flags are set by the facts part (FactsMixin) and by WARN lines
        self._strong_attempt = False
        self._weak_attempt = False
        self._socket_intended = False
        self._socket_lines = []
        self._socket_count = 0

    def _info_signatures(self, text, line_no):
        """An NCCL INFO line the block scan stopped at: tried only when it may carry a failure."""
        for trigger in _INFO_GATE:
            if trigger in text:
                self._check_signatures(text, line_no)
                break

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

    def _socket_line(self, line_no, text):
        """A 'Using network Socket' line: socket_fallback's evidence when the end of the log decides so."""
        self._socket_count += 1
        if len(self._socket_lines) < MAX_SIGNATURES_PER_ID:
            self._socket_lines.append((line_no, _clip(text)))

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

    def _signatures_result(self):
        """The signature keys of the result dict (signatures, signature_counts, signature_ids)."""
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
        return {
            "signatures": signatures,
            "signature_counts": counts,
            "signature_ids": [sig_id for sig_id in SIGNATURE_IDS if sig_id in counts],
        }
