"""batch/v1 Jobs of the collection (managed-by label, rlstack.io/level) under the scenario stages, and their logs."""
from __future__ import annotations

import pytest

import simkit

pytestmark = pytest.mark.sim

L5 = "l5_training_step"
TRAIN_LOG = simkit.SIM / "replay" / "logs" / "l5-train-step.log"
TRAIN_FAILS_LOG = simkit.SIM / "replay" / "logs" / "l5-train-fails.log"


def _finished(batch, ns, name):
    job = batch.read_namespaced_job(name, ns)
    conds = job.status.conditions
    if simkit.condition_true(conds, "Complete"):
        return "Complete", job
    if simkit.condition_true(conds, "Failed"):
        return "Failed", job
    return None


def _one_pod(core, ns, job):
    pods = simkit.job_pods(core, ns, job)
    assert len(pods) == 1, [p.metadata.name for p in pods]
    return pods[0]


def _log_lines(core, ns, pod, **kw):
    return core.read_namespaced_pod_log(pod, ns, **kw).splitlines()


def test_job_completes_under_healthy(core, batch, namespace):
    batch.create_namespaced_job(namespace, simkit.job_body("train", L5))
    state, job = simkit.wait_until(lambda: _finished(batch, namespace, "train"), 30, "the Job to finish")
    assert state == "Complete", job.status
    assert job.status.succeeded == 1 and not job.status.failed
    pod = _one_pod(core, namespace, "train")
    assert pod.status.phase == "Succeeded"
    term = pod.status.container_statuses[0].state.terminated
    assert term.exit_code == 0 and term.reason == "Completed"


def test_job_fails_under_train_fails(core, batch, namespace, scenario):
    scenario("train-fails")
    batch.create_namespaced_job(namespace, simkit.job_body("train", L5))
    # Running first (the outcome stage holds the pod for 10 s), then Failed.
    simkit.wait_until(lambda: _one_pod(core, namespace, "train").status.phase == "Running", 20, "the pod Running")
    state, job = simkit.wait_until(lambda: _finished(batch, namespace, "train"), 40, "the Job to finish")
    assert state == "Failed", job.status
    failed = simkit.condition(job.status.conditions, "Failed")
    assert failed.reason == "BackoffLimitExceeded"
    pod = _one_pod(core, namespace, "train")
    assert pod.status.phase == "Failed"
    term = pod.status.container_statuses[0].state.terminated
    assert term.exit_code == 1 and term.reason == "Error"
    # The scenario also serves the failing log.
    lines = simkit.wait_until(lambda: _log_lines(core, namespace, pod.metadata.name), 20, "the pod's log")
    assert lines == TRAIN_FAILS_LOG.read_text().splitlines()
    assert "RuntimeError: reward function failed inside the training step (--crash_in_step)" in lines


def test_job_pod_logs_are_the_recorded_training_log(core, batch, namespace):
    batch.create_namespaced_job(namespace, simkit.job_body("train", L5))
    pod = simkit.wait_until(lambda: _one_pod(core, namespace, "train"), 20, "the Job's pod")
    name = pod.metadata.name
    lines = simkit.wait_until(lambda: _log_lines(core, namespace, name), 20, "a non-empty log")
    expected = TRAIN_LOG.read_text().splitlines()
    assert lines == expected
    assert any(line.startswith("│ Global Step:    1/1 │") for line in lines)  # RLinf 0.3.0's own table

    assert _log_lines(core, namespace, name, tail_lines=1) == [expected[-1]]
    assert [line for line in expected if line.strip()][-1].startswith("╰─")
    assert _log_lines(core, namespace, name, tail_lines=3) == expected[-3:]
    # CRI timestamps come back on request.
    stamped = _log_lines(core, namespace, name, tail_lines=1, timestamps=True)
    assert len(stamped) == 1 and stamped[0].split(" ", 1)[1] == expected[-1]
    assert stamped[0][:4].isdigit() and stamped[0].split(" ", 1)[0].endswith("Z")
    # The logs stay readable after the Job completed.
    simkit.wait_until(lambda: _finished(batch, namespace, "train"), 30, "the Job to finish")
    assert _log_lines(core, namespace, name) == expected
