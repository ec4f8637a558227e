# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _verdict as v


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
                          "matches", "version_ge", "true", "false", "info"}


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
    assert result["summary"] == {"passed": 3, "failed": 1, "total": 4, "evidence_missing": 0, "warnings": 0}
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


def test_info_records_without_judging():
    entry = check(op="info", actual=None, expected=3, fail_msg="not measurable on one GPU")
    assert entry["passed"] and not entry["evidence_missing"]
    assert entry["message"] == "c: not measurable on one GPU"
