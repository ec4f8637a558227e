"""The job_run module against the simulated cluster, run ad hoc as the runner runs it: it creates the Job, and a Job
whose replayed log shows RLinf's step counter at 1/1000 (RLinf's own printing, sim/replay/logs/SOURCES.md) is deleted
on the look that sees it; a healthy one is waited for, its outcome and log read, and kept (the level's cleanup deletes
it), or with delete_after deleted with its Service, EFA claim template and pods; a second attempt of the same task
creates nothing."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

L5 = "l5_training_step"
REPO = Path(__file__).resolve().parents[2]


def job_run(namespace, jobs, timeout_s=60, delete_after=False):
    """Run the module as the runner does (ad hoc, through Ansible), and return its result."""
    args = {"namespace": namespace, "label_selectors": [f"{simkit.LEVEL_LABEL}={L5}"], "jobs": jobs,
            "deadline_at": time.time() + timeout_s, "step_s": timeout_s, "poll_s": 1, "grace_s": 15,
            "delete_after": delete_after}
    out = subprocess.run([str(REPO / ".venv" / "bin" / "ansible"), "localhost", "-m", "rlstack.validation.job_run",
                          "-a", json.dumps(args), "-o"], capture_output=True, text=True, cwd=REPO, timeout=timeout_s + 60,
                         env=dict(os.environ, ANSIBLE_LOAD_CALLBACK_PLUGINS="0"), check=False)
    assert " => " in out.stdout, out.stdout + out.stderr
    return json.loads(out.stdout.split(" => ", 1)[1])


def train_job(watch):
    return {"name": "example", "definition": simkit.job_body("train", L5), "watch": dict(watch, name="train")}


def test_a_job_that_ignores_its_override_is_deleted(batch, namespace, scenario):
    scenario("train-override-ignored")
    result = job_run(namespace, [train_job({"framework": "rlinf", "mode": "train",
                                            "launched": {"command": ["bash", "run_embodiment.sh"],
                                                         "overrides": ["runner.max_steps=1"]}})])
    assert result["started"] is True and result["finished"] is True and result["settled"] is True
    stopped = result["stopped"]["train"]
    assert (stopped["step"], stopped["total"], stopped["line"]) == (1, 1000, "Global Step:    1/1000")
    assert "bash run_embodiment.sh ignored runner.max_steps=1" in stopped["message"]
    assert result["examples"]["example"]["state"]["reason"] == "Stopped"
    simkit.wait_until(lambda: not [j for j in batch.list_namespaced_job(namespace).items
                                   if j.metadata.name == "train"], 30, "the Job to be deleted")


def test_a_healthy_job_is_waited_for_read_and_kept_and_a_second_attempt_creates_nothing(batch, namespace):
    job = train_job({"framework": "rlinf", "mode": "train"})
    result = job_run(namespace, [job])
    assert (result["started"], result["finished"], result["settled"], result["stopped"]) == (True, True, True, {})
    state = result["states"][0]
    assert state["complete"] and state["source"] in ("pods", "Job status")  # a success needs no record
    assert result["examples"]["example"]["log"] and result["examples"]["example"]["log_error"] == ""
    assert [p["metadata"]["name"] for p in result["resources"]] == [result["logs"][0]["name"]]
    uid = batch.read_namespaced_job("train", namespace).metadata.uid
    again = job_run(namespace, [job])
    assert again["started"] is False and again["finished"] is True
    assert batch.read_namespaced_job("train", namespace).metadata.uid == uid


def test_with_delete_after_the_jobs_services_claims_and_pods_are_gone_when_it_returns(batch, core, custom, namespace):
    job = train_job({"framework": "rlinf", "mode": "train"})
    meta = job["definition"]["metadata"]
    job["service"] = {"apiVersion": "v1", "kind": "Service",
                      "metadata": {"name": meta["name"], "labels": meta["labels"]},
                      "spec": {"clusterIP": "None", "selector": {"batch.kubernetes.io/job-name": meta["name"]},
                               "ports": [{"name": "ray", "port": 6379}]}}
    # the EFA claim template a Job gets when EFA comes through DRA (templates/efa_claim.yml.j2's shape), created before
    # the Job and deleted with it (the pod here does not claim it: the sim publishes no EFA device)
    job["claim"] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                    "metadata": {"name": meta["name"] + "-efa", "labels": meta["labels"]},
                    "spec": {"spec": {"devices": {"requests": [{"name": "efa", "exactly": {
                        "deviceClassName": "efa.networking.k8s.aws", "count": 1}}]}}}}
    result = job_run(namespace, [job], delete_after=True)
    assert result["examples"]["example"]["state"]["complete"] and result["left_nothing"] is True
    claims = custom.list_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaimtemplates")
    assert meta["name"] + "-efa" in result["deleted"] and claims["items"] == []
    assert batch.list_namespaced_job(namespace).items == []
    assert core.list_namespaced_service(namespace).items == []
    assert core.list_namespaced_pod(namespace, label_selector=f"{simkit.LEVEL_LABEL}={L5}").items == []
