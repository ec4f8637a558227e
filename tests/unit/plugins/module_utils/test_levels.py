# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The level registry (plugins/module_utils/_levels.py) and every place that must agree with it: the
entries of playbooks/validate.yml and their tags, the level roles, the runner's argument spec, the AWX
survey, validate.sh and local mode's list of level roles. Each test fails when one of them drifts."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from ansible_collections.rlstack.validation.plugins.module_utils import _levels
from ansible_collections.rlstack.validation.plugins.module_utils import _plan

REPO = Path(__file__).resolve().parents[4]
LEVELS = _levels.levels()
IDS = _levels.ids()


def load(path):
    return yaml.safe_load((REPO / path).read_text(encoding="utf-8"))


def playbook_entries():
    """The level entries of playbooks/validate.yml, in order: [(role name, tags, when)]."""
    out = []
    for block in load("playbooks/validate.yml")[0]["tasks"]:
        for task in block.get("block") or []:
            role = (task.get("ansible.builtin.import_role") or {}).get("name", "")
            if role.startswith("rlstack.validation.") and role.split(".")[-1] not in _levels.diagnostic_ids():
                out.append((role.split(".")[-1], list(task.get("tags") or []), str(task.get("when"))))
    return out


def test_each_diagnostic_runs_after_its_levels_with_their_tags():
    """A diagnostic (bad-node isolation) comes right after the levels it follows up and is selected by their
    tags as well as its own, so it can run right after them."""
    tasks = [t for b in load("playbooks/validate.yml")[0]["tasks"] for t in b.get("block") or []]
    roles = [(t.get("ansible.builtin.import_role") or {}).get("name", "").split(".")[-1] for t in tasks]
    for diag in _levels.DIAGNOSTICS:
        index = roles.index(diag["id"])
        assert roles[index - len(diag["after"]):index] == diag["after"]
        tags = tasks[index]["tags"]
        assert diag["tags"][0] == tags[0]
        for level_id in diag["after"]:
            own = _levels.cumulative_tags(IDS.index(level_id))
            assert set(own) <= set(tags), level_id
        assert (REPO / "roles" / diag["id"] / "meta" / "argument_specs.yml").exists()


def task_files(under="roles"):
    return sorted(p for p in (REPO / under).glob("*/tasks/*.yml"))


# ------------------------------------------------------------------------------------------------ the registry


def test_the_registry_is_complete_and_ordered():
    assert IDS == ["l0_infrastructure", "l1_runtime", "l2_single_gpu", "l3_multi_gpu", "phase0_efa", "l4_rollout",
                   "l5_training_step", "l6_evaluation"]
    assert [level["order"] for level in LEVELS] == sorted(level["order"] for level in LEVELS)
    assert len({level["tags"][0] for level in LEVELS}) == len(LEVELS)
    for level in LEVELS:
        assert level["kind"] in _levels.KINDS, level["id"]
        assert (level["probe"] is not None) == (level["kind"] == "probe"), level["id"]
        assert level["per_example"] == (level["kind"] == "jobs"), level["id"]


def test_levels_returns_a_copy():
    mine = _levels.levels()
    mine[0]["tags"].append("x")
    assert _levels.levels()[0]["tags"] == ["l0", "dcgm"]  # dcgm: L0 with the DCGM diagnostic


def test_by_id_and_info():
    assert _levels.by_id("l5_training_step/libero")["level"] == "L5"
    assert _levels.info("phase0_efa") == {"id": "phase0_efa", "level": "L3.5", "name": "Phase 0 EFA", "order": 3.5}
    with pytest.raises(KeyError, match="'l7' is not a level; the levels are l0_infrastructure"):
        _levels.by_id("l7")


def test_cumulative_tags_are_the_plans():
    for index in range(len(LEVELS)):
        assert _levels.cumulative_tags(index) == _plan.level_tags(LEVELS, index)


@pytest.mark.parametrize("level", LEVELS, ids=IDS)
def test_each_level_has_its_role_and_probe(level):
    role = REPO / "roles" / level["id"]
    assert (role / "tasks" / "main.yml").is_file()
    if level["probe"]:
        assert (role / "files" / level["probe"]).is_file()
    main = (role / "tasks" / "main.yml").read_text(encoding="utf-8")
    assert "tasks_from: level.yml" in main
    assert re.search(r"^\s+runner_level_id: %s$" % level["id"], main, re.M), "roles/%s names another level" % level["id"]
    # the runner picks a level's steps by the registry's kind; an mpijob level's are its role's tasks/steps.yml
    assert (role / "tasks" / "steps.yml").is_file() == (level["kind"] == "mpijob")


# ------------------------------------------------------------------------------------- playbooks/validate.yml


def test_the_playbook_has_one_entry_per_level_in_run_order():
    assert [role for role, _tags, _when in playbook_entries()] == _levels.run_order()


def test_phase0_runs_before_the_first_expensive_level():
    order = _levels.run_order()
    assert sorted(order) == sorted(IDS)
    assert order.index("phase0_efa") == order.index("l3_multi_gpu") - 1
    assert [i for i in order if i != "phase0_efa"] == [i for i in IDS if i != "phase0_efa"]


