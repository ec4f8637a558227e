# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.rlstack.validation.plugins.modules import level_assert


def run_module(capsys, args):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            level_assert.main()
    out = json.loads(capsys.readouterr().out)
    return exc.value.code, out


L0_CHECKS = [
    {"name": "gpu_count", "node": "p5-node-0", "actual": "8", "expected": 8},
    {"name": "gpu_count", "node": "p5-node-1", "actual": 7, "expected": 8,
     "hint": "check XID errors and the GPU operator"},
    {"name": "efa_count", "node": "p5-node-1", "actual": 32, "expected": "32"},
]


def test_failed_level_fails_the_task_with_every_failed_check(capsys):
    rc, out = run_module(capsys, {"id": "l0_infrastructure", "level": "L0", "name": "Infrastructure",
                                  "checks": L0_CHECKS + [{"name": "fsx", "node": "p5-node-1",
                                                          "evidence_missing": True, "fail_msg": "probe exited 1"}]})
    assert rc == 1
    assert out["failed"] is True and out["changed"] is False
    assert out["msg"].splitlines() == [
        "L0 Infrastructure: 2 of 4 checks failed",
        "- p5-node-1: gpu_count expected 8, saw 7 — check XID errors and the GPU operator",
        "- p5-node-1: fsx: could not collect the evidence (probe exited 1) — " + out["result"]["checks"][3]["hint"],
    ]
    assert out["failed_checks"] == out["msg"].splitlines()[1:]
    assert out["result"]["status"] == "FAIL"
    assert out["result"]["nodes"]["p5-node-1"]["failed_checks"] == ["gpu_count", "fsx"]


def test_report_only_returns_the_verdict_without_failing(capsys):
    rc, out = run_module(capsys, {"id": "l0_infrastructure", "checks": L0_CHECKS, "report_only": True})
    assert rc == 0
    assert not out.get("failed")
    assert out["result"]["status"] == "FAIL"
    assert out["result"]["level"] == "L0" and out["result"]["order"] == 0.0
    assert len(out["failed_checks"]) == 1


def test_pass_in_check_mode_with_nccl(capsys):
    facts = {"network": "efa", "nranks": 2, "nnodes": 2, "complete": True, "wrong_total": 0, "signatures": [],
             "tables": [{"test": "all_reduce", "rows": [{"size": 1 << 30, "out_of_place": {"busbw": 2.6}}]}]}
    rc, out = run_module(capsys, {
        "id": "l3_5_efa", "level": "L3.5", "name": "EFA Validation", "order": "3.5", "duration_s": "95",
        "_ansible_check_mode": True,
        "nccl": [{"name": "allreduce", "facts": facts,
                  "expect": {"network": "efa", "nranks": "2", "min_busbw": [{"size": "1G", "floor": "2.0"}],
                             "tolerance": "0.1"}}],
    })
    assert rc == 0, out
    assert out["changed"] is False
    assert out["msg"] == "L3.5 EFA Validation: PASS, 6 of 6 checks passed"
    assert out["result"]["duration_s"] == 95.0
    assert out["failed_checks"] == []


def test_skip_reason_and_empty_level(capsys):
    rc, out = run_module(capsys, {"id": "l6_evaluation", "skip_reason": "no evaluation configured"})
    assert rc == 0 and out["result"]["status"] == "SKIPPED"
    assert out["msg"] == "L6 l6_evaluation: SKIPPED (no evaluation configured)"
    rc, out = run_module(capsys, {"id": "l2_single_gpu", "name": "Single GPU"})
    assert rc == 1
    assert "nothing was checked" in out["msg"]


def test_unknown_op_is_rejected_by_the_argspec(capsys):
    rc, out = run_module(capsys, {"id": "l0", "checks": [{"name": "x", "op": "approx", "actual": 1}]})
    assert rc == 1
    assert "approx" in out["msg"]


