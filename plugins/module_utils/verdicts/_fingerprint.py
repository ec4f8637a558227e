# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The stack fingerprint: what a Phase 0 (or L1/L3) run proved, as data.

Standard library only. Two kinds of versions, kept apart because they come from different places:

* ``declared``: what the image's tag says, e.g. the public nccl-tests image
  ``public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9``
  -> cuda 12.8.1, efa_installer 1.43.2, aws_ofi_nccl 1.16.3, nccl 2.27.7-1, nccl_tests 2.16.9. Known before any pod.
* ``observed``: what the run printed: NCCL and nccl-tests versions, network and OFI provider (parsed by
  ``_nccl_facts.py``, nccl_log_info), plus the aws-ofi-nccl, libfabric and CUDA driver versions NCCL_DEBUG=INFO prints
  (``NET/OFI Initializing aws-ofi-nccl 1.16.2``, ``NET/OFI Using Libfabric version 2.1``,
  ``cudaDriverVersion 12080``), read here from the same log.

The image digest comes from the pods' ``status.containerStatuses[].imageID`` when the cluster reports one.
"""

from __future__ import annotations

import datetime
import re

SCHEMA = "rlstack.validation/stack-fingerprint/v1"
# image tag parts of the public nccl-tests images (aws-samples/awsome-distributed-training naming)
_TAG_PARTS = (
    ("cuda", re.compile(r"(?:^|-)cuda(\d+(?:\.\d+)*)")),
    ("efa_installer", re.compile(r"(?:^|-)efa(\d+(?:\.\d+)*)")),
    ("aws_ofi_nccl", re.compile(r"(?:^|-)ofiv?(\d+(?:\.\d+)*(?:-aws)?)")),
    ("nccl", re.compile(r"(?:^|-)ncclv?(\d+(?:\.\d+)*(?:-\d+)?)")),
    ("nccl_tests", re.compile(r"(?:^|-)testsv?(\d+(?:\.\d+)*)")),
)
_OFI_RX = re.compile(r"NET/OFI (?:Initializing|Using) aws-ofi-nccl v?(\d+\.\d+\.\d+(?:\w*)?)")
_LIBFABRIC_RX = re.compile(r"NET/OFI Using Libfabric version (\d+(?:\.\d+)+)")
_DRIVER_RX = re.compile(r"cudaDriverVersion (\d+)")
_DIGEST_RX = re.compile(r"(sha256:[0-9a-f]{64})")


def image_tag_versions(image):
    """Versions the tag of an image reference declares ({} for a tag without them)."""
    text = str(image or "")
    tag = text.rsplit(":", 1)[1] if ":" in text.rsplit("/", 1)[-1] else ""
    tag = tag.split("@", 1)[0]
    out = {}
    for key, rx in _TAG_PARTS:
        match = rx.search(tag)
        if match:
            out[key] = match.group(1)
    return out


def log_versions(text):
    """aws-ofi-nccl, libfabric and CUDA driver versions from an NCCL_DEBUG=INFO log (first seen wins)."""
    text = str(text or "")
    out = {}
    for key, rx in (("aws_ofi_nccl", _OFI_RX), ("libfabric", _LIBFABRIC_RX), ("cuda_driver", _DRIVER_RX)):
        match = rx.search(text)
        if match:
            value = match.group(1)
            if key == "cuda_driver":  # 12080 -> 12.8 (NCCL prints cudaDriverGetVersion's integer)
                code = int(value)
                value = "%d.%d" % (code // 1000, (code % 1000) // 10)
            out[key] = value
    return out


def image_digest(pods, image=None):
    """The sha256 digest of the image the pods ran (containerStatuses[].imageID), or None."""
    for pod in pods or []:
        if not isinstance(pod, dict):
            continue
        for cstatus in ((pod.get("status") or {}).get("containerStatuses") or []):
            if image and cstatus.get("image") and cstatus.get("image") != image:
                continue
            match = _DIGEST_RX.search(str(cstatus.get("imageID") or ""))
            if match:
                return match.group(1)
    match = _DIGEST_RX.search(str(image or ""))
    return match.group(1) if match else None


def _busbw(facts):
    rows = []
    for table in (facts or {}).get("tables") or []:
        for row in table.get("rows") or []:
            size = row.get("size")
            busbw = ((row.get("out_of_place") or {}).get("busbw") if isinstance(row.get("out_of_place"), dict)
                     else None)
            if size is not None and busbw is not None:
                rows.append({"size_bytes": size, "busbw_gbps": busbw})
        if rows:
            break  # the first collective's table (all_reduce_perf has one)
    return rows


def fingerprint(image, pods=None, nccl_facts=None, log_text="", nodes=None, date=None):
    """The fingerprint of one run of nccl-tests (or a probe) on some nodes.

    nccl_facts: nccl_log_info's result (or None); nodes: [{node, instance_type, gpus, efa}]."""
    facts = nccl_facts if isinstance(nccl_facts, dict) else {}
    nodes = [n for n in (nodes or []) if isinstance(n, dict)]
    observed = {
        "nccl": facts.get("nccl_version"),
        "nccl_tests": facts.get("nccl_tests_version"),
        "network": facts.get("network"),
        "ofi_provider": facts.get("ofi_provider"),
        "ofi_fabric": facts.get("ofi_fabric"),
        "ofi_protocol": facts.get("ofi_protocol"),
        "gdrdma": facts.get("gdrdma"),
        "nranks": facts.get("nranks"),
    }
    observed.update(log_versions(log_text))
    types = sorted(set(str(n.get("instance_type") or "") for n in nodes) - {""})
    when = date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "schema": SCHEMA,
        "image": str(image or ""),
        "image_digest": image_digest(pods, image),
        "declared": image_tag_versions(image),
        "observed": dict((k, v) for k, v in observed.items() if v not in (None, "")),
        "instance_type": types[0] if len(types) == 1 else ",".join(types),
        "nodes": len(nodes),
        "node_names": [str(n.get("node") or "") for n in nodes],
        "gpus_per_node": max([int(n.get("gpus") or 0) for n in nodes] or [0]),
        "busbw": _busbw(facts),
        "peak_busbw_gbps": facts.get("peak_busbw"),
        "busbw_at_largest_size_gbps": facts.get("busbw_at_largest_size"),
        "date": when,
    }
