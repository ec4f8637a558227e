# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reading Kubernetes objects as the runner waits on them: pods, Jobs, MPIJobs (probe pods: _probe_pods.py).

Standard library only. Every function takes plain dicts (as kubernetes.core.k8s_info returns them)
and returns plain data, so the waits in roles/runner can watch for failure as well as success.
"""

from __future__ import annotations

import calendar
import hashlib
import re
import time

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _diagnose
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _log_excerpt
from ansible_collections.rlstack.validation.plugins.module_utils._limits import PROBLEM_GRACE_S

# The label a GPU node's instance type is read from (gpu_nodes); the MPIJob and the L5/L6 Jobs are kept to that type
# by it (workloads/_workloads.py).
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

TARGET_LABEL = "rlstack.io/target"
# Indexed Jobs (multi-node examples) label each pod with its index; index 0 is the head, judged alone.
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
# sigs.k8s.io/jobset v0.12.0 api/jobset/v1alpha2/jobset_types.go ReplicatedJobNameKey (TrainJob pods)
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
# Waiting reasons that mean the container will not start without someone fixing something.
IMAGE_REASONS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull")
CONFIG_REASONS = ("CreateContainerConfigError", "CreateContainerError", "RunContainerError")
CRASH_REASONS = ("CrashLoopBackOff",)
# Problems that end a wait early: the Job or MPIJob would only fail at its deadline.
SETTLING = ("image", "config", "unschedulable", "crash", "evicted", "deleted", "not_admitted")

HINTS = {
    "image": "check the image name and tag, that it exists in the registry, and that the nodes may pull it "
             "(ECR pull permissions on the node role, imagePullSecrets)",
    "config": "a ConfigMap, Secret or volume the pod needs is missing or invalid; read the event text",
    "crash": "the container exits at start; read its log (kubectl logs --previous)",
    "unschedulable": "no node can take the pod: check the node selector and labels, taints and tolerations, "
                     "cordoned nodes, and free nvidia.com/gpu / vpc.amazonaws.com/efa capacity",
    "failed": "the pod failed; read its log and events",
    "deadline": "the pod ran past its deadline; raise the deadline or find what it waited for",
    "not_admitted": "Kueue has not admitted the workload: check that the LocalQueue named by validation_kueue_queue "
                    "exists in the run's namespace, that its ClusterQueue covers nvidia.com/gpu (and "
                    "vpc.amazonaws.com/efa) with enough free nominalQuota (kubectl describe clusterqueue), and "
                    "that the Kueue controller runs",
}
# Kueue (kubernetes-sigs/kueue pkg/controller/constants/constants.go): the label that puts a Job in a
# LocalQueue, and the label of its Workload that names the Job's uid.
KUEUE_QUEUE_LABEL = _diagnose.KUEUE_QUEUE_LABEL
KUEUE_JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"


def parse_time(text):
    """RFC 3339 (as the API server writes it) to epoch seconds; None when absent or unreadable."""
    if not text:
        return None
    match = re.match(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)", str(text))
    if not match:
        return None
    return float(calendar.timegm(tuple(int(x) for x in match.groups()) + (0, 0, 0)))


def _meta(obj):
    return obj.get("metadata") or {}


def _conditions(obj):
    return (obj.get("status") or {}).get("conditions") or []


def _condition(obj, ctype):
    for cond in _conditions(obj):
        if cond.get("type") == ctype:
            return cond
    return None


def pod_state(pod, now=None, grace_s=PROBLEM_GRACE_S):
    """One pod's state: phase, node, ready, and a problem (kind, reason, message, hint) or None.

    A problem is only reported once it has lasted `grace_s` seconds since the pod was created, so a
    registry hiccup or a node that an autoscaler is still adding does not fail a level; the pod's own
    deadline bounds everything else.
    """
    now = time.time() if now is None else now
    meta = _meta(pod)
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    created = parse_time(meta.get("creationTimestamp")) or now
    age = max(0.0, now - created)
    phase = status.get("phase") or "Pending"
    ready = bool((_condition(pod, "Ready") or {}).get("status") == "True")
    labels = meta.get("labels") or {}
    state = {"pod": meta.get("name", ""), "node": spec.get("nodeName") or "", "phase": phase, "ready": ready,
             "target": labels.get(TARGET_LABEL) or spec.get("nodeName") or "",
             # MPIJob (mpi-operator) or TrainJob (JobSet's replicated job: launcher, node)
             "role": labels.get("training.kubeflow.org/job-role") or labels.get(REPLICATED_JOB_LABEL) or "",
             "index": labels.get(INDEX_LABEL),
             "age_s": round(age, 1), "problem": None, "exit_code": None}
    statuses = (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or [])
    for cstatus in statuses:
        terminated = (cstatus.get("state") or {}).get("terminated")
        if terminated and terminated.get("exitCode") not in (None, 0):
            state["exit_code"] = terminated.get("exitCode")
    problem = None
    evicted = _diagnose.diagnose_pod(pod) if phase in ("Failed", "Pending", "Running") else None
    if evicted is not None and evicted["cause"] in ("evicted", "deleted"):
        # Evicted (kubelet pressure, the Eviction API, a drain, preemption) or deleted by someone else while
        # the level waited: final, whatever the containers did.
        problem = {"kind": evicted["cause"], "reason": evicted["cause"].capitalize(), "message": evicted["message"],
                   "final": True}
    elif phase == "Failed":
        reason = status.get("reason") or "Failed"
        kind = "deadline" if reason == "DeadlineExceeded" else "failed"
        message = status.get("message") or ""
        if state["exit_code"] is not None:
            message = ("container exited with code %s. %s" % (state["exit_code"], message)).strip()
        problem = {"kind": kind, "reason": reason, "message": message}
    elif phase == "Pending":
        for cstatus in statuses:
            waiting = (cstatus.get("state") or {}).get("waiting") or {}
            reason = waiting.get("reason") or ""
            kind = ("image" if reason in IMAGE_REASONS else "config" if reason in CONFIG_REASONS
                    else "crash" if reason in CRASH_REASONS else None)
            if kind:
                problem = {"kind": kind, "reason": reason, "message": waiting.get("message") or ""}
                break
        scheduled = _condition(pod, "PodScheduled")
        if problem is None and scheduled and scheduled.get("status") == "False" \
                and scheduled.get("reason") == "Unschedulable":
            problem = {"kind": "unschedulable", "reason": "Unschedulable", "message": scheduled.get("message") or ""}
            # The scheduler's message says why: NotReady nodes, cordoned nodes, no free GPUs or EFA.
            causes = _diagnose.scheduler_causes(problem["message"])
            if causes:
                problem["cause"] = causes[0]
    elif phase == "Running":
        for cstatus in statuses:
            waiting = (cstatus.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in CRASH_REASONS:
                problem = {"kind": "crash", "reason": waiting["reason"], "message": waiting.get("message") or ""}
    if problem is not None and problem["kind"] == "crash":
        # A crash-looping container is waiting again; its last exit code is in lastState.
        for cstatus in statuses:
            last = (cstatus.get("lastState") or {}).get("terminated") or {}
            if last.get("exitCode") not in (None, 0):
                state["exit_code"] = last["exitCode"]
                problem["message"] = ("last exit code %s. %s" % (last["exitCode"], problem["message"])).strip()
                break
    if problem is not None:
        final = phase == "Failed" or problem.pop("final", False)
        if final or age >= float(grace_s):
            cause = problem.get("cause") or problem["kind"]
            problem["hint"] = _diagnose.FIXES.get(cause) or HINTS[problem["kind"]]
            state["problem"] = problem
    return state


def _probe_stuck(state, pod, start_timeout_s, grace_s, now):
    """A probe pod's problem that only its state shows (want="probes"): still Pending past the start bound, or
    Running but marked not ready by the node lifecycle controller (Ready False while its containers are ready:
    k8s.io/kubernetes pkg/controller/util/node MarkPodsNotReady, when the node stops reporting) past the grace."""
    if state["problem"] is not None:
        return None
    if state["phase"] == "Pending" and start_timeout_s is not None and state["age_s"] >= float(start_timeout_s):
        return {"kind": "start_timeout", "reason": "NotStarted",
                "message": "the pod did not start within %s s" % start_timeout_s,
                "hint": "the node may be out of GPUs or the image pull is slow; check the pod events"}
    ready, containers = _condition(pod, "Ready") or {}, _condition(pod, "ContainersReady") or {}
    if state["phase"] == "Running" and ready.get("status") == "False" and containers.get("status") == "True":
        since = parse_time(ready.get("lastTransitionTime"))
        if since is None or now - since >= float(grace_s):
            return {"kind": "node_not_ready", "reason": "NodeNotReady",
                    "message": "the node lifecycle controller marked the pod not ready: its node stopped reporting",
                    "hint": _diagnose.FIXES["node_not_ready"]}
    return None


def pods_summary(pods, expected=None, grace_s=PROBLEM_GRACE_S, want="running", now=None, start_timeout_s=None,
                 held_until=0.0):
    """Summarise pods for a bounded wait.

    want: "running" (every pod Running and Ready, or Succeeded; any problem settles the wait),
    "finished" (every pod Succeeded, Failed or stuck with a problem: parallel Jobs are each waited for),
    "probes" (as "finished", for pods that all exist before the wait begins, the probe pods: one missing
    from the list was deleted or evicted, and counts as ended, so the wait does not run to its bound),
    "launcher" (an MPIJob: its launcher pod finished, or any pod stuck with a problem).
    With "probes", a pod still Pending after start_timeout_s, or one its node's controller marked not ready
    (see _probe_stuck), is stuck too: the wait ends then, not at its whole bound.
    Returns settled (stop waiting), ok (all as wanted), states, problems, gone (pods missing from the list;
    "probes" only) and a one-line text.
    """
    now = time.time() if now is None else now
    states = [pod_state(p, now=now, grace_s=grace_s) for p in (pods or [])]
    if want == "probes":
        for state, pod in zip(states, pods or []):
            state["problem"] = _probe_stuck(state, pod, start_timeout_s, grace_s, now) or state["problem"]
    if want == "finished":  # of an Indexed Job only the head (index 0) is judged
        states = [s for s in states if s["index"] in (None, "0")]
    expected = len(states) if expected is None else int(expected)
    problems = [s for s in states if s["problem"]]
    gone = max(0, expected - len(states)) if want == "probes" else 0
    if want in ("finished", "probes"):
        # Parallel Jobs may wait for each other's GPUs: Unschedulable only counts once none of them runs, nor ran
        # until a moment ago (held_until: the caller saw a pod on a node then, and the scheduler places a waiting
        # pod some seconds after a GPU is freed, while its Unschedulable condition still stands).
        running = any(s["phase"] == "Running" for s in states) or now < float(held_until or 0)
        problems = [s for s in states if s["problem"] and not (running and s["problem"]["kind"] == "unschedulable")]
        resolved = [s for s in states if s["phase"] in ("Succeeded", "Failed") or s in problems]
        ok = len(states) >= expected > 0 and all(s["phase"] == "Succeeded" for s in states)
        settled = len(resolved) + gone >= expected > 0
    elif want == "launcher":
        launchers = [s for s in states if s["role"] == "launcher"]
        ok = any(s["phase"] == "Succeeded" for s in launchers)
        settled = any(s["phase"] in ("Succeeded", "Failed") for s in launchers) or bool(
            [p for p in problems if p["problem"]["kind"] != "failed" or p["role"] == "launcher"])
    else:
        done = [s for s in states if (s["phase"] == "Running" and s["ready"]) or s["phase"] == "Succeeded"]
        ok = len(done) >= expected > 0 and not problems
        settled = ok or bool(problems)
    counts = {}
    for s in states:
        counts[s["phase"]] = counts.get(s["phase"], 0) + 1
    if gone:
        counts["gone"] = gone
    text = ", ".join("%d %s" % (n, phase) for phase, n in sorted(counts.items())) or "no pods"
    return {"settled": settled, "ok": ok, "expected": expected, "states": states, "problems": problems,
            "gone": gone, "text": "%s of %d expected" % (text, expected)}


# The EFA DRA driver (DRANET) as AWS ships it: aws/eks-charts stable/aws-dranet (image eks/dranet
# v1.2.0-eksbuild.2), templates/deviceclass.yaml selects `device.driver == "dra.net" &&
# device.attributes["dra.net"].pciDevice == 'Elastic Fabric Adapter (EFA)'` into the DeviceClass
# efa.networking.k8s.aws (values.yaml deviceClass.name).
EFA_DRA_DRIVER = "dra.net"
EFA_DRA_DEVICE_CLASS = "efa.networking.k8s.aws"
EFA_DRA_PCI_DEVICE = "Elastic Fabric Adapter (EFA)"


def _attribute(device, driver, name):
    """A device attribute's value: attributes of the driver's own domain may be written with or without it."""
    attrs = device.get("attributes") or {}
    value = attrs.get("%s/%s" % (driver, name), attrs.get(name))
    if isinstance(value, dict):
        for key in ("string", "int", "bool", "version"):
            if key in value:
                return value[key]
    return value


def dra_efa_counts(slices):
    """EFA devices per node from resource.k8s.io/v1 ResourceSlices of the EFA DRA driver: {node: count}.

    Only each pool's newest generation counts (a driver replaces a pool by publishing a higher one), and
    only devices the driver labels as EFA (its other network devices, such as ENA, are left out).
    """
    newest = {}
    for obj in slices or []:
        spec = obj.get("spec") or {}
        if spec.get("driver") != EFA_DRA_DRIVER or not spec.get("nodeName"):
            continue
        pool = spec.get("pool") or {}
        key = (spec["nodeName"], pool.get("name") or "")
        generation = int(pool.get("generation") or 0)
        if key not in newest or generation > newest[key][0]:
            newest[key] = (generation, [])
        if generation == newest[key][0]:
            newest[key][1].append(spec)
    counts = {}
    for (node, _pool), (_gen, specs) in newest.items():
        efa = sum(1 for spec in specs for device in spec.get("devices") or []
                  if _attribute(device, EFA_DRA_DRIVER, "pciDevice") == EFA_DRA_PCI_DEVICE)
        counts[node] = counts.get(node, 0) + efa
    return counts


def efa_request(nodes, device_classes=None):
    """How pods ask for EFA on these nodes: {mode, device_class}. mode "extended": vpc.amazonaws.com/efa (the
    EFA device plugin); "dra": a ResourceClaim of the EFA DRA driver's DeviceClass, when no node advertises
    the extended resource and that DeviceClass exists; "none": neither (the pod requests the extended
    resource, and L0 says why it is missing). `nodes` are Node objects or what gpu_nodes made of them ({node, efa,
    ...}: the runner passes those, a few values per node where an object has hundreds)."""
    mode = "none"
    for node in nodes or []:
        capacity = (node.get("status") or {}).get("capacity") or {"vpc.amazonaws.com/efa": node.get("efa")}
        if str(capacity.get("vpc.amazonaws.com/efa") or "0") not in ("0", ""):
            mode = "extended"
            break
    if mode == "none" and any(_meta(dc).get("name") == EFA_DRA_DEVICE_CLASS for dc in device_classes or []):
        mode = "dra"
    return {"mode": mode, "device_class": EFA_DRA_DEVICE_CLASS}


def suspended(obj):
    """Whether a Job (spec.suspend) or an MPIJob (spec.runPolicy.suspend) is suspended."""
    spec = obj.get("spec") or {}
    return bool(spec.get("suspend") or (spec.get("runPolicy") or {}).get("suspend"))


def _workload_of(obj, workloads):
    uid = _meta(obj).get("uid")
    if not uid:
        return None
    for workload in workloads or []:
        meta = _meta(workload)
        owners = [o.get("uid") for o in meta.get("ownerReferences") or []]
        if uid in owners or (meta.get("labels") or {}).get(KUEUE_JOB_UID_LABEL) == uid:
            return workload
    return None


def admission_problem(obj, workloads=None, now=None, grace_s=PROBLEM_GRACE_S):
    """A problem (kind not_admitted) when a Job or MPIJob has stayed suspended for `grace_s` seconds.

    Kueue keeps a Job suspended until its Workload is admitted, and admits within a second when the
    ClusterQueue has quota; a Job still suspended after the grace is reported instead of waited on to the
    deadline (a suspended Job creates no pods, so no pod problem would ever show). The reason comes from
    the Job's Workload (kueue.x-k8s.io: QuotaReserved or Admitted False, or Evicted True) when it is
    readable, else from the Job's own Suspended condition (Job controller: JobSuspended; MPI operator:
    MPIJobSuspended). None while the object runs or is still within the grace.
    """
    if not suspended(obj):
        return None
    now = time.time() if now is None else now
    created = parse_time(_meta(obj).get("creationTimestamp")) or now
    if now - created < float(grace_s):
        return None
    detail = ""
    workload = _workload_of(obj, workloads)
    if workload is not None:
        for ctype, bad in (("QuotaReserved", "False"), ("Admitted", "False"), ("Evicted", "True")):
            cond = _condition(workload, ctype)
            if cond and cond.get("status") == bad:
                detail = "Workload %s %s=%s (%s): %s" % (_meta(workload).get("name", ""), ctype, bad,
                                                         cond.get("reason") or "", cond.get("message") or "")
                break
    if not detail:
        cond = _condition(obj, "Suspended") or {}
        detail = "%s %s (%s: %s)%s" % (
            obj.get("kind") or "Job", _meta(obj).get("name", ""), cond.get("reason") or "spec.suspend true",
            cond.get("message") or "no controller has resumed it",
            "; no Kueue Workload names it (is Kueue installed, and does it manage this namespace?)"
            if workloads is not None and workload is None else "")
    queue = (_meta(obj).get("labels") or {}).get(KUEUE_QUEUE_LABEL) or ""
    message = "not admitted by Kueue%s after %ds: %s" % (
        " (queue %s)" % queue if queue else "", int(now - created), detail.strip())
    return {"kind": "not_admitted", "reason": "NotAdmitted", "message": message, "hint": HINTS["not_admitted"]}


def _admission_state(obj, problem):
    """An admission problem in the shape of a pod state, so the checks read it like a pod's problem."""
    return {"pod": "", "node": "", "phase": "Suspended", "ready": False, "target": "", "role": "", "index": None,
            "age_s": None, "problem": problem, "exit_code": None, "object": _meta(obj).get("name", "")}


