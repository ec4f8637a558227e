# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""L0 GPU health faults (sim/scenarios.yaml): `validate.yml --tags l0` fails on exactly the faulty node with
exactly the scenario's check and its operator hint; healthy passes. The replays are the probe's own parser
run on real nvidia-smi outputs with one field edited (sim/replay/DERIVED.md). ~15 s per scenario."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import simkit

# Each scenario alone on the shared cluster (about a minute each): `make test-sim-extended`. `make test` runs them
# all at once on 8 nodes (tests/sim/test_sim_fleet.py, scenario fleet-gpu-health-8).
pytestmark = [pytest.mark.sim, pytest.mark.sim_extended]

HEALTH_SCENARIOS = simkit.HEALTH_SCENARIOS


def _run_l0(tmp_path):
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(tmp_path),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
           "--tags", "l0", "-e", f"validation_kubeconfig={simkit.KUBECONFIG}"]
    proc = subprocess.run(cmd, cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)
    report = json.loads((tmp_path / "report.json").read_text())
    (level,) = [lv for lv in report["clusters"][0]["levels"] if lv["id"] == "l0_infrastructure"]
    return proc, level


@pytest.mark.parametrize("name", ["healthy"] + sorted(HEALTH_SCENARIOS))
def test_l0_health_scenario(name, scenario, tmp_path):
    scenario(name)
    proc, level = _run_l0(tmp_path)
    failed = sorted((c["name"], c["node"]) for c in level["checks"] if not c["passed"])
    names = {c["name"] for c in level["checks"]}
    assert {"remapped_rows_pending", "nvlink_links", "pcie_width", "ecc_uncorrectable_volatile",
            "driver_consistent", "fabric_manager"} <= names, names
    if name == "healthy":
        assert level["status"] == "PASS" and failed == [] and proc.returncode == 0, proc.stdout[-3000:]
        return
    fails = simkit.scenario_table()[name]["fails"]
    expected, word = HEALTH_SCENARIOS[name]
    assert level["status"] == "FAIL" and proc.returncode != 0
    assert failed == sorted((c, fails["node"]) for c in expected) and fails["check"] == expected[0], failed
    check = [c for c in level["checks"] if c["name"] == expected[0]][0]
    assert word in check["hint"], check
