# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the check tests share: finding a check in a result, judging it as level_assert does, reading a
recorded or framework-printed log (tests/unit/fixtures/frameworks/SOURCES.md)."""

from __future__ import annotations

import gzip
from pathlib import Path

import yaml

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _verdict

REPO = Path(__file__).resolve().parents[4]
FRAMEWORK_LOGS = REPO / "tests" / "unit" / "fixtures" / "frameworks"
L5_ERROR_PATTERNS = yaml.safe_load((REPO / "roles" / "l5_training_step" / "defaults" / "main.yml").read_text(encoding="utf-8"))[
    "l5_training_step_error_patterns"]


def fw_log(name):
    """A recorded or framework-printed log (tests/unit/fixtures/frameworks/SOURCES.md); logs with tqdm's
    carriage returns are kept gzipped, byte for byte."""
    data = (FRAMEWORK_LOGS / name).read_bytes()
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")


def find(result, name, node=None):
    found = [c for c in result if c["name"] == name and (node is None or c["node"] == node)]
    assert len(found) == 1, "expected one %s check for %r, got %s" % (name, node, [(c["name"], c["node"]) for c in result])
    return found[0]


def names(result, node=None):
    return [c["name"] for c in result if node is None or c["node"] == node]


def passed(check):
    return _verdict.evaluate_check(check)["passed"]


def failing(result):
    return [(c["name"], c["node"]) for c in result if not passed(c)]
