# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/_plan.py: which rows of the results table the tags select.

The levels are the real ones (the level registry, plugins/module_utils/_levels.py); the tags the plan computes are
compared with the tags of each level's block in playbooks/validate.yml, which decide what really runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.rlstack.validation.plugins.module_utils import _levels
from ansible_collections.rlstack.validation.plugins.module_utils import _plan as plan

REPO = Path(__file__).resolve().parents[4]
LEVELS = _levels.levels()
LEVEL_IDS = [level["id"] for level in LEVELS]
NOT_SELECTED = "not selected by --tags/--skip-tags"
PHASE0_OFF = "Phase 0 is not enabled for this inventory (validation_phase0_enabled)"
NO_EXAMPLE = "no example configured (validation_examples)"

EXAMPLES = [
    {"name": "libero-pi0", "framework": "rlinf", "nodes": 1, "evaluation": {"floor": 0.5}},
    {"name": "maniskill-ppo", "framework": "rlinf", "nodes": 2},
    {"name": "libero-openvla-oft", "framework": "verl", "evaluation": {"floor": 0.3, "pattern": "success_rate=(?P<value>.*)"}},
]


def playbook_level_tags():
    """{level id: tags of its entry} from playbooks/validate.yml (the diagnostics, such as bad-node isolation,
    are entries there but not levels: _levels.DIAGNOSTICS)."""
    plays = yaml.safe_load((REPO / "playbooks" / "validate.yml").read_text(encoding="utf-8"))
    out = {}
    for block in plays[0]["tasks"]:
        for task in block.get("block") or []:
            role = (task.get("ansible.builtin.import_role") or {}).get("name", "")
            if role.startswith("rlstack.validation.") and role.split(".")[-1] not in _levels.diagnostic_ids():
                out[role.split(".")[-1]] = list(task.get("tags") or [])
    return out


def row(rows, row_id):
    found = [r for r in rows if r["id"] == row_id]
    assert len(found) == 1, "%s: %s" % (row_id, [r["id"] for r in rows])
    return found[0]


def selected_ids(rows):
    return [r["id"] for r in rows if r["selected"]]


# ------------------------------------------------------------------------------------------------- the levels


def test_the_real_level_list():
    assert LEVEL_IDS == ["l0_infrastructure", "l1_runtime", "l2_single_gpu", "l3_multi_gpu", "phase0_efa", "l4_rollout",
                         "l5_training_step", "l6_evaluation"]
    assert LEVELS[4]["tags"] == ["phase0", "l3_5"]


# ------------------------------------------------------------------------------------------------- level_tags


def test_level_tags_of_the_first_level():
    assert plan.level_tags(LEVELS, 0) == ["l0", "dcgm", "from_l0"]  # dcgm: L0 with the DCGM diagnostic


def test_level_tags_are_cumulative():
    assert plan.level_tags(LEVELS, 3) == ["l3", "from_l0", "from_l1", "from_l2", "from_l3"]
    assert plan.level_tags(LEVELS, 7) == ["l6", "from_l0", "from_l1", "from_l2", "from_l3", "from_phase0", "from_l4", "from_l5",
                                          "from_l6"]


def test_level_tags_of_phase0():
    tags = plan.level_tags(LEVELS, LEVEL_IDS.index("phase0_efa"))
    assert tags[:2] == ["phase0", "l3_5"]
    assert {"from_l0", "from_l1", "from_l2", "from_l3"} <= set(tags)
    assert "from_l4" not in tags
    assert "from_l3_5" not in tags


def test_level_tags_of_l4_include_everything_before():
    tags = plan.level_tags(LEVELS, LEVEL_IDS.index("l4_rollout"))
    assert tags[0] == "l4"
    assert {"from_l0", "from_l1", "from_l2", "from_l3", "from_l4"} <= set(tags)
    assert "from_l5" not in tags


def test_level_tags_skip_levels_without_tags():
    levels = [{"id": "a", "tags": ["a"]}, {"id": "b"}, {"id": "c", "tags": ["c"]}]
    assert plan.level_tags(levels, 1) == ["from_a"]
    assert plan.level_tags(levels, 2) == ["c", "from_a", "from_c"]


def test_level_tags_do_not_change_the_levels():
    before = [dict(level, tags=list(level["tags"])) for level in LEVELS]
    plan.level_tags(LEVELS, 7)
    assert LEVELS == before