def admission_summary(objs, workloads=None, grace_s=PROBLEM_GRACE_S, now=None):
    """Jobs or MPIJobs waiting for Kueue: settled when all run (admitted) or one is not admitted in time."""
    problems = []
    waiting = 0
    for obj in objs or []:
        if suspended(obj):
            waiting += 1
            problem = admission_problem(obj, workloads, now=now, grace_s=grace_s)
            if problem:
                problems.append(_admission_state(obj, problem))
    admitted = bool(objs) and waiting == 0
    return {"settled": admitted or bool(problems), "admitted": admitted, "problems": problems}


def job_state(job, pods=None, now=None, grace_s=PROBLEM_GRACE_S, workloads=None):
    """A batch/v1 Job: done/failed from its conditions, plus the problems of its pods (seen early), or
    the Job's own admission problem when Kueue has not let it start."""
    conds = {c.get("type"): c for c in _conditions(job) if c.get("status") == "True"}
    failed = conds.get("Failed")
    complete = conds.get("Complete")
    pod_summary = pods_summary(pods or [], expected=None, grace_s=grace_s, want="finished", now=now)
    problems = [s for s in pod_summary["problems"] if s["problem"]["kind"] != "failed" or failed]
    state = {"name": _meta(job).get("name", ""), "complete": bool(complete), "failed": bool(failed),
             "reason": (failed or {}).get("reason") or "", "message": (failed or {}).get("message") or "",
             "pods": pod_summary["states"], "problems": problems}
    # A suspended Job (a queue such as Kueue has not admitted it) starts no pod: said, not waited out.
    if not state["complete"] and not state["failed"] and not pods:
        found = _diagnose.diagnose_job(job)
        if found is not None:
            state.update(reason=found["cause"].capitalize(), message=found["message"], hint=found["fix"])
    # Kueue still holding it back after the grace is a finding of its own, with Kueue's reason.
    admission = admission_problem(job, workloads, now=now, grace_s=grace_s)
    if admission:
        problems.insert(0, _admission_state(job, admission))
    job_pods_outcome(state, job, [pod_state(pod, now=now, grace_s=grace_s) for pod in pods or []])
    # A pod that cannot start (image, scheduling) ends the wait early: the Job itself would only fail at
    # its deadline.
    state["settled"] = state["complete"] or state["failed"] or any(
        p["problem"]["kind"] in SETTLING for p in problems)
    return state


