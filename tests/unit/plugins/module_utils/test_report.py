# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _report as r

SEED_LEVELS = [
    ("l0_infrastructure", "L0", "Infrastructure", 0, 12),
    ("l1_container_build", "L1", "Container Build", 1, 847),
    ("l2_container_test", "L2", "Container Test", 2, 95),
    ("l3_nccl_efa", "L3", "NCCL/EFA", 3, 180),
    ("l4_model_download", "L4", "Model Download", 4, 320),
    ("l5_training_step/a", "L5", "<example-name>", 5, 540),
    ("l5_training_step/b", "L5", "<example-name>", 5, 510),
    ("l5_training_step/c", "L5", "<example-name>", 5, 620),
    ("l6_multi_node", "L6", "Multi-Node", 6, 480),
]

SEED_TABLE = """========================================
VALIDATION RESULTS: eks-p5
========================================
Level   Name                     Status   Time
-----   ------------------------ ------   ----
L0      Infrastructure           PASS     12s
L1      Container Build          PASS     847s
L2      Container Test           PASS     95s
L3      NCCL/EFA                 PASS     180s
L4      Model Download           PASS     320s
L5      <example-name>           PASS     540s
L5      <example-name>           PASS     510s
L5      <example-name>           PASS     620s
L6      Multi-Node               PASS     480s
========================================
9/9 passed in 3604s"""


def level(level_id, lvl, name, order, seconds, status="PASS", checks=None):
    return {"id": level_id, "level": lvl, "name": name, "order": order, "status": status, "reason": "",
            "duration_s": seconds, "checks": checks or [], "nodes": {}, "summary": {}}


def seed_stats():
    plan = [{"id": i, "level": lv, "name": n, "order": o, "selected": True} for i, lv, n, o, _seconds in SEED_LEVELS]
    levels = dict((i, level(i, lv, n, o, s)) for i, lv, n, o, s in SEED_LEVELS)
    return {"eks-p5": {"run_id": "20261130t021500-ab12", "plan": plan, "levels": levels}}


FAILED_CHECK = {"name": "gpu_count", "node": "p5-node-1", "op": "eq", "expected": 8, "actual": 7, "unit": "",
                "passed": False, "message": "gpu_count expected 8, saw 7", "hint": "check XID errors",
                "evidence_missing": False}
PASSED_CHECK = dict(FAILED_CHECK, node="p5-node-0", actual=8, passed=True, message="gpu_count: 8 (expected 8)",
                    hint="")


def failing_stats():
    plan = [
        {"id": "l0_infrastructure", "level": "L0", "name": "Infrastructure", "order": 0, "selected": True},
        {"id": "l1_runtime", "level": "L1", "name": "Runtime", "order": 1, "selected": True},
        {"id": "l3_5_efa", "level": "L3.5", "name": "EFA Validation", "order": 3.5, "selected": False},
    ]
    l0 = level("l0_infrastructure", "L0", "Infrastructure", 0, 12.4, "FAIL", [PASSED_CHECK, FAILED_CHECK])
    l0["reason"] = "p5-node-1: gpu_count expected 8, saw 7 — check XID errors"
    return {"eks-p5": {"run_id": "r1", "plan": plan, "levels": {"l0_infrastructure": l0}}}


def test_seed_table_is_reproduced():
    """Row for row; the footer differs by design: the seed's harness ran the L5 examples one after the other and
    summed its rows (3604 s), here they run side by side, so L5 counts once, its longest row (620 of 540+510+620)."""
    (report,) = r.build_reports(seed_stats())
    table = r.render_table(report)
    assert table[:-1] == SEED_TABLE.splitlines()[:-1]
    assert table[-1] == "9/9 passed in 2554s"
    assert report["levels_duration_s"] == 3604 - 540 - 510
    assert report["status"] == "PASS"


