# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Entry points of the NCCL log reader: a log file, a directory of nccl-tests JSON files, bytes, text, a stream.

``parse_file`` turns what cannot be used (missing, empty, unreadable, binary) into ``NcclLogError`` with one
sentence, sends a ``-J`` file or a directory to ``_nccl_json_files`` and everything else through
``_nccl_parser.NcclLogParser`` block by block. The result's readers (busbw at a size, summary) are
``_nccl_results``; network names ``_nccl_network``. See docs/nccl-parser.md. Python 3.8+ syntax, standard
library only: this file travels to managed hosts inside the nccl_log_info module.
"""

from __future__ import annotations

import os
import stat

from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_base import (
    BINARY_SNIFF_BYTES,
    READ_BLOCK,
    NcclLogError,
    looks_binary,
)
from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_json_files import (
    looks_like_tests_json,
    parse_json_directory,
    parse_json_stream,
)
from ansible_collections.rlstack.validation.plugins.module_utils.nccl._nccl_parser import NcclLogParser


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
                return parse_json_stream(path, head, stream)
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