def job_pods_outcome(state, job, pod_states):
    """Take a Job's outcome from its finished pods while the Job controller has not recorded it yet.

    After an API server restart the Job controller can record Complete seconds after the last pod ended
    (its informers reconnect with backoff); the pods already are the outcome: every completion index (or
    spec.completions pods) Succeeded, or a pod Failed with backoffLimit 0. Updates `state` (complete,
    failed, source, reason, message) in place from pod_states (pod_state of each of the Job's pods);
    `source` is "Job status" or "pods".
    """
    state.setdefault("source", "Job status")
    if state["complete"] or state["failed"]:
        return
    spec = job.get("spec") or {}
    completions = int(spec.get("completions") or 1)
    pods = pod_states
    done = [s for s in pods if s["phase"] == "Succeeded"]
    indexed = spec.get("completionMode") == "Indexed"
    succeeded = len({s["index"] for s in done}) if indexed else len(done)
    failed = [s for s in pods if s["phase"] == "Failed"]
    if failed and int(spec.get("backoffLimit", 6)) == 0:
        state.update(failed=True, source="pods", reason="PodFailed",
                     message="pod %s failed%s (the Job's status had not caught up yet)" % (
                         failed[-1]["pod"], "" if failed[-1]["exit_code"] is None
                         else " with exit code %s" % failed[-1]["exit_code"]))
    elif pods and succeeded >= completions and not any(s["phase"] in ("Pending", "Running") for s in pods):
        state.update(complete=True, source="pods")


