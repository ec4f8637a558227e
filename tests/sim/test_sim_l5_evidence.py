# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What an L5 row proves (sim/scenarios.yaml): a multi-node example passes only when its pods ran on as many
distinct nodes as it asks for and the framework's own log shows that many (RLinf 0.3.0's cluster line, replayed
from its printing code); a failed training step carries its cause (traceback, last lines) with the secrets of its
environment redacted. Each test runs `validate.yml --tags l5` with only the example it needs."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import simkit

pytestmark = pytest.mark.sim

TWO_NODE = "maniskill-openvlaoft-2node"
ROW = "l5_training_step/" + TWO_NODE
INVENTORY_EXAMPLES = yaml.safe_load((simkit.ROOT / "inventories" / "sim" / "group_vars" / "all" / "validation.yml")
                                    .read_text())["validation_examples"]
# The made-up secrets the replayed log printed (tests/unit/fixtures/frameworks/python/raise-in-step.log).
HF_TOKEN = "hf_FAKEexampleTOKEN0123456789abcdefgh"
STORE_PASSWORD = "Tr0ub4dor-and-3"


def _example(name, **changes):
    return dict(copy.deepcopy([e for e in INVENTORY_EXAMPLES if e["name"] == name][0]), **changes)


def _run_l5(tmp_path, examples):
    extra = tmp_path / "examples.yml"
    extra.write_text(yaml.safe_dump({"validation_examples": examples}))
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(tmp_path),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
           "--tags", "l5", "-e", f"validation_kubeconfig={simkit.KUBECONFIG}", "-e", f"@{extra}"]
    proc = subprocess.run(cmd, cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)
    (tmp_path / "console.txt").write_text(proc.stdout + proc.stderr)
    report = json.loads((tmp_path / "report.json").read_text())
    rows = {lv["id"]: lv for lv in report["clusters"][0]["levels"] if lv["id"].startswith("l5_training_step/")}
    return proc, rows


def _checks(row):
    return {c["name"]: c for c in row["checks"]}


def test_healthy_two_node_example_ran_two_pods_on_two_nodes(scenario, tmp_path):
    scenario("healthy")
    proc, rows = _run_l5(tmp_path, [_example(TWO_NODE)])
    row = rows[ROW]
    assert row["status"] == "PASS" and proc.returncode == 0, (tmp_path / "console.txt").read_text()[-3000:]
    checks = _checks(row)
    assert (checks["nodes"]["actual"], checks["nodes"]["expected"]) == (2, 2)
    assert (checks["framework_nodes"]["actual"], checks["framework_nodes"]["expected"]) == (2, 2)
    assert row["gpu"]["pods"] == 2  # GPU time counts the worker too
    assert sorted(row["gpu"]["by_instance_type"]["p5.48xlarge"]["nodes"]) == ["p5-node-0", "p5-node-1"]


@pytest.mark.parametrize("name,changes", [("l5-worker-never-starts", {}), ("l5-worker-on-head-node", {"gpus": 4, "efa": 16})])
def test_a_two_node_example_on_one_node_fails_with_the_node_count(name, changes, scenario, tmp_path):
    scenario(name)
    fails = simkit.scenario_table()[name]["fails"]
    proc, rows = _run_l5(tmp_path, [_example(TWO_NODE, **changes)])
    assert sorted(r for r, row in rows.items() if row["status"] == "FAIL") == fails["rows"] == [ROW]
    assert proc.returncode != 0
    nodes = _checks(rows[ROW])["nodes"]
    assert fails["check"] == "nodes" and not nodes["passed"] and (nodes["actual"], nodes["expected"]) == (1, 2)
    assert "2 pods on 2 distinct nodes expected" in nodes["message"] and "p5-node-0" in nodes["message"]
    framework = _checks(rows[ROW])["framework_nodes"]
    if name == "l5-worker-never-starts":  # RLinf's own line says it ran on one node
        assert not framework["passed"] and framework["actual"] == 1
        assert "RLinf is running on a cluster with 1 node and 8 accelerators" in framework["excerpt"][0]
    else:  # two Ray nodes, but both pods on p5-node-0
        assert framework["passed"] and framework["actual"] == 2
        assert "2 pods ran on 1 node (p5-node-0: " in nodes["message"]


def test_a_raising_training_script_shows_its_cause_with_its_secrets_redacted(scenario, tmp_path):
    scenario("train-raises")
    example = _example("maniskill-openvlaoft", env={"HF_TOKEN": HF_TOKEN, "STORE_PASSWORD": STORE_PASSWORD})
    proc, rows = _run_l5(tmp_path, [example])
    row = rows["l5_training_step/maniskill-openvlaoft"]
    assert row["status"] == "FAIL" and proc.returncode != 0
    job = _checks(row)["job"]
    assert not job["passed"] and job["actual"] == "Failed"
    excerpt = job["excerpt"]
    assert excerpt[0].endswith('raise_in_step.py", line 15, in reward')
    assert excerpt[2] == "ValueError: reward model returned NaN at step 1 (--crash_in_step)"
    assert "last 17 lines of the log:" in excerpt and excerpt[-1] == "rc=1"
    assert "config: steps=1 hf_token=[redacted]" in excerpt
    assert "connecting to the dataset store as trainer/[redacted]" in excerpt
    for what in ("report.json", "junit.xml", "report.html", "console.txt"):
        text = (tmp_path / what).read_text()
        assert HF_TOKEN not in text and STORE_PASSWORD not in text, what
    assert excerpt[2] in (tmp_path / "junit.xml").read_text() and excerpt[2] in (tmp_path / "report.html").read_text()
