"""Bad-node isolation from 2-node runs: ring rounds, judging, verification, the round bound."""
import itertools
import math

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.fleet import _isolate as iso


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


# ------------------------------------------------------------------------------------------ the run, round by round
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[4]
HEALTHY_LOG = (REPO / "sim" / "replay" / "logs" / "l3-efa-healthy.log").read_text()
CRASH_LOG = (REPO / "sim" / "replay" / "logs" / "l3-nccl-crash.log").read_text()


def drive(ns, bad=(), crashed=(), scale_failure=False, slow_halves=None, floor=None):
    """Run the state machine as the role does, answering each group as such a cluster would."""
    state = iso.start(ns, floor, 0.15, scale_failure)
    seen_rounds = 0
    while not state["done"]:
        groups = iso.next_groups(state)
        assert groups, state
        used = [n for g in groups for n in g]
        assert len(used) == len(set(used)), "a node in two MPIJobs of one round"
        results = []
        for g in groups:
            if slow_halves is not None and state["phase"] == "bisect":
                results.append({"pair": g, "busbw_gbps": 40.0 if slow_halves & set(g) else 96.0, "crashed": False})
            else:
                results.append(result(g[0], g[1], bad, crashed))
        state = iso.record(state, results)
        seen_rounds += 1
        assert seen_rounds <= iso.round_bound(len(ns))
    return iso.outcome(state)


@pytest.mark.parametrize("n, bad", [(8, {"n05"}), (16, {"n07"}), (64, {"n41"}), (64, {"n10", "n50"}), (7, {"n06"})])
def test_the_run_names_exactly_the_bad_nodes_within_the_bound(n, bad):
    out = drive(nodes(n), bad=bad)
    assert {s["node"] for s in out["suspects"]} == bad
    assert all(s["confidence"] == "high" for s in out["suspects"])
    assert out["rounds"] <= out["round_bound"] == iso.round_bound(n)
    assert set(out["cleared"]) == set(nodes(n)) - bad
    phases = [p["phase"] for p in out["pairs"]]
    assert phases.count("verify") == len(bad)


def test_a_healthy_run_takes_the_ring_rounds_only_and_names_none():
    out = drive(nodes(16))
    assert out["suspects"] == [] and out["rounds"] == 2 and len(out["pairs"]) == 16


def test_a_crash_is_named_with_its_error():
    out = drive(nodes(16), crashed={"n03"})
    assert [s["node"] for s in out["suspects"]] == ["n03"]
    assert out["matrix"]["n03"]["n02"] is None
    assert any(p["crashed"] and "signal 11" in p["error"] for p in out["pairs"])


def test_bisection_finds_a_fault_that_only_shows_at_scale():
    ns = nodes(16)
    out = drive(ns, scale_failure=True, slow_halves={"n13"})
    assert [p["phase"] for p in out["pairs"]].count("bisect") >= 2
    assert "n13" in {s["node"] for s in out["suspects"]}
    assert len(out["suspects"]) <= 2 and all(s["confidence"] == "low" for s in out["suspects"])
    assert out["rounds"] <= out["round_bound"]


def test_bisection_stops_when_neither_half_is_slow():
    out = drive(nodes(16), scale_failure=True, slow_halves=set())
    assert out["suspects"] == [] and "neither half" in out["note"]


def test_no_bisection_without_a_failed_whole_cluster_run():
    out = drive(nodes(16), scale_failure=False, slow_halves={"n13"})
    assert out["suspects"] == [] and out["rounds"] == 2


def test_fewer_than_two_nodes_is_one_sentence_and_no_round():
    state = iso.start(["only"])
    assert state["done"] and iso.next_groups(state) == [] and "at least 2 nodes" in state["note"]


def test_the_round_bound_stops_the_run():
    state = dict(iso.start(nodes(4), scale_failure=True), round_bound=1)
    state = iso.record(state, [result(a, b) for a, b in iso.next_groups(state)])
    assert state["done"] and "round bound" in state["note"]


def test_estimate_before_the_run():
    est = iso.estimate(16, 8, 90)
    # 16 ring pairs + 1 verification pair, 2 nodes x 8 GPUs each, 90 s
    assert est["gpu_minutes_expected"] == round(17 * 2 * 8 * 90 / 60.0, 1)
    assert est["gpu_minutes_at_most"] == round(6 * 16 * 8 * 90 / 60.0, 1)
    assert est["round_bound"] == 6 and est["ring_rounds"] == 2


def pod(name, job, role, phase, node="", exit_code=None):
    status = {"phase": phase}
    if exit_code is not None:
        status["containerStatuses"] = [{"state": {"terminated": {"exitCode": exit_code}}}]
    return {"metadata": {"name": name, "creationTimestamp": "2026-12-01T00:00:00Z",
                         "labels": {iso.JOB_NAME_LABEL: job, iso.ROLE_LABEL: role}},
            "spec": {"nodeName": node}, "status": status}


