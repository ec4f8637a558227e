# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/k8s/_k8s_status.py: pods, Jobs and MPIJobs as the runner reads them.
Probe output and probe pods that did not start: test_probe_pods.py; names and nodes: test_k8s_names_nodes.py."""

from __future__ import annotations

import datetime
import re

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _diagnose
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _probe_pods
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s

from k8s_kit import (IMAGE_MSG, NOT_READY_NODE, NOW, UNSCHEDULABLE_MSG, cond, done_pod, image_pod, job, make_pod,
                     ready_pod, running_status, stamp, terminated, unschedulable_pod, waiting)

DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
ROLE_LABEL = "training.kubeflow.org/job-role"


# --------------------------------------------------------------------------------------------- parse_time


def test_parse_time_reads_api_server_timestamps_as_utc_epoch():
    expected = datetime.datetime(2026, 11, 30, 2, 40, 35, tzinfo=datetime.timezone.utc).timestamp()
    value = k8s.parse_time("2026-11-30T02:40:35Z")
    assert value == expected
    assert isinstance(value, float)


def test_parse_time_ignores_fractional_seconds():
    assert k8s.parse_time("2026-11-30T02:40:35.918273Z") == k8s.parse_time("2026-11-30T02:40:35Z")


def test_parse_time_epoch_start():
    assert k8s.parse_time("1970-01-01T00:00:00Z") == 0.0


@pytest.mark.parametrize("text", [None, "", "yesterday", "2026-11-30", "30/11/2026 02:40:35", 12345])
def test_parse_time_returns_none_when_absent_or_unreadable(text):
    assert k8s.parse_time(text) is None


def test_parse_time_round_trips_with_stamp():
    assert k8s.parse_time(stamp(NOW - 45)) == NOW - 45


# ---------------------------------------------------------------------------------------------- pod_state


def test_pod_state_defaults_for_an_empty_pod():
    state = k8s.pod_state({}, now=NOW)
    assert state == {"pod": "", "node": "", "phase": "Pending", "ready": False, "target": "", "role": "", "index": None,
                     "age_s": 0.0, "problem": None, "exit_code": None}


@pytest.mark.parametrize("reason", ["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"])
def test_pod_state_image_problem_is_hidden_within_the_grace_period(reason):
    state = k8s.pod_state(image_pod("p", age_s=10.0, reason=reason), now=NOW, grace_s=45.0)
    assert state["phase"] == "Pending"
    assert state["age_s"] == 10.0
    assert state["problem"] is None


@pytest.mark.parametrize("reason", ["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"])
def test_pod_state_image_problem_is_reported_after_the_grace_period(reason):
    state = k8s.pod_state(image_pod("p", age_s=60.0, reason=reason), now=NOW, grace_s=45.0)
    assert state["problem"] == {"kind": "image", "reason": reason, "message": IMAGE_MSG, "hint": k8s.HINTS["image"]}
    assert "imagePullSecrets" in state["problem"]["hint"]
    assert state["node"] == "p5-node-2"


def test_pod_state_problem_is_reported_exactly_at_the_grace_period():
    assert k8s.pod_state(image_pod("p", age_s=45.0), now=NOW, grace_s=45)["problem"]["kind"] == "image"
    assert k8s.pod_state(image_pod("p", age_s=44.0), now=NOW, grace_s=45)["problem"] is None


def test_pod_state_grace_zero_reports_at_once():
    assert k8s.pod_state(image_pod("p", age_s=0.0), now=NOW, grace_s=0)["problem"]["reason"] == "ImagePullBackOff"


@pytest.mark.parametrize("reason", ["CreateContainerConfigError", "CreateContainerError", "RunContainerError"])
def test_pod_state_config_problem(reason):
    message = 'secret "hf-token" not found'
    pod = make_pod("p", "Pending", age_s=90.0, node="p5-node-1", statuses=[waiting(reason, message)])
    problem = k8s.pod_state(pod, now=NOW)["problem"]
    assert problem == {"kind": "config", "reason": reason, "message": message, "hint": k8s.HINTS["config"]}


def test_pod_state_config_problem_of_an_init_container():
    pod = make_pod("p", "Pending", age_s=90.0, init_statuses=[waiting("CreateContainerConfigError", 'configmap "probe" not found', "init")],
                   statuses=[waiting("PodInitializing")])
    problem = k8s.pod_state(pod, now=NOW)["problem"]
    assert problem["kind"] == "config"
    assert problem["message"] == 'configmap "probe" not found'


def test_pod_state_harmless_waiting_reasons_are_no_problem():
    pod = make_pod("p", "Pending", age_s=600.0, statuses=[waiting("ContainerCreating"), waiting("PodInitializing", name="side")])
    assert k8s.pod_state(pod, now=NOW)["problem"] is None


def test_pod_state_crash_loop_while_running():
    message = "back-off 5m0s restarting failed container=main pod=rlsv-run1-l1-runtime-x"
    pod = make_pod("p", "Running", age_s=300.0, node="p5-node-1", statuses=[waiting("CrashLoopBackOff", message)],
                   conditions=[{"type": "Ready", "status": "False"}])
    state = k8s.pod_state(pod, now=NOW)
    assert state["ready"] is False
    assert state["problem"] == {"kind": "crash", "reason": "CrashLoopBackOff", "message": message, "hint": k8s.HINTS["crash"]}
    assert "kubectl logs --previous" in state["problem"]["hint"]


def test_pod_state_crash_loop_within_grace_is_hidden():
    pod = make_pod("p", "Running", age_s=20.0, statuses=[waiting("CrashLoopBackOff", "back-off 10s")])
    assert k8s.pod_state(pod, now=NOW)["problem"] is None


def test_pod_state_crash_loop_while_pending():
    pod = make_pod("p", "Pending", age_s=100.0, init_statuses=[waiting("CrashLoopBackOff", "back-off", "init")])
    assert k8s.pod_state(pod, now=NOW)["problem"]["kind"] == "crash"


def test_pod_state_unschedulable():
    state = k8s.pod_state(unschedulable_pod("p", age_s=120.0), now=NOW)
    assert state["node"] == ""
    # The scheduler's message names the cause (no free GPU here): its own fix, not the generic hint.
    assert state["problem"] == {"kind": "unschedulable", "reason": "Unschedulable", "message": UNSCHEDULABLE_MSG,
                                "cause": "insufficient_gpu", "hint": _diagnose.FIXES["insufficient_gpu"]}


def test_pod_state_unschedulable_for_an_unknown_reason_gets_the_generic_hint():
    pod = unschedulable_pod("p", age_s=120.0)
    pod["status"]["conditions"][0]["message"] = "0/5 nodes are available: 5 node(s) didn't match pod anti-affinity rules."
    problem = k8s.pod_state(pod, now=NOW)["problem"]
    assert "cause" not in problem and problem["hint"] == k8s.HINTS["unschedulable"]
    assert "vpc.amazonaws.com/efa" in problem["hint"]


def test_pod_state_unschedulable_within_grace_is_hidden():
    assert k8s.pod_state(unschedulable_pod("p", age_s=5.0), now=NOW)["problem"] is None


def test_pod_state_not_scheduled_for_another_reason_is_no_problem():
    pod = make_pod("p", "Pending", age_s=600.0, conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}])
    assert k8s.pod_state(pod, now=NOW)["problem"] is None


def test_pod_state_waiting_reason_wins_over_the_scheduled_condition():
    pod = make_pod("p", "Pending", age_s=600.0, statuses=[waiting("ErrImagePull", IMAGE_MSG)],
                   conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "x"}])
    assert k8s.pod_state(pod, now=NOW)["problem"]["kind"] == "image"


def test_pod_state_failed_with_exit_code_is_reported_at_once():
    pod = make_pod("p", "Failed", age_s=1.0, node="p5-node-1", statuses=[terminated(137, "OOMKilled")])
    state = k8s.pod_state(pod, now=NOW, grace_s=45.0)
    assert state["exit_code"] == 137
    assert state["problem"] == {"kind": "failed", "reason": "Failed", "message": "container exited with code 137.",
                                "hint": k8s.HINTS["failed"]}


def test_pod_state_failed_message_keeps_the_status_message():
    pod = make_pod("p", "Failed", statuses=[terminated(1)], reason="Error", message="The node was low on resource: memory.")
    problem = k8s.pod_state(pod, now=NOW)["problem"]
    assert problem["reason"] == "Error"
    assert problem["message"] == "container exited with code 1. The node was low on resource: memory."


def test_pod_state_failed_without_exit_code():
    pod = make_pod("p", "Failed", reason="Evicted", message="Pod ephemeral local storage usage exceeds the total limit")
    state = k8s.pod_state(pod, now=NOW)
    assert state["exit_code"] is None
    assert state["problem"]["message"] == "pod p was evicted: Pod ephemeral local storage usage exceeds the total limit"
    assert state["problem"]["kind"] == "evicted"
    assert state["problem"]["hint"] == _diagnose.FIXES["evicted"]


def test_pod_state_deadline_exceeded():
    pod = make_pod("p", "Failed", age_s=3700.0, reason="DeadlineExceeded",
                   message="Pod was active on the node longer than the specified deadline")
    problem = k8s.pod_state(pod, now=NOW)["problem"]
    assert problem == {"kind": "deadline", "reason": "DeadlineExceeded",
                       "message": "Pod was active on the node longer than the specified deadline", "hint": k8s.HINTS["deadline"]}


def test_pod_state_exit_code_of_an_init_container_and_zero_is_ignored():
    pod = make_pod("p", "Failed", init_statuses=[terminated(0, "Completed", "init")], statuses=[terminated(0, "Completed")])
    assert k8s.pod_state(pod, now=NOW)["exit_code"] is None
    pod = make_pod("p", "Failed", init_statuses=[terminated(2, "Error", "init")])
    assert k8s.pod_state(pod, now=NOW)["exit_code"] == 2


def test_pod_state_running_and_ready():
    pod = ready_pod("rlsv-run1-l0-p5-node-1", node="p5-node-1", labels={k8s.TARGET_LABEL: "p5-node-1"})
    state = k8s.pod_state(pod, now=NOW)
    assert state == {"pod": "rlsv-run1-l0-p5-node-1", "node": "p5-node-1", "phase": "Running", "ready": True,
                     "target": "p5-node-1", "role": "", "index": None, "age_s": 300.0, "problem": None, "exit_code": None}


def test_pod_state_running_not_ready():
    pod = make_pod("p", "Running", node="n", statuses=[running_status()], conditions=[{"type": "Ready", "status": "False"}])
    state = k8s.pod_state(pod, now=NOW)
    assert state["ready"] is False
    assert state["problem"] is None


def test_pod_state_target_label_wins_over_node_name():
    pod = make_pod("p", "Pending", node="ip-10-0-1-23.us-west-2.compute.internal", labels={k8s.TARGET_LABEL: "ip-10-0-1-23"})
    assert k8s.pod_state(pod, now=NOW)["target"] == "ip-10-0-1-23"
    pod = make_pod("p", "Pending", node="ip-10-0-1-23.us-west-2.compute.internal")
    assert k8s.pod_state(pod, now=NOW)["target"] == "ip-10-0-1-23.us-west-2.compute.internal"


def test_pod_state_role_and_index_labels():
    pod = ready_pod("nccl-launcher", labels={ROLE_LABEL: "launcher"})
    assert k8s.pod_state(pod, now=NOW)["role"] == "launcher"
    pod = ready_pod("train-1-x", labels={k8s.INDEX_LABEL: "1"})
    state = k8s.pod_state(pod, now=NOW)
    assert state["index"] == "1"
    assert state["role"] == ""


def test_pod_state_without_creation_time_never_reports_pending_problems():
    pod = image_pod("p")
    del pod["metadata"]["creationTimestamp"]
    state = k8s.pod_state(pod, now=NOW)
    assert state["age_s"] == 0.0
    assert state["problem"] is None


def test_pod_state_uses_the_clock_when_now_is_not_given():
    pod = image_pod("p")
    pod["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"
    assert k8s.pod_state(pod)["problem"]["kind"] == "image"


# ------------------------------------------------------------------------------------------- pods_summary


def test_pods_summary_running_all_ready():
    pods = [ready_pod("a", "p5-node-1"), ready_pod("b", "p5-node-2")]
    summary = k8s.pods_summary(pods, expected=2, now=NOW)
    assert summary["ok"] is True
    assert summary["settled"] is True
    assert summary["expected"] == 2
    assert summary["problems"] == []
    assert [s["pod"] for s in summary["states"]] == ["a", "b"]
    assert summary["text"] == "2 Running of 2 expected"


def test_pods_summary_running_counts_succeeded_as_done():
    summary = k8s.pods_summary([ready_pod("a"), done_pod("b")], expected=2, now=NOW)
    assert summary["ok"] is True
    assert summary["text"] == "1 Running, 1 Succeeded of 2 expected"


def test_pods_summary_running_waits_for_pending_and_unready_pods():
    not_ready = make_pod("c", "Running", statuses=[running_status()], conditions=[{"type": "Ready", "status": "False"}])
    summary = k8s.pods_summary([ready_pod("a"), make_pod("b", "Pending", age_s=5.0), not_ready], expected=3, now=NOW)
    assert summary["ok"] is False
    assert summary["settled"] is False
    assert summary["text"] == "1 Pending, 2 Running of 3 expected"


def test_pods_summary_running_waits_for_pods_not_yet_created():
    summary = k8s.pods_summary([ready_pod("a")], expected=2, now=NOW)
    assert (summary["ok"], summary["settled"]) == (False, False)
    assert summary["text"] == "1 Running of 2 expected"


def test_pods_summary_running_a_problem_settles_the_wait():
    summary = k8s.pods_summary([ready_pod("a"), image_pod("b", age_s=90.0)], expected=2, now=NOW)
    assert summary["settled"] is True
    assert summary["ok"] is False
    assert [p["pod"] for p in summary["problems"]] == ["b"]
    assert summary["problems"][0]["problem"]["reason"] == "ImagePullBackOff"


def test_pods_summary_running_problem_within_grace_does_not_settle():
    summary = k8s.pods_summary([ready_pod("a"), image_pod("b", age_s=10.0)], expected=2, grace_s=45, now=NOW)
    assert (summary["ok"], summary["settled"]) == (False, False)


def test_pods_summary_probes_a_pod_gone_from_the_list_settles_the_wait():
    pods = [done_pod("a"), make_pod("b", "Running", age_s=5.0)]
    waiting_for_b = k8s.pods_summary(pods, expected=3, want="probes", now=NOW)
    assert not waiting_for_b["settled"] and waiting_for_b["gone"] == 1
    summary = k8s.pods_summary(pods[:1], expected=3, want="probes", now=NOW)
    assert summary["settled"] and not summary["ok"] and summary["gone"] == 2
    assert summary["text"] == "1 Succeeded, 2 gone of 3 expected"
    # "finished" waits for pods still to be created (a Job's pods), so a missing pod does not settle it
    assert not k8s.pods_summary(pods[:1], expected=3, want="finished", now=NOW)["settled"]


def test_pods_summary_probes_a_pod_pending_past_the_start_bound_is_stuck():
    pending = make_pod("a", "Pending", age_s=120.0, node="p5-node-1")
    assert not k8s.pods_summary([pending], expected=1, want="probes", now=NOW)["settled"]
    assert not k8s.pods_summary([pending], expected=1, want="probes", now=NOW, start_timeout_s=300)["settled"]
    summary = k8s.pods_summary([pending], expected=1, want="probes", now=NOW, start_timeout_s=90)
    assert summary["settled"] and summary["problems"][0]["problem"]["kind"] == "start_timeout"
    assert summary["states"][0]["problem"]["message"] == "the pod did not start within 90 s"


def test_pods_summary_probes_a_pod_its_node_controller_marked_not_ready_is_stuck():
    # what MarkPodsNotReady leaves (k8s.io/kubernetes pkg/controller/util/node): Ready False, containers ready
    marked = make_pod("a", "Running", node="p5-node-1", statuses=[running_status()], conditions=[
        {"type": "Ready", "status": "False", "lastTransitionTime": stamp(NOW - 30)},
        {"type": "ContainersReady", "status": "True"}])
    summary = k8s.pods_summary([marked], expected=1, grace_s=10, want="probes", now=NOW)
    assert summary["settled"] and summary["states"][0]["problem"]["kind"] == "node_not_ready"
    assert summary["states"][0]["problem"]["hint"] == _diagnose.FIXES["node_not_ready"]
    # within the grace, or in another wait, it is not a problem
    assert not k8s.pods_summary([marked], expected=1, grace_s=60, want="probes", now=NOW)["settled"]
    assert k8s.pods_summary([marked], expected=1, grace_s=10, want="finished", now=NOW)["problems"] == []


def test_probe_not_started_puts_the_not_ready_node_before_what_it_did_to_the_pod():
    deleted = make_pod("rlsv-r-l0-a", "Running", node="p5-node-1", labels={"rlstack.io/target": "p5-node-1"},
                       statuses=[running_status()])
    deleted["metadata"]["deletionTimestamp"] = stamp(NOW - 5)  # the taint manager, after tolerationSeconds
    states = k8s.pods_summary([deleted], expected=1, want="probes", now=NOW)["states"]
    assert states[0]["problem"]["kind"] == "deleted"
    out = _probe_pods.probe_not_started([{"node": "p5-node-1"}], {}, states, [], 60, nodes=[NOT_READY_NODE])
    assert "node p5-node-1 is NotReady" in out["p5-node-1"]["error"]
    assert out["p5-node-1"]["hint"] == _diagnose.FIXES["node_not_ready"]
    # on a Ready node the deletion is the cause
    assert out != _probe_pods.probe_not_started([{"node": "p5-node-1"}], {}, states, [], 60, nodes=[])


def test_pods_summary_no_pods():
    summary = k8s.pods_summary([], expected=2, now=NOW)
    assert summary["text"] == "no pods of 2 expected"
    assert (summary["ok"], summary["settled"]) == (False, False)
    summary = k8s.pods_summary(None, now=NOW)
    assert summary["expected"] == 0
    assert (summary["ok"], summary["settled"]) == (False, False)
    assert summary["text"] == "no pods of 0 expected"


def test_pods_summary_expected_defaults_to_the_pods_seen():
    summary = k8s.pods_summary([ready_pod("a"), ready_pod("b")], now=NOW)
    assert summary["expected"] == 2
    assert summary["ok"] is True


def test_pods_summary_expected_given_as_text():
    assert k8s.pods_summary([ready_pod("a")], expected="1", now=NOW)["ok"] is True


def test_pods_summary_finished_parallel_jobs():
    pods = [done_pod("j1-x", labels={JOB_NAME_LABEL: "j1"}), done_pod("j2-y", labels={JOB_NAME_LABEL: "j2"})]
    summary = k8s.pods_summary(pods, expected=2, want="finished", now=NOW)
    assert (summary["ok"], summary["settled"]) == (True, True)
    assert summary["text"] == "2 Succeeded of 2 expected"


def test_pods_summary_finished_failed_settles_but_is_not_ok():
    pods = [done_pod("a"), done_pod("b", "Failed", exit_code=1)]
    summary = k8s.pods_summary(pods, expected=2, want="finished", now=NOW)
    assert (summary["ok"], summary["settled"]) == (False, True)
    assert [p["pod"] for p in summary["problems"]] == ["b"]
    assert summary["problems"][0]["problem"]["message"] == "container exited with code 1."


def test_pods_summary_finished_waits_while_one_runs():
    summary = k8s.pods_summary([done_pod("a"), ready_pod("b")], expected=2, want="finished", now=NOW)
    assert (summary["ok"], summary["settled"]) == (False, False)


def test_pods_summary_finished_stuck_pod_settles():
    summary = k8s.pods_summary([done_pod("a"), image_pod("b")], expected=2, want="finished", now=NOW)
    assert (summary["ok"], summary["settled"]) == (False, True)
    assert summary["problems"][0]["problem"]["kind"] == "image"


def test_pods_summary_finished_indexed_job_only_index_0_counts():
    pods = [done_pod("train-0-abc", labels={k8s.INDEX_LABEL: "0", JOB_NAME_LABEL: "train"}),
            ready_pod("train-1-def", node="p5-node-2", labels={k8s.INDEX_LABEL: "1", JOB_NAME_LABEL: "train"})]
    summary = k8s.pods_summary(pods, expected=1, want="finished", now=NOW)
    assert (summary["ok"], summary["settled"]) == (True, True)
    assert [s["pod"] for s in summary["states"]] == ["train-0-abc"]
    assert summary["text"] == "1 Succeeded of 1 expected"


def test_pods_summary_finished_indexed_job_worker_problem_is_not_judged():
    pods = [ready_pod("train-0", labels={k8s.INDEX_LABEL: "0"}),
            image_pod("train-1", labels={k8s.INDEX_LABEL: "1"}),
            done_pod("train-2", "Failed", labels={k8s.INDEX_LABEL: "2"}, exit_code=3)]
    summary = k8s.pods_summary(pods, expected=1, want="finished", now=NOW)
    assert summary["problems"] == []
    assert (summary["ok"], summary["settled"]) == (False, False)


def test_pods_summary_finished_indexed_head_failure_settles():
    pods = [done_pod("train-0", "Failed", labels={k8s.INDEX_LABEL: "0"}, exit_code=1),
            ready_pod("train-1", labels={k8s.INDEX_LABEL: "1"})]
    summary = k8s.pods_summary(pods, expected=1, want="finished", now=NOW)
    assert (summary["ok"], summary["settled"]) == (False, True)
    assert [p["pod"] for p in summary["problems"]] == ["train-0"]


def test_pods_summary_finished_indexed_expected_defaults_to_the_heads():
    pods = [done_pod("train-0", labels={k8s.INDEX_LABEL: "0"}), ready_pod("train-1", labels={k8s.INDEX_LABEL: "1"})]
    summary = k8s.pods_summary(pods, want="finished", now=NOW)
    assert summary["expected"] == 1
    assert (summary["ok"], summary["settled"]) == (True, True)


def test_pods_summary_finished_unschedulable_ignored_while_another_runs():
    pods = [ready_pod("ex-a-0", labels={JOB_NAME_LABEL: "ex-a"}), unschedulable_pod("ex-b-0", age_s=600.0, labels={JOB_NAME_LABEL: "ex-b"})]
    summary = k8s.pods_summary(pods, expected=2, want="finished", now=NOW)
    assert summary["problems"] == []
    assert (summary["ok"], summary["settled"]) == (False, False)


def test_pods_summary_finished_unschedulable_counts_once_none_runs():
    pods = [done_pod("ex-a-0"), unschedulable_pod("ex-b-0", age_s=600.0)]
    summary = k8s.pods_summary(pods, expected=2, want="finished", now=NOW)
    assert [p["pod"] for p in summary["problems"]] == ["ex-b-0"]
    assert summary["problems"][0]["problem"]["kind"] == "unschedulable"
    assert (summary["ok"], summary["settled"]) == (False, True)


def test_pods_summary_finished_image_problem_counts_even_while_another_runs():
    summary = k8s.pods_summary([ready_pod("a"), image_pod("b")], expected=2, want="finished", now=NOW)
    assert [p["pod"] for p in summary["problems"]] == ["b"]
    assert summary["settled"] is False  # one of two resolved
    summary = k8s.pods_summary([ready_pod("a"), image_pod("b")], expected=1, want="finished", now=NOW)
    assert summary["settled"] is True


def test_pods_summary_launcher_finished_worker_still_running():
    pods = [done_pod("nccl-launcher", labels={ROLE_LABEL: "launcher"}),
            ready_pod("nccl-worker-0", labels={ROLE_LABEL: "worker"}), ready_pod("nccl-worker-1", labels={ROLE_LABEL: "worker"})]
    summary = k8s.pods_summary(pods, want="launcher", now=NOW)
    assert (summary["ok"], summary["settled"]) == (True, True)
    assert summary["text"] == "2 Running, 1 Succeeded of 3 expected"


def test_pods_summary_launcher_failed():
    pods = [done_pod("nccl-launcher", "Failed", labels={ROLE_LABEL: "launcher"}, exit_code=1),
            ready_pod("nccl-worker-0", labels={ROLE_LABEL: "worker"})]
    summary = k8s.pods_summary(pods, want="launcher", now=NOW)
    assert (summary["ok"], summary["settled"]) == (False, True)


def test_pods_summary_launcher_waits_while_it_runs():
    pods = [ready_pod("nccl-launcher", labels={ROLE_LABEL: "launcher"}), ready_pod("nccl-worker-0", labels={ROLE_LABEL: "worker"})]
    assert k8s.pods_summary(pods, want="launcher", now=NOW)["settled"] is False


def test_pods_summary_launcher_worker_stuck_settles():
    pods = [make_pod("nccl-launcher", "Pending", age_s=10.0, labels={ROLE_LABEL: "launcher"}),
            image_pod("nccl-worker-1", age_s=120.0, labels={ROLE_LABEL: "worker"})]
    summary = k8s.pods_summary(pods, want="launcher", now=NOW)
    assert (summary["ok"], summary["settled"]) == (False, True)
    assert [p["pod"] for p in summary["problems"]] == ["nccl-worker-1"]


def test_pods_summary_launcher_failed_worker_alone_does_not_settle():
    pods = [ready_pod("nccl-launcher", labels={ROLE_LABEL: "launcher"}),
            done_pod("nccl-worker-1", "Failed", labels={ROLE_LABEL: "worker"}, exit_code=1)]
    summary = k8s.pods_summary(pods, want="launcher", now=NOW)
    assert [p["pod"] for p in summary["problems"]] == ["nccl-worker-1"]
    assert summary["settled"] is False


def test_pods_summary_launcher_absent():
    summary = k8s.pods_summary([ready_pod("nccl-worker-0", labels={ROLE_LABEL: "worker"})], want="launcher", now=NOW)
    assert (summary["ok"], summary["settled"]) == (False, False)


# ---------------------------------------------------------------------------------- job_state, jobs_summary


def test_job_state_complete():
    state = k8s.job_state(job("rlsv-run1-l5-libero", cond("Complete")), [done_pod("rlsv-run1-l5-libero-x")], now=NOW)
    assert state["name"] == "rlsv-run1-l5-libero"
    assert (state["complete"], state["failed"], state["settled"]) == (True, False, True)
    assert (state["reason"], state["message"]) == ("", "")
    assert [p["pod"] for p in state["pods"]] == ["rlsv-run1-l5-libero-x"]
    assert state["problems"] == []


def test_job_state_failed_keeps_reason_message_and_the_pod_failure():
    failed = cond("Failed", reason="BackoffLimitExceeded", message="Job has reached the specified backoff limit")
    state = k8s.job_state(job("j", failed), [done_pod("j-x", "Failed", exit_code=1)], now=NOW)
    assert (state["complete"], state["failed"], state["settled"]) == (False, True, True)
    assert state["reason"] == "BackoffLimitExceeded"
    assert state["message"] == "Job has reached the specified backoff limit"
    assert [p["pod"] for p in state["problems"]] == ["j-x"]
    assert state["pods"][0]["exit_code"] == 1


def test_job_state_deadline():
    failed = cond("Failed", reason="DeadlineExceeded", message="Job was active longer than specified deadline")
    state = k8s.job_state(job("j", failed), [], now=NOW)
    assert (state["failed"], state["settled"], state["reason"]) == (True, True, "DeadlineExceeded")


def test_job_state_failed_pod_is_not_a_problem_until_the_job_fails():
    state = k8s.job_state(job("j"), [done_pod("j-x", "Failed", exit_code=1)], now=NOW)
    assert state["problems"] == []
    assert state["settled"] is False


def test_job_state_conditions_that_are_false_do_not_count():
    state = k8s.job_state(job("j", cond("Failed", "False"), cond("Complete", "False")), [ready_pod("j-x")], now=NOW)
    assert (state["complete"], state["failed"], state["settled"]) == (False, False, False)


@pytest.mark.parametrize("pod", [image_pod("j-x"), unschedulable_pod("j-x"),
                                 make_pod("j-x", "Pending", statuses=[waiting("CreateContainerConfigError", "no secret")]),
                                 make_pod("j-x", "Running", statuses=[waiting("CrashLoopBackOff", "back-off")])],
                         ids=["image", "unschedulable", "config", "crash"])
def test_job_state_pod_that_cannot_start_settles_early(pod):
    state = k8s.job_state(job("j"), [pod], now=NOW)
    assert state["settled"] is True
    assert (state["complete"], state["failed"]) == (False, False)
    assert [p["pod"] for p in state["problems"]] == ["j-x"]


def test_job_state_problem_within_grace_does_not_settle():
    state = k8s.job_state(job("j"), [image_pod("j-x", age_s=10.0)], now=NOW, grace_s=45.0)
    assert state["settled"] is False


def test_job_state_running_without_pods_or_with_running_pods():
    assert k8s.job_state(job("j"), None, now=NOW)["settled"] is False
    assert k8s.job_state(job("j"), [ready_pod("j-x")], now=NOW)["settled"] is False
    assert k8s.job_state({}, now=NOW)["name"] == ""


def test_job_state_indexed_job_keeps_only_the_head_pod():
    pods = [ready_pod("ex-0", labels={k8s.INDEX_LABEL: "0"}), image_pod("ex-1", labels={k8s.INDEX_LABEL: "1"})]
    state = k8s.job_state(job("ex"), pods, now=NOW)
    assert [p["pod"] for p in state["pods"]] == ["ex-0"]
    assert state["problems"] == []
    assert state["settled"] is False


def test_jobs_summary_groups_pods_by_job_name_label():
    jobs = [job("rlsv-l5-libero", cond("Complete")), job("rlsv-l5-maniskill")]
    pods = [done_pod("rlsv-l5-libero-abc", labels={JOB_NAME_LABEL: "rlsv-l5-libero"}),
            ready_pod("rlsv-l5-maniskill-def", labels={"job-name": "rlsv-l5-maniskill"}),
            ready_pod("unrelated", labels={JOB_NAME_LABEL: "other-job"})]
    summary = k8s.jobs_summary(jobs, pods, now=NOW)
    assert summary["settled"] is False
    assert [s["name"] for s in summary["states"]] == ["rlsv-l5-libero", "rlsv-l5-maniskill"]
    assert [p["pod"] for p in summary["states"][0]["pods"]] == ["rlsv-l5-libero-abc"]
    assert [p["pod"] for p in summary["states"][1]["pods"]] == ["rlsv-l5-maniskill-def"]
    assert [s["settled"] for s in summary["states"]] == [True, False]


def test_jobs_summary_settled_when_every_job_is():
    jobs = [job("a", cond("Complete")), job("b", cond("Failed", reason="BackoffLimitExceeded")), job("c")]
    pods = [image_pod("c-x", labels={JOB_NAME_LABEL: "c"})]
    summary = k8s.jobs_summary(jobs, pods, now=NOW)
    assert summary["settled"] is True
    assert summary["states"][2]["problems"][0]["problem"]["kind"] == "image"


def test_pod_state_crash_loop_reports_the_last_exit_code():
    status = waiting("CrashLoopBackOff", "back-off 40s restarting failed container=main")
    status["lastState"] = {"terminated": {"exitCode": 139, "reason": "Error"}}
    pod = make_pod("crashy", "Running", age_s=120.0, node="p5-node-0", statuses=[status])
    state = k8s.pod_state(pod, now=NOW)
    assert state["exit_code"] == 139
    assert state["problem"]["kind"] == "crash"
    assert state["problem"]["message"].startswith("last exit code 139. back-off 40s")


def test_jobs_summary_no_jobs_is_not_settled():
    assert k8s.jobs_summary([], [ready_pod("x")], now=NOW) == {"settled": False, "states": []}
    assert k8s.jobs_summary(None, None, now=NOW) == {"settled": False, "states": []}


# -------------------------------------------------------------------------------------------- mpijob_state


def test_mpijob_state_created_and_running():
    mpijob = job("l3-run1-nccl", cond("Created"), cond("Running"))
    pods = [ready_pod("l3-run1-nccl-launcher", labels={ROLE_LABEL: "launcher"}), ready_pod("l3-run1-nccl-worker-0", labels={ROLE_LABEL: "worker"})]
    state = k8s.mpijob_state(mpijob, pods, now=NOW)
    assert state["name"] == "l3-run1-nccl"
    assert (state["created"], state["running"], state["complete"], state["failed"], state["settled"]) == (True, True, False, False, False)
    assert sorted(p["role"] for p in state["pods"]) == ["launcher", "worker"]


def test_mpijob_state_succeeded():
    state = k8s.mpijob_state(job("m", cond("Created"), cond("Running", "False"), cond("Succeeded")), [], now=NOW)
    assert (state["complete"], state["running"], state["settled"]) == (True, False, True)


def test_mpijob_state_failed():
    mpijob = job("m", cond("Created"), cond("Failed", reason="MPIJobFailed", message="launcher failed: exit code 1"))
    state = k8s.mpijob_state(mpijob, [], now=NOW)
    assert (state["failed"], state["settled"]) == (True, True)
    assert (state["reason"], state["message"]) == ("MPIJobFailed", "launcher failed: exit code 1")


def test_mpijob_state_worker_stuck_settles():
    pods = [make_pod("m-launcher", "Pending", age_s=10.0, labels={ROLE_LABEL: "launcher"}),
            unschedulable_pod("m-worker-1", labels={ROLE_LABEL: "worker"})]
    state = k8s.mpijob_state(job("m", cond("Created")), pods, now=NOW)
    assert state["settled"] is True
    assert [p["pod"] for p in state["problems"]] == ["m-worker-1"]
    assert state["problems"][0]["problem"]["kind"] == "unschedulable"


def test_mpijob_state_failed_worker_alone_does_not_settle():
    pods = [done_pod("m-worker-1", "Failed", labels={ROLE_LABEL: "worker"}, exit_code=1)]
    state = k8s.mpijob_state(job("m", cond("Created"), cond("Running")), pods, now=NOW)
    assert state["problems"][0]["problem"]["kind"] == "failed"
    assert state["settled"] is False


def test_mpijob_state_launcher_succeeded_before_operator_status():
    pods = [done_pod("m-launcher", "Succeeded", labels={ROLE_LABEL: "launcher"}),
            ready_pod("m-worker-0", labels={ROLE_LABEL: "worker"})]
    state = k8s.mpijob_state(job("m", cond("Created"), cond("Running")), pods, now=NOW)
    assert (state["complete"], state["failed"], state["settled"], state["source"]) == (True, False, True, "launcher pod")


def test_mpijob_state_launcher_failed_before_operator_status():
    pods = [done_pod("m-launcher", "Failed", labels={ROLE_LABEL: "launcher"}, exit_code=3)]
    state = k8s.mpijob_state(job("m", cond("Created"), cond("Running")), pods, now=NOW)
    assert (state["complete"], state["failed"], state["settled"]) == (False, True, True)
    assert state["reason"] == "LauncherFailed"
    assert "m-launcher failed with exit code 3" in state["message"]


def test_mpijob_state_operator_status_wins_over_launcher_pod():
    pods = [done_pod("m-launcher", "Failed", labels={ROLE_LABEL: "launcher"}, exit_code=3)]
    state = k8s.mpijob_state(job("m", cond("Created"), cond("Succeeded")), pods, now=NOW)
    assert (state["complete"], state["failed"], state["source"]) == (True, False, "MPIJob status")


# --------------------------------------------------------------------------------------------- job_results


def runner_job(name, kname):
    return {"name": name, "definition": {"metadata": {"name": kname}}}


def test_job_results_pair_each_job_with_its_state_and_log():
    states = k8s.jobs_summary([job("rlsv-r-train-a", cond("Complete")), job("rlsv-r-train-b", cond("Failed"))],
                              [done_pod("rlsv-r-train-a-x", labels={JOB_NAME_LABEL: "rlsv-r-train-a"}),
                               done_pod("rlsv-r-train-b-y", "Failed", labels={JOB_NAME_LABEL: "rlsv-r-train-b"}, exit_code=1)],
                              now=NOW)["states"]
    logs = [{"item": {"name": "rlsv-r-train-b"}, "log": "Traceback\n", "failed": False},
            {"item": {"name": "rlsv-r-train-a"}, "log": "step 1 done\n", "failed": False}]
    out = k8s.job_results([runner_job("a", "rlsv-r-train-a"), runner_job("b", "rlsv-r-train-b")], states, logs)
    assert set(out) == {"a", "b"}
    assert out["a"]["state"]["complete"] and out["a"]["log"] == "step 1 done\n" and out["a"]["log_error"] == ""
    assert out["b"]["state"]["failed"] and out["b"]["log"] == "Traceback\n"


def test_job_results_a_failed_log_read_keeps_its_message():
    logs = [{"item": {"name": "k"}, "failed": True, "msg": "pods \"k-x\" not found"}]
    out = k8s.job_results([runner_job("a", "k")], [{"name": "k", "settled": True}], logs)
    assert out["a"] == {"state": {"name": "k", "settled": True}, "log": "", "log_error": "pods \"k-x\" not found"}


def test_job_results_a_job_without_pod_says_there_is_no_log():
    out = k8s.job_results([runner_job("a", "k")], [{"name": "k", "settled": False}], [])
    assert out["a"]["state"] == {"name": "k", "settled": False}
    assert out["a"]["log"] == "" and "no pod of the Job was found" in out["a"]["log_error"]
    assert k8s.job_results(None, None, None) == {}


def test_a_job_the_api_did_not_return_after_the_wait_was_deleted_then():
    """A CI run (2026-12-05): the run's renewed lease ran out during an etcd restart; the garbage collector deleted
    the L5 Job after its pods finished and before the run read it, and L5 said "the Job did not finish within the
    wait (expected 'Complete', saw 'still running')". The runner created every Job before the wait."""
    out = k8s.job_results([runner_job("a", "k")], [], [])
    problem = out["a"]["state"]["problems"][0]["problem"]
    assert "deleted after the wait, before the run read its outcome, and not by this run" in problem["message"]
    assert "renewed lease" in problem["hint"]
    checks = _checks.log_checks("", out["a"]["state"], "", {"log_error": out["a"]["log_error"]})
    assert checks[0]["name"] == "job" and "still running" not in str(checks[0]), checks


