# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _fingerprint as f
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _gate as g

IMAGE = "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"
NEWER = "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.44.0-ofiv1.16.3-ncclv2.30.4-1-testsv2.16.9"
NOW = g.parse_iso("2026-12-01T12:00:00Z")
DAY = 86400.0
G6 = [{"node": "g6-node-0", "instance_type": "g6.8xlarge", "gpus": 1}, {"node": "g6-node-1", "instance_type": "g6.8xlarge", "gpus": 1}]


def phase0(image=IMAGE, when="2026-12-01T09:00:00Z", status="PASS"):
    return g.record(status, "r-%s" % when[:10], "cheap", f.fingerprint(image, nodes=G6, date=when))


def current(image=IMAGE):
    return f.fingerprint(image, nodes=[{"node": "p5-node-0", "instance_type": "p5.48xlarge", "gpus": 8}])


def decide(records, image=IMAGE, mode="fail", levels=("l3_multi_gpu", "l5_training_step"), price=None):
    return g.decide(mode, list(levels), "p5.48xlarge", price, 20.0, records, current(image), NOW, 7 * DAY)


def test_pass_with_a_fresh_matching_record():
    out = decide([phase0(when="2026-11-20T00:00:00Z"), phase0()])
    assert out["action"] == "pass" and out["reason"] == "ok"
    assert out["record"]["passed_at"] == "2026-12-01T09:00:00Z"
    assert "3.0 h ago" in out["message"] and "L3 multi-node, L5 on p5.48xlarge (an unknown price)" in out["message"]


def test_missing():
    out = decide([])
    assert out["action"] == "fail" and out["reason"] == "missing"
    assert "no Phase 0 pass was found" in out["message"] and "playbooks/phase0.yml" in out["message"]
    failed = decide([phase0(status="FAIL")])
    assert failed["reason"] == "missing"


def test_stale():
    out = decide([phase0(when="2026-11-20T09:00:00Z")])
    assert out["action"] == "fail" and out["reason"] == "stale"
    assert "11.1 days old, more than the 7.0 days allowed" in out["message"]


def test_mismatch_names_each_difference():
    out = decide([phase0()], image=NEWER)
    assert out["action"] == "fail" and out["reason"] == "mismatch"
    assert out["differences"] == [
        "Phase 0 passed with image %s, this run uses %s" % (IMAGE, NEWER),
        "Phase 0 passed with NCCL 2.27.7-1, this image declares 2.30.4-1",
        "Phase 0 passed with the EFA installer 1.43.2, this image declares 1.44.0",
    ]
    assert out["not_compared"] == ["libfabric"]


def test_digest_wins_over_the_reference():
    record = phase0()
    record["fingerprint"]["image_digest"] = "sha256:" + "a" * 64
    fp = current()
    fp["image_digest"] = "sha256:" + "b" * 64
    out = g.decide("fail", ["l5_training_step"], "p5.48xlarge", None, 20.0, [record], fp, NOW, 7 * DAY)
    assert out["reason"] == "mismatch" and "image digest sha256:aaaa" in out["differences"][0]


def test_warn_off_cheap_and_no_level():
    assert decide([], mode="warn")["action"] == "warn"
    assert decide([], mode="off")["action"] == "skip"
    assert decide([], price=2.0144)["reason"] == "cheap"
    assert decide([], levels=())["reason"] == "no_level"
    assert decide([], price=63.296)["action"] == "fail"


def test_versions_compare_without_build_suffixes():
    assert g._version("2.27.7-1") == g._version("2.27.7") == "2.27.7"
    assert g._version("1.5.0aws") == "1.5.0"


def same_run(price=55.04, nodes=2):
    return g.decide("fail", ["l3_multi_gpu", "l5_training_step"], "p5.48xlarge", price, 20.0, [], current(IMAGE), NOW,
                    7 * DAY, phase0_in_run=True, nodes=nodes)


def test_phase0_in_the_same_run_decides():
    gate = same_run()
    assert gate["action"] == "defer" and gate["reason"] == "same_run"
    assert gate["message"] == ("Phase 0 runs first in this run; L3 multi-node, L5 on p5.48xlarge ($55.04/h) start "
                               "only if it passes")
    passed = g.settle(gate, "PASS")
    assert passed["action"] == "pass" and passed["blocked"] == []
    assert passed["message"] == "Phase 0 passed in this run; L3 multi-node, L5 on p5.48xlarge ($55.04/h) may run"
    failed = g.settle(gate, "FAIL")
    assert failed["action"] == "fail" and failed["blocked"] == ["l3_multi_gpu", "l5_training_step"]
    assert failed["message"].startswith("Phase 0 FAIL in this run, so L3 multi-node, L5 did not start: "
                                        "2 x p5.48xlarge, $110.08/h not spent")
    assert g.skip_reason(failed, "l5_training_step/libero") == (
        "not run: Phase 0 failed in this run (2 x p5.48xlarge, $110.08/h not spent)")
    assert g.skip_reason(failed, "l4_rollout") == "" and g.skip_reason(passed, "l3_multi_gpu") == ""
    assert g.settle(gate, "FAIL", must_pass=False)["action"] == "warn"
    # a gate that did not wait (records decided, or off) is left as it is
    assert g.settle(decide([]), "FAIL") == decide([])


def test_the_same_run_rule_does_not_apply_when_the_gate_does_not():
    off = g.decide("off", ["l3_multi_gpu"], "p5.48xlarge", 55.04, 20.0, [], current(IMAGE), NOW, 7 * DAY, True, 2)
    cheap = g.decide("fail", ["l3_multi_gpu"], "g6.8xlarge", 2.01, 20.0, [], current(IMAGE), NOW, 7 * DAY, True, 2)
    assert off["action"] == "skip" and cheap["action"] == "skip"
    assert "unknown price" in same_run(price=None)["message"]
    assert g.not_spent(same_run(price=None)) == "2 x p5.48xlarge"
