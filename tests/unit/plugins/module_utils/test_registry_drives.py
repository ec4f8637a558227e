# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The registry drives the run: the runner's task files and the plan (plugins/module_utils/_plan.py) decide
nothing by a level's id, label or tag; what differs between levels is a field of the level's registry row
(plugins/module_utils/_levels.py). A new level is a registry row and a role (CONTRIBUTING.md, "Recipe: add a
level"; tests/sim/test_sim_toy_level.py follows it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils import _levels
from ansible_collections.rlstack.validation.plugins.module_utils import _plan

REPO = Path(__file__).resolve().parents[4]
RUNNER_TASKS = sorted((REPO / "roles" / "runner" / "tasks").glob("*.yml"))
FILES = RUNNER_TASKS + [REPO / "plugins" / "module_utils" / "_plan.py"]


def code_lines(path):
    """(number, line) of the lines that are not comments (YAML and Python both comment with #)."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip().startswith("#"):
            yield number, line


def level_names():
    """Every way a level is named: its id (also the prefix of its role's variables), its label ('L3', 'L3.5') and
    its tags ('l3', 'phase0'), quoted as a decision would quote them."""
    names = []
    for level in _levels.levels():
        names.append((level["id"], re.compile(re.escape(level["id"]))))
        for word in [level["level"]] + list(level["tags"]):
            names.append((word, re.compile(r"""['"]%s['"]""" % re.escape(word))))
    return names


def test_the_runner_and_the_plan_name_no_level():
    found = []
    for path in FILES:
        for number, line in code_lines(path):
            for name, pattern in level_names():
                if pattern.search(line):
                    found.append("%s:%d names %s: %s" % (path.relative_to(REPO), number, name, line.strip()))
    assert not found, "decide by a field of the registry row instead:\n" + "\n".join(found)


def test_the_grep_finds_a_level_named_by_id():
    """The test above would see a decision by id (it greps what it should)."""
    line = """  when: runner_level.id == 'l0_infrastructure'"""
    assert any(pattern.search(line) for _name, pattern in level_names())
    assert any(pattern.search("tags & {'phase0', 'l3_5'}") for _name, pattern in level_names())


@pytest.mark.parametrize("field", sorted(_levels.LEVEL_DEFAULTS))
def test_every_level_has_every_field(field):
    assert all(field in level for level in _levels.levels())


def test_the_plan_reads_the_rows_fields():
    """A toy level with the fields of L6 gets L6's rows; with Phase 0's, Phase 0's gate."""
    toy = dict(_levels.by_id("l6_evaluation"), id="toy", level="L9", name="Toy", order=9, tags=["toy"])
    examples = [{"name": "a", "evaluation": {"x": 1}}, {"name": "b"}]
    rows = _plan.build_plan([toy], examples, ["all"], [])
    assert [r["id"] for r in rows] == ["toy/a"]
    gated = dict(toy, per_example=False, only_when_enabled=True)
    assert _plan.build_plan([gated], [], ["all"], [])[0]["selected"] is False
    assert _plan.build_plan([gated], [], ["toy"], [])[0]["selected"] is True
    assert _plan.build_plan([gated], [], ["all"], [], phase0_enabled=True)[0]["selected"] is True
