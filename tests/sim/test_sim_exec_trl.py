# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""L5 and L6 with real TRL through Kubernetes Jobs on the CPU machine (issue 30): the simulated cluster in exec mode
(a cluster of its own, 1 p5 node, no GPU of this machine handed out), the pods' "image" the TRL environment
(`make trl-cpu-venv`: PyPI torch 2.15.0, trl 1.16.0, datasets 5.2.0, the freeze in
tests/unit/fixtures/frameworks/trl/pip-freeze.txt). L5 runs one real GRPO optimisation step on CPU
(tests/frameworks/trl_grpo_one_step.py) as a Job and must PASS; L6 its evaluation (success rate above the floor);
an example whose reward function raises inside the step must FAIL with the exception's own line. 3-5 min."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

TRL_BIN = simkit.ROOT / ".venv-trl" / "bin"
SCRIPT = simkit.ROOT / "tests" / "frameworks" / "trl_grpo_one_step.py"


def _simctl(state: Path, *args: str) -> None:
    # The pods' "image": the TRL environment; no GPU of this machine is handed out (a CPU step)
    simkit.simctl_at(state, *args, env={"SIM_EXEC_GPUS": "", "SIM_EXEC_PATH": f"{TRL_BIN}:/usr/local/bin:/usr/bin:/bin"})


@pytest.fixture(scope="module")
def trl_state(tmp_path_factory):
    if not (TRL_BIN / "python3").exists():
        pytest.skip(f"no TRL environment at {TRL_BIN.parent}: run `make trl-cpu-venv`")
    state = tmp_path_factory.mktemp("sim-trl")
    _simctl(state, "up", "--nodes", "1", "--exec", "host", "--scenario", "healthy")
    yield state
    _simctl(state, "down")


def _example(name, *extra):
    return {"name": name, "framework": "trl", "gpus": 0, "efa": 0,
            "command": ["python3", str(SCRIPT), "train", *extra], "args": ["--output_dir", "/tmp/" + name],
            "evaluation": {"command": ["python3", str(SCRIPT), "eval"], "floor": 0.25}}


def _validate(state: Path, tmp_path: Path, examples: list):
    extra = {"validation_examples": examples, "l5_training_step_deadline_s": 900, "l6_evaluation_deadline_s": 900,
             "validation_continue_on_error": True}
    (tmp_path / "extra.json").write_text(json.dumps(extra))
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(tmp_path / "report"),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
           "--tags", "l5,l6", "-e", f"validation_kubeconfig={state / 'kubeconfig'}", "-e", f"@{tmp_path / 'extra.json'}"]
    proc = subprocess.run(cmd, cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=1500, check=False)
    report = json.loads((tmp_path / "report" / "report.json").read_text())["clusters"][0]
    return proc, {lv["id"]: lv for lv in report["levels"]}


def test_trl_grpo_step_and_evaluation_pass_as_jobs_on_cpu(trl_state, tmp_path):
    proc, rows = _validate(trl_state, tmp_path, [_example("trl-grpo-tiny")])
    out = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert rows["l5_training_step/trl-grpo-tiny"]["status"] == "PASS", out
    assert rows["l6_evaluation/trl-grpo-tiny"]["status"] == "PASS", out
    rate = [c for c in rows["l6_evaluation/trl-grpo-tiny"]["checks"] if c["name"].startswith("success_rate")]
    assert rate and rate[0]["actual"] >= 0.25, rate
    assert proc.returncode == 0, out


def test_a_step_that_raises_fails_with_its_exception(trl_state, tmp_path):
    example = _example("trl-crash-in-step", "--crash_in_step")
    del example["evaluation"]  # L5 only
    proc, rows = _validate(trl_state, tmp_path, [example])
    out = proc.stdout[-6000:] + proc.stderr[-2000:]
    row = rows["l5_training_step/trl-crash-in-step"]
    assert row["status"] == "FAIL", out
    assert proc.returncode == 2, out
    assert "RuntimeError" in json.dumps(row), out