@pytest.mark.parametrize("level_id", LEVEL_IDS)
def test_level_tags_match_the_playbook_blocks(level_id):
    blocks = playbook_level_tags()
    assert set(blocks) == set(LEVEL_IDS)
    assert set(plan.level_tags(LEVELS, LEVEL_IDS.index(level_id))) == set(blocks[level_id])


# ------------------------------------------------------------------------------------- tags that select nothing


def every_playbook_tag():
    """Every tag a task of playbooks/validate.yml carries, Ansible's special ones aside."""
    found = set()

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("tags"), list):
                found.update(node["tags"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(yaml.safe_load((REPO / "playbooks" / "validate.yml").read_text(encoding="utf-8")))
    return found - set(plan.SPECIAL_TAGS)


def test_the_playbook_tags_are_the_tags_of_validate_yml():
    assert set(_levels.playbook_tags()) == every_playbook_tag()


@pytest.mark.parametrize("run_tags,skip_tags", [
    (["all"], []), (["l3"], []), (["from_l2", "dcgm"], ["from_l5"]), (["isolate"], []), (["always"], ["never"]),
    (["l3_5"], []), (["phase0"], ["l4"]),
])
def test_tags_the_playbook_knows_are_no_problem(run_tags, skip_tags):
    assert plan.tags_problem(_levels.playbook_tags(), run_tags, skip_tags) == ""


def test_a_tag_that_selects_nothing_is_one_sentence_naming_it():
    """Ansible ran nothing for --tags l7 and the run ended '0/10 passed, 10 skipped' with exit code 0."""
    known = _levels.playbook_tags()
    assert plan.tags_problem(known, ["l7"], []) == (
        "--tags l7: this tag selects no level. The tags are l0, dcgm, l1, l2, l3, phase0, l3_5, l4, l5, l6, isolate, "
        "and from_<tag> for a level and every one after it (from_l3).")
    assert plan.tags_problem(known, ["l3", "l33", "x"], []).startswith("--tags l33, x: these tags select no level.")
    assert plan.tags_problem(known, ["all"], ["from_L4"]).startswith("--skip-tags from_L4: this tag selects no level.")


# ----------------------------------------------------------------------------------------------- tag_selected


@pytest.mark.parametrize("run_tags,skip_tags,expected", [
    (None, None, True),
    ([], [], True),
    (["all"], [], True),
    (["always"], [], True),
    (["always", "l1"], [], False),
    (["l3"], [], True),
    (["from_l2"], [], True),
    (["l4"], [], False),
    (["all"], ["l3"], False),
    (["l3"], ["from_l3"], False),
    (["all"], ["from_l4"], True),
])
def test_tag_selected(run_tags, skip_tags, expected):
    assert plan.tag_selected(plan.level_tags(LEVELS, 3), run_tags, skip_tags) is expected


# ------------------------------------------------------------------------------------------------- build_plan


def test_build_plan_all_rows_in_order():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["all"], [], phase0_enabled=True)
    assert [r["id"] for r in rows] == [
        "l0_infrastructure", "l1_runtime", "l2_single_gpu", "l3_multi_gpu", "phase0_efa", "l4_rollout",
        "l5_training_step/libero-pi0", "l5_training_step/maniskill-ppo", "l5_training_step/libero-openvla-oft",
        "l6_evaluation/libero-pi0", "l6_evaluation/libero-openvla-oft"]
    assert all(r["selected"] and r["reason"] == "" for r in rows)
    first = rows[0]
    assert first == {"id": "l0_infrastructure", "level": "L0", "name": "Infrastructure", "order": 0.0, "selected": True,
                     "reason": "", "tags": ["l0", "dcgm", "from_l0"]}
    assert row(rows, "phase0_efa")["order"] == 3.5
    assert row(rows, "phase0_efa")["level"] == "L3.5"
    assert [r["order"] for r in rows] == sorted(r["order"] for r in rows)


def test_build_plan_all_without_phase0():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["all"], [], phase0_enabled=False)
    phase0 = row(rows, "phase0_efa")
    assert (phase0["selected"], phase0["reason"]) == (False, PHASE0_OFF)
    assert [r["id"] for r in rows if not r["selected"]] == ["phase0_efa"]


def test_build_plan_default_run_tags_select_everything():
    rows = plan.build_plan(LEVELS, EXAMPLES, None, None, phase0_enabled=True)
    assert all(r["selected"] for r in rows)


