# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Name the bad node(s) of a cluster from 2-node nccl-tests runs (standard library only).

The plan (docs/isolation.md):
1. Ring-neighbour pairs, as two perfect matchings (three when N is odd), so every node is tested
   with both neighbours and every round uses every node at once: (0,1)(2,3)... then (1,2)(3,4)...
2. A pair is slow when it crashed, missed the absolute 2-node floor, or fell more than `tolerance`
   below the median of all pairs (one bad node cannot move the median of N pairs).
3. A node with a fast pair is cleared (a fast pair proves both of its nodes). A node whose every pair
   is slow is a suspect.
4. Verification: each suspect is paired with a cleared node; slow again confirms it, fast clears it
   (this separates a healthy node that sat between two bad neighbours).
5. When no pair is slow although the whole-cluster run failed, the fault only shows at scale:
   bisection runs each half as one job and descends into the slow half.
Rounds: 2-3 for the ring, 1 to verify, or ceil(log2 N) for bisection; never more than ceil(log2 N) + 2.
"""

from __future__ import annotations

import math
import statistics

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as _k8s
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl, _nccl_results

JOB_NAME_LABEL = "training.kubeflow.org/job-name"  # the MPI operator's label on an MPIJob's pods
ROLE_LABEL = "training.kubeflow.org/job-role"
# A pair's launcher only runs mpirun: a round of 32 pairs must not need 64 CPUs off the GPU nodes.
PAIR_LAUNCHER_RESOURCES = {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}


def round_bound(n):
    """The most rounds isolation may take over n nodes: ceil(log2 n) + 2."""
    return int(math.ceil(math.log2(max(int(n), 2)))) + 2


def ring_rounds(nodes):
    """The ring-neighbour pairs of `nodes`, grouped in rounds in which no node appears twice."""
    nodes = list(nodes)
    n = len(nodes)
    if n < 2:
        return []
    if n == 2:
        return [[(nodes[0], nodes[1])]]
    edges = [(nodes[i], nodes[(i + 1) % n]) for i in range(n)]
    rounds = [edges[0::2], edges[1::2]]
    if n % 2:  # the odd ring's last edge shares a node with the first: give it its own round
        last = rounds[0].pop()
        rounds.append([last])
    return [r for r in rounds if r]


def slow_pairs(results, floor_gbps=None, tolerance=0.15):
    """Which pair results are slow. results: [{pair: [a, b], busbw_gbps: float|None, crashed: bool}].

    Returns {(a, b): reason} for the slow ones; a pair without a bandwidth (no table) is slow.
    """
    values = [r["busbw_gbps"] for r in results if r.get("busbw_gbps") is not None and not r.get("crashed")]
    median = statistics.median(values) if values else None
    slow = {}
    for r in results:
        pair = tuple(r["pair"])
        bw = r.get("busbw_gbps")
        if r.get("crashed"):
            slow[pair] = "crashed: %s" % (r.get("error") or "nccl-tests did not finish")
        elif bw is None:
            slow[pair] = "no bandwidth in its log"
        elif floor_gbps is not None and bw < float(floor_gbps):
            slow[pair] = "busbw %.1f GB/s below the 2-node floor %.1f GB/s" % (bw, float(floor_gbps))
        elif median and bw < median * (1.0 - float(tolerance)):
            slow[pair] = "busbw %.1f GB/s, %.0f%% below the median pair (%.1f GB/s)" % (
                bw, 100.0 * (1.0 - bw / median), median)
    return slow


def judge_pairs(nodes, results, floor_gbps=None, tolerance=0.15):
    """Cleared nodes and suspects after the ring rounds: {cleared, suspects, slow, untested}."""
    slow = slow_pairs(results, floor_gbps, tolerance)
    tested = {}
    for r in results:
        for node in r["pair"]:
            tested.setdefault(node, []).append(tuple(r["pair"]))
    cleared = sorted({n for n, pairs in tested.items() if any(p not in slow for p in pairs)})
    suspects = sorted(n for n, pairs in tested.items() if pairs and all(p in slow for p in pairs))
    untested = sorted(set(nodes) - set(tested))
    return {"cleared": cleared, "suspects": suspects, "slow": slow, "untested": untested}


def verify_round(suspects, cleared):
    """Pair every suspect with a different cleared node (round-robin); None when no node is cleared."""
    if not cleared:
        return None
    return [(s, cleared[i % len(cleared)]) for i, s in enumerate(suspects)]


def bisect_halves(nodes):
    """The two halves of a node set for one bisection round."""
    nodes = list(nodes)
    mid = len(nodes) // 2
    return nodes[:mid], nodes[mid:]


def verdict(nodes, ring_results, verify_results=None, floor_gbps=None, tolerance=0.15):
    """The isolation outcome: suspects with evidence and confidence, and the pair matrix.

    Returns {suspects: [{node, confidence, evidence: [..]}], cleared, matrix: {a: {b: busbw}}, rounds}.
    confidence: "high" when a verification pair with a cleared node was slow too, "medium" when every
    pair of the node was slow but no cleared node was left to verify against.
    """
    first = judge_pairs(nodes, ring_results, floor_gbps, tolerance)
    matrix = {}
    for r in list(ring_results) + list(verify_results or []):
        a, b = r["pair"]
        bw = None if r.get("crashed") else r.get("busbw_gbps")
        matrix.setdefault(a, {})[b] = bw
        matrix.setdefault(b, {})[a] = bw
    suspects = []
    cleared = set(first["cleared"])
    verify_slow = slow_pairs(list(ring_results) + list(verify_results or []), floor_gbps, tolerance) \
        if verify_results else {}
    verify_by_node = {}
    for r in verify_results or []:
        verify_by_node[r["pair"][0]] = r
    for node in first["suspects"]:
        evidence = ["%s-%s: %s" % (p[0], p[1], why) for p, why in sorted(first["slow"].items()) if node in p]
        check = verify_by_node.get(node)
        if check is not None:
            pair = tuple(check["pair"])
            if pair in verify_slow:
                evidence.append("verified with healthy %s: %s" % (pair[1], verify_slow[pair]))
                suspects.append({"node": node, "confidence": "high", "evidence": evidence})
            else:
                cleared.add(node)
            continue
        suspects.append({"node": node, "confidence": "medium", "evidence": evidence})
    return {"suspects": suspects, "cleared": sorted(cleared), "matrix": matrix,
            "rounds": len(ring_rounds(nodes)) + (1 if verify_results else 0)}


def gpu_minutes(rounds, seconds_per_pair, gpus_per_node, pairs_per_round):
    """Estimated GPU-minutes of an isolation run: every pair holds 2 nodes' GPUs for its duration."""
    total_pairs = sum(pairs_per_round) if isinstance(pairs_per_round, (list, tuple)) else int(pairs_per_round) * int(rounds)
    return round(total_pairs * 2 * int(gpus_per_node) * float(seconds_per_pair) / 60.0, 1)


