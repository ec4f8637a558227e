# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/verdicts/_checks.py: the excerpt a failed L5/L6 run carries (on real logs) and the
node checks of a multi-node example (RLinf's own cluster lines, tests/unit/fixtures/frameworks/SOURCES.md)."""

from __future__ import annotations

import gzip
from pathlib import Path

import yaml

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks as checks
from ansible_collections.rlstack.validation.plugins.module_utils import _frameworks
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _verdict

REPO = Path(__file__).resolve().parents[4]
FRAMEWORK_LOGS = REPO / "tests" / "unit" / "fixtures" / "frameworks"
SIM_LOGS = REPO / "sim" / "replay" / "logs"
L5_ERROR_PATTERNS = yaml.safe_load((REPO / "roles" / "l5_training_step" / "defaults" / "main.yml").read_text(
    encoding="utf-8"))["l5_training_step_error_patterns"]
FAILED = {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
          "message": "Job has reached the specified backoff limit"}
COMPLETE = {"type": "Complete", "status": "True"}
JOB = "rlsv-run1-maniskill-openvlaoft-2node"


def _log(name):
    data = (FRAMEWORK_LOGS / name).read_bytes()
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")


def _state(*conditions, exit_code=None):
    pod = {"metadata": {"name": JOB + "-0-abcde", "creationTimestamp": "2026-11-30T02:00:00Z"},
           "spec": {"nodeName": "p5-node-0"},
           "status": {"phase": "Failed" if exit_code else "Succeeded",
                      "containerStatuses": [{"name": "main", "state": {"terminated": {"exitCode": exit_code or 0}}}]}}
    return k8s.job_state({"metadata": {"name": JOB}, "status": {"conditions": list(conditions)}}, [pod], now=2.0e9)


def _verdicts(result):
    return [_verdict.evaluate_check(c) for c in result]


def test_a_failed_job_carries_the_excerpt_on_its_job_check_and_the_verdict_keeps_it():
    result = checks.log_checks(_log("python/raise-in-step.log"), _state(FAILED, exit_code=1), "",
                               {"framework": "custom", "mode": "train", "error_patterns": L5_ERROR_PATTERNS})
    job = [c for c in _verdicts(result) if c["name"] == "job"][0]
    assert not job["passed"]
    assert job["excerpt"][2] == "ValueError: reward model returned NaN at step 1 (--crash_in_step)"
    assert job["excerpt"][0].endswith('raise_in_step.py", line 15, in reward')
    assert "config: steps=1 hf_token=[redacted]" in job["excerpt"]
    # one check carries it: the Traceback line of log_errors does not repeat it
    assert [c["name"] for c in _verdicts(result) if c.get("excerpt")] == ["job"]


def test_a_complete_job_without_its_marker_carries_it_on_the_marker_check():
    result = checks.log_checks("step 1/1 done\n", _state(COMPLETE), "", {"framework": "trl", "mode": "train"})
    assert [c["name"] for c in _verdicts(result) if c.get("excerpt")] == ["completion_marker"]


def test_a_passing_job_carries_no_excerpt():
    result = checks.log_checks(_log("rlinf/rlinf-train-one-step.log"), _state(COMPLETE), "",
                               {"framework": "rlinf", "mode": "train", "error_patterns": L5_ERROR_PATTERNS})
    assert all(c["passed"] and "excerpt" not in c for c in _verdicts(result))


def test_the_verdict_keeps_an_excerpt_only_on_a_failed_check():
    ok = _verdict.evaluate_check({"name": "x", "op": "eq", "actual": 1, "expected": 1, "excerpt": ["a"]})
    bad = _verdict.evaluate_check({"name": "x", "op": "eq", "actual": 1, "expected": 2,
                                   "excerpt": ["l%d" % i for i in range(60)]})
    assert "excerpt" not in ok and bad["excerpt"] == ["l%d" % i for i in range(_verdict.MAX_EXCERPT)]


def test_job_results_redact_the_jobs_secret_values():
    definition = {"metadata": {"name": JOB}, "spec": {"template": {"spec": {"containers": [{"name": "main", "env": [
        {"name": "HF_TOKEN", "value": "plain-token-value"}, {"name": "S", "valueFrom": {"secretKeyRef": {}}}]}]}}}}
    logs = [{"item": {"name": JOB}, "log": "using plain-token-value and hf_" + "b" * 34 + "\n"}]
    out = k8s.job_results([{"name": "ex", "definition": definition}], [{"name": JOB}], logs)
    assert out["ex"]["log"] == "using [redacted] and [redacted]\n"


# ------------------------------------------------------------------------------------------- multi-node


def _pod(index, node, phase="Succeeded", scheduled=None):
    status = {"phase": phase}
    if scheduled:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                 "message": scheduled}]
    return {"metadata": {"name": "%s-%d-x%d" % (JOB, index, index), "creationTimestamp": "2026-11-30T02:00:00Z",
                         "labels": {"batch.kubernetes.io/job-name": JOB}},
            "spec": {"nodeName": node} if node else {}, "status": status}