def test_the_footer_counts_a_level_of_several_rows_once():
    """make demo's L5: three examples, each row carrying the level's 9.5 s; the footer said 59 s of a 54-s run."""
    rows = [level("l4_rollout", "L4", "Rollout", 4, 2.6)]
    rows += [level("l5_training_step/%s" % name, "L5", "Training step: %s" % name, 5, 9.5) for name in "abc"]
    rows += [level("l6_evaluation/a", "L6", "Evaluation: a", 6, 5.4)]
    stats = {"plan": [], "levels": dict((row["id"], row) for row in rows)}
    report = r.cluster_report("c", stats)
    assert report["levels_duration_s"] == 17.5
    assert r.render_table(report)[-1] == "5/5 passed in 18s"


def test_failed_level_skips_and_reasons():
    (report,) = r.build_reports(failing_stats())
    lines = r.render_table(report)
    assert lines[5] == "L0      Infrastructure           FAIL     12s"
    assert lines[6] == "        p5-node-1: gpu_count expected 8, saw 7"
    assert lines[7] == "          -> check XID errors"
    assert lines[8] == "L1      Runtime                  SKIPPED  -     not run: L0 failed"
    assert lines[9] == "L3.5    EFA Validation           SKIPPED  -     not selected (--tags)"
    assert lines[-1] == "0/3 passed, 1 failed, 2 skipped in 12s"
    assert report["status"] == "FAIL"


def test_rows_sorted_by_order_and_long_names_widen_the_column():
    stats = {"c": {"plan": [], "levels": {
        "b": level("b", "L5", "Training step libero-pi0-fast-long-name", 5, 1),
        "a": level("a", "L3.5", "EFA Validation", 3.5, 2),
        "z": level("z", "LOCAL", "Local checks", -1, 3),
    }}}
    lines = r.render_table(r.cluster_report("c", stats["c"]))
    assert [line.split()[0] for line in lines[5:8]] == ["LOCAL", "L3.5", "L5"]
    assert lines[7].startswith("L5      Training step libero-pi0-fast-long-name PASS     1s")


def test_selected_level_without_result_marks_the_run_incomplete():
    stats = seed_stats()
    del stats["eks-p5"]["levels"]["l4_model_download"]
    report = r.cluster_report("eks-p5", stats["eks-p5"])
    assert report["incomplete"] == ["l4_model_download"]
    assert report["status"] == "FAIL"
    text = "\n".join(r.render_table(report))
    assert "L4      Model Download           SKIPPED  -     no result" in text
    assert "note: L4 Model Download was selected but has no result" in text


def test_on_a_narrow_terminal_the_no_data_text_wraps_at_a_space():
    """An 80-column tmux window cut it as 'stopped' / ' before planning' (2026-12-07, --tags l7)."""
    lines = r.render_table(r.cluster_report("sim-eks", None), width=80)
    assert lines[3:-1] == ["no validation results were recorded for this cluster: the play failed or stopped",
                           "  before planning (see the task errors above)"]
    assert r.render_table(r.cluster_report("sim-eks", None))[3] == r.NO_DATA


def test_no_data_cluster():
    report = r.cluster_report("eks-g6", None)
    lines = r.render_table(report)
    assert lines[1] == "VALIDATION RESULTS: eks-g6"
    assert lines[3].startswith("no validation results were recorded for this cluster")
    assert report["status"] == "FAIL"


def test_failed_checks_are_capped():
    checks = [dict(FAILED_CHECK, name="check_%d" % i, node="n%d" % i) for i in range(5)]
    stats = {"c": {"levels": {"l0": level("l0", "L0", "Infra", 0, 1, "FAIL", checks)}}}
    lines = r.render_table(r.cluster_report("c", stats["c"]), max_failed_checks=2)
    assert "        ... and 3 more failed checks (see report.json)" in lines


