"""Bad-node isolation from 2-node runs: ring rounds, judging, verification, the round bound."""
import itertools
import math

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils import _isolate as iso


def nodes(n):
    return ["n%02d" % i for i in range(n)]


@pytest.mark.parametrize("n", [2, 3, 4, 5, 16, 17, 64, 256])
def test_ring_rounds_cover_every_neighbour_pair_and_no_node_twice_per_round(n):
    ns = nodes(n)
    rounds = iso.ring_rounds(ns)
    pairs = [p for r in rounds for p in r]
    want = {frozenset((ns[i], ns[(i + 1) % n])) for i in range(n)}
    assert {frozenset(p) for p in pairs} == want
    for r in rounds:
        used = [x for p in r for x in p]
        assert len(used) == len(set(used))
    assert len(rounds) <= 3
    assert len(rounds) + 1 <= iso.round_bound(n)


def bandwidths(ns, bad=(), crashed=(), good=96.0, degraded=40.0):
    """Pair results as a cluster with `bad` nodes would give them (min of the two nodes' speeds)."""
    out = []
    for r in iso.ring_rounds(ns):
        for a, b in r:
            out.append(result(a, b, bad, crashed, good, degraded))
    return out


def result(a, b, bad=(), crashed=(), good=96.0, degraded=40.0):
    if a in crashed or b in crashed:
        return {"pair": [a, b], "busbw_gbps": None, "crashed": True, "error": "Caught signal 11"}
    return {"pair": [a, b], "busbw_gbps": degraded if (a in bad or b in bad) else good, "crashed": False}


def run(ns, bad=(), crashed=(), floor=None):
    ring = bandwidths(ns, bad, crashed)
    first = iso.judge_pairs(ns, ring, floor)
    plan = iso.verify_round(first["suspects"], first["cleared"]) or []
    verify = [result(a, b, bad, crashed) for a, b in plan]
    return iso.verdict(ns, ring, verify, floor)


def test_a_healthy_cluster_names_no_node():
    out = run(nodes(16))
    assert out["suspects"] == []
    assert len(out["cleared"]) == 16


@pytest.mark.parametrize("n, bad", [(16, {"n07"}), (64, {"n33"}), (64, {"n00"}), (64, {"n63"}),
                                    (64, {"n10", "n40"}), (64, {"n10", "n11"}), (64, {"n10", "n12"}),
                                    (17, {"n16"})])
def test_exactly_the_bad_nodes_are_named_with_high_confidence(n, bad):
    out = run(nodes(n), bad=bad)
    assert {s["node"] for s in out["suspects"]} == bad
    assert all(s["confidence"] == "high" for s in out["suspects"])
    assert out["rounds"] <= iso.round_bound(n)


def test_a_node_whose_nccl_crashes_is_named_with_the_crash_as_evidence():
    out = run(nodes(16), crashed={"n05"})
    assert [s["node"] for s in out["suspects"]] == ["n05"]
    assert any("Caught signal 11" in e for e in out["suspects"][0]["evidence"])


def test_every_pair_of_two_bad_nodes_among_many_exhaustively():
    ns = nodes(12)
    for bad in itertools.combinations(ns, 2):
        out = run(ns, bad=set(bad))
        assert {s["node"] for s in out["suspects"]} == set(bad), bad


def test_the_absolute_floor_catches_a_uniformly_slow_cluster():
    ns = nodes(4)
    ring = [dict(r, busbw_gbps=10.0) for r in bandwidths(ns)]
    judged = iso.judge_pairs(ns, ring, floor_gbps=50.0)
    assert judged["suspects"] == sorted(ns)  # every pair slow: isolation cannot clear anyone
    assert iso.verify_round(judged["suspects"], judged["cleared"]) is None
    out = iso.verdict(ns, ring, None, floor_gbps=50.0)
    assert all(s["confidence"] == "medium" for s in out["suspects"])


def test_slow_pairs_say_why():
    slow = iso.slow_pairs([{"pair": ["a", "b"], "busbw_gbps": 50.0}, {"pair": ["b", "c"], "busbw_gbps": 100.0},
                           {"pair": ["c", "d"], "busbw_gbps": 100.0}, {"pair": ["d", "a"], "busbw_gbps": None}],
                          floor_gbps=None, tolerance=0.15)
    assert slow[("a", "b")] == "busbw 50.0 GB/s, 50% below the median pair (100.0 GB/s)"
    assert slow[("d", "a")] == "no bandwidth in its log"
    assert ("b", "c") not in slow


def test_the_pair_matrix_is_symmetric():
    out = run(nodes(4), bad={"n01"})
    m = out["matrix"]
    assert m["n00"]["n01"] == m["n01"]["n00"] == 40.0


def test_round_bound_and_cost():
    assert iso.round_bound(2) == 3
    assert iso.round_bound(256) == int(math.ceil(math.log2(256))) + 2
    # 16 nodes: 2 ring rounds of 8 pairs, 8 GPUs each node, 60 s per pair
    assert iso.gpu_minutes(2, 60, 8, [8, 8]) == 256.0


def test_bisection_halves():
    assert iso.bisect_halves(nodes(5)) == (["n00", "n01"], ["n02", "n03", "n04"])
