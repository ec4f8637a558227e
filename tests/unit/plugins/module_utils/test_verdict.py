# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils import _verdict as v


def check(**spec):
    spec.setdefault("name", "c")
    return v.evaluate_check(spec)


# ---------------------------------------------------------------------------------------------- ops


@pytest.mark.parametrize("op, actual, expected, passed", [
    ("eq", 8, 8, True),
    ("eq", "8", 8, True),
    ("eq", 8, "8", True),
    ("eq", 7, 8, False),
    ("eq", "efa", "efa", True),
    ("eq", "efa ", "efa", True),
    ("eq", "efa", "EFA", False),
    ("eq", True, "true", True),
    ("eq", "yes", True, True),
    ("eq", [1, 2], ["1", 2], True),
    ("ne", 7, 8, True),
    ("ne", "8", 8, False),
    ("ge", 8, 8, True),
    ("ge", 7, 8, False),
    ("gt", 9, 8, True),
    ("gt", 8, 8, False),
    ("le", 8, 8, True),
    ("le", 9, 8, False),
    ("lt", 7, 8, True),
    ("lt", 8, 8, False),
    ("in", "efa", ["efa", "ib"], True),
    ("in", "socket", ["efa", "ib"], False),
    ("in", 8, ["8", "16"], True),
    ("in", "ib", "efa, ib", True),
    ("not_in", "socket", ["efa"], True),
    ("not_in", "efa", ["efa"], False),
    ("contains", ["efa0", "efa1"], "efa1", True),
    ("contains", "NET/OFI Selected provider is efa", "efa", True),
    ("contains", {"flash_attn": "2.7"}, "flash_attn", True),
    ("contains", ["efa0"], "efa1", False),
    ("not_contains", "all good", "Caught signal 11", True),
    ("not_contains", ["a", "b"], "b", False),
    ("matches", "NVIDIA H100 80GB HBM3", r"H100.*80GB", True),
    ("matches", "NVIDIA A10G", r"H100.*80GB", False),
    ("version_ge", "2.11.0+cu130", "2.4", True),
    ("version_ge", "2.3.1", "2.4", False),
    ("version_ge", "12.10", "12.8", True),
    ("version_ge", "NCCL version 2.18.5+cuda12.2", "2.18.3", True),
    ("version_ge", "2.4", "2.4.0", True),
    ("version_ge", "v1.43.2", "1.43", True),
    ("true", True, None, True),
    ("true", "yes", None, True),
    ("true", "false", None, False),
    ("false", 0, None, True),
    ("false", "True", None, False),
])
def test_ops(op, actual, expected, passed):
    entry = check(op=op, actual=actual, expected=expected)
    assert entry["passed"] is passed, entry["message"]
    assert entry["evidence_missing"] is False
    assert set(entry) == {"name", "node", "op", "expected", "actual", "unit", "passed", "message", "hint",
                          "evidence_missing"}


def test_every_op_is_covered():
    assert set(v.OPS) == {"eq", "ne", "ge", "gt", "le", "lt", "in", "not_in", "contains", "not_contains",
                          "matches", "version_ge", "true", "false"}


# ------------------------------------------------------------------------------ tolerance, coercion


def test_tolerance_lowers_a_floor_and_raises_a_ceiling():
    assert check(op="ge", actual=400, expected=437, tolerance=0.1)["passed"]  # 437 * 0.9 = 393.3
    low = check(op="ge", actual=390, expected=437, tolerance=0.1, unit="GB/s")
    assert not low["passed"]
    assert low["message"] == "c expected >= 437 GB/s (>= 393.3 with the 10% tolerance), saw 390 GB/s"
    assert check(op="le", actual=105, expected=100, tolerance=0.1)["passed"]
    assert not check(op="lt", actual=110, expected=100, tolerance=0.1)["passed"]
    # tolerance does not apply to eq
    assert not check(op="eq", actual=7, expected=8, tolerance=0.5)["passed"]


def test_tolerance_given_as_percent_is_a_config_error():
    entry = check(op="ge", actual=400, expected=437, tolerance=10)
    assert not entry["passed"]
    assert "tolerance 10 is not a fraction" in entry["message"]
    assert entry["hint"].startswith("fix the expectation")


