# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Survey answers -> levels, through the collection's _plan (tests/awx/survey_selection.py adapts it)."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml

from ansible_collections.rlstack.validation.plugins.module_utils import _levels

import awx_data
from survey_selection import LEVEL_TAGS, SKIP_TO, SurveyError, plan_selected, survey_tags

ROOT = Path(__file__).resolve().parents[2]
LEVELS = _levels.levels()
ALL_IDS = [level["id"] for level in LEVELS]


def _selected(run_tags=None, skip_tags=None, survey=None, phase0=True):
    chosen = plan_selected(LEVELS, run_tags or ["all"], skip_tags or [], survey or [], phase0_enabled=phase0)
    return [level_id for level_id in ALL_IDS if chosen[level_id]]


@pytest.mark.parametrize("answer", [["l0", "l3"], "l0\nl3", "l0,l3", " l3 \n\nl0\n", ("L3", "l0"), ["l0,l3"]])
def test_levels_in_every_shape_a_job_can_send(answer):
    assert survey_tags(levels=answer) == ["l0", "l3"]


@pytest.mark.parametrize("answer", [None, "", [], "\n", ()])
def test_no_answer_selects_nothing_extra(answer):
    assert survey_tags(levels=answer, skip_to=answer if not isinstance(answer, (list, tuple)) else None) == []
    assert _selected(survey=survey_tags(levels=answer)) == ALL_IDS


def test_skip_to_is_the_from_tag():
    assert survey_tags(skip_to="l2") == ["from_l2"]
    assert survey_tags(skip_to="from_l2") == ["from_l2"]
    assert _selected(survey=survey_tags(skip_to="l2")) == [
        "l2_single_gpu", "l3_multi_gpu", "phase0_efa", "l4_rollout", "l5_training_step", "l6_evaluation"]


def test_levels_and_skip_to_are_a_union():
    tags = survey_tags(levels=["l0"], skip_to="l5")
    assert tags == ["l0", "from_l5"]
    assert _selected(survey=tags) == ["l0_infrastructure", "l5_training_step", "l6_evaluation"]


def test_phase0_and_its_alias():
    assert survey_tags(levels=["l3_5"]) == ["phase0"]
    assert _selected(survey=["phase0"], phase0=False) == ["phase0_efa"]
    assert _selected(survey=["l3"], phase0=False) == ["l3_multi_gpu"]
    assert "phase0_efa" not in _selected(survey=["from_l0"], phase0=False)


def test_the_survey_narrows_the_job_tags():
    assert _selected(run_tags=["l0", "l1"], survey=["l1", "l2"]) == ["l1_runtime"]
    assert _selected(run_tags=["l0"], survey=["l3"]) == []
    assert _selected(skip_tags=["from_l4"], survey=["from_l2"]) == ["l2_single_gpu", "l3_multi_gpu", "phase0_efa"]


@pytest.mark.parametrize("tag", LEVEL_TAGS)
def test_one_level_selects_exactly_that_level(tag):
    level_id = next(level["id"] for level in LEVELS if tag in level["tags"])
    assert _selected(survey=survey_tags(levels=[tag])) == [level_id]


def test_every_combination_matches_the_equivalent_job_tags():
    """The survey path selects what `--tags <levels>,from_<skip_to>` selects."""
    for count in (1, 2, 3):
        for combo in itertools.combinations(LEVEL_TAGS, count):
            for skip in (None,) + SKIP_TO[::3]:
                tags = survey_tags(levels=list(combo), skip_to=skip)
                assert _selected(survey=tags) == _selected(run_tags=tags)


@pytest.mark.parametrize("levels,skip_to,message", [
    (["l9"], None, "validation_levels: 'l9' is not a level; choose among l0, l1, l2, l3, phase0, l4, l5, l6"),
    ("l0\nbogus", None, "'bogus' is not a level"),
    ([1], None, "1 is not a level name"),
    ({"l0": True}, None, "must be a list of levels"),
    (None, "l9", "validation_skip_to: 'l9' is not a level to skip to"),
    (None, "l2,l3", "validation_skip_to takes one level"),
])
def test_a_wrong_answer_gives_one_clear_message(levels, skip_to, message):
    with pytest.raises(SurveyError) as err:
        survey_tags(levels=levels, skip_to=skip_to)
    assert message in str(err.value)


def test_the_survey_offers_exactly_the_known_levels():
    questions = {q["variable"]: q for q in awx_data.load()["awx_surveys"]["validate_level"]["spec"]}
    assert tuple(questions["validation_levels"]["choices"]) == LEVEL_TAGS
    assert tuple(questions["validation_skip_to"]["choices"]) == SKIP_TO


def test_the_level_tags_match_validate_yml():
    """LEVEL_TAGS / SKIP_TO follow the tags of playbooks/validate.yml."""
    play = yaml.safe_load((ROOT / "playbooks" / "validate.yml").read_text())[0]
    entries = [task for block in play["tasks"] if "block" in block for task in block["block"]]
    # the diagnostics (bad-node isolation) are entries there but not levels (_levels.DIAGNOSTICS)
    block_tags = [task.get("tags", []) for task in entries if "ansible.builtin.import_role" in task
                  and task["ansible.builtin.import_role"]["name"].split(".")[-1] not in _levels.diagnostic_ids()]
    own = [tags[0] for tags in block_tags]
    # validate.yml runs the levels in the registry's run order (Phase 0 before L3), the survey offers them all
    first_tag = dict((level["id"], level["tags"][0]) for level in LEVELS)
    assert tuple(own) == tuple(first_tag[level_id] for level_id in _levels.run_order())
    assert sorted(own) == sorted(LEVEL_TAGS)
    froms = {tag[len("from_"):] for tags in block_tags for tag in tags if tag.startswith("from_")}
    assert set(SKIP_TO) == froms