# ------------------------------------------------------------------------------------------ the run
# The run as a state machine the playbook drives one round at a time (roles/isolate/tasks/round.yml):
#   state = start(...); while not state["done"]: groups = next_groups(state); ...; state = record(state, results)
# A group is the list of nodes of one MPIJob: two for a pair, half the candidates for a bisection step.


def start(nodes, floor_gbps=None, tolerance=0.15, scale_failure=False):
    """The state before the first round. nodes: node names; scale_failure: the whole-cluster run failed
    (bisection is tried when no pair is slow)."""
    nodes = sorted(dict.fromkeys(str(n) for n in nodes))
    return {"nodes": nodes, "floor_gbps": None if floor_gbps in (None, "") else float(floor_gbps),
            "tolerance": float(tolerance), "scale_failure": bool(scale_failure), "round_bound": round_bound(len(nodes)),
            "phase": "ring" if len(nodes) >= 2 else "done", "ring": ring_rounds(nodes), "ring_index": 0,
            "rounds": 0, "results": [], "candidates": [], "bisection": [], "note": "" if len(nodes) >= 2 else
            "isolation needs at least 2 nodes, the selector matched %d" % len(nodes), "done": len(nodes) < 2}


def next_groups(state):
    """The groups (MPIJobs) of the next round; [] when the run is done. No node is in two groups of a round."""
    if state["done"] or state["rounds"] >= state["round_bound"]:
        return []
    if state["phase"] == "ring":
        return [list(p) for p in state["ring"][state["ring_index"]]]
    if state["phase"] == "verify":
        judged = _judge_ring(state)
        return [list(p) for p in verify_round(judged["suspects"], judged["cleared"]) or []]
    if state["phase"] == "bisect":
        return [list(h) for h in bisect_halves(state["candidates"])]
    return []


