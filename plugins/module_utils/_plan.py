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


# Tags ansible-core gives a meaning of its own (docs: Tags, "Special tags").
SPECIAL_TAGS = ("all", "always", "never", "tagged", "untagged")


def tags_problem(known, run_tags, skip_tags):
    """One sentence when --tags or --skip-tags names a tag that selects nothing in the playbook (`known`: its tags,
    _levels.playbook_tags()), else "". Ansible runs no task for such a tag and says nothing: a misspelt --tags
    ran no level and the run ended 0/10 passed with exit code 0; a misspelt --skip-tags skipped nothing."""
    for option, tags in (("--tags", run_tags), ("--skip-tags", skip_tags)):
        unknown = [tag for tag in tags or [] if tag not in known and tag not in SPECIAL_TAGS]
        if unknown:
            levels = [tag for tag in known if not tag.startswith("from_")]
            return ("%s %s: %s no level. The tags are %s, and from_<tag> for a level and every one after it "
                    "(from_l3)." % (option, ", ".join(unknown), "these tags select" if len(unknown) > 1
                                    else "this tag selects", ", ".join(levels)))
    return ""


class SurveyError(ValueError):
    """A survey answer (validation_levels, validation_skip_to) that names no level."""


def _answers(value, name, choices):
    if value is None:
        return []
    if isinstance(value, str):
        parts = value.replace(",", "\n").splitlines()
    elif isinstance(value, (list, tuple)):
        parts = []
        for element in value:
            if not isinstance(element, str):
                raise SurveyError("%s: %r is not a level name; choose among %s" % (name, element, ", ".join(choices)))
            parts.extend(element.replace(",", "\n").splitlines())
    else:
        raise SurveyError("%s must be a list of levels or a string such as 'l0,l3', not %r" % (name, value))
    return [part.strip().lower() for part in parts if part.strip()]


def survey_selection(levels, chosen_levels=None, skip_to=None):
    """AWX surveys cannot set job tags: the survey's validation_levels (multiselect: a list from AWX, a
    newline/comma separated string from -e) and validation_skip_to (one level: its from_<tag>) become
    tags, the union of both. Returns {'tags': [...], 'ids': [level ids those tags select]}; with no
    answer, no tags and every id (the survey narrows nothing)."""
    own = [level["tags"][0] for level in levels if level.get("tags")]
    aliases = {alias: level["tags"][0] for level in levels for alias in level.get("tags", [])[1:]}
    skippable = ["from_" + tag for tag in own]
    tags = []
    for answer in _answers(chosen_levels, "validation_levels", own):
        tag = aliases.get(answer, answer)
        if tag not in own:
            raise SurveyError("validation_levels: '%s' is not a level; choose among %s" % (answer, ", ".join(own)))
        if tag not in tags:
            tags.append(tag)
    tags = [tag for tag in own if tag in tags]
    skip = _answers(skip_to, "validation_skip_to", own)
    if len(skip) > 1:
        raise SurveyError("validation_skip_to takes one level, not %s" % ", ".join(skip))
    if skip:
        tag = skip[0] if skip[0].startswith("from_") else "from_" + skip[0]
        if tag not in skippable:
            raise SurveyError("validation_skip_to: '%s' is not a level to skip to; choose among %s"
                              % (skip[0], ", ".join(t[len("from_"):] for t in skippable)))
        tags.append(tag)
    ids = [level["id"] for i, level in enumerate(levels) if not tags or tag_selected(level_tags(levels, i), tags, [])]
    return {"tags": tags, "ids": ids}


def build_plan(levels, examples, run_tags, skip_tags, phase0_enabled=False, example_filter="", survey_tags=None):
    """Rows of the run in order. A level with per_example (L5, L6) has one row per example (only the examples
    that set its example_needs: L6, those with an evaluation); `example_filter` keeps one example (validate.sh --example); `survey_tags` (from
    survey_selection) narrow what the job tags select."""
    rows = []
    wanted = [e for e in (examples or []) if not example_filter or e.get("name") == example_filter]
    for index, level in enumerate(levels):
        tags = level_tags(levels, index)
        selected = tag_selected(tags, run_tags, skip_tags)
        if selected and survey_tags:
            selected = tag_selected(tags, survey_tags, [])
        reason = "" if selected else "not selected by --tags/--skip-tags"
        # a level that runs only when enabled (Phase 0: validation_phase0_enabled) or asked for by its own tags
        if level.get("only_when_enabled") and selected and not phase0_enabled \
                and not (set(run_tags or []) | set(survey_tags or [])) & set(level.get("tags") or []):
            selected, reason = False, "Phase 0 is not enabled for this inventory (validation_phase0_enabled)"
        base = {"level": level["level"], "name": level["name"], "order": float(level["order"]),
                "selected": selected, "reason": reason, "tags": tags}
        if level.get("per_example"):
            needs = level.get("example_needs")
            per = [e for e in wanted if not needs or e.get(needs)]
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
