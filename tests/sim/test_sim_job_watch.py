"""The job_watch module against the simulated cluster: a Job whose replayed log shows RLinf's step counter at
1/1000 (RLinf's own printing, sim/replay/logs/SOURCES.md) is deleted; a healthy one is waited for."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

L5 = "l5_training_step"
REPO = Path(__file__).resolve().parents[2]


def job_watch(namespace, jobs, timeout_s=60):
    """Run the module as the runner does (ad hoc, through Ansible), and return its result."""
    args = {"namespace": namespace, "label_selectors": [f"{simkit.LEVEL_LABEL}={L5}"], "jobs": jobs,
            "timeout_s": timeout_s, "poll_s": 1, "grace_s": 15}
    out = subprocess.run([str(REPO / ".venv" / "bin" / "ansible"), "localhost", "-m", "rlstack.validation.job_watch",
                          "-a", json.dumps(args), "-o"], capture_output=True, text=True, cwd=REPO, timeout=timeout_s + 60,
                         env=dict(os.environ, ANSIBLE_LOAD_CALLBACK_PLUGINS="0"), check=False)
    assert " => " in out.stdout, out.stdout + out.stderr
    return json.loads(out.stdout.split(" => ", 1)[1])


def test_a_job_that_ignores_its_override_is_deleted(batch, namespace, scenario):
    scenario("train-override-ignored")
    batch.create_namespaced_job(namespace, simkit.job_body("train", L5))
    result = job_watch(namespace, [{"name": "train", "framework": "rlinf", "mode": "train",
                                    "launched": {"command": ["bash", "run_embodiment.sh"],
                                                 "overrides": ["runner.max_steps=1"]}}])
    assert result["changed"] is True and result["settled"] is True
    stopped = result["stopped"]["train"]
    assert (stopped["step"], stopped["total"], stopped["line"]) == (1, 1000, "Global Step:    1/1000")
    assert "bash run_embodiment.sh ignored runner.max_steps=1" in stopped["message"]
    simkit.wait_until(lambda: not [j for j in batch.list_namespaced_job(namespace).items
                                   if j.metadata.name == "train"], 30, "the Job to be deleted")


def test_a_healthy_job_is_waited_for_and_kept(batch, namespace):
    batch.create_namespaced_job(namespace, simkit.job_body("train", L5))
    result = job_watch(namespace, [{"name": "train", "framework": "rlinf", "mode": "train"}])
    assert (result["changed"], result["settled"], result["stopped"]) == (False, True, {})
    assert batch.read_namespaced_job("train", namespace).metadata.name == "train"