def test_a_check_that_fails_on_many_nodes_is_one_entry_naming_the_others():
    """Every node cordoned, or an image no node can pull: one entry with the first node's message, the other nodes
    named (the first three, then a count) and the fix once, so other failures still fit under the cap."""
    checks = ([dict(FAILED_CHECK, node="p5-node-%d" % i, message="gpu_count expected 8, saw %d" % (i % 8))
               for i in range(256)]
              + [dict(FAILED_CHECK, name="efa_count", node="p5-node-7", message="efa_count expected 32, saw 0",
                      hint="check the EFA device plugin")]
              + [dict(FAILED_CHECK, name="gpu_count", node="p5-node-9", hint="another fix")])
    stats = {"c": {"levels": {"l0": level("l0", "L0", "Infra", 0, 1, "FAIL", checks)}}}
    lines = r.render_table(r.cluster_report("c", stats["c"]), max_failed_checks=2)
    start = lines.index("        p5-node-0: gpu_count expected 8, saw 0")
    assert lines[start + 1:start + 6] == [
        "          gpu_count also failed on 255 more nodes: p5-node-1, p5-node-2, p5-node-3 and 252 more",
        "          -> check XID errors",
        "        p5-node-7: efa_count expected 32, saw 0",
        "          -> check the EFA device plugin",
        "        ... and 1 more failed checks (see report.json)"]


def test_failed_groups_keep_the_order_of_the_first_failure_and_each_cluster_check_alone():
    cluster = dict(FAILED_CHECK, name="gpu_nodes", node="", message="gpu_nodes: 0 (expected >= 1)")
    checks = [PASSED_CHECK, dict(FAILED_CHECK, node="a"), cluster, dict(FAILED_CHECK, node="b"), dict(cluster)]
    groups = r.failed_groups(checks)
    assert [(check["node"], others) for check, others in groups] == [("a", ["b"]), ("", []), ("", [])]
    assert r.also_failed_text(groups[0][0], ["b"]) == "gpu_count also failed on 1 more node: b"


def test_report_json_and_junit(tmp_path):
    reports = r.build_reports(failing_stats(), hosts=["eks-g6"], run_start=1000.0, run_end=1100.0)
    paths = r.write_reports(str(tmp_path / "out"), reports, 1000.0, 1100.0)
    assert [os.path.basename(x) for x in paths] == ["report.json", "junit.xml"]
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["status"] == "FAIL" and doc["duration_s"] == 100.0 and doc["start"] == "1970-01-01T00:16:40Z"
    by_name = dict((c["cluster"], c) for c in doc["clusters"])
    p5 = by_name["eks-p5"]
    assert p5["run_id"] == "r1" and p5["summary"] == {"passed": 0, "failed": 1, "skipped": 2, "total": 3}
    assert [lv["status"] for lv in p5["levels"]] == ["FAIL", "SKIPPED", "SKIPPED"]
    assert p5["levels"][0]["checks"][1]["actual"] == 7
    assert by_name["eks-g6"]["has_data"] is False

    root = ET.parse(str(tmp_path / "out" / "junit.xml")).getroot()
    assert root.tag == "testsuites"
    suites = dict((s.get("name"), s) for s in root.findall("testsuite"))
    p5_suite = suites["eks-p5"]
    assert p5_suite.get("tests") == "5" and p5_suite.get("failures") == "2" and p5_suite.get("skipped") == "2"
    cases = p5_suite.findall("testcase")
    assert cases[0].get("name") == "L0 Infrastructure"
    assert "gpu_count expected 8, saw 7" in cases[0].find("failure").text
    node_case = [c for c in cases if c.get("name") == "p5-node-1: gpu_count"][0]
    assert "hint: check XID errors" in node_case.find("failure").text
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert [c.find("skipped").get("message") for c in skipped] == ["not run: L0 failed", "not selected (--tags)"]
    assert suites["eks-g6"].find("testcase/error") is not None
    assert not [f for f in os.listdir(str(tmp_path / "out")) if f.endswith(".tmp")]


