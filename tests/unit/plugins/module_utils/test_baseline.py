# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/verdicts/_baseline.py, on the fingerprint of a real nccl-tests log."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _baseline as bl
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _fingerprint
from ansible_collections.rlstack.validation.plugins.module_utils import _limits
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._verdict import build_level_result

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nccl"
IMAGE = "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"
NODES = [{"node": "p5-node-0", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32},
         {"node": "p5-node-1", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32}]


def _fingerprint_of(image=IMAGE, scale=1.0):
    text = (FIXTURES / "allreduce-p5-eks-mpijob-launcher-excerpt.log").read_text()
    fp = _fingerprint.fingerprint(image, [], _nccl.parse_text(text), text, NODES, date="2026-11-24T10:00:00Z")
    for row in fp["busbw"]:
        row["busbw_gbps"] = round(row["busbw_gbps"] * scale, 3)
    return fp


def _results(scale=1.0, image=IMAGE, l3_s=100.0):
    l0 = build_level_result("l0_infrastructure", checks=[{"name": "ok", "actual": 1, "expected": 1}], duration_s=20)
    l3 = build_level_result("l3_multi_gpu", checks=[{"name": "ok", "actual": 1, "expected": 1}], duration_s=l3_s)
    l3["fingerprint"] = _fingerprint_of(image, scale)
    return {"l0_infrastructure": l0, "l3_multi_gpu": l3}


def _record(date="2026-11-24T10:00:00Z", **kwargs):
    return bl.record(_results(**kwargs), "eks-p5", "run-%s" % date[:10], date, NODES)


def _judge(checks):
    return build_level_result("baseline", level="BASE", name="Baseline", order=99, checks=checks, duration_s=0)


def test_the_record_keeps_times_busbw_and_versions():
    base = _record()
    assert base["schema"] == bl.SCHEMA and set(base["levels"]) == {"l0_infrastructure", "l3_multi_gpu"}
    l0 = base["levels"]["l0_infrastructure"]
    assert (l0["level"], l0["duration_s"], l0["busbw"], l0["run_id"]) == ("L0", 20.0, [], "run-2026-11-24")
    assert l0["versions"] == {"instance_type": "p5.48xlarge", "nodes": 2}
    assert base["levels"]["l3_multi_gpu"]["busbw"] == [
        {"size_bytes": r["size_bytes"], "busbw_gbps": r["busbw_gbps"]} for r in _fingerprint_of()["busbw"]]
    assert base["versions"]["instance_type"] == "p5.48xlarge" and base["versions"]["nodes"] == 2
    assert base["versions"]["image"] == IMAGE and base["versions"]["nccl"]
    assert bl.load(json.dumps(base)) == base


def test_failed_levels_and_rows_that_are_not_levels_are_not_part_of_a_baseline():
    results = _results()
    results["l3_multi_gpu"]["status"] = "FAIL"
    results["baseline"] = build_level_result("baseline", level="BASE", checks=[{"name": "x", "op": "info"}])
    assert set(bl.record(results, "c", "r", "d", NODES)["levels"]) == {"l0_infrastructure"}


def test_a_run_of_some_levels_keeps_the_other_levels_baseline():
    stored = _record()
    l0_only = bl.record({"l0_infrastructure": _results()["l0_infrastructure"]}, "eks-p5", "r2",
                        "2026-12-01T10:00:00Z", NODES)
    merged = bl.merge(stored, l0_only)
    assert merged["levels"]["l3_multi_gpu"] == stored["levels"]["l3_multi_gpu"]
    assert merged["levels"]["l0_infrastructure"]["run_id"] == "r2" and merged["run_id"] == "r2"
    assert merged["versions"]["image"] == IMAGE


def test_the_same_busbw_is_no_regression():
    result = _judge(bl.compare(_record(date="2026-12-01T10:00:00Z"), _record()))
    assert result["status"] == "PASS", result["reason"]
    assert [c["name"] for c in result["checks"]] == ["baseline_time_L0", "baseline_busbw_L3", "baseline_time_L3"]


def test_busbw_15_percent_below_is_a_regression_that_names_what_changed():
    newer = IMAGE.replace("ncclv2.27.7-1", "ncclv2.28.3-1")
    now = _record(date="2026-12-01T10:00:00Z", scale=0.85, image=newer)
    result = _judge(bl.compare(now, _record()))
    assert result["status"] == "FAIL"
    busbw = [c for c in result["checks"] if c["name"] == "baseline_busbw_L3"][0]
    assert not busbw["passed"]
    assert "15% below the baseline of 2026-11-24 (NCCL 2.27.7-1 -> 2.28.3-1, image public.ecr.aws" in busbw["message"]
    assert "baseline run run-2026-11-24: " in busbw["message"]
    largest = max(r["size_bytes"] for r in now["levels"]["l3_multi_gpu"]["busbw"])
    assert busbw["message"].startswith("baseline_busbw_L3: busbw at ")
    assert largest >= _limits.BASELINE_MIN_SIZE_BYTES


def test_a_drop_within_the_tolerance_passes():
    result = _judge(bl.compare(_record(scale=0.95), _record()))
    assert result["status"] == "PASS"


def test_what_changed_is_told_in_order():
    before = {"nccl": "2.27.7", "aws_ofi_nccl": "1.16.3", "nodes": 2, "instance_type": "p5.48xlarge"}
    after = dict(before, nccl="2.28.3", cuda_driver="12.9")
    assert bl.changes(before, after) == "NCCL 2.27.7 -> 2.28.3, driver unknown -> 12.9"
    assert bl.changes(before, before) == ""


def test_a_slower_level_beyond_tolerance_and_slack_is_a_regression():
    bound = 100.0 * (1 + _limits.BASELINE_TIME_TOLERANCE) + _limits.BASELINE_TIME_SLACK_S
    ok = _judge(bl.compare(_record(l3_s=bound), _record()))
    slow = _judge(bl.compare(_record(l3_s=bound + 1), _record()))
    assert ok["status"] == "PASS" and slow["status"] == "FAIL"
    assert "L3 took 211 s, 100 s in the baseline of 2026-11-24 (no recorded version changed" in slow["reason"]


def test_another_shape_is_not_compared_and_no_baseline_is_told():
    other = copy.deepcopy(_record(scale=0.5))
    other["levels"]["l3_multi_gpu"]["versions"]["nodes"] = 4
    busbw = [c for c in bl.compare(other, _record()) if c["name"] == "baseline_busbw_L3"][0]
    assert busbw["op"] == "info" and "node count 2 -> 4" in busbw["fail_msg"]
    first = bl.compare(_record(), None)
    assert len(first) == 1 and first[0]["op"] == "info" and "no baseline" in first[0]["fail_msg"]


@pytest.mark.parametrize("text,match", [("{", "not JSON"), ('{"schema": "other"}', "not a rlstack")])
def test_unreadable_baselines_raise_one_sentence(text, match):
    with pytest.raises(bl.BaselineError, match=match):
        bl.load(text)
    assert bl.load("") is None


def test_size_text():
    assert [bl.size_text(s) for s in (1 << 30, 1 << 20, 65536, 1000)] == ["1 GiB", "1 MiB", "64 KiB", "1000 B"]