def launcher_outcome(state, pod_states, kind, role="launcher"):
    """Take the outcome from a finished launcher pod while the controller's status lags it.

    The operator (MPI operator, Kubeflow Trainer) records the outcome after the launcher pod ends and can lag
    it by seconds; with backoffLimit 0 the finished launcher pod already is the outcome, so a lagging status is
    not reported as a hang. Updates `state` (complete, failed, source, reason, message) in place.
    """
    if state["complete"] or state["failed"]:
        return
    launchers = [s for s in pod_states if s["role"] == role and s["phase"] in ("Succeeded", "Failed")]
    if not launchers:
        return
    last = launchers[-1]
    state["complete"] = last["phase"] == "Succeeded"
    state["failed"] = not state["complete"]
    state["source"] = "launcher pod"
    if state["failed"]:
        state["reason"] = "LauncherFailed"
        state["message"] = "launcher pod %s failed%s (the %s's status had not caught up yet)" % (
            last["pod"], "" if last["exit_code"] is None else " with exit code %s" % last["exit_code"], kind)


def mpijob_state(mpijob, pods=None, now=None, grace_s=PROBLEM_GRACE_S, workloads=None):
    """A kubeflow.org/v2beta1 MPIJob: its Succeeded/Failed conditions, plus its pods' problems.

    `source` is "launcher pod" when the outcome was read from the finished launcher pod because the
    operator had not recorded it yet, "MPIJob status" otherwise.
    """
    conds = {c.get("type"): c for c in _conditions(mpijob) if c.get("status") == "True"}
    pod_summary = pods_summary(pods or [], expected=None, grace_s=grace_s, want="running", now=now)
    failed = conds.get("Failed")
    state = {"name": _meta(mpijob).get("name", ""), "created": "Created" in conds, "running": "Running" in conds,
             "complete": "Succeeded" in conds, "failed": bool(failed),
             "reason": (failed or {}).get("reason") or "", "message": (failed or {}).get("message") or "",
             "pods": pod_summary["states"], "problems": pod_summary["problems"], "source": "MPIJob status"}
    launcher_outcome(state, pod_summary["states"], "MPIJob")
    admission = admission_problem(mpijob, workloads, now=now, grace_s=grace_s)
    if admission:
        state["problems"] = [_admission_state(mpijob, admission)] + state["problems"]
    if not state["complete"] and not state["failed"] and mpijob and not admission:
        created = parse_time(_meta(mpijob).get("creationTimestamp"))
        age = (time.time() if now is None else now) - created if created else 0.0
        found = _diagnose.diagnose_mpijob(mpijob, pods or [], age_s=age, grace_s=grace_s)
        if found is not None:
            state.update(failed=True, reason="MPIOperatorNotActing", message=found["message"], hint=found["fix"])
    state["settled"] = state["complete"] or state["failed"] or any(
        p["problem"]["kind"] in SETTLING for p in state["problems"])
    return state