def test_numeric_strings_are_coerced():
    assert check(op="ge", actual="487.5", expected="437")["passed"]
    assert check(op="lt", actual=" 3 ", expected="1e1")["passed"]


def test_non_numeric_actual_fails_with_clear_message():
    entry = check(name="busbw", op="ge", actual="n/a", expected=100)
    assert not entry["passed"]
    assert entry["message"] == "busbw: cannot check >= 100: saw 'n/a', which is not a number"
    assert not entry["evidence_missing"]


def test_non_numeric_expected_points_at_the_inventory():
    entry = check(name="busbw", op="ge", actual=5, expected="lots")
    assert "expected value 'lots' is not a number" in entry["message"]
    assert "inventory" in entry["hint"]


def test_bad_regex_and_bad_version():
    assert "not a valid regular expression" in check(op="matches", actual="x", expected="(")["message"]
    entry = check(op="version_ge", actual="unknown", expected="2.4")
    assert not entry["passed"] and "not a version" in entry["message"]


def test_non_boolean_for_true_op():
    entry = check(op="true", actual="maybe")
    assert not entry["passed"] and "not true or false" in entry["message"]


def test_failure_message_hint_and_custom_text():
    entry = check(name="gpu_count", node="p5-node-1", actual=7, expected=8, hint="check XID errors")
    assert entry["message"] == "gpu_count expected 8, saw 7"
    assert v.failed_line(entry) == "- p5-node-1: gpu_count expected 8, saw 7 — check XID errors"
    custom = check(name="gpu_count", actual=7, expected=8, fail_msg="GPUs are missing")
    assert custom["message"] == "gpu_count: GPUs are missing (expected 8, saw 7)"
    passed = check(name="gpu_count", actual=8, expected=8)
    assert passed["message"] == "gpu_count: 8 (expected 8)"


# ------------------------------------------------------------------------------------ missing evidence


def test_evidence_missing_wording():
    entry = check(name="gpu_count", node="n1", evidence_missing=True, fail_msg="probe exited 1")
    assert check(name="x", evidence_missing=True, message="legacy key")["message"].endswith("(legacy key)")
    assert not entry["passed"] and entry["evidence_missing"]
    assert entry["message"] == "gpu_count: could not collect the evidence (probe exited 1)"
    assert "says nothing about the workload" in entry["hint"]


def test_null_actual_is_missing_evidence():
    entry = check(name="gpu_count", actual=None, expected=8)
    assert entry["evidence_missing"] and "could not collect the evidence" in entry["message"]


# ----------------------------------------------------------------------------------- helpers


@pytest.mark.parametrize("text, size", [
    (1073741824, 1 << 30), ("1G", 1 << 30), ("1GiB", 1 << 30), ("1GB", 1 << 30), ("16GiB", 16 << 30),
    ("512M", 512 << 20), ("8", 8), ("2g", 2 << 30),
])
def test_parse_size(text, size):
    assert v.parse_size(text) == size


def test_parse_size_rejects_garbage_and_formats():
    with pytest.raises(v.VerdictError):
        v.parse_size("lots")
    assert v.format_size(1 << 30) == "1GiB"
    assert v.format_size(16 << 30) == "16GiB"
    assert v.format_size(1000) == "1000B"


@pytest.mark.parametrize("level_id, level, order", [
    ("l0_infrastructure", "L0", 0.0), ("l3_5_efa", "L3.5", 3.5), ("l5_training_step/libero", "L5", 5.0),
    ("local_checks", "LOCAL", -1.0),
])
def test_derived_level_and_order(level_id, level, order):
    assert v.derive_level(level_id) == level
    assert v.derive_order(level) == order


# ------------------------------------------------------------------------------------------ nccl


def row(size, busbw, in_place=None):
    return {"size": size, "count": size // 4, "type": "float", "redop": "sum", "root": -1,
            "out_of_place": {"time_us": 1.0, "algbw": busbw / 1.875, "busbw": busbw, "wrong": 0},
            "in_place": {"time_us": 1.0, "algbw": 1.0, "busbw": in_place if in_place is not None else busbw,
                         "wrong": 0}}


