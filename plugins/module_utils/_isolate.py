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