def _judge_ring(state):
    ring = [r for r in state["results"] if r.get("phase") == "ring"]
    return judge_pairs(state["nodes"], ring, state["floor_gbps"], state["tolerance"])


def record(state, results):
    """The state after a round: results are the round's group results (pair_results), in next_groups' order."""
    state = dict(state)
    phase = state["phase"]
    state["results"] = list(state["results"]) + [dict(r, phase=phase, round=state["rounds"] + 1) for r in results]
    state["rounds"] += 1
    if phase == "ring":
        state["ring_index"] += 1
        if state["ring_index"] < len(state["ring"]):
            return _bounded(state)
        judged = _judge_ring(state)
        if judged["suspects"] and judged["cleared"] and len(judged["suspects"]) <= len(judged["cleared"]):
            state["phase"] = "verify"
        elif not judged["slow"] and state["scale_failure"] and len(state["nodes"]) >= 4:
            state["phase"], state["candidates"] = "bisect", list(state["nodes"])
        else:
            state["phase"] = "done"
            if judged["suspects"] and not judged["cleared"]:
                state["note"] = ("every pair was slow, so no node could be cleared: the fault is cluster-wide "
                                 "(network, image, configuration) or most nodes are bad")
            elif judged["suspects"]:
                state["note"] = "more suspects than cleared nodes: not verified"
    elif phase == "verify":
        state["phase"] = "done"
    elif phase == "bisect":
        halves = [tuple(r["pair"]) for r in results]
        slow = _slow_groups(results, state["floor_gbps"], state["tolerance"])
        step = {"round": state["rounds"], "groups": [list(h) for h in halves],
                "busbw_gbps": [r.get("busbw_gbps") for r in results], "slow": [list(h) for h in halves if h in slow]}
        state["bisection"] = list(state["bisection"]) + [step]
        if len(slow) == 1:
            state["candidates"] = list(next(iter(slow)))
            if len(state["candidates"]) <= 2:
                state["phase"] = "done"
        else:
            state["phase"] = "done"
            state["note"] = ("bisection: %s, so the fault is not in one half"
                             % ("both halves were slow" if slow else "neither half was slow"))
            state["candidates"] = []
    return _bounded(state)


def _bounded(state):
    if state["phase"] != "done" and state["rounds"] >= state["round_bound"]:
        state["note"] = "stopped at the round bound (%d rounds)" % state["round_bound"]
        state["phase"] = "done"
    state["done"] = state["phase"] == "done"
    return state


def _slow_groups(results, floor_gbps, tolerance):
    """Bisection: a half is slow when it crashed, missed the floor, or is `tolerance` below the other half."""
    values = [r["busbw_gbps"] for r in results if r.get("busbw_gbps") is not None and not r.get("crashed")]
    best = max(values) if values else None
    slow = set()
    for r in results:
        bw = r.get("busbw_gbps")
        if r.get("crashed") or bw is None or (floor_gbps is not None and bw < floor_gbps) \
                or (best and bw < best * (1.0 - tolerance)):
            slow.add(tuple(r["pair"]))
    return slow