def test_nccl_transport_expectation_through_the_argument_spec(capsys):
    facts = {"network": "efa", "ofi_provider": "efa", "ofi_nics_by_host": {"w0": 32, "w1": 31}, "gdrdma": True,
             "nranks": 16, "complete": True, "wrong_total": 0, "signatures": [],
             "tables": [{"test": "all_reduce", "rows": [{"size": 1 << 30, "out_of_place": {"busbw": 300.0}}]}]}
    rc, out = run_module(capsys, {
        "id": "l3_multi_gpu", "level": "L3", "name": "Multi GPU", "report_only": True,
        "nccl": [{"name": "nccl_tests", "facts": facts,
                  "expect": {"network": ["efa"],
                             "transport": {"instance_type": "p5.48xlarge", "provider": "efa", "nics": "32",
                                           "protocol": "RDMA", "gdrdma": "yes"}}}],
    })
    assert rc == 0, out
    assert out["result"]["status"] == "FAIL"
    assert out["failed_checks"] == [
        "- w1: nccl_tests_efa_nics: aws-ofi-nccl on w1 found 31 of the 32 EFA NICs of p5.48xlarge (expected >= 32, "
        "saw 31) — " + [c for c in out["result"]["checks"] if c["node"] == "w1"][0]["hint"]]


def test_rows_are_judged_in_one_call_each_with_its_own_checks_and_every_result_published(capsys):
    rc, out = run_module(capsys, {
        "id": "l5_training_step", "level": "L5", "name": "Training step", "report_only": True,
        "attach": {"fingerprint": "abc"}, "publish_host": "sim-eks",
        "rows": [{"id": "l5_training_step/trl", "name": "Training step: trl", "attach": {"gpu": [{"gpu_seconds": 4}]},
                  "checks": [{"name": "job", "actual": "Complete", "expected": "Complete"}]},
                 {"id": "l5_training_step/rlinf", "checks": json.dumps(L0_CHECKS)},
                 {"id": "l5_training_step/big", "skip_reason": "needs 2 GPU nodes"}]})
    assert rc == 0, out
    assert [(r["id"], r["verdict"]["status"]) for r in out["rows"]] == [
        ("l5_training_step/trl", "PASS"), ("l5_training_step/rlinf", "FAIL"), ("l5_training_step/big", "SKIPPED")]
    assert out["verdict"] == out["rows"][-1]["verdict"]
    assert out["failed_checks"] == out["rows"][1]["failed_checks"] and len(out["failed_checks"]) == 1
    levels = out["ansible_stats"]["data"]["rlstack_validation"]["sim-eks"]["levels"]
    assert list(levels) == ["l5_training_step/trl", "l5_training_step/rlinf", "l5_training_step/big"]
    assert levels["l5_training_step/trl"]["name"] == "Training step: trl"
    assert levels["l5_training_step/rlinf"]["name"] == "Training step"  # the task's, where the row sets none
    assert (levels["l5_training_step/trl"]["gpu"], levels["l5_training_step/trl"]["fingerprint"]) == (
        [{"gpu_seconds": 4}], "abc")  # the row's attach merged into the task's
    assert "result" not in out and not any("result" in r for r in out["rows"])


def test_a_failing_row_fails_the_task_and_a_row_of_bad_checks_is_one_sentence(capsys):
    rc, out = run_module(capsys, {"id": "l6_evaluation", "rows": [
        {"id": "l6_evaluation/a", "checks": [{"name": "ok", "op": "true", "actual": True}]},
        {"id": "l6_evaluation/b", "checks": L0_CHECKS}]})
    assert rc == 1 and out["result"]["id"] == "l6_evaluation/b"
    assert out["msg"].splitlines()[0] == "L6 l6_evaluation/a: PASS, 1 of 1 checks passed"
    rc, out = run_module(capsys, {"id": "l6_evaluation", "rows": [
        {"id": "l6_evaluation/a", "checks": [{"name": "x", "op": "approx", "actual": 1}]}]})
    assert rc == 1 and out["msg"].startswith("level_assert: row l6_evaluation/a: ") and "approx" in out["msg"]
    rc, out = run_module(capsys, {"id": "l6_evaluation", "rows": [{"id": "l6_evaluation/a", "checks": "[1,"}]})
    assert rc == 1 and out["msg"].startswith("level_assert: row l6_evaluation/a: checks is text that is not JSON")
