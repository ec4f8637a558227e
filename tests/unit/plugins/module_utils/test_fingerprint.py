# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from pathlib import Path

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _fingerprint as f
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nccl"
IMAGE = "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"


def test_declared_versions_from_the_public_image_tag():
    assert f.image_tag_versions(IMAGE) == {"cuda": "12.8.1", "efa_installer": "1.43.2", "aws_ofi_nccl": "1.16.3",
                                           "nccl": "2.27.7-1", "nccl_tests": "2.16.9"}
    assert f.image_tag_versions("nvcr.io/nvidia/pytorch:25.10-py3") == {}
    assert f.image_tag_versions("localhost:5000/img") == {}


def test_observed_versions_from_real_logs():
    text = (FIXTURES / "efa-g6e-l40s-4pod-deepspeed-nccl-info.log").read_text()
    assert f.log_versions(text)["aws_ofi_nccl"] == "1.16.2"
    assert f.log_versions(text)["libfabric"] == "2.1"
    text = (FIXTURES / "ofi-plugin-init-failed-socket-fallback-p4d.log").read_text()
    assert f.log_versions(text) == {"aws_ofi_nccl": "1.17.1", "libfabric": "2.3", "cuda_driver": "13.0"}


def test_digest_from_the_pod_status_image_id():
    image_id = "public.ecr.aws/hpc-cloud/nccl-tests@sha256:" + "a" * 64
    pods = [{"status": {"containerStatuses": [{"image": IMAGE, "imageID": image_id}]}}]
    assert f.image_digest(pods, IMAGE) == "sha256:" + "a" * 64
    assert f.image_digest([{"status": {"containerStatuses": [{"image": IMAGE, "imageID": ""}]}}], IMAGE) is None


def test_fingerprint_of_a_parsed_run():
    text = (FIXTURES / "allreduce-p5-eks-mpijob-launcher-excerpt.log").read_text()
    facts = _nccl.parse_text(text)
    nodes = [{"node": "p5-node-0", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32},
             {"node": "p5-node-1", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32}]
    fp = f.fingerprint(IMAGE, [], facts, text, nodes, date="2026-12-01T10:00:00Z")
    assert fp["instance_type"] == "p5.48xlarge" and fp["nodes"] == 2 and fp["gpus_per_node"] == 8
    assert fp["declared"]["nccl"] == "2.27.7-1"
    assert fp["busbw"] and all(set(row) == {"size_bytes", "busbw_gbps"} for row in fp["busbw"])
    assert fp["peak_busbw_gbps"] == facts["peak_busbw"]
    assert fp["date"] == "2026-12-01T10:00:00Z"