def test_a_job_someone_else_deleted_is_named_with_its_fix():
    out = k8s.job_results([runner_job("a", "k"), runner_job("b", "k2")], [], [], gone={"k": {"seen_after_s": 12.5}})
    problem = out["a"]["state"]["problems"][0]["problem"]
    assert problem["kind"] == "deleted" and "12.5 s into the wait, and not by this run" in problem["message"]
    assert problem["hint"] == _diagnose.FIXES["deleted"]
    assert out["a"]["state"]["settled"] and "deleted" in out["a"]["log_error"]
    assert "after the wait" in out["b"]["state"]["problems"][0]["problem"]["message"]  # not seen gone in the wait
    # the L5 judgement names the deletion, not a Job that "did not finish within the wait"
    checks = _checks.log_checks("", out["a"]["state"], "", {"log_error": out["a"]["log_error"]})
    assert checks[0]["name"] == "job" and "deleted while the level waited" in checks[0]["fail_msg"], checks
    assert checks[0]["hint"] == _diagnose.FIXES["deleted"]


def test_jobs_gone_are_those_missing_that_the_watch_did_not_stop():
    assert k8s.jobs_gone(["a", "b", "c"], {"a"}, {"b": {}}, {}) == ["c"]
    assert k8s.jobs_gone(["a", "b", "c"], {"a"}, {"b": {}}, {"c": {}}) == []  # recorded once


