# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading nccl-tests JSON files (``-J`` / ``--output_file``): one file, or a directory of them, as a parse result.

The result has the shape of a text log's (``_nccl_parser.NcclLogParser``), its table the one the text twin
of the same run prints (results_source 'json'). The document format itself (loading, tables, redaction) is
``_nccl_json``, which the parser also uses for the line the MPIJob launcher prints; this module sits above the
parser, so the two do not import each other. ``_nccl.parse_file`` sends a ``-J`` file or a directory here.
Python 3.8+ syntax, standard library only (travels to managed hosts).
"""

from __future__ import annotations

import os
import re

from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_base import NcclLogError
from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_parser import NcclLogParser
from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_results import summarize

MAX_JSON_BYTES = 64 << 20       # a standalone nccl-tests JSON file (-J) is one document, read whole
MAX_JSON_FILES = 256            # *.json files read from a directory (in name order; the rest are counted)

_TESTS_JSON_HEAD_RX = re.compile(rb'\A\s*\{\s*"version"\s*:')


def looks_like_tests_json(head):
    """A file written by nccl-tests -J starts with its one JSON document, whose first key is "version"
    (src/util.cu jsonOutputInit, v2.19.6); other JSON (structured log lines) is read as a text log."""
    return _TESTS_JSON_HEAD_RX.match(head) is not None


def parse_json_stream(path, head, stream):
    """The rest of an open -J file whose first block is head, read whole (up to MAX_JSON_BYTES)."""
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