OTHER_JOB_POD = {"metadata": {"name": "other-0", "labels": {"batch.kubernetes.io/job-name": "other"}},
                 "spec": {"nodeName": "p5-node-1"}, "status": {"phase": "Succeeded"}}


def _placement(log_name, pods, framework="rlinf", nodes=2, scheduled=None):
    log = (SIM_LOGS / log_name).read_text(encoding="utf-8")
    return {c["name"]: c for c in _verdicts(checks.placement_checks(
        log, "", {"nodes": nodes, "job": JOB, "pods": pods + [OTHER_JOB_POD], "framework": framework,
                  "scheduled": scheduled or []}))}


def _scheduled_event(pod, node):
    # kube-scheduler's event as the core/v1 Event API lists it (schedule_one.go: "Successfully assigned %v/%v to %v")
    return {"reason": "Scheduled", "involvedObject": {"kind": "Pod", "name": pod, "namespace": "rl"},
            "message": "Successfully assigned rl/%s to %s" % (pod, node)}


def test_a_worker_deleted_after_the_head_succeeded_counts_from_its_scheduled_event():
    events = [_scheduled_event(JOB + "-0-x0", "p5-node-0"), _scheduled_event(JOB + "-1-x1", "p5-node-1"),
              _scheduled_event("other-0", "p5-node-0")]
    result = _placement("l5-train-step-2node.log", [_pod(0, "p5-node-0")], scheduled=events)
    assert result["nodes"]["passed"] and result["nodes"]["actual"] == 2
    raw = checks.placement_checks("", "", {"nodes": 2, "job": JOB, "pods": [_pod(0, "p5-node-0")], "scheduled": events})
    assert "p5-node-1: %s-1-x1 (scheduled, gone before it was read)" % JOB in raw[0]["fail_msg"]


def test_rlinf_contract_reads_its_own_cluster_line():
    seen = _frameworks.cluster_seen(_log("rlinf/rlinf-cluster-2node.log"), _frameworks.contract("rlinf"))
    assert (seen["nodes"], seen["gpus"]) == (2, 16)
    assert seen["line"].endswith("RLinf is running on a cluster with 2 nodes and 16 accelerators. "
                                 "The nodes' details are:")
    one = _frameworks.cluster_seen(_log("rlinf/rlinf-cluster-1node.log"), _frameworks.contract("rlinf"))
    assert (one["nodes"], one["gpus"]) == (1, 8)
    assert _frameworks.cluster_seen(_log("rlinf/rlinf-train-one-step.log"), _frameworks.contract("rlinf")) is None


def test_two_pods_on_two_nodes_and_a_two_node_cluster_pass():
    result = _placement("l5-train-step-2node.log", [_pod(0, "p5-node-0"), _pod(1, "p5-node-1")])
    assert result["nodes"]["passed"] and result["nodes"]["actual"] == 2
    assert result["framework_nodes"]["passed"] and result["framework_nodes"]["actual"] == 2


def test_a_worker_that_never_started_fails_with_the_node_count():
    result = _placement("l5-train-2node-on-one-node.log", [
        _pod(0, "p5-node-0"), _pod(1, "", phase="Pending", scheduled="0/5 nodes are available: 1 Insufficient "
                                                                     "nvidia.com/gpu, 1 node(s) were unschedulable")])
    nodes = result["nodes"]
    assert not nodes["passed"] and (nodes["actual"], nodes["expected"]) == (1, 2)
    assert ("2 pods on 2 distinct nodes expected; 1 pod ran on 1 node (p5-node-0: %s-0-x0); %s-1-x1 never started "
            "(0/5 nodes are available" % (JOB, JOB)) in nodes["message"]
    framework = result["framework_nodes"]
    assert not framework["passed"] and framework["actual"] == 1
    assert framework["excerpt"][0].endswith("RLinf is running on a cluster with 1 node and 8 accelerators. "
                                            "The nodes' details are:")


def test_a_worker_on_the_heads_node_fails_though_the_framework_saw_two_nodes():
    result = _placement("l5-train-step-2node.log", [_pod(0, "p5-node-0"), _pod(1, "p5-node-0")])
    assert not result["nodes"]["passed"] and result["nodes"]["actual"] == 1
    assert "2 pods ran on 1 node (p5-node-0: %s-0-x0 %s-1-x1)" % (JOB, JOB) in result["nodes"]["message"]
    assert result["framework_nodes"]["passed"]


def test_a_deleted_worker_is_named_and_a_contract_without_a_cluster_line_is_missing_evidence():
    result = _placement("l5-train-step-2node.log", [_pod(0, "p5-node-0")], framework="trl")
    assert "1 of the Job's 2 pods were not found" in result["nodes"]["message"]
    framework = result["framework_nodes"]
    assert framework["evidence_missing"] and not framework["passed"]
    assert "the trl contract names no line that reports the cluster's nodes" in framework["message"]


def test_a_one_node_example_gets_no_placement_checks():
    assert checks.placement_checks("", "", {"nodes": 1, "job": JOB, "pods": [_pod(0, "p5-node-0")]}) == []
    assert checks.placement_checks("", "", {}) == []
