# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""What a run cost: GPU time held by its pods and the money at each instance type's price.

Standard library only. GPU time of a pod = GPUs it requests (``nvidia.com/gpu``, the larger of limits and
requests per container) x the time from its scheduling (``PodScheduled`` condition) to the moment it stopped
holding them: the last container's ``finishedAt`` for a finished pod, its ``deletionTimestamp``, or else the time
the runner last saw it (the runner deletes its pods right after; see docs/reports.md "Cost").

Money = GPU-hours x (instance price per hour / GPUs per instance). Prices come from the instance profiles
(``_profiles.py``: ``price_per_hour_usd``, its source and ``price_as_of``) unless the inventory overrides them
(``validation_prices``: capacity blocks, discounts, other regions)::

    {"p5.48xlarge": {"price_per_hour_usd": 39.33, "source": "capacity block, us-east-1", "as_of": "2026-11-30"}}
"""

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils.gpu import _profiles
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._k8s_status import parse_time

GPU_RESOURCE = "nvidia.com/gpu"


def _int(value):
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return 0


def pod_gpus(pod):
    """GPUs a pod holds: per container the larger of its nvidia.com/gpu limit and request, summed."""
    total = 0
    for container in ((pod.get("spec") or {}).get("containers") or []):
        resources = container.get("resources") or {}
        total += max(_int((resources.get("limits") or {}).get(GPU_RESOURCE)),
                     _int((resources.get("requests") or {}).get(GPU_RESOURCE)))
    return total


def _scheduled_at(pod):
    status = pod.get("status") or {}
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "True":
            when = parse_time(cond.get("lastTransitionTime"))
            if when is not None:
                return when
    return parse_time(status.get("startTime"))


def _released_at(pod, observed_at):
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        ends = [parse_time(((c.get("state") or {}).get("terminated") or {}).get("finishedAt"))
                for c in status.get("containerStatuses") or []]
        ends = [e for e in ends if e is not None]
        if ends:
            return max(ends)
    deleted = parse_time((pod.get("metadata") or {}).get("deletionTimestamp"))
    if deleted is not None:
        return min(deleted, observed_at) if observed_at is not None else deleted
    return observed_at


def pod_hold(pod, observed_at):
    """{pod, node, gpus, seconds, gpu_seconds} for a pod that held GPUs, else None."""
    if not isinstance(pod, dict):
        return None
    gpus = pod_gpus(pod)
    start = _scheduled_at(pod)
    if not gpus or start is None:
        return None
    end = _released_at(pod, observed_at)
    if end is None:
        return None
    seconds = max(float(end) - start, 0.0)
    meta = pod.get("metadata") or {}
    return {"pod": meta.get("name", ""), "uid": meta.get("uid") or meta.get("name", ""),
            "role": (meta.get("labels") or {}).get("training.kubeflow.org/job-role") or "",
            "node": (pod.get("spec") or {}).get("nodeName") or "", "gpus": gpus,
            "seconds": round(seconds, 1), "gpu_seconds": round(seconds * gpus, 1)}


def _unseen_workers(mpijob, holds, observed_at, node_types):
    """Workers of an MPIJob that were gone before the runner saw them (the operator deletes running workers when
    the launcher ends, cleanPodPolicy: Running): each held its GPUs from the MPIJob's start to its completion."""
    spec = (mpijob.get("spec") or {})
    worker = ((spec.get("mpiReplicaSpecs") or {}).get("Worker") or {})
    replicas = _int(worker.get("replicas"))
    containers = ((worker.get("template") or {}).get("spec") or {}).get("containers") or []
    gpus = pod_gpus({"spec": {"containers": containers}})
    seen = [h for h in holds.values() if h.get("role") == "worker"]
    missing = replicas - len(seen)
    status = mpijob.get("status") or {}
    start = parse_time(status.get("startTime")) or parse_time((mpijob.get("metadata") or {}).get("creationTimestamp"))
    end = parse_time(status.get("completionTime"))
    if end is None:
        ends = [parse_time(c.get("lastTransitionTime")) for c in status.get("conditions") or []
                if c.get("type") in ("Succeeded", "Failed") and c.get("status") == "True"]
        end = max([e for e in ends if e is not None] or [observed_at])
    if missing <= 0 or not gpus or start is None or end is None:
        return []
    types = sorted(set(node_types.values()))
    node = "" if len(types) != 1 else [n for n, t in sorted(node_types.items()) if t == types[0]][0]
    seconds = max(float(end) - start, 0.0)
    return [{"pod": "worker-%d (from the MPIJob's status)" % i, "uid": "mpijob-worker-%d" % i, "node": node,
             "gpus": gpus, "seconds": round(seconds, 1), "gpu_seconds": round(seconds * gpus, 1), "role": "worker"}
            for i in range(missing)]


JOB_LABELS = ("batch.kubernetes.io/job-name", "job-name")


def _of_job(pod, job):
    labels = (pod.get("metadata") or {}).get("labels") or {} if isinstance(pod, dict) else {}
    return any(labels.get(key) == job for key in JOB_LABELS)