def test_round_jobs_settle_when_every_launcher_ended():
    pods = [pod("a-launcher", "a", "launcher", "Succeeded"), pod("a-worker-0", "a", "worker", "Running", "n0"),
            pod("b-launcher", "b", "launcher", "Running")]
    state = iso.round_jobs(pods, ["a", "b"], grace_s=3600)
    assert not state["settled"] and state["jobs"]["a"]["done"] and not state["jobs"]["b"]["done"]
    pods[2] = pod("b-launcher", "b", "launcher", "Failed", exit_code=139)
    state = iso.round_jobs(pods, ["a", "b"], grace_s=3600)
    assert state["settled"] and state["jobs"]["b"]["exit_code"] == 139


def test_pair_results_read_busbw_at_the_floor_size_from_real_logs():
    jobs = {"a": {"phase": "Succeeded", "launcher": "a-launcher"}, "b": {"phase": "Failed", "exit_code": 139}}
    out = iso.pair_results([["n0", "n1"], ["n2", "n3"]], ["a", "b"], jobs,
                           [{"log": HEALTHY_LOG}, {"log": CRASH_LOG}], 1 << 30)
    assert out[0] == {"pair": ["n0", "n1"], "job": "a", "busbw_gbps": 313.29, "crashed": False, "error": ""}
    assert out[1]["crashed"] and "Caught signal 11" in out[1]["error"]
    skipped = iso.pair_results([["n0", "n1"]], ["c"], {}, [{"skipped": True}], 1 << 30)
    assert skipped[0]["crashed"] and skipped[0]["busbw_gbps"] is None


def test_pair_results_find_each_jobs_log_among_pod_logs_entries():
    """rlstack.validation.pod_logs returns the launchers in pod-name order, not in the round's order."""
    jobs = {"b": {"phase": "Succeeded"}, "a": {"phase": "Failed", "exit_code": 139}, "c": {"phase": "Pending"}}
    entries = [{"name": "a-launcher", "labels": {iso.JOB_NAME_LABEL: "a"}, "log": CRASH_LOG},
               {"name": "b-launcher", "labels": {iso.JOB_NAME_LABEL: "b"}, "log": HEALTHY_LOG}]
    out = iso.pair_results([["n2", "n3"], ["n0", "n1"], ["n4", "n5"]], ["b", "a", "c"], jobs, entries, 1 << 30)
    assert [o["job"] for o in out] == ["b", "a", "c"]
    assert out[0]["busbw_gbps"] == 313.29 and not out[0]["crashed"]
    assert out[1]["crashed"] and "Caught signal 11" in out[1]["error"]
    assert out[2]["crashed"] and out[2]["busbw_gbps"] is None  # its launcher never started: no entry


def test_next_round_names_the_jobs_as_the_template_does():
    planned = iso.next_round(dict(iso.start(nodes(4)), mpijob={"gpus_per_worker": 8}), "20261201-1", "cm")
    assert planned["names"] == ["rlsv-20261201-1-iso-r1-0", "rlsv-20261201-1-iso-r1-1"]
    assert planned["mpijobs"][0]["node_names"] == ["n00", "n01"] and planned["mpijobs"][0]["workers"] == 2
    assert planned["selector"] == "training.kubeflow.org/job-name in (%s)" % ",".join(planned["names"])


def test_plan_takes_the_profile_floor_and_reports_nodes_not_found():
    info = [{"node": "p5-%d" % i, "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32} for i in range(4)]
    out = iso.plan(info, {"image": "img", "nodes": ["p5-0", "p5-1", "p5-2", "elsewhere"]})
    assert out["state"]["nodes"] == ["p5-0", "p5-1", "p5-2"] and out["missing"] == ["elsewhere"]
    assert out["state"]["done"] and "elsewhere" in out["state"]["note"] and iso.next_groups(out["state"]) == []
    out = iso.plan(info, {"image": "img"})
    assert out["state"]["floor_gbps"] and out["state"]["size_bytes"] == 1 << 30
    assert out["estimate"]["gpus_per_node"] == 8


def test_offer_on_bandwidth_or_crash_with_three_nodes():
    failed = {"status": "FAIL", "level": "L3", "checks": [{"name": "nccl_tests_busbw_1GiB", "passed": False}]}
    other = {"status": "FAIL", "level": "L3", "checks": [{"name": "nccl_tests_network", "passed": False}]}
    assert iso.offer([failed], 3)["offer"] and not iso.offer([failed], 2)["offer"]
    assert not iso.offer([other], 16)["offer"]
