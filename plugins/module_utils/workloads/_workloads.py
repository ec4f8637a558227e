# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the levels run (split from _checks.py, the level checks): the nccl-tests MPIJob of a set of nodes and
what its result must show, the command its launcher runs, the L5/L6 example Jobs and a host-run example's result.

Standard library only; expectations come from each node's instance profile (_profiles.py)."""

from __future__ import annotations

import json

try:  # imported as part of the collection
    from ansible_collections.rlstack.validation.plugins.module_utils import _frameworks
except ImportError:  # pragma: no cover - only when the file is used on its own
    _frameworks = None
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._k8s_status import INSTANCE_TYPE_LABEL
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._checks import _profile


def nccl_mpijob(nodes, name, image, floors, network, tolerance):
    """The nccl-tests MPIJob for these nodes and what its result must show, from their instance profile."""
    nodes = list(nodes or [])
    first = nodes[0] if nodes else {}
    itype = first.get("instance_type", "")
    prof = _profile(itype) or {}
    gpus = int(first.get("gpus") or prof.get("gpu_count") or 1)
    efa = int(first.get("efa") or 0)
    rdma = bool(prof.get("fi_efa_use_device_rdma") or prof.get("rdma_capable"))
    max_bytes = "16G" if rdma and (prof.get("max_message_bytes") or 0) >= (16 << 30) else "1G"
    floor = prof.get("busbw_floor") or {}
    if not floors and floor.get("floor_gbps"):
        floors = [{"size": floor.get("size_bytes") or floor.get("size"), "floor": floor["floor_gbps"]}]
    mpijob = {"name": name + "-nccl", "workers": len(nodes), "gpus_per_worker": gpus, "efa_per_worker": efa,
              "node_selector": {INSTANCE_TYPE_LABEL: itype} if itype else {},
              "image": image, "rdma": rdma, "min_bytes": "8", "max_bytes": max_bytes}
    expect = {"network": list(network or (["efa"] if efa > 0 else [])), "nranks": len(nodes) * gpus,
              "min_busbw": list(floors or []), "tolerance": float(tolerance or 0.0), "require_complete": True}
    if efa > 0 and "efa" in [str(n).strip().lower() for n in expect["network"]]:
        # the transport proof: what aws-ofi-nccl must report on this type (docs/verdicts.md)
        expect["transport"] = {"instance_type": itype, "provider": "efa", "nics": efa,
                               "protocol": prof.get("ofi_protocol"), "gdrdma": bool(prof.get("gdr_required"))}
    return {"mpijob": mpijob, "expect": expect, "instance_type": itype}


def nccl_launcher(mpijob):
    """What the nccl-tests launcher runs, for the MPIJob (templates/mpijob.yml.j2) and the TrainJob
    (_trainjob.definition) alike: {np, env, args}. Open MPI's mpirun over np = workers x GPUs ranks, each
    rank through files/nccl_tests_json.sh (mounted at /opt/rlstack), every variable of env passed with -x.
    FI_EFA_USE_DEVICE_RDMA=1 only on RDMA-capable types: libfabric aborts with it on g5/g6."""
    job = dict(mpijob or {})
    np = int(job.get("workers") or 1) * int(job.get("gpus_per_worker") or 1)
    env = {"NCCL_DEBUG": "INFO", "FI_PROVIDER": "efa", "FI_EFA_FORK_SAFE": "1", "NCCL_NVLS_ENABLE": "0"}
    if job.get("rdma"):
        env["FI_EFA_USE_DEVICE_RDMA"] = "1"
    env.update({str(k): str(v) for k, v in (job.get("extra_env") or {}).items()})
    args = ["--allow-run-as-root", "--tag-output", "-np", str(np), "-bind-to", "none", "-map-by", "slot"]
    for key in env:
        args += ["-x", key]
    args += ["/bin/sh", "/opt/rlstack/nccl_tests_json.sh",
             "/opt/nccl-tests/build/" + str(job.get("test") or "all_reduce_perf"),
             "-b", str(job.get("min_bytes") or "8"), "-e", str(job.get("max_bytes") or "1G"),
             "-f", "2", "-g", "1", "-c", "1", "-n", str(job.get("iters") or 20)]
    return {"np": np, "env": env, "args": args}


