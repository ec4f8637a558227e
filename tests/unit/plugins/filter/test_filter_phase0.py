# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rlstack.validation.plugins.filter.gpu_usage import gpu_usage
from ansible_collections.rlstack.validation.plugins.filter.phase0_gate import phase0_gate
from ansible_collections.rlstack.validation.plugins.filter.phase0_record import phase0_record
from ansible_collections.rlstack.validation.plugins.filter.stack_fingerprint import stack_fingerprint
from ansible_collections.rlstack.validation.plugins.lookup.phase0_records import LookupModule
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._gate import RECORD_SCHEMA

IMAGE = "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"
P5 = [{"node": "p5-node-0", "instance_type": "p5.48xlarge"}, {"node": "p5-node-1", "instance_type": "p5.48xlarge"}]
PLAN = [{"id": "l0_infrastructure", "selected": True}, {"id": "l3_multi_gpu", "selected": True},
        {"id": "l5_training_step/libero-pi0", "selected": True}, {"id": "l6_evaluation/libero-pi0", "selected": False}]
IDS = ["l0_infrastructure", "l3_multi_gpu", "l5_training_step", "l6_evaluation"]


def test_gate_takes_the_selected_gated_levels_of_the_plan():
    out = phase0_gate([], "fail", PLAN, IDS, P5, IMAGE)
    assert out["levels"] == ["l3_multi_gpu", "l5_training_step"] and out["action"] == "fail"
    assert out["reason"] == "missing"


def test_l3_on_one_node_is_not_gated():
    out = phase0_gate([], "fail", PLAN[:2], IDS, P5[:1], IMAGE)
    assert out["reason"] == "no_level" and out["action"] == "skip"


def test_a_priced_cheap_type_is_not_gated_and_bad_modes_say_so():
    out = phase0_gate([], "fail", PLAN, IDS, P5, IMAGE, prices={"p5.48xlarge": {"price_per_hour_usd": 5}})
    assert out["reason"] == "cheap"
    with pytest.raises(AnsibleFilterError, match="validation_phase0_gate must be one of fail, warn, off"):
        phase0_gate([], "maybe", PLAN, IDS, P5, IMAGE)


def test_record_fingerprint_lookup_round_trip(tmp_path):
    fp = stack_fingerprint(IMAGE, [], None, "NCCL INFO NET/OFI Using Libfabric version 2.1", P5)
    record = phase0_record("PASS", "r1", "cheap", fp)
    assert record["schema"] == RECORD_SCHEMA and record["fingerprint"]["observed"] == {"libfabric": "2.1"}
    (tmp_path / "phase0").mkdir()
    (tmp_path / "phase0" / "r1.json").write_text(json.dumps(record))
    (tmp_path / "phase0" / "junk.json").write_text("{not json")
    (found,) = LookupModule().run([str(tmp_path)], variables={})
    assert found["run_id"] == "r1" and found["source"].endswith("r1.json")
    assert phase0_gate([found], "fail", PLAN, IDS, P5, IMAGE)["action"] == "pass"
    assert LookupModule().run([str(tmp_path / "none")], variables={}) == []


def test_gpu_usage_filter_maps_nodes_to_types():
    pod = {"metadata": {"name": "w"}, "spec": {"nodeName": "p5-node-0", "containers": [
        {"resources": {"limits": {"nvidia.com/gpu": 8}}}]}, "status": {"phase": "Running", "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-12-01T10:00:00Z"}]}}
    usage = gpu_usage([pod], 1796119260.0, P5)  # 60 s after scheduling
    assert usage["by_instance_type"]["p5.48xlarge"]["gpu_seconds"] == 480.0
