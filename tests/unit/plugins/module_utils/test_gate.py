# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils import _fingerprint as f
from ansible_collections.rlstack.validation.plugins.module_utils import _gate as g

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