def facts(**kw):
    """A literal nccl_log_info result (the keys of _nccl.py's parser)."""
    base = {
        "network": "efa", "ofi_provider": "efa", "nranks": 16, "nnodes": 2, "hosts": ["a", "b"],
        "complete": True, "wrong_total": 0, "signatures": [], "nccl_version": "2.27.7",
        "tables": [{"test": "all_reduce", "rows": [row(512 << 20, 300.0), row(1 << 30, 437.9, 440.0),
                                                   row(16 << 30, 487.1)],
                    "avg_busbw": 52.9, "complete": True}],
        "peak_busbw": 487.1, "busbw_at_largest_size": 487.1, "largest_size": 16 << 30, "avg_busbw_reported": 52.9,
    }
    base.update(kw)
    return base


def nccl_checks(fact_dict, **expect):
    return dict((c["name"], c) for c in v.expand_nccl({"name": "nccl", "node": "p5", "facts": fact_dict,
                                                       "expect": expect}))


def test_nccl_all_good():
    checks = nccl_checks(facts(), network="efa", nranks=16, nnodes=2,
                         min_busbw=[{"size": "1G", "floor": 400}, {"size": "16GiB", "floor": 450}])
    assert sorted(checks) == sorted([
        "nccl_network", "nccl_nranks", "nccl_nnodes", "nccl_complete", "nccl_wrong", "nccl_busbw_1GiB",
        "nccl_busbw_16GiB", "nccl_signatures"])
    assert all(c["passed"] for c in checks.values()), [c["message"] for c in checks.values()]
    assert checks["nccl_busbw_1GiB"]["unit"] == "GB/s" and checks["nccl_busbw_1GiB"]["node"] == "p5"


def test_nccl_socket_fallback_fails_the_network():
    checks = nccl_checks(facts(network="Socket"), network=["efa"])
    net = checks["nccl_network"]
    assert not net["passed"]
    assert net["message"] == "nccl_network expected 'efa', saw 'Socket'"
    assert "fell back to TCP sockets" in net["hint"]


def test_nccl_network_list_and_unknown():
    assert nccl_checks(facts(network="IB"), network=["efa", "ib"])["nccl_network"]["passed"]
    libfabric = nccl_checks(facts(network="Libfabric"), network="efa")["nccl_network"]
    assert libfabric["passed"] and "efa assumed" in libfabric["message"]
    assert not nccl_checks(facts(network="Libfabric"), network="ib")["nccl_network"]["passed"]
    missing = nccl_checks(facts(network=None), network="efa")["nccl_network"]
    assert not missing["passed"] and missing["evidence_missing"]
    assert "NCCL_DEBUG=INFO" in missing["hint"]


def test_nccl_busbw_floor_tolerance_and_string_floor():
    ok = nccl_checks(facts(), min_busbw=[{"size": "1G", "floor": "480"}], tolerance=0.1)
    assert ok["nccl_busbw_1GiB"]["passed"]  # 437.9 >= 432
    per_size = nccl_checks(facts(), min_busbw=[{"size": "1G", "floor": 480, "tolerance": 0.0}], tolerance=0.5)
    assert not per_size["nccl_busbw_1GiB"]["passed"]


def test_nccl_busbw_size_not_measured():
    entry = nccl_checks(facts(), min_busbw=[{"size": "32G", "floor": 1}])["nccl_busbw_32GiB"]
    assert not entry["passed"] and entry["evidence_missing"]
    assert "largest size measured was 16GiB" in entry["message"]
    assert "-e 32G" in entry["hint"]


def test_nccl_single_rank_ok_is_informational():
    one = facts(nranks=1, nnodes=1, network=None, tables=[{"test": "all_reduce", "rows": [row(1 << 30, 0.0)]}])
    checks = nccl_checks(one, network="efa", min_busbw=[{"size": "1G", "floor": 100}], single_rank_ok=True)
    assert checks["nccl_busbw_1GiB"]["passed"]
    assert "not measurable on one GPU" in checks["nccl_busbw_1GiB"]["message"]
    assert checks["nccl_network"]["passed"]


