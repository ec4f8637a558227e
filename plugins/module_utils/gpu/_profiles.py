# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""EC2 GPU instance profiles: what a node of a given type should show, with a source for every number.

Standard library only. Unknown numbers are None, never guessed; numbers derived by a rule say so in
their source. Read by the lookup ``rlstack.validation.instance_profile``; see docs/instance-profiles.md.

Profile keys (every profile has all of them)::

    instance_type, family, gpu_count, gpu_model, gpu_name, gpu_name_pattern, gpu_memory_gb,
    gpu_memory_mib, gpu_memory_mib_min, efa_devices, network_gbps, nvlink_per_gpu, nvlink_generation,
    nvswitch, pcie_gen, pcie_width, rdma_capable, fi_efa_use_device_rdma, max_message_bytes, gpu_resource,
    efa_resource, ofi_protocol, gdr_required,
    expected_busbw_2node {"1GiB": {busbw_gbps, range, source} | None, "16GiB": ...},
    busbw_floor {nodes, size, size_bytes, floor_gbps, tolerance, source, rule},
    price_per_hour_usd, price_as_of, sources {key: source}, notes [..]
"""

from __future__ import annotations

import copy
import re

GIB = 1 << 30

# -- sources (the files and pages the numbers come from; see /docs/instance-profiles.md) ------------
SRC_PROFILE = (
    "AHC instance-profiles.conf (aws-samples/awsome-distributed-training 4.validation_and_observability/"
    "2.gpu-cluster-healthcheck), torchx named_resources_aws.py, aws-k8s-tester golden gpu_count.txt "
    "(EFA devices and GPUs per instance type)"
)
SRC_G_PROFILE = (
    "torchx named_resources_aws.py, aws-k8s-tester golden files (g5.8xl, g5.48xl), eks-charts EFA device "
    "plugin instance list"
)
SRC_G6 = "seed .opencode/skills/functional-testing/SKILL.md (Phase 0: 2x g6.8xlarge, 1 L4, 1 EFA, 25 Gbps)"
SRC_G6E = "torchx named_resources_aws.py (4 / 8 L40S; 2 / 4 EFA)"
SRC_G6E_LOG = "fixture efa-g6e-l40s-4pod-deepspeed-nccl-info.log: 'NET/OFI Selected provider is efa ... (found 4 nics)' on g6e.48xlarge"
SRC_NVLINK = "awsome-distributed-training 1.architectures/efa-cheatsheet.md: NVLinks per GPU p4de 12, p5/p5en 18, p6-b200 18"
SRC_NVLINK_NONE = "NVIDIA product specifications: A10G, L4 and L40S are PCIe boards without NVLink"
SRC_RDMA = (
    "seed lessons: FI_EFA_USE_DEVICE_RDMA=1 only on RDMA-capable types "
    "(p4d/p4de/p5/p5e/p5en/p6); libfabric aborts with it on g5/g6/g6e. aws-k8s-tester keys the max "
    "message size on RDMA-read capability: 16 GiB on p4d/p4de/p5*, 2 GiB otherwise"
)
SRC_ADT = "awsome-distributed-training micro-benchmarks/nccl-tests/README.md (2x p5.48xlarge, Slurm, current stack)"
SRC_ADT_P4DE = "awsome-distributed-training micro-benchmarks/nccl-tests/README.md (2x p4de.24xlarge: 128 MB 64, 1 GB 77, 2 GB 78)"
SRC_SEED_P5 = "seed functional-testing SKILL.md: expected results (2x p5.48xlarge) 1 GB ~437, 16 GB ~487 GB/s"
SRC_SEED_G6 = "seed functional-testing SKILL.md: 'g6.8xlarge should show ~2-3 GB/s BusBW at 1GB'"
SRC_SEED_FLOOR = "seed tests/lib/cluster.sh L3 thresholds (2-node, last row of an 8B-1G sweep): p5 100, p4d/p4de 50, g6 1.0 GB/s"
SRC_AWS_SPEC = (
    "AWS EC2 accelerated computing instance specifications (docs.aws.amazon.com/ec2/latest/instancetypes/ac.html); "
    "public spec table, not re-verified in this project"
)
SRC_H200_MIB = "fixtures/recorded/h200x1/nvidia-smi-query-full.csv: 'NVIDIA H200, 143771 MiB' (driver 580.159.04)"
SRC_H200_GB = "p5en 8x H200 (141 GB): dstack PR #4110 (GPU memory)"
SRC_NVSWITCH = (
    "NVIDIA/NVSentinel issue #883 (Fabric Manager is required on all multi-GPU NVSwitch systems: HGX A100, H100, "
    "H200, B200) and the EKS node monitoring agent's FabricManagerNotRunning ('NVSwitch-equipped instance'); "
    "the 8-GPU P instances are HGX boards"
)
SRC_PCIE_H200 = (
    "fixtures/recorded/h200x1/nvidia-smi-q.xml: H200 max_link_gen 5, max_link_width 16x (driver 580.159.04)"
)
SRC_PCIE_SPEC = "NVIDIA product specifications (PCIe Gen5 x16 for H100/B200 SXM, Gen4 x16 for A100 SXM4); not re-verified here"
SRC_PRICE = (
    "AWS EC2 On-Demand list price, us-east-1, Linux, as publicly listed in 2025; not re-verified here, "
    "prices change: check the AWS pricing page"
)
PRICE_AS_OF = "2025"
SRC_PRICE_P5EN = (
    "dstack PR #4110 (github.com/dstackai/dstack/pull/4110, 2026-08-06): `dstack offer -b aws --instance-type "
    "p5en.48xlarge` lists $63.296/h on-demand in us-east-1 (dstack's AWS price catalog)"
)
PRICE_AS_OF_P5EN = "2026-08-06"
NOTE_P_PRICE = (
    "price_per_hour_usd is None: AWS changed P4/P5 on-demand prices in 2025 and the current list price was "
    "not verified; capacity blocks are priced separately (the seed quotes ~$725/hr for a p5 capacity block)"
)
RULE_MEM_MIN = "derived: nominal GB as MiB (GB * 10**9 / 2**20) times 0.95, a lower bound for nvidia-smi memory.total"
RULE_FLOOR_DERIVED_RDMA = (
    "derived: 25% of the EFA line rate in GB/s (network_gbps / 8 * 0.25), the ratio of the seed's p5 floor "
    "(100 GB/s for 3200 Gbps); not a published number"
)
RULE_FLOOR_DERIVED_NON_RDMA = (
    "derived: the seed's only floor for a non-RDMA EFA type (g6.8xlarge, 1.0 GB/s); not a published number"
)
FLOOR_RULE = (
    "busbw_floor is a 'the fabric is really used' detector for 2 nodes at 1 GiB, not a performance target "
    "(NCCL over TCP sockets gives ~3 GB/s on p5): the seed's floor where it has one; otherwise 25% of the "
    "EFA line rate on RDMA-capable types and 1.0 GB/s on the others. Performance targets come from "
    "expected_busbw_2node with a tolerance, set per cluster in the inventory."
)


SRC_OFI_PLATFORM = (
    "aws-ofi-nccl src/platform-aws.cpp @ 2daf7d303aa1 (v1.21.x) platform table: default_protocol and "
    "gdr_required per instance type (p4d/p4de: SENDRECV, GDR required; p5/p5e, p5en/p6-b200, p6-b300: RDMA, "
    "GDR required; g5.48xlarge: SENDRECV, GDR not required); types not in the table have neither (the plugin "
    "chooses at run time)"
)
# (instance type regex, aws-ofi-nccl default_protocol, gdr_required), first match wins, as the plugin does
_OFI_PLATFORM = (
    (r"p4d\.24xlarge\Z|p4de\.24xlarge\Z", "SENDRECV", True),
    (r"p5\.4xlarge\Z", "SENDRECV", False),
    (r"p5e?\.|p5en|p6-b200|p6-b300", "RDMA", True),
    (r"p([5-9]|[0-9]{2,})", "RDMA", True),
    (r"g5\.48xlarge\Z", "SENDRECV", False),
)


def _ofi_platform(instance_type):
    """(ofi_protocol, gdr_required) the aws-ofi-nccl AWS platform code sets for a type, or (None, None)."""
    for pattern, protocol, gdr in _OFI_PLATFORM:
        if re.match(pattern, instance_type):
            return protocol, gdr
    return None, None


def _mem_min(gb):
    return int(gb * 10 ** 9 / float(1 << 20) * 0.95) if gb else None


def _profile(instance_type, family, gpu_count, gpu_model, gpu_name, gpu_name_pattern, gpu_memory_gb,
             efa_devices, network_gbps, nvlink_per_gpu, nvlink_generation, rdma_capable, sources,
             gpu_memory_mib=None, expected_1g=None, expected_16g=None, seed_floor=None,
             price=None, notes=None, price_source=SRC_PRICE, price_as_of=PRICE_AS_OF, nvswitch=False, pcie_gen=None,
             pcie_width=None):
    sources = dict(sources)
    if gpu_memory_gb:
        sources.setdefault("gpu_memory_mib_min", RULE_MEM_MIN)
    sources.setdefault("rdma_capable", SRC_RDMA)
    sources.setdefault("fi_efa_use_device_rdma", SRC_RDMA)
    sources.setdefault("max_message_bytes", SRC_RDMA)
    if nvswitch:
        sources.setdefault("nvswitch", SRC_NVSWITCH)
    if pcie_gen or pcie_width:
        sources.setdefault("pcie_gen", SRC_PCIE_SPEC)
        sources.setdefault("pcie_width", SRC_PCIE_SPEC)
    if seed_floor is not None:
        floor, floor_source, rule = seed_floor, SRC_SEED_FLOOR, "seed floor"
    elif rdma_capable and network_gbps:
        floor = round(network_gbps / 8.0 * 0.25, 3)
        floor_source, rule = RULE_FLOOR_DERIVED_RDMA, "derived: 25% of EFA line rate"
    elif efa_devices:
        floor, floor_source, rule = 1.0, RULE_FLOOR_DERIVED_NON_RDMA, "derived: seed non-RDMA floor"
    else:
        floor, floor_source, rule = None, "no EFA: no default floor", "none"
    sources["busbw_floor"] = floor_source
    if price is not None:
        sources["price_per_hour_usd"] = price_source
    ofi_protocol, gdr_required = _ofi_platform(instance_type)
    sources.setdefault("ofi_protocol", SRC_OFI_PLATFORM)
    sources.setdefault("gdr_required", SRC_OFI_PLATFORM)
    notes = list(notes or [])
    if price is None:
        notes.append(NOTE_P_PRICE if family.startswith("p") else
                     "price_per_hour_usd is None: no list price the authors are confident about")
    return {
        "instance_type": instance_type,
        "family": family,
        "gpu_count": gpu_count,
        "gpu_model": gpu_model,
        "gpu_name": gpu_name,
        "gpu_name_pattern": gpu_name_pattern,
        "gpu_memory_gb": gpu_memory_gb,
        "gpu_memory_mib": gpu_memory_mib,
        "gpu_memory_mib_min": _mem_min(gpu_memory_gb),
        "efa_devices": efa_devices,
        "network_gbps": network_gbps,
        "nvlink_per_gpu": nvlink_per_gpu,
        "nvlink_generation": nvlink_generation,
        "nvswitch": bool(nvswitch),
        "pcie_gen": pcie_gen,
        "pcie_width": pcie_width,
        "rdma_capable": rdma_capable,
        "fi_efa_use_device_rdma": rdma_capable,
        "max_message_bytes": 16 * GIB if rdma_capable else 2 * GIB,
        "gpu_resource": "nvidia.com/gpu",
        "efa_resource": "vpc.amazonaws.com/efa",
        "ofi_protocol": ofi_protocol,
        "gdr_required": gdr_required,
        "expected_busbw_2node": {"1GiB": expected_1g, "16GiB": expected_16g},
        "busbw_floor": {
            "nodes": 2, "size": "1GiB", "size_bytes": GIB, "floor_gbps": floor, "tolerance": 0.0,
            "source": floor_source, "rule": rule,
        },
        "price_per_hour_usd": price,
        "price_as_of": price_as_of if price is not None else None,
        "sources": sources,
        "notes": notes,
    }


def _busbw(value, source, value_range=None, note=""):
    return {"busbw_gbps": value, "range": value_range, "source": source, "note": note}


_P_SOURCES = {
    "gpu_count": SRC_PROFILE, "gpu_name": SRC_PROFILE, "gpu_memory_gb": SRC_PROFILE, "efa_devices": SRC_PROFILE,
}
_G_SOURCES = {
    "gpu_count": SRC_G_PROFILE, "gpu_name": SRC_G_PROFILE, "gpu_memory_gb": SRC_AWS_SPEC,
    "efa_devices": SRC_G_PROFILE, "network_gbps": SRC_AWS_SPEC, "nvlink_per_gpu": SRC_NVLINK_NONE,
}


def _src(base, **extra):
    out = dict(base)
    out.update(extra)
    return out


PROFILES = {}


def _add(profile):
    PROFILES[profile["instance_type"]] = profile


_add(_profile(
    "p4d.24xlarge", "p4d", 8, "A100", "NVIDIA A100-SXM4-40GB", r"A100-SXM4-40GB", 40,
    efa_devices=4, network_gbps=400, nvlink_per_gpu=12, nvlink_generation=3, rdma_capable=True, nvswitch=True, pcie_gen=4, pcie_width=16,
    sources=_src(_P_SOURCES, network_gbps=SRC_AWS_SPEC,
                 nvlink_per_gpu="inferred from p4de (same A100 SXM4 / NVSwitch board): " + SRC_NVLINK,
                 nvlink_generation=SRC_NVLINK),
    seed_floor=50.0,
    notes=["no published 2-node all_reduce busbw for p4d.24xlarge in the sources (NVIDIA/nccl #527 reports "
           "57 GB/s at 1 GB on 2 nodes as *slow*, not as a baseline)"],
))
_add(_profile(
    "p4de.24xlarge", "p4de", 8, "A100", "NVIDIA A100-SXM4-80GB", r"A100-SXM4-80GB", 80,
    efa_devices=4, network_gbps=400, nvlink_per_gpu=12, nvlink_generation=3, rdma_capable=True, nvswitch=True, pcie_gen=4, pcie_width=16,
    sources=_src(_P_SOURCES, network_gbps=SRC_AWS_SPEC + "; seed networking-efa skill (4x100 Gbps = 400)",
                 nvlink_per_gpu=SRC_NVLINK, nvlink_generation=SRC_NVLINK,
                 expected_busbw_2node=SRC_ADT_P4DE),
    expected_1g=_busbw(77.0, SRC_ADT_P4DE),
    expected_16g=None,
    seed_floor=50.0,
    notes=["16 GiB 2-node busbw not published (the README stops at 2 GB: 78 GB/s)"],
))
_add(_profile(
    "p5.48xlarge", "p5", 8, "H100", "NVIDIA H100 80GB HBM3", r"H100.*80GB", 80,
    efa_devices=32, network_gbps=3200, nvlink_per_gpu=18, nvlink_generation=4, rdma_capable=True, nvswitch=True, pcie_gen=5, pcie_width=16,
    sources=_src(_P_SOURCES, network_gbps=SRC_AWS_SPEC,
                 nvlink_per_gpu=SRC_NVLINK, nvlink_generation=SRC_NVLINK,
                 expected_busbw_2node=SRC_ADT + "; " + SRC_SEED_P5),
    expected_1g=_busbw(437.0, SRC_ADT + "; " + SRC_SEED_P5,
                       note="the same README's EKS MPIJob run on an older stack (EFA 1.28, aws-ofi-nccl 1.7.3, "
                            "NCCL 2.18.5) shows 313 GB/s at 1 GB and 438 at 2 GB"),
    expected_16g=_busbw(487.0, SRC_ADT + "; " + SRC_SEED_P5),
    seed_floor=100.0,
    notes=["the seed quotes ~$725/hr for a p5.48xlarge capacity block and a failed $1,450 block; that is "
           "not an on-demand list price"],
))
_add(_profile(
    "p5e.48xlarge", "p5e", 8, "H200", "NVIDIA H200", r"H200", 141,
    efa_devices=32, network_gbps=3200, nvlink_per_gpu=18, nvlink_generation=4, rdma_capable=True,
    nvswitch=True, pcie_gen=5, pcie_width=16, gpu_memory_mib=143771,
    sources=_src(_P_SOURCES, gpu_memory_gb=SRC_H200_GB, gpu_memory_mib=SRC_H200_MIB, gpu_name=SRC_H200_MIB,
                 network_gbps=SRC_AWS_SPEC, pcie_gen=SRC_PCIE_H200, pcie_width=SRC_PCIE_H200,
                 nvlink_per_gpu="inferred: H200 SXM uses the NVLink 4 of H100 (p5, p5en: 18); " + SRC_NVLINK,
                 nvlink_generation=SRC_NVLINK),
))
_add(_profile(
    "p5en.48xlarge", "p5en", 8, "H200", "NVIDIA H200", r"H200", 141,
    efa_devices=16, network_gbps=3200, nvlink_per_gpu=18, nvlink_generation=4, rdma_capable=True,
    nvswitch=True, pcie_gen=5, pcie_width=16, gpu_memory_mib=143771,
    sources=_src(_P_SOURCES, gpu_memory_gb=SRC_H200_GB, gpu_memory_mib=SRC_H200_MIB, gpu_name=SRC_H200_MIB,
                 network_gbps=SRC_AWS_SPEC, pcie_gen=SRC_PCIE_H200, pcie_width=SRC_PCIE_H200, nvlink_per_gpu=SRC_NVLINK,
                 nvlink_generation=SRC_NVLINK),
    price=63.296, price_source=SRC_PRICE_P5EN, price_as_of=PRICE_AS_OF_P5EN,
    notes=["EFA devices can come up late on p5en: AHC retries the EFA enumeration three times"],
))
_add(_profile(
    "p6-b200.48xlarge", "p6-b200", 8, "B200", "NVIDIA B200", r"B200", 180,
    efa_devices=8, network_gbps=3200, nvlink_per_gpu=18, nvlink_generation=5, rdma_capable=True, nvswitch=True, pcie_gen=5, pcie_width=16,
    sources=_src(_P_SOURCES, gpu_memory_gb=SRC_AWS_SPEC + " (1,440 GB HBM3e across 8 GPUs)",
                 network_gbps=SRC_AWS_SPEC, nvlink_per_gpu=SRC_NVLINK, nvlink_generation=SRC_NVLINK),
))
for _type, _gpus, _net, _price in (
    ("g5.8xlarge", 1, 25, 2.448),
    ("g5.12xlarge", 4, 40, 5.672),
    ("g5.48xlarge", 8, 100, 16.288),
):
    _add(_profile(
        _type, "g5", _gpus, "A10G", "NVIDIA A10G", r"A10G", 24,
        efa_devices=1, network_gbps=_net, nvlink_per_gpu=0, nvlink_generation=None, rdma_capable=False,
        sources=_G_SOURCES, price=_price,
    ))
_add(_profile(
    "g6.8xlarge", "g6", 1, "L4", "NVIDIA L4", r"\bL4\b", 24,
    efa_devices=1, network_gbps=25, nvlink_per_gpu=0, nvlink_generation=None, rdma_capable=False,
    sources=_src(_G_SOURCES, gpu_count=SRC_G6, efa_devices=SRC_G6, network_gbps=SRC_G6,
                 expected_busbw_2node=SRC_SEED_G6),
    expected_1g=_busbw(2.0, SRC_SEED_G6, value_range=[2.0, 3.0],
                       note="the seed says ~2-3 GB/s; busbw_gbps is the lower end of that range"),
    seed_floor=1.0, price=2.0144,
    notes=["the seed calls g6.8xlarge '~$1/hr', below the on-demand list price: use it as the cheap Phase 0 "
           "rehearsal type, not as a cost reference"],
))
for _type, _gpus, _efa, _net, _price in (
    ("g6e.24xlarge", 4, 2, 200, 15.06559),
    ("g6e.48xlarge", 8, 4, 400, 30.13118),
):
    _add(_profile(
        _type, "g6e", _gpus, "L40S", "NVIDIA L40S", r"L40S", 48,
        efa_devices=_efa, network_gbps=_net, nvlink_per_gpu=0, nvlink_generation=None, rdma_capable=False,
        sources=_src(_G_SOURCES, gpu_count=SRC_G6E, efa_devices=SRC_G6E + "; " + SRC_G6E_LOG),
        price=_price,
        notes=["torchx lists no EFA for the smaller g6e sizes while the eks-charts plugin list includes them: "
               "verify per type"],
    ))

KNOWN_TYPES = tuple(sorted(PROFILES))


class ProfileNotFound(KeyError):
    def __str__(self):
        return str(self.args[0]) if self.args else "unknown instance type"


def normalize_type(instance_type):
    """' ML.P5.48XLARGE ' -> 'p5.48xlarge' (SageMaker 'ml.' prefix and case are ignored)."""
    text = str(instance_type or "").strip().lower()
    if text.startswith("ml."):
        text = text[3:]
    return text


def known_types():
    return list(KNOWN_TYPES)


def get_profile(instance_type):
    """A deep copy of the profile of an instance type; ProfileNotFound names the known types."""
    key = normalize_type(instance_type)
    if key not in PROFILES:
        raise ProfileNotFound(
            "no instance profile for %r; known types: %s. Set the expectations in the inventory instead, "
            "or add a profile with sources to plugins/module_utils/gpu/_profiles.py"
            % (str(instance_type), ", ".join(KNOWN_TYPES))
        )
    return copy.deepcopy(PROFILES[key])


def gpu_name_matches(profile, name):
    """True when an nvidia-smi GPU name fits the profile ('A100-SXM4-40GB' and 'NVIDIA A100-SXM4-40GB')."""
    return bool(name) and re.search(profile["gpu_name_pattern"], str(name)) is not None


def default_floor(profile):
    """The default 2-node busbw floor at 1 GiB (GB/s) or None; see FLOOR_RULE."""
    return profile["busbw_floor"]["floor_gbps"]


# -- the physical limit of all-reduce busbw (the HTML report draws it above the sweep) ---------------
# NVLink bandwidth per link and direction in GB/s, by NVLink generation.
NVLINK_LINK_GBS = {3: 25.0, 4: 25.0, 5: 50.0}
SRC_NVLINK_RATE = (
    "NVIDIA A100 / H100 / B200 specifications: NVLink 600 / 900 / 1,800 GB/s per GPU, both directions together, "
    "over 12 / 18 / 18 links (generation 3 / 4 / 5), i.e. 25 / 25 / 50 GB/s per link and direction; not "
    "re-verified here (docs/hardware.md: NVLink 4 x 18 links = 450 GB/s per direction)"
)
RULE_BUSBW_LIMIT = (
    "all-reduce moves at least 2(m-1)/m of the data in and out of each of m participants (the bandwidth bound "
    "of all-reduce), and nccl-tests reports busbw = algbw x 2(n-1)/n for n ranks; so busbw <= B x m(n-1) / "
    "(n(m-1)) for m nodes of n ranks in all with B = the node's EFA line rate (network_gbps / 8), and busbw <= "
    "B for the ranks of one node with B = one GPU's NVLink per direction. NVLink SHARP (NVLS) reduces in the "
    "switch and can pass the one-node bound"
)


def busbw_limit(instance_type, nodes, ranks=None):
    """The highest all-reduce busbw (GB/s) the instance type's links allow, or None when a number is unknown.

    nodes: the nodes of the run (1: NVLink between the GPUs of one node; 2+: EFA between nodes; None: from ranks,
    a full node per gpu_count ranks, as nccl-tests MPIJobs run); ranks: all ranks (default nodes x GPUs per node).
    Returns {gbps, link, line_rate_gbps, nodes, source, rule}.
    """
    try:
        profile = get_profile(instance_type)
    except ProfileNotFound:
        return None
    gpus = profile["gpu_count"] or 1
    if not nodes:
        nodes = -(-int(ranks) // gpus) if ranks else 1
    nodes = int(nodes)
    ranks = int(ranks or nodes * gpus)
    if nodes <= 1:
        per_link = NVLINK_LINK_GBS.get(profile["nvlink_generation"])
        if not per_link or not profile["nvlink_per_gpu"] or ranks < 2:
            return None
        rate = per_link * profile["nvlink_per_gpu"]
        return {"gbps": rate, "link": "NVLink %d x %d links" % (profile["nvlink_generation"], profile["nvlink_per_gpu"]),
                "line_rate_gbps": rate, "nodes": 1, "source": SRC_NVLINK_RATE, "rule": RULE_BUSBW_LIMIT}
    if not profile["network_gbps"] or ranks < 2:
        return None
    rate = profile["network_gbps"] / 8.0
    return {"gbps": round(rate * nodes * (ranks - 1) / (ranks * (nodes - 1)), 2),
            "link": "EFA %d Gbps per node, %d nodes" % (profile["network_gbps"], nodes), "line_rate_gbps": rate,
            "nodes": nodes,
            "source": profile["sources"].get("network_gbps") or SRC_AWS_SPEC, "rule": RULE_BUSBW_LIMIT}