# --------------------------------------------------------------------------------------------- job_state of indexed Jobs


def _job(name="j", **spec):
    return {"metadata": {"name": name}, "spec": spec, "status": {}}


def _job_pod(name, phase, index=None, exit_code=None):
    pod = make_pod(name, phase, age_s=30.0)
    pod["metadata"].setdefault("labels", {})["batch.kubernetes.io/job-name"] = "j"
    if index is not None:
        pod["metadata"]["labels"][k8s.INDEX_LABEL] = str(index)
    if exit_code is not None:
        pod["status"]["containerStatuses"] = [{"name": "main", "state": {"terminated": {"exitCode": exit_code}}}]
    return pod


def test_a_lagging_job_status_is_read_from_its_finished_pods():
    """After an API server restart the Job controller records Complete seconds after the pod ended."""
    state = k8s.job_state(_job(backoffLimit=0), [_job_pod("p", "Succeeded")], grace_s=10)
    assert (state["complete"], state["failed"], state["settled"], state["source"]) == (True, False, True, "pods")
    failed = k8s.job_state(_job(backoffLimit=0), [_job_pod("p", "Failed", exit_code=3)], grace_s=10)
    assert failed["failed"] and failed["source"] == "pods" and "exit code 3" in failed["message"]


def test_a_job_with_completions_left_or_retries_left_is_not_taken_from_its_pods():
    indexed = _job(completions=2, completionMode="Indexed", backoffLimit=0)
    one = k8s.job_state(indexed, [_job_pod("p0", "Succeeded", index=0), _job_pod("p1", "Running", index=1)], grace_s=10)
    assert not one["complete"] and not one["settled"]
    both = k8s.job_state(indexed, [_job_pod("p0", "Succeeded", index=0), _job_pod("p1", "Succeeded", index=1)],
                         grace_s=10)
    assert both["complete"] and both["source"] == "pods"
    retrying = k8s.job_state(_job(backoffLimit=2), [_job_pod("p", "Failed", exit_code=1)], grace_s=10)
    assert not retrying["failed"] and not retrying["complete"]