def test_junit_strips_characters_xml_cannot_hold():
    check = dict(FAILED_CHECK, message="bad \x1b[31mred\x1b[0m \x00 text")
    stats = {"c": {"levels": {"l0": level("l0", "L0", "Infra", 0, 1, "FAIL", [check])}}}
    text = r.junit_xml(r.build_reports(stats))
    ET.fromstring(text.encode("utf-8"))


def test_plain_turns_mappings_and_subclasses_into_builtins():
    class Tagged(str):
        pass

    value = r.plain({"a": (1, Tagged("x")), 2: {"b": None}})
    assert value == {"a": [1, "x"], "2": {"b": None}}
    assert value["a"][1].__class__ is str  # exactly str, not the subclass


def _usage(itype, node, gpu_seconds):
    return {"pods": 1, "gpu_seconds": gpu_seconds, "gpu_minutes": round(gpu_seconds / 60.0, 2),
            "by_instance_type": {itype: {"gpu_seconds": gpu_seconds, "gpu_minutes": round(gpu_seconds / 60.0, 2),
                                         "nodes": [node]}}}


def cost_stats():
    plan = [{"id": "l3_multi_gpu", "level": "L3", "name": "Multi GPU / NCCL", "order": 3, "selected": True},
            {"id": "phase0_efa", "level": "L3.5", "name": "Phase 0 EFA", "order": 3.5, "selected": True}]
    l3 = level("l3_multi_gpu", "L3", "Multi GPU / NCCL", 3, 300)
    l3["gpu"] = [_usage("p5.48xlarge", "p5-node-0", 2400.0), _usage("p5.48xlarge", "p5-node-1", 2400.0)]
    p0 = level("phase0_efa", "L3.5", "Phase 0 EFA", 3.5, 120)
    p0["gpu"] = [_usage("g6.8xlarge", "g6-node-0", 240.0)]
    return {"eks": {"run_id": "r", "plan": plan, "levels": {"l3_multi_gpu": l3, "phase0_efa": p0},
                    "prices": {"p5.48xlarge": {"price_per_hour_usd": 39.33, "source": "capacity block us-east-1",
                                               "as_of": "2026-11-30"}},
                    "phase0_compare": {"instance_type": "p5en.48xlarge", "nodes": 2}}}


@pytest.mark.parametrize("text, width, cut", [
    ("EC2 Capacity Blocks pricing (aws.amazon.com/ec2/capacityblocks/pricing), US East (Ohio)", 50,
     "EC2 Capacity Blocks pricing..."),
    ("AWS EC2 On-Demand list price, us-east-1, Linux, as publicly listed in 2025; not re-verified here", 60,
     "AWS EC2 On-Demand list price, us-east-1, Linux..."),
    ("a single clause of words that is much longer than the room", 30, "a single clause of words..."),
    ("nospacesatallinthissourcetext", 20, "nospacesatallinth..."),
    ("short enough", 40, "short enough"),
])
def test_a_price_source_is_cut_where_what_is_left_reads_whole(text, width, cut):
    assert r._fit(text, width) == cut and len(r._fit(text, width)) <= width


