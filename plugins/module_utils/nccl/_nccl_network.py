# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Network-name normalisation: NCCL's net plugin names in one vocabulary (``NETWORKS``) for checks and expectations.

``normalize_network`` is the one rule, applied to what the parser read and to what an inventory expects
(docs/nccl-parser.md, docs/verdicts.md). Python 3.8+ syntax, standard library only (travels to managed hosts).
"""

from __future__ import annotations

import re

# Net plugin names as the sources print them ("Using network %s", "via NET/%s/..."): NCCL's built-in "IB" and
# "Socket" (src/transport/net_ib.cc, net_socket.cc, v2.21.5-1 .. v2.30.7-1); aws-ofi-nccl "Libfabric", or
# "AWS Libfabric" when NCCL_NET asks for it (src/nccl_ofi_interface_nvidia.cpp:662,842, v1.21.1; "AWS Libfabric"
# in the real logs of 1.7.3-aws and 1.9.1-aws under tests/unit/fixtures/nccl); nccl-rdma-sharp-plugins "IBext" (src/ib_plugin.c:727), "UCX"
# (src/ucx_plugin.c:805) and "UCX_RMA" (src/ucx_rma_plugin.c:1087, v2.1.0), and NCCL's "IBext_v<N>" spelling.
NETWORKS = ("efa", "ib", "socket", "ucx", "ofi", "ofi:<provider>")
_IB_NAMES = ("ib", "ibext", "ibext_v")


def normalize_network(raw, provider=None):
    """The network in the stable vocabulary of NETWORKS, from NCCL's name and the OFI provider.

    'Socket' -> 'socket'; 'IB', 'IBext', 'IBext_v8' -> 'ib'; 'UCX', 'UCX_RMA' -> 'ucx' (UCX over InfiniBand/RoCE
    verbs, NVIDIA's plugin); 'AWS Libfabric' / 'Libfabric' / 'OFI' ->
    'efa' when the provider is efa, 'ofi:<provider>' for another provider (cxi, tcp), 'ofi' when the log
    does not name it; no name but a provider -> the same as Libfabric; any other name -> lowercased
    with spaces as '-' (a plugin this table does not know). Also applied to expectations, so 'IB' and
    'ib' or 'Libfabric' and 'ofi' mean the same.
    """
    name = str(raw or "").strip()
    prov = str(provider or "").strip().lower()
    if not name:
        if not prov:
            return None
        name = "ofi"
    lowered = name.lower()
    if lowered.startswith("ofi:"):
        prov, lowered = lowered[4:], "ofi"
    if lowered == "socket":
        return "socket"
    if lowered == "efa":
        return "efa"
    if lowered in _IB_NAMES or re.match(r"ibext(_v\d+)?\Z", lowered):
        return "ib"
    if re.match(r"ucx(?:[_-]rma)?\Z", lowered):
        return "ucx"
    if "libfabric" in lowered or lowered == "ofi" or lowered.startswith("aws-ofi"):
        if not prov:
            return "ofi"
        return "efa" if prov == "efa" else "ofi:" + prov
    return re.sub(r"\s+", "-", lowered)