@pytest.mark.parametrize("index", range(len(LEVELS)), ids=IDS)
def test_the_playbook_tags_are_the_registrys(index):
    entries = dict((role, (tags, when)) for role, tags, when in playbook_entries())
    tags, when = entries[IDS[index]]
    assert tags == _levels.cumulative_tags(index)
    assert when == "'%s' in runner_plan_ids and not runner_stop" % IDS[index]


def test_one_rescue_and_one_gate():
    """Only the runner's level.yml rescues a level, only it sets runner_stop (as its last task), and no level
    task fails the play: verdicts record, the run decides after each level."""
    rescues, stops, fails = [], [], []
    for path in task_files():
        if path.parts[-3] == "local_checks":
            continue
        text = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(REPO))
        rescues += [rel] * len(re.findall(r"^\s*rescue:", text, re.M))
        stops += [rel] * len(re.findall(r"^\s+runner_stop:", text, re.M))
        fails += [rel] * len(re.findall(r"ansible\.builtin\.fail:", text))
    # (the plan's: its reads of the cluster, and its first objects)
    assert rescues == ["roles/runner/tasks/level.yml"] + ["roles/runner/tasks/plan.yml"] * 2
    # and the plan's Phase 0 gate, which stops a run before it creates anything (docs/phase0.md)
    assert stops == ["roles/runner/tasks/level.yml", "roles/runner/tasks/phase0_gate.yml",
                     "roles/runner/tasks/plan.yml"]
    assert sorted(set(fails)) == ["roles/runner/tasks/cluster_unusable.yml", "roles/runner/tasks/finish_run.yml",
                                  "roles/runner/tasks/plan.yml", "roles/runner/tasks/settings.yml"]
    level = load("roles/runner/tasks/level.yml")
    assert "runner_stop" in level[-1]["ansible.builtin.set_fact"]
    assert "runner_stop: false" in (REPO / "roles/runner/tasks/plan.yml").read_text(encoding="utf-8")
    playbook = (REPO / "playbooks" / "validate.yml").read_text(encoding="utf-8")
    assert "rescue:" not in playbook and "runner_failed_levels" not in playbook


# --------------------------------------------------------------------------------------------- other copies


def test_the_runner_argument_spec_offers_the_registrys_levels():
    options = load("roles/runner/meta/argument_specs.yml")["argument_specs"]["plan"]["options"]
    # "" and null (an empty AWX survey answer) both mean "not set"
    assert options["validation_skip_to"]["choices"] == ["", None] + _levels.own_tags()
    for tag in _levels.own_tags():
        assert tag in options["validation_levels"]["description"]


def test_the_awx_survey_offers_the_registrys_levels():
    spec = {q["variable"]: q for q in load("awx/surveys.yml")["awx_surveys"]["validate_level"]["spec"]}
    assert spec["validation_levels"]["choices"] == _levels.own_tags()
    assert spec["validation_skip_to"]["choices"] == _levels.own_tags()


def test_local_mode_reads_every_level_role():
    # local mode keeps no list of its own: it asks the registry and each level's description
    assert "__local_checks_level_roles" not in load("roles/local_checks/vars/main.yml")
    assert "query('rlstack.validation.levels')" in (REPO / "roles/local_checks/tasks/render.yml").read_text()


def test_the_runner_reads_the_registry():
    assert load("roles/runner/vars/main.yml")["__runner_levels"] == "{{ query('rlstack.validation.levels') }}"


def validate_sh(*args):
    proc = subprocess.run(["bash", str(REPO / "validate.sh"), "--dry-run"] + list(args), cwd=str(REPO),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    words = shlex.split(proc.stdout)
    tags = words[words.index("--tags") + 1].split(",") if "--tags" in words else ["all"]
    skip = words[words.index("--skip-tags") + 1].split(",") if "--skip-tags" in words else []
    return tags, skip


def test_validate_sh_knows_the_registrys_levels():
    text = (REPO / "validate.sh").read_text(encoding="utf-8")
    assert re.search(r'^(?:readonly )?LEVELS="([^"]*)"', text, re.M).group(1).split() == [level["skip_to"] for level in LEVELS]


@pytest.mark.parametrize("index", range(len(LEVELS)), ids=IDS)
def test_validate_sh_skip_to_and_level_select_what_the_registry_says(index):
    number = LEVELS[index]["skip_to"]
    # --level 3 keeps Phase 0 (L3.5): validate.sh treats it as part of L3, as the original harness did.
    upto = IDS[:index + 2] if IDS[index + 1:index + 2] == ["phase0_efa"] else IDS[:index + 1]
    for flag, expected in (("--skip-to", IDS[index:]), ("--level", upto)):
        tags, skip = validate_sh(flag, number)
        rows = _plan.build_plan(LEVELS, [{"name": "x", "evaluation": {"floor": 0.5}}], tags, skip, phase0_enabled=True)
        chosen = [row["id"].partition("/")[0] for row in rows if row["selected"]]
        assert chosen == expected, (flag, number, tags, skip)