def test_cost_in_the_footer_json_and_junit():
    (report,) = r.build_reports(cost_stats())
    lines = r.render_table(report)
    footer = lines[lines.index("2/2 passed in 420s") + 1:]
    # 80 GPU-min of p5 at 39.33/8 per GPU-hour = 6.555; 4 GPU-min of g6 at 2.0144 per GPU-hour = 0.1343
    assert footer[0] == "GPU time: 84.0 GPU-min (L3 80.0, L3.5 4.0); estimated $6.69 at the prices below"
    assert footer[1].startswith("  g6.8xlarge: 4.0 GPU-min x $2.0144/GPU-h = $0.1343 (AWS EC2 On-Demand")
    # the source cut to fit after its last whole clause
    assert footer[1].endswith(" (AWS EC2 On-Demand list price, us-east-1, Linux..., 2025)")
    assert len(footer[1]) <= r.FOOTER_WIDTH
    assert footer[2] == ("  p5.48xlarge: 80.0 GPU-min x $4.9162/GPU-h = $6.55 (capacity block us-east-1, 2026-11-30)")
    # the same 120 s on 2 x p5en.48xlarge at 63.296/h
    assert footer[3] == "Phase 0 PASS: $0.1343 on g6.8xlarge; the same 120s on 2 x p5en.48xlarge would have cost $4.22"
    # on an 80-column terminal each is wrapped at a space, a continuation indented two more
    narrow = r.render_table(report, width=80)
    wrapped = narrow[narrow.index("2/2 passed in 420s") + 1:]
    assert all(len(line) <= 80 for line in wrapped) and len(wrapped) > len(footer)
    assert " ".join(part.strip() for part in wrapped) == " ".join(line.strip() for line in footer)
    assert wrapped[1] == footer[1][:len(wrapped[1])] and wrapped[2].startswith("    ")
    assert r.wrap_line("  " + "x" * 90, 80) == ["  " + "x" * 90]  # a word longer than the width stays whole
    assert r.wrap_line("short", 80) == ["short"] and r.wrap_line("x " * 60) == ["x " * 60]
    doc = r.report_json([report])
    cost = doc["clusters"][0]["cost"]
    assert cost["gpu_minutes"] == 84.0 and cost["money"]["usd"] == 6.6893
    assert cost["by_level"]["l3_multi_gpu"]["gpu_minutes"] == 80.0
    assert cost["phase0"]["expensive"]["usd"] == 4.2197
    props = {p.get("name"): p.get("value") for p in ET.fromstring(r.junit_xml([report])).iter("property")}
    assert props["gpu_minutes"] == "84.00" and props["estimated_cost_usd"] == "6.6893"
    assert props["gpu_minutes.phase0_efa"] == "4.00"
    assert props["price_per_hour_usd.p5.48xlarge"] == "39.33 (capacity block us-east-1, 2026-11-30)"
    assert props["phase0_expensive_equivalent_usd"] == "4.2197"


def test_phase0_is_compared_with_the_instances_the_gate_guards_unless_told_otherwise():
    """Unset, the compare type is the Phase 0 gate's (the run's GPU nodes'), so the footer and the gate's line name the
    same instances; without a gate, p5en.48xlarge; validation_phase0_compare_instance_type wins over both."""
    def phase0_line(compare, gate):
        stats = cost_stats()
        stats["eks"]["phase0_compare"] = compare
        if gate:
            stats["eks"]["phase0_gate"] = gate
        (report,) = r.build_reports(stats)
        return [line for line in r.render_table(report) if line.startswith("Phase 0 PASS")][0]

    gate = {"action": "pass", "reason": "same_run", "instance_type": "p5.48xlarge", "message": "L5 on p5.48xlarge"}
    # 120 s on 2 x p5.48xlarge at the run's capacity-block price 39.33/h
    assert phase0_line({"nodes": 2}, gate).endswith("the same 120s on 2 x p5.48xlarge would have cost $2.62")
    assert phase0_line({"instance_type": "", "nodes": 2}, None).endswith("on 2 x p5en.48xlarge would have cost $4.22")
    told = phase0_line({"instance_type": "p5en.48xlarge", "nodes": 2}, gate)
    assert told.endswith("2 x p5en.48xlarge would have cost $4.22")


