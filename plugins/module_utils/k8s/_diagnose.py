# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real cause of a pod, Job or MPIJob that did not do what a level waited for, read from the objects'
state, their events and the nodes: one cause, one message, one fix.

Standard library only; plain dicts as kubernetes.core.k8s_info returns them. The texts matched here are the
Kubernetes components' own (file names from kubernetes v1.34): the scheduler's filter reasons
(pkg/scheduler/framework/plugins/noderesources/fit.go "Insufficient %v", tainttoleration
"node(s) had untolerated taint {%s: %s}", nodeunschedulable "node(s) were unschedulable"), the
ResourceQuota admission error ("exceeded quota"), PodSecurity admission ("violates PodSecurity"), a
webhook's denial ("admission webhook %q denied the request"), a ValidatingAdmissionPolicy's
("ValidatingAdmissionPolicy '%s' with binding '%s' denied request"), the DisruptionTarget pod condition
(pkg/apis/core/types.go reasons) and the kubelet's eviction (status.reason "Evicted").
"""

from __future__ import annotations

import json
import re

GPU = "nvidia.com/gpu"
EFA = "vpc.amazonaws.com/efa"
NOT_READY_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"

FIXES = {
    "node_not_ready": "the node lost contact with the control plane (kubelet down, network, instance stopped): "
                      "check the node's conditions and the instance in EC2, then run the level again",
    "cordoned": "the node is cordoned (kubectl uncordon NODE when it is healthy), or drain is in progress",
    "insufficient_gpu": "every GPU of the matching nodes is taken: wait for (or stop) the other GPU pods, or add "
                        "nodes; kubectl describe nodes shows the allocated nvidia.com/gpu",
    "insufficient_efa": "the EFA device plugin offers fewer vpc.amazonaws.com/efa than the pod asks: check the "
                        "aws-efa-k8s-device-plugin DaemonSet on the node and the instance type's EFA count",
    "image": "check the image name and tag, that it exists in the registry, and that the nodes may pull it "
             "(ECR pull permissions on the node role, imagePullSecrets)",
    "quota": "a ResourceQuota of the namespace is exhausted: raise it, free what it counts, or use another "
             "namespace (validation_namespace)",
    "pod_security": "the namespace's PodSecurity level refuses the pod (GPU pods run as root; the restricted "
                    "level forbids that): use a namespace whose pod-security.kubernetes.io/enforce label is "
                    "baseline or privileged (validation_namespace)",
    "webhook": "an admission webhook or ValidatingAdmissionPolicy refused the object: read its message; ask the "
               "cluster's owners which policy (Kyverno, Gatekeeper, a ValidatingAdmissionPolicy) it is and what "
               "it requires",
    "suspended": "the Job is suspended: a queue (Kueue) has not admitted it; check the ClusterQueue's quota "
                 "and the Workload of the Job (kubectl get workloads)",
    "evicted": "the pod was evicted while it ran (node pressure, a drain, preemption by a higher-priority pod): "
               "run the level again; if it repeats, check the node's conditions and what preempted it",
    "deleted": "someone or something else deleted the object while the level waited on it (a cleanup script, "
               "another run's cleanup, a namespace deletion, or this run's renewed lease running out when the API "
               "server could not write for longer than validation_renewed_lease_s, which the run says): run the "
               "level again",
    "mpi_operator": "the MPI operator did not act on the MPIJob: check that it runs (kubectl -n mpi-operator "
                    "get pods) and its log; its CRD alone does not start anything",
    "kubelet_unreachable": "the API server could not reach the node's kubelet (port 10250), which serves the "
                           "log: the node may be going NotReady (kubelet down, instance stopped), or a security "
                           "group keeps the control plane from the kubelet port; check the node's conditions, "
                           "then run the level again",
    "log_forbidden": "the collection needs get on pods/log in the run's namespace (docs/security.md)",
    "log_timeout": "the log read did not end in time: the API server or the node's kubelet is overloaded or "
                   "unreachable; check the node, then run the level again",
    "log_other": "the API server did not return the log: read its message, check the node, then run the level "
                 "again",
}

_TAINT = re.compile(r"untolerated taint \{([^:}]+):")
_INSUFFICIENT = re.compile(r"Insufficient ([\w./-]+)")


def _meta(obj):
    return (obj or {}).get("metadata") or {}


def _status(obj):
    return (obj or {}).get("status") or {}


def _condition(obj, ctype):
    for cond in _status(obj).get("conditions") or []:
        if cond.get("type") == ctype:
            return cond
    return None


def node_problem(node):
    """Why a node cannot run the level's pod: (cause, message) or None."""
    name = _meta(node).get("name", "")
    ready = _condition(node, "Ready")
    taints = [t.get("key") for t in ((node or {}).get("spec") or {}).get("taints") or []]
    if (ready and ready.get("status") != "True") or any(t in NOT_READY_TAINTS for t in taints):
        why = (ready or {}).get("message") or (ready or {}).get("reason") or "Ready is not True"
        return "node_not_ready", "node %s is NotReady (%s)" % (name, why)
    if ((node or {}).get("spec") or {}).get("unschedulable"):
        return "cordoned", "node %s is cordoned (spec.unschedulable)" % name
    return None


