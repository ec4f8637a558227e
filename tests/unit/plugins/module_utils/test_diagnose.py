# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Diagnoses from objects recorded on the simulated cluster's real control plane
(tests/unit/fixtures/k8s/*.json, recorded by tests/faults/record_objects.py; provenance inside each)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _diagnose as diagnose
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _probe_pods

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
    from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s
    data = recorded("suspended")
    state = k8s.job_state(data["job"], data["pods"])
    assert state["reason"] == "Suspended" and "gpu-queue" in state["message"], state
    assert state["hint"] == diagnose.FIXES["suspended"]


def test_the_runner_reads_an_mpijob_nobody_acted_on_as_the_operator_missing():
    from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s
    mpijob = {"metadata": {"name": "nccl", "creationTimestamp": "2026-12-01T19:00:00Z"}, "status": {}}
    state = k8s.mpijob_state(mpijob, [], now=k8s.parse_time("2026-12-01T19:01:00Z"), grace_s=45)
    assert state["failed"] and state["settled"] and state["reason"] == "MPIOperatorNotActing", state
    assert "mpi-operator" in state["hint"]
    fresh = k8s.mpijob_state(mpijob, [], now=k8s.parse_time("2026-12-01T19:00:10Z"), grace_s=45)
    assert not fresh["settled"]
    # the level's check carries the diagnosis and its fix, not the generic "read the log" hint
    from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks
    job = [c for c in _checks.log_checks("", state, "cluster", {}) if c["name"] == "job"][0]
    assert job["actual"] == "Failed" and "MPI operator is not acting" in job["fail_msg"], job
    assert job["hint"] == diagnose.FIXES["mpi_operator"], job


def test_a_log_the_kubelet_could_not_serve_names_the_kubelet_not_a_permission():
    # kube-apiserver's own answer when the node's agent (kwok-controller, paused) does not answer the log read
    data = recorded("kubelet_unreachable_log")["api_error"]
    text = diagnose.api_error_text(data["status"], data["reason"], json.dumps(data["body"]))
    assert text.startswith('HTTP 500: Get "https://localhost:') and text.endswith("TLS handshake timeout"), text
    cause, sentence = diagnose.log_read_cause(text, "p5-node-0")
    assert cause == "kubelet_unreachable", sentence
    assert sentence.startswith("the API server could not reach the kubelet of node p5-node-0 (HTTP 500: Get ")
    # a node whose status lists no usable address (k8s v1.34.4 pkg/util/node/node.go) is the same cause
    assert diagnose.log_read_cause("HTTP 500: no preferred addresses found; known addresses: []")[0] == \
        "kubelet_unreachable"
    assert "port 10250" in diagnose.FIXES[cause]


@pytest.mark.parametrize("error,cause", [
    ('HTTP 403: pods "p" is forbidden: User "system:serviceaccount:ns:x" cannot get resource "pods/log"',
     "log_forbidden"),
    ('HTTP 404: pods "p" not found', "deleted"),
    ("no answer within 120 s", "log_timeout"),
    ("HTTP 500: etcdserver: request timed out", "log_other"),
    ("ReadTimeoutError: read timed out", "log_other"),
    ("", "log_other"),
])
def test_every_log_read_error_has_a_cause_with_a_fix(error, cause):
    assert diagnose.log_read_cause(error)[0] == cause
    assert cause in diagnose.FIXES


def test_api_error_text_is_one_line_from_a_status_body_or_the_reason():
    assert diagnose.api_error_text(403, "Forbidden", '{"kind": "Status", "message": "nope", "code": 403}') == \
        "HTTP 403: nope"
    assert diagnose.api_error_text(502, "Bad Gateway", "") == "HTTP 502: Bad Gateway"
    assert diagnose.api_error_text(503, "Service Unavailable", "<html>down</html>") == "HTTP 503: <html>down</html>"
    assert diagnose.api_error_text(500, None, None) == "HTTP 500: no message"


def test_a_probe_pod_on_a_lost_node_ends_the_wait_and_the_result_names_the_node():
    # recorded: a pod with the probe pods' lost-node tolerations on a node whose agent (kwok) was paused; the node
    # lifecycle controller marked the node Unknown and the pod not ready (Ready False, ContainersReady True)
    from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s
    data = recorded("lost_node_pod")
    pod, node = data["pod"], data["pod"]["spec"]["nodeName"]
    assert [t.get("tolerationSeconds") for t in pod["spec"]["tolerations"]
            if t.get("key") in diagnose.NOT_READY_TAINTS] == [30, 30]
    marked_at = k8s.parse_time(next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")["lastTransitionTime"])
    # within the grace the wait goes on (a node may come back); past it, the wait ends on the pod
    assert not k8s.pods_summary([pod], 1, 45, "probes", now=marked_at + 10, start_timeout_s=900)["settled"]
    summary = k8s.pods_summary([pod], 1, 45, "probes", now=marked_at + 46, start_timeout_s=900)
    assert summary["settled"] and not summary["ok"], summary["text"]
    assert summary["states"][0]["problem"]["kind"] == "node_not_ready"
    by_node = next(n for n in data["nodes"] if n["metadata"]["name"] == node)
    assert diagnose.node_problem(by_node)[0] == "node_not_ready"
    result = _probe_pods.probe_results([], [{"node": node}], summary, [], 900, 1200, nodes=data["nodes"])[node]
    assert "node %s is NotReady" % node in result["error"], result["error"]
    assert result["hint"] == diagnose.FIXES["node_not_ready"]
