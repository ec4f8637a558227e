# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Kueue admission in plugins/module_utils/k8s/_k8s_status.py: a Job or MPIJob Kueue keeps suspended is its own
finding after the grace, with the Workload's reason, instead of a timeout.

Condition texts come from the controllers that write them: the Job controller's Suspended condition
(kubernetes pkg/controller/job/job_controller.go: JobSuspended, "Job suspended"), the MPI operator's
(kubeflow/mpi-operator v0.8.2 pkg/controller/mpi_job_controller.go:1098: MPIJobSuspended, "MPIJob
suspended"), and a Workload's QuotaReserved condition as Kueue wrote it in kubernetes-sigs/kueue issue
1344 (reason Pending, "couldn't assign flavors to pod set main: ...").
"""

from __future__ import annotations

import time

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s

NOW = 1_800_000_000.0
UID = "46ef6b23-a7d9-42b1-b0f8-071bbb29a94d"
QUOTA_MSG = "couldn't assign flavors to pod set main: borrowing limit for cpu in flavor flav-1 exceeded"


def stamp(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def job(age_s, suspend=True, queue="team-a", conditions=None):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "rlsv-r1-train", "uid": UID, "creationTimestamp": stamp(NOW - age_s),
                         "labels": {k8s.KUEUE_QUEUE_LABEL: queue} if queue else {}},
            "spec": {"suspend": suspend}, "status": {"conditions": conditions or []}}


def mpijob(age_s, suspend=True):
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": "rlsv-r1-nccl", "uid": UID, "creationTimestamp": stamp(NOW - age_s),
                         "labels": {k8s.KUEUE_QUEUE_LABEL: "team-a"}},
            "spec": {"runPolicy": {"suspend": suspend}},
            "status": {"conditions": [{"type": "Suspended", "status": "True", "reason": "MPIJobSuspended",
                                       "message": "MPIJob suspended"}] if suspend else []}}


JOB_SUSPENDED = [{"type": "Suspended", "status": "True", "reason": "JobSuspended", "message": "Job suspended"}]


def workload(owner_uid=UID, by_label=False):
    meta = {"name": "job-rlsv-r1-train-3c4e1", "namespace": "default"}
    if by_label:
        meta["labels"] = {k8s.KUEUE_JOB_UID_LABEL: owner_uid}
    else:
        meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "rlsv-r1-train", "uid": owner_uid}]
    return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload", "metadata": meta,
            "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                                       "message": QUOTA_MSG}]}}


def test_suspended_reads_job_and_mpijob_fields():
    assert k8s.suspended(job(0)) and not k8s.suspended(job(0, suspend=False))
    assert k8s.suspended(mpijob(0)) and not k8s.suspended(mpijob(0, suspend=False))
    assert not k8s.suspended({})


def test_no_problem_within_the_grace():
    assert k8s.admission_problem(job(10, conditions=JOB_SUSPENDED), now=NOW, grace_s=45) is None


def test_no_problem_once_admitted():
    assert k8s.admission_problem(job(600, suspend=False), [workload()], now=NOW, grace_s=45) is None


def test_workload_reason_and_queue_after_the_grace():
    problem = k8s.admission_problem(job(50, conditions=JOB_SUSPENDED), [workload()], now=NOW, grace_s=45)
    assert problem["kind"] == "not_admitted" and problem["reason"] == "NotAdmitted"
    assert problem["message"].startswith("not admitted by Kueue (queue team-a) after 50s: ")
    assert "QuotaReserved=False (Pending): " + QUOTA_MSG in problem["message"]
    assert "ClusterQueue" in problem["hint"] and "LocalQueue" in problem["hint"]


def test_workload_found_by_its_job_uid_label():
    problem = k8s.admission_problem(job(50), [workload(by_label=True)], now=NOW, grace_s=45)
    assert QUOTA_MSG in problem["message"]


def test_another_jobs_workload_is_not_used():
    problem = k8s.admission_problem(job(50, conditions=JOB_SUSPENDED), [workload(owner_uid="other")],
                                    now=NOW, grace_s=45)
    assert QUOTA_MSG not in problem["message"]
    assert "Job rlsv-r1-train (JobSuspended: Job suspended)" in problem["message"]
    assert "no Kueue Workload names it" in problem["message"]


def test_without_workloads_read_the_jobs_own_condition():
    problem = k8s.admission_problem(job(50, conditions=JOB_SUSPENDED), None, now=NOW, grace_s=45)
    assert "(JobSuspended: Job suspended)" in problem["message"] and "no Kueue Workload" not in problem["message"]


def test_mpijob_suspended_condition():
    problem = k8s.admission_problem(mpijob(60), [], now=NOW, grace_s=45)
    assert "MPIJob rlsv-r1-nccl (MPIJobSuspended: MPIJob suspended)" in problem["message"]


def test_evicted_workload_is_the_reason():
    evicted = workload()
    evicted["status"]["conditions"] = [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"},
                                       {"type": "Evicted", "status": "True", "reason": "Preempted",
                                        "message": "Preempted to accommodate a higher priority Workload"}]
    problem = k8s.admission_problem(job(90), [evicted], now=NOW, grace_s=45)
    assert "Evicted=True (Preempted): Preempted to accommodate" in problem["message"]


def test_job_state_settles_on_not_admitted_without_pods():
    state = k8s.job_state(job(50, conditions=JOB_SUSPENDED), [], now=NOW, grace_s=45, workloads=[workload()])
    assert state["settled"] and not state["complete"] and not state["failed"]
    assert state["problems"][0]["problem"]["kind"] == "not_admitted"
    assert state["problems"][0]["object"] == "rlsv-r1-train"
    early = k8s.job_state(job(5), [], now=NOW, grace_s=45)
    assert not early["settled"] and early["problems"] == []


def test_mpijob_state_settles_on_not_admitted():
    state = k8s.mpijob_state(mpijob(60), [], now=NOW, grace_s=45, workloads=[])
    assert state["settled"] and state["problems"][0]["problem"]["kind"] == "not_admitted"
    running = k8s.mpijob_state(mpijob(60, suspend=False), [], now=NOW, grace_s=45)
    assert not [p for p in running["problems"] if p["problem"]["kind"] == "not_admitted"]
    assert not k8s.mpijob_state(mpijob(10, suspend=False), [], now=NOW, grace_s=45)["settled"]


def test_jobs_summary_passes_the_workloads():
    summary = k8s.jobs_summary([job(50)], [], grace_s=45, now=NOW, workloads=[workload()])
    assert summary["settled"] and QUOTA_MSG in summary["states"][0]["problems"][0]["problem"]["message"]


def test_admission_summary_waits_then_settles():
    waiting = k8s.admission_summary([job(5)], now=NOW, grace_s=45)
    assert waiting == {"settled": False, "admitted": False, "problems": []}
    admitted = k8s.admission_summary([job(5, suspend=False), job(50, suspend=False)], now=NOW, grace_s=45)
    assert admitted["settled"] and admitted["admitted"] and admitted["problems"] == []
    stuck = k8s.admission_summary([job(50, suspend=False), job(50)], [workload()], now=NOW, grace_s=45)
    assert stuck["settled"] and not stuck["admitted"] and len(stuck["problems"]) == 1
    # Nothing read yet (the create has not shown up): keep waiting.
    assert not k8s.admission_summary([], now=NOW, grace_s=45)["settled"]


def test_log_checks_report_the_admission_problem_without_a_pod():
    state = k8s.job_state(job(50), [], now=NOW, grace_s=45, workloads=[workload()])
    checks = _checks.log_checks("", state, "", {})
    assert len(checks) == 1
    assert checks[0]["name"] == "job" and checks[0]["actual"] == "NotAdmitted"
    assert checks[0]["fail_msg"].startswith("not admitted by Kueue") and "cannot run" not in checks[0]["fail_msg"]
