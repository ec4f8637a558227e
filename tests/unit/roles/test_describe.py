# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Each level describes itself (roles/<level>/tasks/describe.yml): what it would run and create on given
nodes. The real run (the runner's probe_level.yml, example_jobs.yml, the L3 and Phase 0 steps) and local
mode read the same description; these tests run the task files with ansible-playbook, no cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils import _levels

REPO = Path(__file__).resolve().parents[3]
NODES = [{"node": "p5-a", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32},
         {"node": "p5-b", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32}]
SOME_EXAMPLES = [{"name": "one", "framework": "rlinf", "command": ["true"], "evaluation": {"floor": 0.5}},
                 {"name": "two-node", "framework": "verl", "nodes": 2, "command": ["true"]},
                 {"name": "three-node", "nodes": 3, "command": ["true"]}]


def describe(tmp_path, nodes, *extra):
    out = tmp_path / "descriptions.json"
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), DESCRIBE_OUT=str(out),
               DESCRIBE_NODES=json.dumps(nodes))
    playbook = str(Path(sys.executable).parent / "ansible-playbook")
    proc = subprocess.run([playbook, str(Path(__file__).parent / "describe.yml"),
                           "-e", json.dumps({"validation_examples": SOME_EXAMPLES})] + list(extra),
                          cwd=str(REPO), env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory):
    return describe(tmp_path_factory.mktemp("describe"), NODES)


def test_every_level_describes_itself(two_nodes):
    assert sorted(two_nodes) == sorted(_levels.ids())
    for level in _levels.levels():
        description = two_nodes[level["id"]]
        assert description["id"] == level["id"]
        if level["kind"] == "probe":
            assert Path(description["probe"]["script"]).resolve() == REPO / "roles" / level["id"] / "files" / level["probe"]
            assert description["probe"]["timeout_s"] > 0 and isinstance(description["probe"]["params"], dict)
            assert description["targets"] and all(t["node"] in ("p5-a", "p5-b") for t in description["targets"])
        if level["kind"] == "jobs":
            assert isinstance(description["jobs"], list) and description["deadline_s"] >= 600


def test_probe_targets(two_nodes):
    assert [t["node"] for t in two_nodes["l0_infrastructure"]["targets"]] == ["p5-a", "p5-b"]
    assert two_nodes["l1_runtime"]["targets"] == [dict(NODES[0], gpus=1, efa=0)]  # l1_runtime_gpus
    assert two_nodes["l2_single_gpu"]["targets"] == [dict(NODES[0], gpus=1, efa=0)]
    assert two_nodes["l4_rollout"]["probe"]["timeout_s"] == two_nodes["l4_rollout"]["probe"]["params"]["timeout_s"] + 60


def test_l3_runs_torchrun_over_the_nodes_gpus_and_an_mpijob_across_nodes(two_nodes):
    l3 = two_nodes["l3_multi_gpu"]
    assert l3["probe"]["ranks"] == 8 and l3["probe"]["launcher"] == "torchrun --standalone --nproc-per-node=8"
    assert [n["node"] for n in l3["mpijob"]["nodes"]] == ["p5-a", "p5-b"] and l3["mpijob"]["name"] == "l3"


def test_one_node_no_mpijob(tmp_path):
    one = describe(tmp_path, NODES[:1])
    assert one["l3_multi_gpu"]["mpijob"] is None
    assert [job["name"] for job in one["l5_training_step"]["jobs"]] == ["one"]


def test_jobs_per_example_that_fits(two_nodes):
    assert [job["name"] for job in two_nodes["l5_training_step"]["jobs"]] == ["one", "two-node"]
    assert [job["name"] for job in two_nodes["l6_evaluation"]["jobs"]] == ["one"]
    train = two_nodes["l5_training_step"]["jobs"][0]["job"]
    # RLinf's contract (_frameworks.py): the one-step overrides are appended to the command
    assert train["name"] == "train-one" and "runner.max_steps=1" in train["args"]
    assert train["launched"]["overrides"] == train["args"]
    assert two_nodes["l6_evaluation"]["jobs"][0]["job"]["name"] == "eval-one"


def test_libero_config_reaches_l4_and_the_jobs(tmp_path):
    config = {"dir": "/etc/rlstack/libero", "file": "config.yaml", "text": "benchmark_root: /x\n",
              "env": {"LIBERO_CONFIG_PATH": "/etc/rlstack/libero"}}
    got = describe(tmp_path, NODES, "-e", json.dumps({"runner_simulator_config": config}))
    assert got["l4_rollout"]["probe"]["simulator_config"] is True
    assert got["l4_rollout"]["probe"]["env"]["LIBERO_CONFIG_PATH"] == "/etc/rlstack/libero"
    assert got["l4_rollout"]["probe"]["params"]["env"]["LIBERO_CONFIG_PATH"] == "/etc/rlstack/libero"
    for level in ("l5_training_step", "l6_evaluation"):
        assert all(j["job"]["env"]["LIBERO_CONFIG_PATH"] == "/etc/rlstack/libero" for j in got[level]["jobs"])


def test_phase0_mpijob(two_nodes):
    phase0 = two_nodes["phase0_efa"]
    assert phase0["mpijob"]["network"] == ["efa"] and phase0["mpijob"]["name"] == "phase0"
    assert phase0["node_selector"] == "node.kubernetes.io/instance-type=g6.8xlarge"


def test_settings_reach_the_description(tmp_path):
    got = describe(tmp_path, NODES, "-e", "l2_single_gpu_dtype=fp16", "-e", "l3_multi_gpu_gpus=2",
                   "-e", "l3_multi_gpu_mpijob=false", "-e", "l5_training_step_deadline_s=100")
    assert got["l2_single_gpu"]["probe"]["params"]["dtype"] == "fp16"
    assert got["l3_multi_gpu"]["probe"]["ranks"] == 2 and got["l3_multi_gpu"]["targets"][0]["gpus"] == 2
    assert got["l3_multi_gpu"]["mpijob"] is None
    assert got["l5_training_step"]["deadline_s"] == 600  # the floor for first image pulls