def outcome(state):
    """What the run found: suspects [{node, confidence, evidence}], cleared, the pair matrix, every pair's
    result, rounds (and the bound), the bisection steps and a note."""
    ring = [r for r in state["results"] if r.get("phase") == "ring"]
    verify = [r for r in state["results"] if r.get("phase") == "verify"]
    found = verdict(state["nodes"], ring, verify or None, state["floor_gbps"], state["tolerance"])
    slow = slow_pairs(ring + verify, state["floor_gbps"], state["tolerance"])
    pairs = [{"nodes": list(r["pair"]), "round": r["round"], "phase": r["phase"], "busbw_gbps": r.get("busbw_gbps"),
              "crashed": bool(r.get("crashed")), "error": r.get("error") or "", "job": r.get("job") or "",
              "slow": slow.get(tuple(r["pair"]), "") if r["phase"] != "bisect" else ""}
             for r in state["results"]]
    suspects = found["suspects"]
    if state["bisection"] and state["candidates"]:
        steps = ["round %d: %s" % (s["round"], ", ".join(
            "%s..%s (%d nodes) %s" % (g[0], g[-1], len(g), "-" if bw is None else "%.1f GB/s" % bw)
            for g, bw in zip(s["groups"], s["busbw_gbps"]))) for s in state["bisection"]]
        narrowed = "no pair was slow; bisection narrowed the slow half to %s" % ", ".join(state["candidates"])
        suspects = [{"node": n, "confidence": "low", "evidence": [narrowed] + steps} for n in state["candidates"]]
    return {"nodes": len(state["nodes"]), "suspects": suspects, "cleared": found["cleared"] if not suspects or not
            state["bisection"] else [n for n in state["nodes"] if n not in state["candidates"]],
            "matrix": found["matrix"], "pairs": pairs, "rounds": state["rounds"], "round_bound": state["round_bound"],
            "bisection": state["bisection"], "note": state["note"], "floor_gbps": state["floor_gbps"],
            "tolerance": state["tolerance"]}


# ------------------------------------------------------------------------------------------ cost


def estimate(node_count, gpus_per_node, seconds_per_pair):
    """GPU-minutes before the run: expected (the ring rounds plus one verification pair, each pair holding
    2 nodes for seconds_per_pair) and at most (every one of the round_bound rounds using every node)."""
    n = int(node_count)
    ring = ring_rounds(list(range(n)))
    expected_pairs = sum(len(r) for r in ring) + (1 if n >= 3 else 0)
    bound = round_bound(n)
    return {"nodes": n, "gpus_per_node": int(gpus_per_node), "seconds_per_pair": float(seconds_per_pair),
            "round_bound": bound, "ring_rounds": len(ring),
            "gpu_minutes_expected": gpu_minutes(0, seconds_per_pair, gpus_per_node, [expected_pairs]),
            "gpu_minutes_at_most": round(bound * n * int(gpus_per_node) * float(seconds_per_pair) / 60.0, 1)}


def round_gpu_minutes(groups, seconds, gpus_per_node):
    """GPU-minutes a round held: every node of its groups, for the round's wall time (start to last launcher)."""
    return round(sum(len(g) for g in groups) * int(gpus_per_node) * max(float(seconds), 0.0) / 60.0, 2)


# ------------------------------------------------------------------------------------------ the round's jobs


def job_names(groups, run, round_no, index_base=0):
    """The MPIJob name of each group, as runner templates/mpijob.yml.j2 names it (rlsv-<run>-<name>, 40 chars)."""
    return [_k8s.dns_label("rlsv-%s-%s" % (run, group_job(round_no, i + index_base)), 40) for i in range(len(groups))]


def group_job(round_no, index):
    """The `name` given to mpijob.yml.j2 for group `index` of round `round_no`."""
    return "iso-r%d-%d" % (int(round_no), int(index))


