# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Survey answers -> the levels a run selects, through the collection's own code
(plugins/module_utils/_plan.py: survey_selection and build_plan), in the shapes the AWX tests use.

AWX surveys cannot set job tags, so the "Validate level" survey sets extra vars instead:

* validation_levels   (multiselect) levels to run: the level tags of validate.yml (l0 .. l6, phase0; l3_5
                      is accepted as phase0). AWX sends a list; `-e` on the CLI gives a string, separated
                      by newlines or commas.
* validation_skip_to  (multiplechoice) run this level and all after it: l2 means the tag from_l2.
"""
from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils import _levels
from ansible_collections.rlstack.validation.plugins.module_utils import _plan

LEVELS = _levels.levels()
LEVEL_TAGS = tuple(level["tags"][0] for level in LEVELS)
# Every level has a from_<tag> tag (Phase 0 too: from_phase0 runs Phase 0 and L4 onwards).
SKIP_TO = LEVEL_TAGS
SurveyError = _plan.SurveyError
# One example with an evaluation, so that L5 and L6 are rows the tags can select.
_EXAMPLES = [{"name": "x", "evaluation": {"floor": 0.5}}]


def survey_tags(levels=None, skip_to=None) -> list:
    """validation_levels / validation_skip_to answers -> tags, in level order; [] when neither is given."""
    return _plan.survey_selection(LEVELS, levels, skip_to)["tags"]


def plan_selected(levels, run_tags, skip_tags, survey, phase0_enabled=False) -> dict:
    """{level id: selected} as the plan marks them when the survey tags narrow the job tags."""
    rows = _plan.build_plan(levels, _EXAMPLES, run_tags, skip_tags, phase0_enabled, "", survey)
    return {row["id"].split("/")[0]: row["selected"] for row in rows}
