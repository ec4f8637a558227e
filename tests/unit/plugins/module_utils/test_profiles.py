# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import re

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.gpu import _profiles as p

REQUIRED_TYPES = [
    "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge",
    "g5.8xlarge", "g5.12xlarge", "g5.48xlarge", "g6.8xlarge", "g6e.24xlarge", "g6e.48xlarge",
]
NUMBER_KEYS = ["gpu_count", "gpu_memory_gb", "gpu_memory_mib", "gpu_memory_mib_min", "efa_devices", "network_gbps",
               "nvlink_per_gpu", "nvlink_generation", "pcie_gen", "pcie_width", "max_message_bytes", "price_per_hour_usd"]
KEYS = {
    "instance_type", "family", "gpu_count", "gpu_model", "gpu_name", "gpu_name_pattern", "gpu_memory_gb",
    "gpu_memory_mib", "gpu_memory_mib_min", "efa_devices", "network_gbps", "nvlink_per_gpu", "nvlink_generation",
    "nvswitch", "pcie_gen", "pcie_width", "rdma_capable", "fi_efa_use_device_rdma", "max_message_bytes",
    "gpu_resource", "efa_resource", "ofi_protocol", "gdr_required",
    "expected_busbw_2node", "busbw_floor", "price_per_hour_usd", "price_as_of", "sources", "notes",
}


def test_every_required_type_is_present():
    assert sorted(p.known_types()) == sorted(REQUIRED_TYPES)


@pytest.mark.parametrize("instance_type", REQUIRED_TYPES)
def test_profile_shape_and_sources(instance_type):
    prof = p.get_profile(instance_type)
    assert set(prof) == KEYS
    assert prof["instance_type"] == instance_type
    for key in NUMBER_KEYS:
        if prof[key] is not None:
            assert prof["sources"].get(key), "%s.%s has no source" % (instance_type, key)
    for size in ("1GiB", "16GiB"):
        expected = prof["expected_busbw_2node"][size]
        if expected is not None:
            assert expected["busbw_gbps"] > 0 and expected["source"]
    floor = prof["busbw_floor"]
    assert floor["size_bytes"] == 1 << 30 and floor["source"] and floor["rule"]
    assert re.search(prof["gpu_name_pattern"], prof["gpu_name"])
    assert prof["fi_efa_use_device_rdma"] is prof["rdma_capable"]
    if prof["price_per_hour_usd"] is None:
        assert any("price" in note for note in prof["notes"])


def test_published_numbers():
    p5 = p.get_profile("p5.48xlarge")
    assert p5["gpu_count"] == 8 and p5["efa_devices"] == 32 and p5["nvlink_per_gpu"] == 18
    assert p5["expected_busbw_2node"]["1GiB"]["busbw_gbps"] == 437.0
    assert p5["expected_busbw_2node"]["16GiB"]["busbw_gbps"] == 487.0
    assert p5["busbw_floor"]["floor_gbps"] == 100.0
    assert p5["rdma_capable"] and p5["max_message_bytes"] == 16 << 30
    g6 = p.get_profile("g6.8xlarge")
    assert g6["gpu_count"] == 1 and g6["efa_devices"] == 1
    assert g6["expected_busbw_2node"]["1GiB"]["range"] == [2.0, 3.0]
    assert not g6["rdma_capable"] and g6["max_message_bytes"] == 2 << 30
    assert p.get_profile("p4de.24xlarge")["expected_busbw_2node"]["16GiB"] is None
    assert p.get_profile("p5en.48xlarge")["efa_devices"] == 16
    assert p.get_profile("p5e.48xlarge")["gpu_memory_mib"] == 143771


def test_rdma_only_on_p_types():
    for name in p.known_types():
        assert p.get_profile(name)["rdma_capable"] is name.startswith("p")


def test_gpu_name_matching():
    assert p.gpu_name_matches(p.get_profile("p5.48xlarge"), "NVIDIA H100 80GB HBM3")
    assert p.gpu_name_matches(p.get_profile("p4d.24xlarge"), "A100-SXM4-40GB")
    assert not p.gpu_name_matches(p.get_profile("p4d.24xlarge"), "NVIDIA A100-SXM4-80GB")
    assert p.gpu_name_matches(p.get_profile("g6.8xlarge"), "NVIDIA L4")
    assert not p.gpu_name_matches(p.get_profile("g6.8xlarge"), "NVIDIA L40S")
    assert p.get_profile("p5e.48xlarge")["gpu_memory_mib_min"] < 143771


def test_lookup_normalises_and_copies():
    prof = p.get_profile(" ML.P5.48XLARGE ")
    prof["gpu_count"] = 0
    assert p.get_profile("p5.48xlarge")["gpu_count"] == 8


def test_unknown_type_names_the_known_types():
    with pytest.raises(p.ProfileNotFound) as exc:
        p.get_profile("m5.large")
    assert "m5.large" in str(exc.value) and "p5.48xlarge" in str(exc.value)


def test_aws_ofi_nccl_platform_facts():
    # aws-ofi-nccl src/platform-aws.cpp (v1.21.x): default_protocol and gdr_required per type
    assert (p.get_profile("p5.48xlarge")["ofi_protocol"], p.get_profile("p5.48xlarge")["gdr_required"]) == ("RDMA", True)
    assert p.get_profile("p5en.48xlarge")["ofi_protocol"] == "RDMA"
    assert p.get_profile("p6-b200.48xlarge")["ofi_protocol"] == "RDMA"
    assert (p.get_profile("p4d.24xlarge")["ofi_protocol"], p.get_profile("p4d.24xlarge")["gdr_required"]) == (
        "SENDRECV", True)
    assert (p.get_profile("g5.48xlarge")["ofi_protocol"], p.get_profile("g5.48xlarge")["gdr_required"]) == (
        "SENDRECV", False)
    assert p.get_profile("g6.8xlarge")["ofi_protocol"] is None      # not in the plugin's table
    assert "platform-aws.cpp" in p.get_profile("p5.48xlarge")["sources"]["ofi_protocol"]
