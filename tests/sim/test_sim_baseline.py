# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Baselines (docs/baselines.md) on the simulated cluster, `--tags l3` with a baseline directory of its own:
a first healthy run stores the baseline; the same busbw again is no regression; `busbw-regressed` (15% below,
above the floor) passes L3 and fails the Baseline row, naming the size, the drop and the baseline's run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import simkit

pytestmark = [pytest.mark.sim, pytest.mark.fleet_extended]


def _run_l3(tmp_path, evidence, name):
    report_dir = tmp_path / name
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(report_dir),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
           "--tags", "l3", "-e", f"validation_kubeconfig={simkit.KUBECONFIG}", "-e", "validation_baseline=compare",
           "-e", f"validation_evidence_dir={evidence}"]
    proc = subprocess.run(cmd, cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=400, check=False)
    (tmp_path / ("%s.log" % name)).write_text(proc.stdout, encoding="utf-8")  # for docs/baselines.md (--basetemp)
    report = json.loads((report_dir / "report.json").read_text())["clusters"][0]
    return proc, {lv["id"]: lv for lv in report["levels"]}, report


def test_a_busbw_15_percent_below_the_baseline_is_a_regression(scenario, tmp_path):
    evidence = tmp_path / "evidence"
    proc, rows, first = _run_l3(tmp_path, evidence, "first")
    assert proc.returncode == 0 and rows["baseline"]["status"] == "PASS", proc.stdout[-3000:]
    (stored,) = (evidence / "baseline").glob("*.json")
    baseline = json.loads(stored.read_text())
    assert baseline["levels"]["l3_multi_gpu"]["run_id"] == first["run_id"]
    assert max(r["busbw_gbps"] for r in baseline["levels"]["l3_multi_gpu"]["busbw"]) == pytest.approx(437.79, abs=0.1)

    proc, rows, same = _run_l3(tmp_path, evidence, "same")
    assert proc.returncode == 0, proc.stdout[-3000:]
    names = {c["name"]: c for c in rows["baseline"]["checks"]}
    assert names["baseline_busbw_L3"]["passed"] and names["baseline_time_L3"]["passed"], names

    scenario("busbw-regressed")
    proc, rows, _report = _run_l3(tmp_path, evidence, "regressed")
    assert proc.returncode != 0 and rows["l3_multi_gpu"]["status"] == "PASS", proc.stdout[-3000:]
    assert rows["baseline"]["status"] == "FAIL"
    (check,) = [c for c in rows["baseline"]["checks"] if not c["passed"]]
    assert check["name"] == "baseline_busbw_L3"
    assert "busbw at 2 GiB 15% below the baseline of" in check["message"]
    # the second run passed, so it is the baseline now
    assert "(no recorded version changed; baseline run %s: 437.8 GB/s)" % same["run_id"] in check["message"]
    assert "VALIDATION RESULTS" in proc.stdout and "baseline_busbw_L3" in proc.stdout
    # a failed run does not replace the baseline
    assert json.loads(stored.read_text())["levels"]["l3_multi_gpu"]["run_id"] == same["run_id"]