def round_jobs(pods, names, grace_s=_k8s.PROBLEM_GRACE_S, now=None):
    """The state of a round's MPIJobs from their pods: {settled, jobs: {name: {launcher, phase, problem, done}}}.

    A job is done when its launcher Succeeded or Failed, or one of its pods is stuck with a problem (an
    unschedulable worker, an image that does not pull) past grace_s. The round is settled when every job is done.
    """
    jobs = {name: {"launcher": "", "phase": "Pending", "exit_code": None, "problem": None, "done": False}
            for name in names}
    for pod in pods or []:
        labels = ((pod.get("metadata") or {}).get("labels") or {})
        name = labels.get(JOB_NAME_LABEL)
        if name not in jobs:
            continue
        state = _k8s.pod_state(pod, now=now, grace_s=grace_s)
        job = jobs[name]
        if labels.get(ROLE_LABEL) == "launcher":
            job["launcher"], job["phase"], job["exit_code"] = state["pod"], state["phase"], state["exit_code"]
            if state["phase"] in ("Succeeded", "Failed"):
                job["done"] = True
        if state["problem"] and (state["problem"]["kind"] != "failed" or labels.get(ROLE_LABEL) == "launcher"):
            job["problem"] = dict(state["problem"], pod=state["pod"])
            job["done"] = True
    return {"settled": all(j["done"] for j in jobs.values()) and bool(jobs), "jobs": jobs}


def pair_results(groups, names, jobs, logs, size_bytes=None):
    """One result per group: {pair, job, busbw_gbps, crashed, error}. logs: the launchers' logs in the order
    of names (text or k8s_log results), or rlstack.validation.pod_logs entries of the launchers. busbw is the
    launcher log's bus bandwidth at size_bytes (the floor's size), else at its largest size; a launcher that
    did not succeed counts as crashed, with its first failure signature (or its pod problem) as the error."""
    out = []
    logs = list(logs or [])
    if logs and all(isinstance(entry, dict) and "labels" in entry for entry in logs):
        # rlstack.validation.pod_logs entries, in pod-name order: each MPIJob's by its launcher's job-name label
        by_job = {(entry.get("labels") or {}).get(JOB_NAME_LABEL): entry.get("log") or "" for entry in logs}
        logs = [by_job.get(name, "") for name in names]
    for group, name, log in zip(groups, names, logs + [""] * (len(names) - len(logs))):
        if isinstance(log, dict):  # a registered k8s_log result (skipped: no launcher, so no log)
            log = log.get("log") or ""
        job = (jobs or {}).get(name) or {}
        parsed = _nccl.parse_text(log or "") if log else None
        bw = None
        if parsed is not None:
            bw = _nccl_results.busbw_at_size(parsed, int(size_bytes)) if size_bytes else None
            if bw is None:
                bw = parsed.get("busbw_at_largest_size")
        sigs = [s for s in (parsed or {}).get("signatures") or [] if s.get("id") not in _SOFT]
        crashed = job.get("phase") != "Succeeded" or bool(job.get("problem"))
        error = ""
        if crashed:
            if sigs:
                error = "%s: %s" % (sigs[0]["id"], str(sigs[0].get("line") or "").strip()[:200])
            elif job.get("problem"):
                error = "%s: %s" % (job["problem"].get("reason"), job["problem"].get("message"))
            else:
                error = "launcher %s, exit code %s" % (job.get("phase") or "not started", job.get("exit_code"))
        out.append({"pair": list(group), "job": name, "busbw_gbps": None if bw is None else float(bw),
                    "crashed": crashed, "error": error})
    return out


_SOFT = ("nccl_warn", "socket_fallback")


# ------------------------------------------------------------------------------------------ the offer


ISOLATE_CHECK_SUFFIXES = ("_busbw_", "_complete", "_signature_")


