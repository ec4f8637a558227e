# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The plan of a validation run: every row of the results table and whether the tags select it."""

from __future__ import annotations


def level_tags(levels, index):
    """Tags that select the level at `index`: its own plus the cumulative from_<id> of it and all before."""
    own = list(levels[index].get("tags") or [])
    cumulative = ["from_" + levels[i]["tags"][0] for i in range(index + 1) if levels[i].get("tags")]
    return own + cumulative


def tag_selected(tags, run_tags, skip_tags):
    run_tags = set(run_tags or ["all"])
    skip_tags = set(skip_tags or [])
    if skip_tags & set(tags):
        return False
    if "all" in run_tags or "always" in run_tags and len(run_tags) == 1:
        return True
    return bool(run_tags & set(tags))


def build_plan(levels, examples, run_tags, skip_tags, phase0_enabled=False, example_filter=""):
    """Rows of the run in order. L5 and L6 have one row per example (L6 only for examples with an
    evaluation); `example_filter` keeps one example (validate.sh --example)."""
    rows = []
    wanted = [e for e in (examples or []) if not example_filter or e.get("name") == example_filter]
    for index, level in enumerate(levels):
        tags = level_tags(levels, index)
        selected = tag_selected(tags, run_tags, skip_tags)
        reason = "" if selected else "not selected by --tags/--skip-tags"
        if level["id"] == "phase0_efa" and selected and not phase0_enabled and "phase0" not in set(run_tags or []):
            selected, reason = False, "Phase 0 is not enabled for this inventory (validation_phase0_enabled)"
        base = {"level": level["level"], "name": level["name"], "order": float(level["order"]),
                "selected": selected, "reason": reason, "tags": tags}
        if level["id"] in ("l5_training_step", "l6_evaluation"):
            per = [e for e in wanted if level["id"] == "l5_training_step" or e.get("evaluation")]
            if not per:
                rows.append(dict(base, id=level["id"], selected=False,
                                 reason="no example configured (validation_examples)"
                                 + (" named %s" % example_filter if example_filter else "")))
            for example in per:
                rows.append(dict(base, id="%s/%s" % (level["id"], example["name"]),
                                 name="%s: %s" % (level["name"], example["name"])))
        else:
            rows.append(dict(base, id=level["id"]))
    return rows