def jobs_summary(jobs, pods, grace_s=PROBLEM_GRACE_S, now=None, workloads=None):
    """Several Jobs at once: each Job's state (its pods found by the job-name label); settled when all are."""
    by_job = {}
    for pod in pods or []:
        labels = _meta(pod).get("labels") or {}
        name = labels.get("batch.kubernetes.io/job-name") or labels.get("job-name")
        by_job.setdefault(name, []).append(pod)
    states = [job_state(job, by_job.get(_meta(job).get("name")), now=now, grace_s=grace_s, workloads=workloads)
              for job in jobs or []]
    _queued_behind_siblings(states)
    return {"settled": bool(states) and all(s["settled"] for s in states), "states": states}


# Scheduler causes of a pod that waits for devices the batch's own pods may hold.
QUEUED_CAUSES = ("insufficient_gpu", "insufficient_efa")
# The phases of a pod bound to a node that still holds the devices it asked for.
HOLDING_PHASES = ("Pending", "Running")


def holds_node(pod):
    """Whether a pod (a Kubernetes dict) holds devices of a node: bound to one and not ended."""
    return bool(((pod or {}).get("spec") or {}).get("nodeName")) and \
        ((pod.get("status") or {}).get("phase") or "Pending") in HOLDING_PHASES


def _queued_behind_siblings(states):
    """A Job whose pods wait for GPUs (or EFA devices) while another Job of the same batch has a pod on a node is
    queued behind it, not stuck: L5/L6 start every example's Job at once, and on fewer GPUs than the examples ask for
    together the scheduler places the rest as the first end (seen on a 1-GPU machine with three examples, 2026-12-06:
    two of them failed as Unschedulable after the grace, told to stop "the other GPU pods", which were their own).
    Such problems are dropped, and the Job is not settled by them, while a sibling holds a node; once none does, the
    next judgement reports them. Updates `states` (job_state results) in place."""
    for state in states:
        queued = [p for p in state["problems"]
                  if p["problem"]["kind"] == "unschedulable" and p["problem"].get("cause") in QUEUED_CAUSES]
        if not queued or state["complete"] or state["failed"]:
            continue
        held = any(pod.get("node") and pod.get("phase") in HOLDING_PHASES
                   for other in states if other is not state for pod in other["pods"])
        if not held:
            continue
        state["problems"] = [p for p in state["problems"] if p not in queued]
        state["queued"] = True
        state["settled"] = any(p["problem"]["kind"] in SETTLING for p in state["problems"])