def example_job(example, mode, nodes, image, deadline_s, simulator_env=None):
    """The Job (runner templates/job.yml.j2 `runner_job`) that runs one example for L5 (mode train) or
    L6 (mode eval): the framework contract's one-step or eval-only overrides plus the example's own,
    appended to the command or in the variable its launcher reads (_frameworks.launch), the
    simulator's environment, and all GPUs/EFA devices of a node by default. Without a node_selector of its
    own the Job is kept to the instance type of the run's GPU nodes, as the nccl-tests MPIJob is: a cluster's
    other GPU nodes (Phase 0's g6 group) would otherwise take it, and its PASS would not be about the nodes
    L0-L4 checked (seen on a lent GPU machine, 2026-12-05: two L5 Jobs ran on the simulated g6 nodes)."""
    example = dict(example or {})
    launched = _frameworks.launch(example.get("framework") or "custom", mode, example)
    first = (nodes or [{}])[0] if nodes else {}
    itype = first.get("instance_type") or ""
    env = dict(simulator_env or {})
    env.update(example.get("env") or {})
    env.update(launched["env"])
    return {"name": "%s-%s" % (mode, example.get("name", "")), "example": example.get("name", ""),
            "image": example.get("image") or image, "command": launched["command"],
            "args": launched["args"], "env": env, "launched": launched,
            "gpus": example.get("gpus") if example.get("gpus") is not None else (first.get("gpus") or 1),
            "efa": example.get("efa") if example.get("efa") is not None else (first.get("efa") or 0),
            "node_selector": dict(example.get("node_selector") or {}) or (
                {INSTANCE_TYPE_LABEL: itype} if itype else {}),
            "nodes": int(example.get("nodes") or 1), "worker_command": example.get("worker_command"),
            "deadline_s": int(deadline_s)}


def host_job_result(result):
    """One registered run_example.py result (host transport) as jobs_kubernetes.yml's {state, log, log_error}."""
    result = result or {}
    stdout = (result.get("stdout") or "").strip()
    try:
        run = json.loads(stdout.splitlines()[-1]) if stdout else {}
    except ValueError:
        run = {}
    if not isinstance(run, dict) or not run:
        error = result.get("msg") or result.get("stderr") or "run_example.py printed no result"
        return {"state": {"settled": True, "complete": False, "failed": True, "pods": [], "problems": [],
                          "reason": "NotRun", "message": str(error)[:500]}, "log": "", "log_error": str(error)[:500]}
    rc = run.get("rc")
    if run.get("error"):
        reason, message = "NotRun", run["error"]
    elif run.get("timed_out"):
        reason, message = "DeadlineExceeded", "the command ran past its deadline and was stopped"
    elif run.get("stopped"):
        reason, message = "Stopped", "stopped %ss after the line that showed it" % run["stopped"].get("stopped_after_s")
    else:
        reason, message = ("", "") if rc == 0 else ("Error", "the command exited with %s" % rc)
    complete = rc == 0 and not run.get("timed_out") and not run.get("stopped")
    return {"state": {"settled": True, "complete": complete, "failed": not complete, "reason": reason,
                      "message": message, "problems": [],
                      "pods": [{"pod": "host", "exit_code": rc}] if rc is not None else []},
            "log": run.get("log") or "", "log_error": "", "duration_s": run.get("duration_s")}


# The port the head of a multi-node Job listens on for its workers (Ray's GCS, the default of templates/job.yml.j2's
# worker command `ray start --address=$RLSTACK_HEAD_ADDRESS:6379`).
HEAD_PORT = {"name": "ray", "port": 6379}


def head_service(definition):
    """The headless Service a multi-node (Indexed) Job's workers find its head by: the Job's name, labels and owner;
    None for a single-pod Job."""
    if "completionMode" not in ((definition or {}).get("spec") or {}):
        return None
    meta = definition.get("metadata") or {}
    service_meta = {k: meta[k] for k in ("name", "namespace", "labels", "ownerReferences") if k in meta}
    return {"apiVersion": "v1", "kind": "Service", "metadata": service_meta,
            "spec": {"clusterIP": "None", "selector": {"batch.kubernetes.io/job-name": meta.get("name")},
                     "ports": [dict(HEAD_PORT)]}}


def watched_jobs(definitions, described, mode):
    """What the runner's jobs_kubernetes.yml takes for each example's Job: [{name, definition, service, claim, watch}],
    where `definitions` are the rendered objects (templates/jobs.yml.j2: the Jobs, in the order of
    `described`, each followed by its EFA claim template when it has one), `described` the level description's entries
    ({name, example, job}) and `mode` train or eval; `service` is the head Service of a multi-node Job and `claim` its
    ResourceClaimTemplate <job name>-efa (None otherwise), `watch` what job_run needs to stop the Job when its log shows
    the override did not take effect."""
    jobs = [d for d in definitions if (d or {}).get("kind") == "Job"]
    claims = dict((((d.get("metadata") or {}).get("name")), d) for d in definitions
                  if (d or {}).get("kind") == "ResourceClaimTemplate")
    if len(jobs) != len(described):
        raise ValueError("watched_jobs: %d Jobs rendered for %d examples" % (len(jobs), len(described)))
    return [watched_job(definition, entry, mode, claims) for definition, entry in zip(jobs, described)]


def watched_job(definition, described, mode, claims=None):
    """One entry of watched_jobs; `claims` the rendered claim templates by name."""
    job = described.get("job") or {}
    name = ((definition or {}).get("metadata") or {}).get("name")
    return {"name": described.get("name"), "definition": definition, "service": head_service(definition),
            "claim": (claims or {}).get("%s-efa" % name),
            "watch": {"name": name,
                      "framework": (described.get("example") or {}).get("framework") or "custom",
                      "mode": mode, "launched": job.get("launched") or {}}}