def test_build_plan_one_level():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["l3"], [], phase0_enabled=True)
    assert selected_ids(rows) == ["l3_multi_gpu"]
    assert {r["reason"] for r in rows if not r["selected"]} == {NOT_SELECTED}


def test_build_plan_from_l2_skip_from_l4_with_phase0():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["from_l2"], ["from_l4"], phase0_enabled=True)
    assert selected_ids(rows) == ["l2_single_gpu", "l3_multi_gpu", "phase0_efa"]
    assert [r["level"] for r in rows if r["selected"]] == ["L2", "L3", "L3.5"]
    assert row(rows, "l1_runtime")["reason"] == NOT_SELECTED
    assert row(rows, "l4_rollout")["reason"] == NOT_SELECTED
    assert row(rows, "l5_training_step/libero-pi0")["reason"] == NOT_SELECTED


def test_build_plan_from_l2_skip_from_l4_without_phase0():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["from_l2"], ["from_l4"], phase0_enabled=False)
    assert selected_ids(rows) == ["l2_single_gpu", "l3_multi_gpu"]
    assert row(rows, "phase0_efa")["reason"] == PHASE0_OFF


@pytest.mark.parametrize("tag", ["phase0", "l3_5"])
def test_build_plan_phase0_tag_runs_phase0_even_when_disabled(tag):
    rows = plan.build_plan(LEVELS, EXAMPLES, [tag], [], phase0_enabled=False)
    assert selected_ids(rows) == ["phase0_efa"]
    assert row(rows, "phase0_efa")["reason"] == ""


def test_build_plan_phase0_skipped_by_tag():
    rows = plan.build_plan(LEVELS, [], ["all"], ["phase0"], phase0_enabled=True)
    assert row(rows, "phase0_efa")["reason"] == NOT_SELECTED
    assert row(rows, "l3_multi_gpu")["selected"] is True


def test_build_plan_phase0_not_enabled_reason_only_when_the_tags_select_it():
    rows = plan.build_plan(LEVELS, [], ["l0"], [], phase0_enabled=False)
    assert row(rows, "phase0_efa")["reason"] == NOT_SELECTED


def test_build_plan_examples():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["from_l5"], [], phase0_enabled=False)
    assert selected_ids(rows) == ["l5_training_step/libero-pi0", "l5_training_step/maniskill-ppo",
                                  "l5_training_step/libero-openvla-oft", "l6_evaluation/libero-pi0",
                                  "l6_evaluation/libero-openvla-oft"]
    l5 = row(rows, "l5_training_step/maniskill-ppo")
    assert (l5["level"], l5["name"], l5["order"]) == ("L5", "Training step: maniskill-ppo", 5.0)
    l6 = row(rows, "l6_evaluation/libero-openvla-oft")
    assert (l6["level"], l6["name"], l6["order"]) == ("L6", "Evaluation: libero-openvla-oft", 6.0)
    assert "l6_evaluation/maniskill-ppo" not in [r["id"] for r in rows]
    assert l6["tags"] == plan.level_tags(LEVELS, LEVEL_IDS.index("l6_evaluation"))


def test_build_plan_examples_not_selected_by_tags():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["l5"], [], phase0_enabled=False)
    assert selected_ids(rows) == ["l5_training_step/libero-pi0", "l5_training_step/maniskill-ppo",
                                  "l5_training_step/libero-openvla-oft"]
    assert row(rows, "l6_evaluation/libero-pi0")["reason"] == NOT_SELECTED


def test_build_plan_example_filter():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["all"], [], example_filter="libero-pi0")
    ids = [r["id"] for r in rows]
    assert [i for i in ids if "/" in i] == ["l5_training_step/libero-pi0", "l6_evaluation/libero-pi0"]


def test_build_plan_example_filter_without_evaluation():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["all"], [], example_filter="maniskill-ppo")
    assert row(rows, "l5_training_step/maniskill-ppo")["selected"] is True
    l6 = row(rows, "l6_evaluation")
    assert (l6["selected"], l6["reason"]) == (False, NO_EXAMPLE + " named maniskill-ppo")


def test_build_plan_example_filter_naming_no_example():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["all"], [], example_filter="does-not-exist")
    for level_id in ("l5_training_step", "l6_evaluation"):
        assert (row(rows, level_id)["selected"], row(rows, level_id)["reason"]) == (False, NO_EXAMPLE + " named does-not-exist")