def pod_hosts(pods):
    """{host name: node name} of `pods` (Kubernetes dicts) bound to a node: the host name a process in the pod prints
    (NCCL's 'host:pid:tid' prefix) is spec.hostname when the pod sets one (the MPI operator sets its workers' and
    launcher's: mpi-operator v0.8.0 pkg/controller/mpi_job_controller.go, podTemplate.Spec.Hostname) and the pod's
    name otherwise, so an NCCL check of a host can name the node it ran on."""
    hosts = {}
    for pod in pods or []:
        if not isinstance(pod, dict):
            continue
        spec = pod.get("spec") or {}
        host = spec.get("hostname") or _meta(pod).get("name")
        if host and spec.get("nodeName"):
            hosts[str(host)] = str(spec["nodeName"])
    return hosts


def dns_label(text, max_len=63):
    """A valid DNS-1123 label from any text (pod and Job names)."""
    label = re.sub(r"[^a-z0-9-]+", "-", str(text).lower()).strip("-")
    label = re.sub(r"-{2,}", "-", label)
    if len(label) > max_len:
        # Keep names unique when they are cut: the end of the text goes into a short hash.
        digest = hashlib.sha1(str(text).encode("utf-8")).hexdigest()[:5]
        if max_len < 7:
            return digest[:max(1, max_len)]
        label = label[:max_len - 6].rstrip("-") + "-" + digest
    return label or "x"


