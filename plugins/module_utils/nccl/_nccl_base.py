# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared primitives of the NCCL log reader: its error, the limits more than one part of it uses, the binary sniff.

Below every other ``_nccl*`` module (it imports none of them), so that the parser, its parts and the file
readers can share these without importing each other. Python 3.8+ syntax, standard library only: it travels
to managed hosts inside the nccl_log_info module.
"""

from __future__ import annotations

READ_BLOCK = 1 << 20            # bytes read per block
MAX_HOSTS = 1024                # distinct host names kept
MAX_STREAMS = 4096              # distinct output streams (rank labels) tracked
BINARY_SNIFF_BYTES = 8192       # a NUL byte in the first block of this size means "binary"


class NcclLogError(Exception):
    """A log that cannot be parsed at all (missing, empty, unreadable, binary)."""


def looks_binary(head):
    """True when the first bytes of a file hold a NUL byte (the rule grep and git use)."""
    return b"\x00" in head[:BINARY_SNIFF_BYTES]
