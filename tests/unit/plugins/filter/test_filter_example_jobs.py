# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/filter/example_jobs.py (logic: plugins/module_utils/workloads/_describe.py)."""

from __future__ import annotations

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.rlstack.validation.plugins.filter import example_jobs as plugin
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads
from filter_helpers import tagged

NODES = [{"node": "p5-node-0", "gpus": 8, "efa": 32}, {"node": "p5-node-1", "gpus": 8, "efa": 32}]
SOME_EXAMPLES = [{"name": "one", "framework": "rlinf", "command": ["bash", "run.sh"]},
                 {"name": "two-node", "framework": "rlinf", "nodes": 2, "command": ["bash", "run.sh"]},
                 {"name": "three-node", "nodes": 3, "command": ["true"]}]


def test_one_job_per_example_that_fits_in_order():
    out = plugin.example_jobs(tagged(SOME_EXAMPLES), "train", tagged(NODES), "img:1", 900)
    assert [item["name"] for item in out] == ["one", "two-node"]
    assert out[0]["example"] == SOME_EXAMPLES[0]
    assert out[0]["job"] == _workloads.example_job(SOME_EXAMPLES[0], "train", NODES, "img:1", 900)
    # RLinf's one-step overrides (its contract in _frameworks.py) are appended to the command
    assert "runner.max_steps=1" in out[0]["job"]["args"] and "runner.max_steps=1" in out[0]["job"]["launched"]["overrides"]
    assert (out[1]["job"]["nodes"], out[1]["job"]["gpus"], out[1]["job"]["deadline_s"]) == (2, 8, 900)


def test_eval_mode_and_simulator_env():
    out = plugin.example_jobs(SOME_EXAMPLES[:1], "eval", NODES, "img:1", "600", {"SIM": "x"})
    assert out[0]["job"]["name"] == "eval-one"
    assert out[0]["job"] == _workloads.example_job(SOME_EXAMPLES[0], "eval", NODES, "img:1", 600, {"SIM": "x"})
    assert out[0]["job"]["env"]["SIM"] == "x"


@pytest.mark.parametrize("examples", [None, []])
def test_no_examples_no_jobs(examples):
    assert plugin.example_jobs(examples, "train", NODES, "img", 600) == []


def test_no_nodes_no_jobs():
    assert plugin.example_jobs(SOME_EXAMPLES, "train", [], "img", 600) == []


def test_a_wrong_mode_is_one_sentence():
    with pytest.raises(AnsibleFilterError, match="mode must be 'train' or 'eval', not 'test'"):
        plugin.example_jobs(SOME_EXAMPLES, "test", NODES, "img", 600)


def test_an_unknown_framework_is_one_sentence():
    with pytest.raises(AnsibleFilterError, match="framework 'nope' has no contract"):
        plugin.example_jobs([{"name": "x", "framework": "nope", "command": ["true"]}], "train", NODES, "img", 600)


def test_the_filter_is_documented_under_its_name():
    doc = yaml.safe_load(plugin.DOCUMENTATION)
    assert doc["name"] == "example_jobs" and set(plugin.FilterModule().filters()) == {"example_jobs"}
    assert set(doc["positional"].replace(" ", "").split(",")) == set(doc["options"]) - {"_input"}
