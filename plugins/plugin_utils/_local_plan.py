# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rows of local mode and which of them the tags select (controller only)."""

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils import _plan


def plan(levels, run_tags=(), skip_tags=(), grouped=()):
    """Rows of local mode, as ``_plan.build_plan`` makes them for the cluster levels. grouped: row ids
    that one group of tasks judges together (local_manifests and local_pitfalls): skipping the tag of
    any of them skips them all, since their tasks are skipped."""
    rows = _plan.build_plan(levels, [], list(run_tags or []), list(skip_tags or []))
    grouped = list(grouped or [])
    skipped_group = any(row_id in (skip_tags or []) for row_id in grouped) or any(
        tag in (skip_tags or []) for level in levels if level["id"] in grouped for tag in level.get("tags", []))
    out = []
    for row in rows:
        if skipped_group and row["id"] in grouped:
            row = dict(row, selected=False, reason="not selected by --tags/--skip-tags")
        out.append(row)
    return out
