# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The NCCL fixture logs (tests/unit/fixtures/nccl/SOURCES.md) as the NCCL tests read them: by name, stored as
NAME or NAME.gz (the two with carriage returns are gzipped, byte-exact, so the line-endings sanity test passes with
an empty ignore file), each parsed once."""

from __future__ import annotations

import gzip
from pathlib import Path

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NCCL = FIXTURES / "nccl"
PLUGINS = Path(__file__).resolve().parents[4] / "plugins"

AR = "all_reduce_perf"


def fixture(name):
    """Path of a fixture log, stored as NAME or NAME.gz."""
    path = NCCL / name
    return path if path.exists() else NCCL / (name + ".gz")


def fixture_bytes(path):
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


_CACHE = {}


def parsed(path):
    """Parse result of a fixture path (cached); .gz fixtures are parsed from their content."""
    if not isinstance(path, Path):
        path = fixture(path)
    elif not path.exists():
        path = fixture(path.name)
    key = str(path)
    if key not in _CACHE:
        if path.suffix == ".gz":
            _CACHE[key] = _nccl.parse_bytes(fixture_bytes(path))
        else:
            _CACHE[key] = _nccl.parse_file(key)
    return _CACHE[key]