def gpu_usage(pods, observed_at, node_types=None, mpijob=None, job=None):
    """GPU time of the pods a level ran, by instance type (node_types: {node name: instance type}).

    The same pod seen in several snapshots counts once, with its longest hold. With an MPIJob, workers the
    runner never saw count from the MPIJob's start to its completion (_unseen_workers). With job, only the pods of
    that batch/v1 Job count (one row per L5/L6 example)."""
    node_types = node_types or {}
    holds = {}
    for pod in pods or []:
        if job and not _of_job(pod, job):
            continue
        hold = pod_hold(pod, observed_at)
        if hold and (hold["uid"] not in holds or hold["gpu_seconds"] > holds[hold["uid"]]["gpu_seconds"]):
            holds[hold["uid"]] = hold
    if isinstance(mpijob, dict) and mpijob:
        for hold in _unseen_workers(mpijob, holds, observed_at, node_types):
            holds[hold["uid"]] = hold
    by_type = {}
    for hold in holds.values():
        itype = str(node_types.get(hold["node"]) or "unknown")
        entry = by_type.setdefault(itype, {"gpu_seconds": 0.0, "nodes": []})
        entry["gpu_seconds"] += hold["gpu_seconds"]
        if hold["node"] and hold["node"] not in entry["nodes"]:
            entry["nodes"].append(hold["node"])
    return _finish({"pods": len(holds), "by_instance_type": by_type})


def _finish(usage):
    total = 0.0
    for entry in usage["by_instance_type"].values():
        entry["gpu_seconds"] = round(entry["gpu_seconds"], 1)
        entry["gpu_minutes"] = round(entry["gpu_seconds"] / 60.0, 2)
        entry["nodes"] = sorted(entry["nodes"])
        total += entry["gpu_seconds"]
    usage["gpu_seconds"] = round(total, 1)
    usage["gpu_minutes"] = round(total / 60.0, 2)
    return usage


def merge_usage(usages):
    """Sum several gpu_usage results (the levels of a run)."""
    out = {"pods": 0, "by_instance_type": {}}
    for usage in usages or []:
        if not isinstance(usage, dict):
            continue
        out["pods"] += int(usage.get("pods") or 0)
        for itype, entry in (usage.get("by_instance_type") or {}).items():
            merged = out["by_instance_type"].setdefault(itype, {"gpu_seconds": 0.0, "nodes": []})
            merged["gpu_seconds"] += float(entry.get("gpu_seconds") or 0.0)
            merged["nodes"] = sorted(set(merged["nodes"]) | set(entry.get("nodes") or []))
    return _finish(out)


def price(instance_type, overrides=None):
    """{instance_type, price_per_hour_usd, gpus, price_per_gpu_hour_usd, source, as_of}; prices None when unknown."""
    overrides = overrides or {}
    itype = _profiles.normalize_type(instance_type)
    try:
        profile = _profiles.get_profile(itype)
    except _profiles.ProfileNotFound:
        profile = None
    info = {"instance_type": itype, "gpus": profile["gpu_count"] if profile else None,
            "price_per_hour_usd": None, "price_per_gpu_hour_usd": None, "source": "", "as_of": None}
    if profile and profile["price_per_hour_usd"] is not None:
        info.update(price_per_hour_usd=profile["price_per_hour_usd"], as_of=profile["price_as_of"],
                    source=profile["sources"].get("price_per_hour_usd", ""))
    override = overrides.get(itype) or overrides.get(instance_type)
    if isinstance(override, dict) and override.get("price_per_hour_usd") is not None:
        info.update(price_per_hour_usd=float(override["price_per_hour_usd"]),
                    source=str(override.get("source") or "validation_prices (inventory)"),
                    as_of=override.get("as_of"))
        if override.get("gpus"):
            info["gpus"] = int(override["gpus"])
    if info["price_per_hour_usd"] is not None and info["gpus"]:
        info["price_per_gpu_hour_usd"] = round(info["price_per_hour_usd"] / float(info["gpus"]), 6)
    elif info["price_per_hour_usd"] is None:
        info["source"] = ("no verified on-demand price for %s: set validation_prices.%s.price_per_hour_usd"
                          % (itype, itype))
    return info


def money(usage, overrides=None):
    """The money of a gpu_usage: {usd (None when a type has no price), by_instance_type: {type: price + usd},
    unpriced: [types]}."""
    usage = usage if isinstance(usage, dict) else {}
    out = {"usd": 0.0, "by_instance_type": {}, "unpriced": []}
    for itype, entry in sorted((usage.get("by_instance_type") or {}).items()):
        info = price(itype, overrides)
        usd = None
        if info["price_per_gpu_hour_usd"] is not None:
            usd = round(float(entry.get("gpu_seconds") or 0.0) / 3600.0 * info["price_per_gpu_hour_usd"], 4)
            out["usd"] += usd
        elif float(entry.get("gpu_seconds") or 0.0) > 0:
            out["unpriced"].append(itype)
        info["usd"] = usd
        info["gpu_minutes"] = entry.get("gpu_minutes")
        out["by_instance_type"][itype] = info
    out["usd"] = None if out["unpriced"] else round(out["usd"], 4)
    return out


def what_if(seconds, instance_type, nodes, overrides=None):
    """The money of holding `nodes` whole instances of `instance_type` for `seconds` (what a failed expensive
    level would have cost for as long as Phase 0 held its GPUs)."""
    info = price(instance_type, overrides)
    info["nodes"] = int(nodes)
    info["seconds"] = round(float(seconds or 0.0), 1)
    info["usd"] = None
    if info["price_per_hour_usd"] is not None:
        info["usd"] = round(info["seconds"] / 3600.0 * info["price_per_hour_usd"] * int(nodes), 4)
    return info


def usd(value):
    """$0.0123 / $1.23 / $1,450 for a person; 'unknown' for None."""
    if value is None:
        return "unknown"
    value = float(value)
    if value < 1:
        return "$%.4f" % value
    if value < 1000:
        return "$%.2f" % value
    return "${:,.0f}".format(value)