def test_nccl_single_rank_without_permission_fails():
    one = facts(nranks=1, tables=[{"test": "all_reduce", "rows": [row(1 << 30, 0.0)]}])
    entry = nccl_checks(one, min_busbw=[{"size": "1G", "floor": 100}])["nccl_busbw_1GiB"]
    assert not entry["passed"] and "2+ ranks" in entry["hint"]


def test_nccl_wrong_results_fail():
    entry = nccl_checks(facts(wrong_total=128))["nccl_wrong"]
    assert not entry["passed"]
    assert "128 wrong results" in entry["message"]
    assert nccl_checks(facts(wrong_total=2), max_wrong="4")["nccl_wrong"]["passed"]
    assert nccl_checks(facts(wrong_total=None))["nccl_wrong"]["passed"]  # -c 0: not checked


def test_nccl_incomplete_run_fails():
    entry = nccl_checks(facts(complete=False))["nccl_complete"]
    assert not entry["passed"] and "did not finish" in entry["message"]
    assert "nccl_complete" not in nccl_checks(facts(complete=False), require_complete=False)


def test_nccl_forbidden_signature_fails_and_default_allows_nccl_warn():
    sigs = [
        {"id": "cm_req_handle_error_entry", "line_no": 42, "line": "NCCL WARN NET/OFI Request ... completed with error",
         "hint": "security group must allow all traffic between the EFA nodes"},
        {"id": "cm_req_handle_error_entry", "line_no": 50, "line": "again", "hint": ""},
        {"id": "nccl_warn", "line_no": 7, "line": "NCCL WARN something", "hint": ""},
    ]
    checks = nccl_checks(facts(signatures=sigs))
    bad = checks["nccl_signature_cm_req_handle_error_entry"]
    assert not bad["passed"]
    assert "(line 42, 2 occurrences)" in bad["message"]
    assert bad["hint"].startswith("security group")
    assert checks["nccl_signature_nccl_warn"]["passed"]
    assert "nccl_signatures" not in checks
    strict = nccl_checks(facts(signatures=sigs), forbid_signatures=["all"])
    assert not strict["nccl_signature_nccl_warn"]["passed"]
    lenient = nccl_checks(facts(signatures=sigs), forbid_signatures=[])
    assert lenient["nccl_signature_cm_req_handle_error_entry"]["passed"]


def test_nccl_missing_facts_is_missing_evidence():
    for value in (None, {}, {"failed": True, "msg": "no such file: /logs/launcher.log"}, {"skipped": True}):
        checks = v.expand_nccl({"facts": value, "expect": {"network": "efa"}})
        assert [c["name"] for c in checks] == ["nccl_log"]
        assert checks[0]["evidence_missing"] and not checks[0]["passed"]
    assert "no such file" in v.expand_nccl({"facts": {"failed": True, "msg": "no such file"}})[0]["message"]


# -------------------------------------------------------------------------------------- level result


def test_level_result_shape_and_message():
    result = v.build_level_result(
        "l0_infrastructure", level="L0", name="Infrastructure", order=0,
        checks=[
            {"name": "gpu_count", "node": "p5-node-0", "actual": 8, "expected": 8},
            {"name": "gpu_count", "node": "p5-node-1", "actual": 7, "expected": 8, "hint": "check XID errors"},
            {"name": "efa_count", "node": "p5-node-1", "actual": 32, "expected": 32},
            {"name": "fsx_mounted", "op": "true", "actual": True},
        ],
        duration_s="12.34")
    assert set(result) == {"id", "level", "name", "order", "status", "reason", "duration_s", "checks", "nodes",
                           "summary"}
    assert result["status"] == "FAIL"
    assert result["duration_s"] == 12.3
    assert result["reason"] == "p5-node-1: gpu_count expected 8, saw 7 — check XID errors"
    assert result["nodes"] == {
        "p5-node-0": {"status": "PASS", "passed": 1, "failed": 0, "failed_checks": []},
        "p5-node-1": {"status": "FAIL", "passed": 1, "failed": 1, "failed_checks": ["gpu_count"]},
    }
    assert result["summary"] == {"passed": 3, "failed": 1, "total": 4, "evidence_missing": 0}
    assert v.summary_message(result) == (
        "L0 Infrastructure: 1 of 4 checks failed\n- p5-node-1: gpu_count expected 8, saw 7 — check XID errors")