def test_a_recorded_job_status_wins_over_its_pods():
    job = dict(_job(backoffLimit=0), status={"conditions": [cond("Complete")]})
    state = k8s.job_state(job, [_job_pod("p", "Succeeded")], grace_s=10)
    assert state["complete"] and state["source"] == "Job status"


def test_a_job_waiting_for_gpus_its_siblings_hold_is_queued_not_stuck():
    # three 1-GPU examples on one 1-GPU node (a lent H100, 2026-12-06): one runs, two wait for its GPU
    jobs = [job("ex-a"), job("ex-b"), job("ex-c")]
    running = ready_pod("ex-a-x", node="p5-node-0", labels={JOB_NAME_LABEL: "ex-a"})
    waiting_pods = [unschedulable_pod("ex-%s-x" % n, labels={JOB_NAME_LABEL: "ex-%s" % n}) for n in "bc"]
    summary = k8s.jobs_summary(jobs, [running] + waiting_pods, now=NOW)
    assert summary["settled"] is False
    assert [(s["problems"], s.get("queued", False)) for s in summary["states"][1:]] == [([], True), ([], True)]
    # once no sibling holds a node, the same pods are stuck: reported, and they settle the wait
    done = done_pod("ex-a-x", labels={JOB_NAME_LABEL: "ex-a"})
    summary = k8s.jobs_summary([job("ex-a", cond("Complete")), job("ex-b"), job("ex-c")], [done] + waiting_pods, now=NOW)
    assert summary["settled"] is True
    assert [s["problems"][0]["problem"]["cause"] for s in summary["states"][1:]] == ["insufficient_gpu"] * 2


def test_a_job_that_no_node_can_hold_is_not_queued():
    # untolerated taints or a missing node: not a wait for the batch's own pods
    pod = make_pod("ex-b-x", "Pending", age_s=120.0, labels={JOB_NAME_LABEL: "ex-b"}, conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector."}])
    running = ready_pod("ex-a-x", node="p5-node-0", labels={JOB_NAME_LABEL: "ex-a"})
    summary = k8s.jobs_summary([job("ex-a"), job("ex-b")], [running, pod], now=NOW)
    assert summary["states"][1]["settled"] is True
    assert "queued" not in summary["states"][1]
