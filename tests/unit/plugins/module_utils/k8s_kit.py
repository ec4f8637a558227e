# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pods, Jobs and their conditions as the API returns them, for the tests of k8s/_k8s_status.py and
workloads/_probe_pods.py (shapes of the Kubernetes API's objects, built field by field)."""

from __future__ import annotations

import datetime
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
RECORDED = REPO / "sim" / "replay" / "recorded" / "h200x1"
SIM_PROBES = REPO / "sim" / "replay" / "probes"

NOW = datetime.datetime(2026, 11, 30, 3, 0, 0, tzinfo=datetime.timezone.utc).timestamp()

UNSCHEDULABLE_MSG = "0/4 nodes are available: 2 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector."
IMAGE_MSG = 'Back-off pulling image "public.ecr.aws/rlstack/train:v9": ErrImagePull: not found'


def stamp(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def waiting(reason, message="", name="main"):
    return {"name": name, "ready": False, "restartCount": 0, "state": {"waiting": {"reason": reason, "message": message}}}


def terminated(exit_code, reason="Error", name="main"):
    return {"name": name, "ready": False, "state": {"terminated": {"exitCode": exit_code, "reason": reason}}}


def running_status(name="main"):
    return {"name": name, "ready": True, "state": {"running": {"startedAt": stamp(NOW - 30)}}}


def make_pod(name="rlsv-run1-l0-infrastructure-abcde", phase="Pending", age_s=120.0, node="", labels=None, conditions=None,
             statuses=None, init_statuses=None, reason=None, message=None):
    status = {"phase": phase, "conditions": list(conditions or [])}
    if statuses is not None:
        status["containerStatuses"] = statuses
    if init_statuses is not None:
        status["initContainerStatuses"] = init_statuses
    if reason is not None:
        status["reason"] = reason
    if message is not None:
        status["message"] = message
    spec = {"containers": [{"name": "main"}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "rlstack-validation", "creationTimestamp": stamp(NOW - age_s),
                         "labels": dict(labels or {})},
            "spec": spec, "status": status}


def ready_pod(name, node="p5-node-1", labels=None, age_s=300.0):
    return make_pod(name, "Running", age_s=age_s, node=node, labels=labels, statuses=[running_status()],
                    conditions=[{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "True"}])


def unschedulable_pod(name, age_s=120.0, labels=None):
    return make_pod(name, "Pending", age_s=age_s, labels=labels,
                    conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": UNSCHEDULABLE_MSG}])


def image_pod(name, age_s=120.0, labels=None, reason="ImagePullBackOff", node="p5-node-2"):
    return make_pod(name, "Pending", age_s=age_s, node=node, labels=labels, statuses=[waiting(reason, IMAGE_MSG)],
                    conditions=[{"type": "PodScheduled", "status": "True"}])


def done_pod(name, phase="Succeeded", labels=None, exit_code=0, node="p5-node-1"):
    return make_pod(name, phase, age_s=600.0, node=node, labels=labels,
                    statuses=[terminated(exit_code, "Completed" if exit_code == 0 else "Error")])


def job(name, *conditions):
    return {"metadata": {"name": name}, "status": {"conditions": [dict(c) for c in conditions]}}


def cond(ctype, status="True", reason="", message=""):
    return {"type": ctype, "status": status, "reason": reason, "message": message}


# A node that stopped posting its status (what the node lifecycle controller sets).
NOT_READY_NODE = {"metadata": {"name": "p5-node-1"},
                  "spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}]},
                  "status": {"conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                                             "message": "Kubelet stopped posting node status."}]}}