def offer(levels, node_count, min_nodes=3):
    """Whether a failed L3/Phase 0 row calls for isolation: a failed nccl_tests busbw, completeness or
    signature check, or a failed MPIJob, with at least min_nodes GPU nodes (two nodes cannot be told apart).
    levels: level_assert results. Returns {offer, why: [check names]}."""
    why = []
    for result in levels or []:
        if not isinstance(result, dict) or result.get("status") != "FAIL":
            continue
        for chk in result.get("checks") or []:
            name = str(chk.get("name") or "")
            if chk.get("passed", True):
                continue
            if name == "mpijob" or (name.startswith("nccl_tests") and any(s in name for s in ISOLATE_CHECK_SUFFIXES)):
                why.append("%s %s" % (result.get("level") or result.get("id") or "", name))
    return {"offer": bool(why) and int(node_count) >= int(min_nodes), "why": why}


# ------------------------------------------------------------------------------------------ what the role calls


def plan(node_info, settings):
    """The isolation run before its first round: the state, the cost estimate and what each pair runs.

    node_info: the GPU nodes ({node, instance_type, gpus, efa}: the runner's gpu_nodes); settings: {image,
    floor_gbps (0: the instance profile's 2-node floor), size (where busbw is read), tolerance,
    seconds_per_pair, nodes (names to keep; [] = all), scale_failure, network}.
    """
    from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks, _verdict
    from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads
    settings = dict(settings or {})
    keep = [str(n) for n in settings.get("nodes") or []]
    info = [dict(n) for n in node_info or [] if not keep or n.get("node") in keep]
    info.sort(key=lambda n: n.get("node") or "")
    base = _workloads.nccl_mpijob(info[:2], "iso", str(settings.get("image") or ""), [], settings.get("network") or [], 0.0)
    profile_floor = (base["expect"].get("min_busbw") or [{}])[0]
    size = settings.get("size") or profile_floor.get("size") or "1GiB"
    floor = float(settings.get("floor_gbps") or 0) or profile_floor.get("floor")
    gpus = int(base["mpijob"]["gpus_per_worker"])
    state = start([n["node"] for n in info], floor, float(settings.get("tolerance", 0.15)),
                  bool(settings.get("scale_failure")))
    state["node_info"] = info
    state["mpijob"] = base["mpijob"]
    state["size_bytes"] = _verdict.parse_size(size)
    state["gpu_minutes"] = 0.0
    missing = sorted(set(keep) - {n["node"] for n in info})
    if missing:  # bad input: one sentence, and nothing is created
        state["note"] = ("isolate_nodes names %s, which the node selector does not match; nothing was run"
                         % ", ".join(missing))
        state["done"], state["phase"] = True, "done"
    return {"state": state, "estimate": estimate(len(info), gpus, float(settings.get("seconds_per_pair") or 90)),
            "missing": missing}


def next_round(state, run, scripts_configmap):
    """The next round's MPIJobs: {groups, names, mpijobs (each runner_mpijob for templates/mpijob.yml.j2)}."""
    groups = next_groups(state)
    round_no = state["rounds"] + 1
    names = job_names(groups, run, round_no)
    mpijobs = []
    for index, group in enumerate(groups):
        job = dict(state["mpijob"], name=group_job(round_no, index), workers=len(group), node_names=list(group),
                   scripts_configmap=scripts_configmap, launcher_resources=PAIR_LAUNCHER_RESOURCES)
        mpijobs.append(job)
    selector = "%s in (%s)" % (JOB_NAME_LABEL, ",".join(names)) if names else ""
    return {"round": round_no, "groups": groups, "names": names, "mpijobs": mpijobs, "selector": selector}


def record_round(state, planned, jobs, logs, seconds):
    """The state after a round: its pair results judged in, and the GPU-minutes its nodes were held."""
    results = pair_results(planned["groups"], planned["names"], (jobs or {}).get("jobs") or {}, logs,
                           state.get("size_bytes"))
    new = record(state, results)
    new["gpu_minutes"] = round(float(state.get("gpu_minutes") or 0.0) + round_gpu_minutes(
        planned["groups"], seconds, state["mpijob"]["gpus_per_worker"]), 2)
    return new