def scheduler_causes(message):
    """The causes in the scheduler's 'N/M nodes are available: ...' message, most specific first."""
    text = message or ""
    causes = []
    taints = set(_TAINT.findall(text))
    if taints & set(NOT_READY_TAINTS):
        causes.append("node_not_ready")
    if "were unschedulable" in text:
        causes.append("cordoned")
    resources = set(_INSUFFICIENT.findall(text))
    if GPU in resources:
        causes.append("insufficient_gpu")
    if EFA in resources:
        causes.append("insufficient_efa")
    return causes


def admission_cause(message):
    """The cause of an API error or a FailedCreate event that refused a pod or Job: cause or None."""
    text = message or ""
    if "exceeded quota" in text:
        return "quota"
    if "violates PodSecurity" in text:
        return "pod_security"
    if re.search(r"admission webhook \"[^\"]+\" denied the request", text) or \
            re.search(r"ValidatingAdmissionPolicy '[^']+' with binding '[^']+' denied request", text):
        return "webhook"
    return None


def _found(cause, message, evidence=""):
    return {"cause": cause, "message": message, "fix": FIXES[cause], "evidence": evidence}


def diagnose_pod(pod, events=(), nodes=()):
    """The cause of a pod that did not run or did not finish: {cause, message, fix, evidence} or None.

    events are the pod's events; nodes the GPU nodes (the pod's own node is looked up by name).
    """
    meta, status, spec = _meta(pod), _status(pod), (pod or {}).get("spec") or {}
    name = meta.get("name", "")
    by_name = dict((_meta(n).get("name"), n) for n in nodes or [])
    disruption = _condition(pod, "DisruptionTarget")
    if status.get("reason") == "Evicted" or (disruption and disruption.get("status") == "True"):
        why = status.get("message") or (disruption or {}).get("message") or (disruption or {}).get("reason") or ""
        return _found("evicted", "pod %s was evicted: %s" % (name, why), (disruption or {}).get("reason", "Evicted"))
    if meta.get("deletionTimestamp") and status.get("phase") not in ("Succeeded", "Failed"):
        return _found("deleted", "pod %s is being deleted (deletionTimestamp %s) while the level waited on it"
                      % (name, meta["deletionTimestamp"]))
    node = by_name.get(spec.get("nodeName"))
    if node is not None:
        problem = node_problem(node)
        if problem:
            return _found(problem[0], "pod %s is on %s" % (name, problem[1]))
    for cstatus in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        waiting = (cstatus.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"):
            return _found("image", "pod %s cannot pull its image %s: %s" % (
                name, cstatus.get("image", ""), waiting.get("message") or waiting["reason"]), waiting["reason"])
    scheduled = _condition(pod, "PodScheduled")
    texts = [(scheduled or {}).get("message") or ""] + [e.get("message") or "" for e in events or []
                                                        if e.get("reason") == "FailedScheduling"]
    for text in texts:
        causes = scheduler_causes(text)
        if causes:
            # The nodes' own state says which nodes: NotReady and cordoned nodes by name.
            named = [node_problem(n)[1] for n in nodes or [] if node_problem(n)
                     and node_problem(n)[0] == causes[0]]
            # The scheduler's summary without its preemption postscript.
            detail = "; ".join(named) if named else re.split(r"\.\s", text.strip(), maxsplit=1)[0]
            return _found(causes[0], "pod %s cannot be scheduled: %s" % (name, detail), text.strip())
    return None


def diagnose_job(job, pods=(), events=(), nodes=(), pod_events=None):
    """The cause of a Job that did not run or did not finish: {cause, message, fix, evidence} or None.

    pods are the Job's pods; events the Job's events; pod_events {pod name: [events]}.
    """
    meta, spec = _meta(job), (job or {}).get("spec") or {}
    name = meta.get("name", "")
    if job is None or job == {}:
        return _found("deleted", "the Job is gone: it was deleted while the level waited on it")
    if meta.get("deletionTimestamp"):
        return _found("deleted", "Job %s is being deleted (deletionTimestamp %s) while the level waited on it"
                      % (name, meta["deletionTimestamp"]))
    if spec.get("suspend"):
        queue = (meta.get("labels") or {}).get(KUEUE_QUEUE_LABEL)
        return _found("suspended", "Job %s is suspended%s, so it starts no pod" % (
            name, " (Kueue queue %s has not admitted it)" % queue if queue else ""))
    for event in events or []:
        if event.get("reason") == "FailedCreate":
            cause = admission_cause(event.get("message"))
            if cause:
                return _found(cause, "Job %s cannot create its pods: %s" % (name, event.get("message", "").strip()),
                              event.get("message", ""))
    for pod in pods or []:
        found = diagnose_pod(pod, (pod_events or {}).get(_meta(pod).get("name"), ()), nodes)
        if found:
            return found
    return None


def diagnose_mpijob(mpijob, pods=(), age_s=0.0, grace_s=45.0):
    """An MPIJob nobody acted on: the operator records a Created condition and starts a launcher within
    seconds; none after grace_s means it is not running (or watches another namespace)."""
    if mpijob is None or mpijob == {}:
        return _found("deleted", "the MPIJob is gone: it was deleted while the level waited on it")
    if _meta(mpijob).get("deletionTimestamp"):
        return _found("deleted", "MPIJob %s is being deleted while the level waited on it" % _meta(mpijob).get("name"))
    if not _status(mpijob).get("conditions") and not pods and age_s >= grace_s:
        return _found("mpi_operator", "MPIJob %s has no status and no pods after %.0f s: the MPI operator is not "
                      "acting on it" % (_meta(mpijob).get("name", ""), age_s))
    return None


def api_error_text(status, reason, body):
    """One line for an API call the server answered with an error: "HTTP <status>: <the Status message>"
    (the body's `message`, else the reason), in place of the client's multi-line exception text with headers."""
    message = ""
    try:
        parsed = json.loads(body) if body else None
        if isinstance(parsed, dict):
            message = str(parsed.get("message") or "")
    except (TypeError, ValueError):
        message = str(body or "")[:400]
    return "HTTP %s: %s" % (status, (message or reason or "no message").strip())


# A pod's log comes from its node's kubelet (port 10250, path /containerLogs/) through the API server, which
# answers 500 with its own error when it cannot reach the kubelet: a connection error naming the URL (recorded
# from the sim with kwok v0.8.0 paused, tests/unit/fixtures/k8s/kubelet_unreachable_log.json: `Get
# "https://localhost:32763/containerLogs/<ns>/<pod>/main": net/http: TLS handshake timeout`), or, for a node
# whose status lists no address it can use, `no preferred addresses found; known addresses: []` (k8s v1.34.4
# pkg/util/node/node.go). On EKS the URL names the node's IP.
_KUBELET_UNREACHABLE = re.compile(r"containerLogs/|:10250/|dial tcp|TLS handshake timeout|i/o timeout|"
                                  r"connection refused|no route to host|EOF|no preferred addresses found")


def log_read_cause(error, node=""):
    """Why a pod's log could not be read, from pod_logs' error text: (cause, sentence), the cause a FIXES key
    (log_forbidden, deleted, kubelet_unreachable, log_timeout or log_other)."""
    text = (error or "").strip()
    where = " of node %s" % node if node else ""
    if text.startswith("HTTP 403"):
        return "log_forbidden", "reading it is forbidden (%s)" % text
    if text.startswith("HTTP 404"):
        return "deleted", "the pod is gone (%s)" % text
    if re.match(r"HTTP 5\d\d", text) and _KUBELET_UNREACHABLE.search(text):
        return "kubelet_unreachable", "the API server could not reach the kubelet%s (%s)" % (where, text)
    if text.startswith("no answer within"):
        return "log_timeout", text
    return "log_other", text


def diagnose_api_error(message):
    """A create call the API server refused (quota, PodSecurity, webhook): the cause, or None."""
    cause = admission_cause(message)
    if cause is None:
        return None
    return _found(cause, "the API server refused the object: %s" % (message or "").strip()[:400], message)