def label_value(text, max_len=63):
    """A valid label value from any text (level ids such as l5_training_step/libero-pi0)."""
    value = re.sub(r"[^A-Za-z0-9_.-]+", ".", str(text))[:max_len]
    return value.strip("._-") or "x"


def _whole(value, default=0):
    """A count as Jinja's `int` filter reads it ("8" -> 8, "8.0" -> 8); `default` when it is not a number."""
    try:
        return int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError):
            return default


def gpu_nodes(nodes, transport="kubernetes", host=None):
    """The GPU nodes the levels run on, sorted by name: [{node, instance_type, gpus, efa}].

    `nodes` are Node objects (kubernetes.core.k8s_info resources); gpus and efa are the allocatable
    nvidia.com/gpu and vpc.amazonaws.com/efa. With any other transport the inventory host is the node:
    `host` = {node, instance_type, gpus, efa} is the only entry.
    """
    if transport != "kubernetes":
        host = host or {}
        return [{"node": host.get("node") or "", "instance_type": host.get("instance_type") or "",
                 "gpus": _whole(host.get("gpus")), "efa": _whole(host.get("efa"))}]
    out = []
    for node in sorted(nodes or [], key=lambda n: _meta(n).get("name") or ""):
        labels = _meta(node).get("labels") or {}
        allocatable = (node.get("status") or {}).get("allocatable") or {}
        out.append({"node": _meta(node).get("name"),
                    "instance_type": labels.get(INSTANCE_TYPE_LABEL, ""),
                    "gpus": _whole(allocatable.get("nvidia.com/gpu", 0)),
                    "efa": _whole(allocatable.get("vpc.amazonaws.com/efa", 0))})
    return out


def daemonset_summary(results):
    """One entry per looked-for DaemonSet: {name, label, namespace, found, desired, ready}.

    `results` are the loop results of a kubernetes.core.k8s_info DaemonSet read, one per item
    {name_contains (a regular expression searched in the DaemonSet names), label, namespace}. desired and
    ready add up status.desiredNumberScheduled and status.numberReady of every DaemonSet that matches.
    `name` is name_contains made into an identifier ("nvidia-device-plugin" -> "nvidia_device_plugin").
    """
    out = []
    for result in results or []:
        item = result.get("item") or {}
        pattern = str(item.get("name_contains") or "")
        found = [ds for ds in result.get("resources") or [] if re.search(pattern, str(_meta(ds).get("name") or ""))]
        status = [ds.get("status") or {} for ds in found]
        out.append({"name": re.sub(r"[^a-z0-9]+", "_", pattern), "label": item.get("label"),
                    "namespace": item.get("namespace"), "found": bool(found),
                    "desired": sum(s.get("desiredNumberScheduled", 0) for s in status),
                    "ready": sum(s.get("numberReady", 0) for s in status)})
    return out


