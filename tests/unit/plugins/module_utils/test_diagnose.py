# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Diagnoses from objects recorded on the simulated cluster's real control plane
(tests/unit/fixtures/k8s/*.json, recorded by tests/faults/record_objects.py; provenance inside each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils import _diagnose as diagnose

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "k8s"


def recorded(case):
    data = json.loads((FIXTURES / ("%s.json" % case)).read_text())
    assert data["provenance"]["source"].startswith("simulated cluster")
    return data


@pytest.mark.parametrize("case,cause,words", [
    ("insufficient_gpu", "insufficient_gpu", ["Insufficient nvidia.com/gpu"]),
    ("insufficient_efa", "insufficient_efa", ["Insufficient vpc.amazonaws.com/efa"]),
    ("cordoned", "cordoned", ["cordoned"]),
])
def test_a_pod_that_cannot_run_names_its_cause(case, cause, words):
    data = recorded(case)
    found = diagnose.diagnose_pod(data["pod"], data["events"], data["nodes"])
    assert found is not None and found["cause"] == cause, found
    assert all(word in found["message"] for word in words), found["message"]
    assert found["fix"] == diagnose.FIXES[cause]


def test_a_job_over_its_quota_names_the_quota():
    data = recorded("quota")
    found = diagnose.diagnose_job(data["job"], data["pods"], data["events"], data["nodes"])
    assert found["cause"] == "quota" and "exceeded quota" in found["message"], found


def test_a_suspended_job_names_kueue():
    data = recorded("suspended")
    found = diagnose.diagnose_job(data["job"], data["pods"], data["events"], data["nodes"])
    assert found["cause"] == "suspended" and "gpu-queue" in found["message"], found


def test_a_pod_refused_by_pod_security_names_it():
    data = recorded("pod_security")
    found = diagnose.diagnose_api_error(data["api_error"]["body"]["message"])
    assert found["cause"] == "pod_security" and "violates PodSecurity" in found["message"], found


def test_a_pod_refused_by_an_admission_policy_names_it():
    data = recorded("admission_policy")
    found = diagnose.diagnose_api_error(data["api_error"]["body"]["message"])
    assert found["cause"] == "webhook" and "cost centre" in found["message"], found


def test_deleted_objects_and_an_idle_operator():
    assert diagnose.diagnose_job({})["cause"] == "deleted"
    assert diagnose.diagnose_mpijob({})["cause"] == "deleted"
    mpijob = {"metadata": {"name": "nccl"}, "status": {}}
    assert diagnose.diagnose_mpijob(mpijob, [], age_s=60, grace_s=45)["cause"] == "mpi_operator"
    assert diagnose.diagnose_mpijob(mpijob, [], age_s=10, grace_s=45) is None


def test_a_healthy_pod_has_no_diagnosis():
    data = recorded("insufficient_gpu")
    nodes = [n for n in data["nodes"] if not diagnose.node_problem(n)]
    assert nodes
    assert diagnose.diagnose_pod({"metadata": {"name": "ok"}, "status": {"phase": "Running"}}, [], nodes) is None


def test_every_cause_has_a_fix():
    assert set(diagnose.FIXES) >= {"node_not_ready", "cordoned", "insufficient_gpu", "insufficient_efa", "image",
                                   "quota", "pod_security", "webhook", "suspended", "evicted", "deleted",
                                   "mpi_operator"}


def test_the_runner_reads_a_suspended_job_as_such():
    from ansible_collections.rlstack.validation.plugins.module_utils import _k8s_status as k8s
    data = recorded("suspended")
    state = k8s.job_state(data["job"], data["pods"])
    assert state["reason"] == "Suspended" and "gpu-queue" in state["message"], state
    assert state["hint"] == diagnose.FIXES["suspended"]


def test_the_runner_reads_an_mpijob_nobody_acted_on_as_the_operator_missing():
    from ansible_collections.rlstack.validation.plugins.module_utils import _k8s_status as k8s
    mpijob = {"metadata": {"name": "nccl", "creationTimestamp": "2026-12-01T19:00:00Z"}, "status": {}}
    state = k8s.mpijob_state(mpijob, [], now=k8s.parse_time("2026-12-01T19:01:00Z"), grace_s=45)
    assert state["failed"] and state["settled"] and state["reason"] == "MPIOperatorNotActing", state
    assert "mpi-operator" in state["hint"]
    fresh = k8s.mpijob_state(mpijob, [], now=k8s.parse_time("2026-12-01T19:00:10Z"), grace_s=45)
    assert not fresh["settled"]
