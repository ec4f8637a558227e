# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Survey answers -> the levels a run selects: the logic proposed for the collection (a filter
`rlstack.validation.survey_tags` next to validation_plan in plugins/filter/runner.py, logic in
plugins/module_utils/_plan.py), kept here with its unit tests until the lead moves it; docs/awx.md and
the AWX report give the playbook side.

AWX surveys cannot set job tags, so the "Validate level" survey sets extra vars instead:

* validation_levels   (multiselect) levels to run: the level tags of validate.yml (l0 .. l6, phase0; l3_5
                      is accepted as phase0). AWX sends a list; `-e` on the CLI gives a string, separated
                      by newlines or commas.
* validation_skip_to  (multiplechoice) run this level and all after it: l2 means the tag from_l2.

`survey_tags` turns them into tags (the union of both, as --tags l0,from_l3 would); `plan_selected`
narrows what the job tags selected (ansible_run_tags) by them: a level runs when the job tags select it
AND, if the survey chose anything, the survey tags select it. No answer narrows nothing.
"""
from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils import _plan

# The level tags of playbooks/validate.yml, in order (roles/runner/vars/main.yml __runner_levels).
LEVEL_TAGS = ("l0", "l1", "l2", "l3", "phase0", "l4", "l5", "l6")
ALIASES = {"l3_5": "phase0", "l3.5": "phase0"}
# Levels with a from_<tag> tag (Phase 0 included: from_phase0 runs Phase 0 and L4 onwards).
SKIP_TO = ("l0", "l1", "l2", "l3", "phase0", "l4", "l5", "l6")


class SurveyError(ValueError):
    """A survey answer the playbook cannot use; the message names the variable and the valid answers."""


def _answers(value, name: str) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        parts = value.replace(",", "\n").splitlines()
    elif isinstance(value, (list, tuple)):
        parts = []
        for element in value:
            if not isinstance(element, str):
                raise SurveyError(f"{name}: {element!r} is not a level name; choose among {', '.join(LEVEL_TAGS)}")
            parts.extend(element.replace(",", "\n").splitlines())
    else:
        raise SurveyError(f"{name} must be a list of levels or a string such as 'l0,l3', not {value!r}")
    return [part.strip().lower() for part in parts if part.strip()]


def survey_tags(levels=None, skip_to=None) -> list:
    """validation_levels / validation_skip_to answers -> tags, in level order; [] when neither is given."""
    chosen = []
    for answer in _answers(levels, "validation_levels"):
        tag = ALIASES.get(answer, answer)
        if tag not in LEVEL_TAGS:
            raise SurveyError(f"validation_levels: '{answer}' is not a level; choose among {', '.join(LEVEL_TAGS)}")
        if tag not in chosen:
            chosen.append(tag)
    tags = [tag for tag in LEVEL_TAGS if tag in chosen]
    skip = _answers(skip_to, "validation_skip_to")
    if len(skip) > 1:
        raise SurveyError(f"validation_skip_to takes one level, not {', '.join(skip)}")
    if skip:
        level = skip[0][len("from_"):] if skip[0].startswith("from_") else skip[0]
        if level not in SKIP_TO:
            raise SurveyError(f"validation_skip_to: '{skip[0]}' is not a level to skip to; choose among {', '.join(SKIP_TO)}")
        tags.append("from_" + level)
    return tags


def plan_selected(levels, run_tags, skip_tags, survey, phase0_enabled=False) -> dict:
    """{level id: selected} for __runner_levels-style `levels`, as the plan would mark them when the
    survey tags narrow the job tags."""
    selected = {}
    for index, level in enumerate(levels):
        tags = _plan.level_tags(levels, index)
        chosen = _plan.tag_selected(tags, run_tags, skip_tags)
        if survey:
            chosen = chosen and _plan.tag_selected(tags, survey, [])
        if level["id"] == "phase0_efa" and chosen and not phase0_enabled:
            chosen = "phase0" in set(run_tags or []) | set(survey or [])
        selected[level["id"]] = chosen
    return selected