@pytest.mark.parametrize("examples", [None, []])
def test_build_plan_without_examples(examples):
    rows = plan.build_plan(LEVELS, examples, ["all"], [], phase0_enabled=True)
    assert len(rows) == len(LEVELS)
    for level_id, level, name in (("l5_training_step", "L5", "Training step"), ("l6_evaluation", "L6", "Evaluation")):
        item = row(rows, level_id)
        assert (item["level"], item["name"], item["selected"], item["reason"]) == (level, name, False, NO_EXAMPLE)
    assert selected_ids(rows) == LEVEL_IDS[:6]


def test_build_plan_examples_without_any_evaluation():
    rows = plan.build_plan(LEVELS, [{"name": "maniskill-ppo"}], ["all"], [])
    assert row(rows, "l5_training_step/maniskill-ppo")["selected"] is True
    assert row(rows, "l6_evaluation")["selected"] is False


def test_build_plan_survey_tags_narrow_the_job_tags():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["all"], [], survey_tags=["l0", "from_l6"])
    assert selected_ids(rows) == ["l0_infrastructure", "l6_evaluation/libero-pi0", "l6_evaluation/libero-openvla-oft"]
    assert row(rows, "l1_runtime")["reason"] == NOT_SELECTED


def test_build_plan_survey_tags_cannot_add_what_the_job_tags_skip():
    rows = plan.build_plan(LEVELS, EXAMPLES, ["all"], ["from_l4"], survey_tags=["l0", "l5"])
    assert selected_ids(rows) == ["l0_infrastructure"]


def test_build_plan_survey_phase0_runs_phase0_even_when_disabled():
    rows = plan.build_plan(LEVELS, [], ["all"], [], phase0_enabled=False, survey_tags=["phase0"])
    assert selected_ids(rows) == ["phase0_efa"]


def test_build_plan_does_not_change_its_inputs():
    examples = [dict(e) for e in EXAMPLES]
    plan.build_plan(LEVELS, examples, ["all"], [], example_filter="libero-pi0")
    assert examples == EXAMPLES


# ------------------------------------------------------------------------------------------- survey_selection


def test_survey_without_answers_narrows_nothing():
    assert plan.survey_selection(LEVELS) == {"tags": [], "ids": LEVEL_IDS}
    assert plan.survey_selection(LEVELS, [], "") == {"tags": [], "ids": LEVEL_IDS}


def test_survey_levels_from_awx_list_in_level_order():
    assert plan.survey_selection(LEVELS, ["l3", "L0", "l3"]) == {"tags": ["l0", "l3"], "ids": ["l0_infrastructure", "l3_multi_gpu"]}


def test_survey_levels_from_a_cli_string_and_alias():
    out = plan.survey_selection(LEVELS, "l1, l3_5\nl4")
    assert out == {"tags": ["l1", "phase0", "l4"], "ids": ["l1_runtime", "phase0_efa", "l4_rollout"]}


@pytest.mark.parametrize("skip_to", ["l5", "from_l5", ["l5"]])
def test_survey_skip_to(skip_to):
    assert plan.survey_selection(LEVELS, None, skip_to) == {"tags": ["from_l5"], "ids": ["l5_training_step", "l6_evaluation"]}


def test_survey_union_of_levels_and_skip_to():
    out = plan.survey_selection(LEVELS, ["l0"], "l6")
    assert out == {"tags": ["l0", "from_l6"], "ids": ["l0_infrastructure", "l6_evaluation"]}


@pytest.mark.parametrize("chosen,skip_to,words", [
    (["l7"], None, ["validation_levels", "'l7'", "l0, l1, l2, l3, phase0, l4, l5, l6"]),
    ([3], None, ["validation_levels", "3", "not a level name"]),
    ({"l0": True}, None, ["validation_levels must be a list"]),
    (None, "l1,l2", ["validation_skip_to takes one level", "l1, l2"]),
    (None, "l9", ["validation_skip_to", "'l9'", "l0, l1, l2, l3, phase0, l4, l5, l6"]),
])
def test_survey_errors(chosen, skip_to, words):
    with pytest.raises(plan.SurveyError) as info:
        plan.survey_selection(LEVELS, chosen, skip_to)
    for word in words:
        assert word in str(info.value)
