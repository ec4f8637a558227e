# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/fleet/_bad_nodes.py: findings from real level results, patches, release."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.fleet import _bad_nodes as b
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._verdict import build_level_result

NODES = ["p5-node-0", "p5-node-1", "p5-node-2"]


def _l0_result():
    # a level result as level_assert builds it: one GPU short on p5-node-1, a probe that printed nothing on
    # p5-node-2 (no proof against the node), a warning, and a pod-hostname check that names no node
    return build_level_result("l0_infrastructure", checks=[
        {"name": "gpu_count", "node": "p5-node-0", "op": "eq", "actual": 8, "expected": 8},
        {"name": "gpu_count", "node": "p5-node-1", "op": "eq", "actual": 7, "expected": 8},
        {"name": "efa_count", "node": "p5-node-1", "op": "ge", "actual": 30, "expected": 32},
        {"name": "gpu_count", "node": "p5-node-2", "op": "eq", "actual": None, "expected": 8},
        {"name": "clock", "node": "p5-node-0", "op": "eq", "actual": 1, "expected": 2, "severity": "warn"},
        {"name": "efa_nics", "node": "job-worker-0", "op": "ge", "actual": 1, "expected": 32},
    ], started=0, now=10)


def _node(name, **spec):
    return {"metadata": {"name": name, "resourceVersion": "42", "labels": {"role": "gpu-training"},
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0"}}, "spec": spec}


def test_findings_are_the_failed_checks_that_name_a_node_of_the_cluster():
    found = b.findings(_l0_result(), NODES)
    assert [(f["node"], f["check"]) for f in found] == [("p5-node-1", "gpu_count"), ("p5-node-1", "efa_count")]
    assert found[0]["level"] == "L0" and found[0]["reason"].startswith("L0 gpu_count")
    assert b.findings({"checks": "nonsense"}, NODES) == [] and b.findings(None, NODES) == []


def test_findings_of_several_levels_merge_per_node_each_reason_once():
    found = b.findings(_l0_result(), NODES) * 2 + [b.finding("p5-node-2", "ISOLATE", "pair", "slow in every pair")]
    assert b.by_node(found) == {"p5-node-1": [found[0]["reason"], found[1]["reason"]],
                                "p5-node-2": ["slow in every pair"]}


def test_report_patches_nothing_and_unknown_actions_are_one_sentence():
    assert b.node_patches(b.findings(_l0_result(), NODES), [_node("p5-node-1")], "report", "r1") == []
    with pytest.raises(b.BadNodeError, match="validation_on_bad_node is 'drain', but it must be one of report, label"):
        b.node_patches([], [], "drain", "r1")


def test_only_nodes_with_findings_are_patched():
    found = b.findings(_l0_result(), NODES)
    patches = b.node_patches(found, [_node(n) for n in NODES], "taint", "r1")
    assert [p["name"] for p in patches] == ["p5-node-1"]


def test_label_patch_carries_reason_and_run():
    patch = b.node_patch(_node("p5-node-1"), ["L0 gpu_count: expected 8, saw 7"], "label", "r1")
    assert patch["applies"] == ["label"]
    meta = patch["patch"]["metadata"]
    assert meta["labels"] == {b.LABEL: "bad"} and "resourceVersion" not in meta
    assert meta["annotations"] == {b.REASON: "L0 gpu_count: expected 8, saw 7", b.RUN: "r1", b.APPLIED: "label"}
    assert "spec" not in patch["patch"]
    assert patch["check"]["node"] == "p5-node-1" and "release_nodes.yml" in patch["check"]["fail_msg"]


def test_taint_patch_keeps_the_other_taints_and_replaces_its_own():
    other = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
    old = {"key": b.TAINT_KEY, "value": "r0", "effect": "NoSchedule"}
    patch = b.node_patch(_node("n", taints=[other, old]), ["x"], "taint", "r1")
    assert patch["patch"]["spec"]["taints"] == [other, {"key": b.TAINT_KEY, "value": "r1", "effect": "NoSchedule"}]


def test_cordon_of_a_node_cordoned_by_someone_else_is_not_recorded_as_ours():
    patch = b.node_patch(_node("n", unschedulable=True), ["x"], "cordon", "r1")
    assert patch["applies"] == ["label"] and "spec" not in patch["patch"]
    assert patch["patch"]["metadata"]["annotations"][b.APPLIED] == "label"
    ours = b.node_patch(_node("n"), ["x"], "cordon", "r1")
    assert ours["patch"]["spec"] == {"unschedulable": True} and ours["applies"] == ["label", "cordon"]


def test_long_reasons_are_cut():
    patch = b.node_patch(_node("n"), ["x" * 5000], "label", "r1")
    assert len(patch["patch"]["metadata"]["annotations"][b.REASON]) == b.REASON_CHARS


def _apply(node, patch):
    """RFC 7386 JSON merge patch, as the API server applies it (null removes)."""
    def merge(target, change):
        if not isinstance(change, dict):
            return change
        target = dict(target) if isinstance(target, dict) else {}
        for key, value in change.items():
            if value is None:
                target.pop(key, None)
            else:
                target[key] = merge(target.get(key), value)
        return target
    return merge(copy.deepcopy(node), patch)


@pytest.mark.parametrize("action", ["label", "taint", "cordon"])
def test_release_undoes_exactly_what_was_applied(action):
    other = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}
    before = _node("n", taints=[other])
    marked = _apply(before, b.node_patch(before, ["x"], action, "r1")["patch"])
    release = b.release_patch(marked)
    after = _apply(marked, release["patch"])
    assert after == before
    assert b.release_patch(after) is None  # idempotent: a released node is not touched again


def test_release_keeps_a_cordon_that_was_not_ours_and_filters_by_run():
    before = _node("n", unschedulable=True)
    marked = _apply(before, b.node_patch(before, ["x"], "cordon", "r1")["patch"])
    assert "spec" not in b.release_patch(marked)["patch"]
    assert b.release_patch(marked, "r2") is None and b.release_patch(marked, "r1")["run"] == "r1"
    assert b.release_patches([_node("a"), marked]) == [b.release_patch(marked)]


def test_isolation_suspects_are_findings_too():
    suspects = [{"node": "p5-node-2", "confidence": "high", "evidence": ["p5-node-2+p5-node-0: 40 GB/s"]}]
    patches = b.node_patches([], [_node(n) for n in NODES], "label", "r1", suspects)
    assert [p["name"] for p in patches] == ["p5-node-2"]
    assert patches[0]["reasons"] == ["isolation: suspect, high confidence (p5-node-2+p5-node-0: 40 GB/s)"]