def test_level_pass_skip_and_empty():
    ok = v.build_level_result("l1_runtime", name="Runtime", checks=[{"name": "cuda", "op": "true", "actual": 1}])
    assert ok["status"] == "PASS" and ok["level"] == "L1" and ok["order"] == 1.0 and ok["reason"] == ""
    assert v.summary_message(ok) == "L1 Runtime: PASS, 1 of 1 checks passed"
    skipped = v.build_level_result("l3_multi_gpu", skip_reason="single node cluster",
                                   checks=[{"name": "x", "actual": 1, "expected": 2}])
    assert skipped["status"] == "SKIPPED" and skipped["reason"] == "single node cluster"
    assert skipped["checks"] == []
    empty = v.build_level_result("l2_single_gpu")
    assert empty["status"] == "FAIL"
    assert "nothing was checked" in empty["reason"]


def test_duration_from_started():
    result = v.build_level_result("l0", started="1000.0", now=1012.25,
                                  checks=[{"name": "x", "actual": 1, "expected": 1}])
    assert result["duration_s"] == 12.2 or result["duration_s"] == 12.3


def test_nccl_signatures_judged_by_other_checks_are_soft():
    sigs = [{"id": "socket_fallback", "line_no": 3, "line": "Using network Socket", "hint": "set NCCL_NET=ofi"},
            {"id": "wrong_results", "line_no": 9, "line": "Out of bounds values : 4 FAILED", "hint": ""}]
    judged = nccl_checks(facts(signatures=sigs, network="socket", wrong_total=4), network=["efa"])
    assert not judged["nccl_network"]["passed"] and not judged["nccl_wrong"]["passed"]
    assert judged["nccl_signature_socket_fallback"]["passed"]
    assert judged["nccl_signature_wrong_results"]["passed"]
    alone = nccl_checks(facts(signatures=sigs, network="socket", wrong_total=None))
    assert not alone["nccl_signature_socket_fallback"]["passed"]
    assert not alone["nccl_signature_wrong_results"]["passed"]


def test_nccl_busbw_reads_out_of_place_and_needs_the_size():
    checks = nccl_checks(facts(), min_busbw=[{"size": "1G", "floor": 437.9}, {"size": "768M", "floor": 1}])
    assert checks["nccl_busbw_1GiB"]["actual"] == 437.9  # out-of-place, not the in-place 440
    # 768 MiB: the 512 MiB row is too small to answer for it
    assert checks["nccl_busbw_768MiB"]["evidence_missing"]
    rounded = facts(tables=[{"test": "all_gather", "rows": [row(17179868160, 400.0)]}])
    assert nccl_checks(rounded, min_busbw=[{"size": "16G", "floor": 350}])["nccl_busbw_16GiB"]["passed"]


def test_nccl_busbw_of_one_collective_and_flat_rows():
    two = facts(tables=[{"test": "all_reduce", "rows": [row(1 << 30, 400.0)]},
                        {"test": "sendrecv", "rows": [row(1 << 30, 20.0)]}])
    assert not nccl_checks(two, min_busbw=[{"size": "1G", "floor": 100}])["nccl_busbw_1GiB"]["passed"]
    assert nccl_checks(two, min_busbw=[{"size": "1G", "floor": 100}], test="all_reduce")["nccl_busbw_1GiB"]["passed"]
    flat = facts(tables=[{"rows": [{"size": 1 << 30, "busbw": 3.0}]}])
    assert nccl_checks(flat, min_busbw=[{"size": "1G", "floor": 2}])["nccl_busbw_1GiB"]["passed"]


def test_nccl_log_without_results_table():
    checks = nccl_checks(facts(tables=[], complete=None), network="efa")
    assert not checks["nccl_complete"]["passed"]
    assert "no nccl-tests results table" in checks["nccl_complete"]["message"]
    assert "nccl_complete" not in nccl_checks(facts(tables=[], complete=None), require_complete=False)