def jobs_gone(names, present, stopped, gone):
    """The Jobs of `names` (the runner created every one before the watch began, and a list reads them back
    consistently) that are not `present` now, that the watch did not stop itself and did not already record as
    gone: deleted by someone else (rlstack.validation.job_run)."""
    return [n for n in names if n not in present and n not in stopped and n not in gone]


def gone_job_state(seen_after_s=None):
    """The state of a Job someone else deleted while the level waited on it (job_run's `gone`), or, without
    seen_after_s, after the wait and before the run read its outcome (the run's renewed lease running out: the
    garbage collector deletes the Jobs of a run whose lease Job failed)."""
    when = ("while the level waited on it, %s s into the wait," % seen_after_s if seen_after_s is not None
            else "after the wait, before the run read its outcome,")
    return {"settled": True, "complete": False, "failed": False, "pods": [],
            "problems": [{"pod": "", "problem": {
                "kind": "deleted", "reason": "Deleted",
                "message": "the Job was deleted %s and not by this run" % when,
                "hint": _diagnose.FIXES["deleted"]}}]}


def job_results(jobs, states, logs, stopped=None, gone=None):
    """{job name: {state, log, log_error}} for the runner's Jobs (runner/tasks/jobs_kubernetes.yml).

    `jobs` are the runner's [{name, definition}]; `states` the `states` of jobs_summary(); `logs` the `pods` of
    rlstack.validation.pod_logs over a pod of each Job (its Job by the pod's job-name label; an entry with
    `item.name`, a loop of kubernetes.core.k8s_log, is read too); `stopped`
    the rlstack.validation.job_run module's {Job name: {log, seen_after_s}} of the Jobs it deleted
    because their log showed the run going past its one step (their state is "Stopped", their log the one
    the watch read); `gone` job_run's {Job name: {seen_after_s}} of the Jobs someone else deleted (their
    state names the deletion, gone_job_state). A Job the API did not return after the wait was deleted then (the
    runner created every one before the wait): gone_job_state too; a Job without a pod gets the log_error that
    says so. Each log comes back redacted: the values of the Job's own
    secret-looking variables and common token shapes (_log_excerpt.py), so no later task, check or report
    holds them.
    """
    by_name = {}
    for state in states or []:
        by_name.setdefault(state.get("name"), state)
    out = {}
    for job in jobs or []:
        kname = _meta(job.get("definition") or {}).get("name")
        secrets = _log_excerpt.secret_values(job_env(job.get("definition") or {}))
        stop = (stopped or {}).get(kname)
        if stop:
            out[job.get("name")] = {
                "state": {"settled": True, "complete": False, "failed": True, "pods": [], "problems": [],
                          "reason": "Stopped", "message": "deleted %ss into the wait" % stop.get("seen_after_s")},
                "log": _log_excerpt.redact(stop.get("log") or "", secrets), "log_error": ""}
            continue
        if kname not in by_name:
            out[job.get("name")] = {"state": gone_job_state(((gone or {}).get(kname) or {}).get("seen_after_s")),
                                    "log": "", "log_error": "the Job was deleted, so there is no log"}
            continue
        state = by_name[kname]
        found = [r for r in logs or [] if _log_job(r) == kname]
        if not found:
            out[job.get("name")] = {"state": state, "log": "",
                                    "log_error": "no pod of the Job was found, so there is no log"}
            continue
        first = found[0]
        out[job.get("name")] = {"state": state, "log": _log_excerpt.redact(first.get("log") or "", secrets),
                                "log_error": first.get("error") or (first.get("msg", "") if first.get("failed") else "")}
    return out


def _log_job(entry):
    """The Job whose pod a log entry is of: pod_logs' entry by its job-name label, a k8s_log loop result by item."""
    labels = entry.get("labels") or {}
    return labels.get("batch.kubernetes.io/job-name") or labels.get("job-name") or (entry.get("item") or {}).get("name")


def job_env(definition):
    """The literal variables ([{name, value}]) of every container of a Job definition (valueFrom has no value)."""
    spec = ((definition.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [e for c in spec.get("containers") or [] for e in c.get("env") or []
            if isinstance(e, dict) and e.get("value") is not None]