def test_a_level_under_a_tenth_of_a_gpu_minute_is_left_out_of_the_gpu_time_line_not_the_total():
    stats = cost_stats()
    l1 = level("l1_runtime", "L1", "Runtime", 1, 2)
    l1["gpu"] = [_usage("p5.48xlarge", "p5-node-0", 2.0)]  # 8 GPUs for a quarter second: 0.03 GPU-min
    stats["eks"]["levels"]["l1_runtime"] = l1
    stats["eks"]["plan"].insert(0, {"id": "l1_runtime", "level": "L1", "name": "Runtime", "order": 1, "selected": True})
    (report,) = r.build_reports(stats)
    line = [x for x in r.render_table(report) if x.startswith("GPU time")][0]
    assert line.startswith("GPU time: 84.0 GPU-min (L3 80.0, L3.5 4.0); estimated")
    assert report["cost"]["by_level"]["l1_runtime"]["gpu_minutes"] == 0.03


def test_no_gpu_time_no_cost_lines():
    (report,) = r.build_reports(seed_stats())
    assert report["cost"]["gpu_seconds"] == 0.0
    assert not [line for line in r.render_table(report) if line.startswith("GPU time")]


def test_phase0_gate_is_said_under_the_table():
    stats = seed_stats()
    stats["eks-p5"]["phase0_gate"] = {"action": "warn", "reason": "missing", "message": "L5 on p5.48xlarge: no pass"}
    (report,) = r.build_reports(stats)
    assert r.render_table(report)[-1] == "Phase 0 gate (warn): L5 on p5.48xlarge: no pass"
    assert r.report_json([report])["clusters"][0]["phase0_gate"]["reason"] == "missing"


def test_l6_rows_show_every_success_metric_with_its_floor():
    checks = [{"name": "job", "passed": True, "actual": "Complete", "expected": "Complete"},
              {"name": "success_rate:eval/success_once", "passed": True, "actual": 0.6875, "expected": 0.5},
              {"name": "success_rate:eval/success_at_end", "passed": False, "actual": 0.2, "expected": 0.5,
               "node": "n", "message": "success_rate:eval/success_at_end: 0.2 (expected >= 0.5)"}]
    stats = {"c": {"plan": [], "levels": {"l6/x": level("l6/x", "L6", "Evaluation: x", 6, 4, "FAIL", checks)}}}
    lines = r.render_table(r.cluster_report("c", stats["c"]))
    assert lines[5].startswith("L6      Evaluation: x")
    assert lines[6] == "        eval/success_once = 0.6875 (floor 0.5)"
    assert lines[7] == "        n: success_rate:eval/success_at_end: 0.2 (expected >= 0.5)"


def test_isolation_section_fails_the_cluster_and_prints_the_suspects():
    isolation = {"nodes": 16, "rounds": 3, "round_bound": 6, "pairs": [{}] * 17, "gpu_minutes": 3.2,
                 "estimate": {"gpu_minutes_expected": 408.0}, "note": "",
                 "suspects": [{"node": "p5-node-7", "confidence": "high",
                               "evidence": ["p5-node-6-p5-node-7: busbw 156.6 GB/s, 50% below the median pair"]}]}
    report = r.cluster_report("eks", {"run_id": "x", "plan": [], "levels": {}, "isolation": isolation})
    assert report["status"] == "FAIL" and report["isolation"]["suspects"][0]["node"] == "p5-node-7"
    text = "\n".join(r.render_table(report))
    assert "Bad-node isolation: 16 nodes, 3 of at most 6 rounds, 17 MPIJobs, 3.2 GPU-min (estimated 408.0)" in text
    assert "suspect p5-node-7 (confidence high)" in text
    healthy = dict(isolation, suspects=[])
    report = r.cluster_report("eks", {"run_id": "x", "plan": [], "levels": {}, "isolation": healthy})
    assert report["status"] != "FAIL" and "no bad node found" in "\n".join(r.render_table(report))


