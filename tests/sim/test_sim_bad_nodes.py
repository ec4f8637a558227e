# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""validation_on_bad_node (docs/fleet-scale.md) on the simulated cluster: with `nvlink-down` L0 fails on
p5-node-0 only; `taint` labels, annotates and taints that node and touches no other; release_nodes.yml in
check mode changes nothing, then undoes exactly what was applied, and a second release finds nothing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

LABEL, TAINT = "rlstack.io/validation", "rlstack.io/validation-bad"


def _playbook(tmp_path, playbook, *args):
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(tmp_path),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), playbook, "-i", "inventories/sim",
           "-e", f"validation_kubeconfig={simkit.KUBECONFIG}", *args]
    proc = subprocess.run(cmd, cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)
    # kept with the test's files (pytest --basetemp) for docs/fleet-scale.md
    with open(tmp_path / "stdout.log", "a", encoding="utf-8") as out:
        out.write("$ ansible-playbook %s %s\n%s\n" % (playbook, " ".join(args), proc.stdout))
    return proc


def _nodes(core):
    """What a mark may change on each node: labels, annotations, taints, unschedulable."""
    out = {}
    for node in core.list_node().items:
        taints = [(t.key, t.value, t.effect) for t in node.spec.taints or []]
        out[node.metadata.name] = {"labels": dict(node.metadata.labels or {}),
                                   "annotations": dict(node.metadata.annotations or {}),
                                   "taints": sorted(taints, key=str), "unschedulable": bool(node.spec.unschedulable)}
    return out


def _without_heartbeats(nodes):
    # kwok and the node lifecycle controller may rewrite these annotations at any time
    for node in nodes.values():
        node["annotations"] = {k: v for k, v in node["annotations"].items() if k.startswith("rlstack.io/")}
    return nodes


def test_taint_marks_only_the_bad_node_and_release_undoes_it(core, scenario, tmp_path):
    scenario("nvlink-down")
    bad = simkit.scenario_table()["nvlink-down"]["fails"]["node"]
    before = _without_heartbeats(_nodes(core))
    proc = _playbook(tmp_path, "playbooks/validate.yml", "--tags", "l0", "-e", "validation_on_bad_node=taint")
    assert proc.returncode != 0, proc.stdout[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())["clusters"][0]
    (row,) = [lv for lv in report["levels"] if lv["id"] == "bad_nodes"]
    assert [c["node"] for c in row["checks"]] == [bad] and "taint" in row["checks"][0]["message"]

    marked = _without_heartbeats(_nodes(core))
    node = marked[bad]
    assert node["labels"][LABEL] == "bad"
    assert node["annotations"]["rlstack.io/validation-run"] == report["run_id"]
    assert "nvlink_links" in node["annotations"]["rlstack.io/validation-reason"]
    assert (TAINT, report["run_id"], "NoSchedule") in node["taints"] and not node["unschedulable"]
    assert {n: v for n, v in marked.items() if n != bad} == {n: v for n, v in before.items() if n != bad}

    dry = _playbook(tmp_path, "playbooks/release_nodes.yml", "--check", "--diff")
    assert dry.returncode == 0 and TAINT in dry.stdout, dry.stdout[-3000:]
    assert _without_heartbeats(_nodes(core)) == marked

    released = _playbook(tmp_path, "playbooks/release_nodes.yml", "-e", f"validation_run_id={report['run_id']}")
    assert released.returncode == 0 and f"1 node(s) released: {bad}" in released.stdout, released.stdout[-3000:]
    assert _without_heartbeats(_nodes(core)) == before
    again = _playbook(tmp_path, "playbooks/release_nodes.yml")
    assert again.returncode == 0 and "0 node(s) released" in again.stdout, again.stdout[-3000:]