def test_junit_failure_text_carries_the_excerpt():
    check = dict(FAILED_CHECK, name="job", node="", excerpt=[
        '  File "train.py", line 14, in reward', "ValueError: NaN <&>", "last 1 line of the log:", "rc=1"])
    stats = {"c": {"levels": {"l5/x": level("l5/x", "L5", "Training step: x", 5, 1, "FAIL", [check])}}}
    root = ET.fromstring(r.junit_xml(r.build_reports(stats)).encode("utf-8"))
    text = [c for c in root.iter("testcase") if c.find("failure") is not None][0].find("failure").text
    assert "  log excerpt:\n    " + '  File "train.py", line 14, in reward\n    ValueError: NaN <&>\n' in text
    assert text.endswith("    rc=1")


def test_diagnostics_are_not_counted_as_levels():
    """The Baseline row of a run of L5 and L6 is reported on its own line, not as one of the levels."""
    stats = seed_stats()
    stats["eks-p5"]["levels"]["baseline"] = level("baseline", "BASE", "Baseline", 90, 0.2)
    (report,) = r.build_reports(stats)
    lines = r.render_table(report)
    assert "9/9 passed in 2554s" in lines
    assert "BASE Baseline (diagnostic, not counted): PASS in 0s" in lines
    assert not [line for line in lines if line.startswith("BASE ") and "PASS     " in line]
    assert report["summary"]["total"] == 9 and report["status"] == "PASS"
    stats["eks-p5"]["levels"]["baseline"]["status"] = "FAIL"
    assert r.build_reports(stats)[0]["status"] == "FAIL"


def test_phase0_failure_in_the_run_skips_the_expensive_levels_with_the_money_not_spent():
    plan = [{"id": i, "level": lv, "name": n, "order": o, "selected": True} for i, lv, n, o in (
        ("l2_single_gpu", "L2", "Single GPU", 2), ("l3_multi_gpu", "L3", "Multi GPU / NCCL", 3),
        ("phase0_efa", "L3.5", "Phase 0 EFA", 3.5), ("l4_rollout", "L4", "Rollout", 4))]
    gate = {"action": "fail", "reason": "same_run_failed", "blocked": ["l3_multi_gpu"], "nodes": 2,
            "instance_type": "p5.48xlarge", "price_per_hour": 55.04, "message": "Phase 0 FAIL in this run, so ..."}
    levels = {"l2_single_gpu": level("l2_single_gpu", "L2", "Single GPU", 2, 5),
              "phase0_efa": level("phase0_efa", "L3.5", "Phase 0 EFA", 3.5, 40, "FAIL")}
    report = r.cluster_report("eks", {"plan": plan, "levels": levels, "phase0_gate": gate})
    rows = dict((row["id"], row) for row in report["levels"])
    assert rows["l3_multi_gpu"]["reason"] == "not run: Phase 0 failed in this run (2 x p5.48xlarge, $110.08/h not spent)"
    assert rows["l4_rollout"]["reason"] == "not run: L3.5 failed"
    assert report["incomplete"] == []
    assert "Phase 0 gate: Phase 0 FAIL in this run, so ..." in r.render_table(report)


def test_on_a_narrow_terminal_a_skipped_rows_reason_continues_under_its_name():
    stats = {"eks": {"run_id": "r", "plan": [
        {"id": "l5_training_step/maniskill-openvlaoft-2node", "level": "L5",
         "name": "Training step: maniskill-openvlaoft-2node", "order": 5, "selected": False}], "levels": {}}}
    (report,) = r.build_reports(stats)
    whole = r.render_table(report)
    row = [line for line in whole if line.startswith("L5 ")][0]
    assert len(row) > 80 and row.endswith("not selected (--tags)")
    narrow = r.render_table(report, width=80)
    at = [i for i, line in enumerate(narrow) if line.startswith("L5 ")][0]
    assert all(len(line) <= 80 for line in narrow) and len(narrow) == len(whole) + 1
    # (the level column is 8 wide: the continuation starts two further in, under the name)
    assert narrow[at + 1].startswith(" " * 10) and not narrow[at + 1].startswith(" " * 11)
    assert " ".join(narrow[at:at + 2]).split() == row.split()
