# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: stack_fingerprint
short_description: The stack a run of nccl-tests proved, as data
version_added: 1.1.0
author:
  - rlstack.validation maintainers (@rlstack)
description:
  - Image reference and digest (the pods' C(status.containerStatuses[].imageID) when the cluster reports it), the
    versions the image tag declares (CUDA, EFA installer, aws-ofi-nccl, NCCL, nccl-tests), the versions the NCCL log
    printed (NCCL, nccl-tests, aws-ofi-nccl, libfabric, CUDA driver, network, OFI provider), instance type, node
    count, GPUs per node, busbw per message size and the date. See docs/phase0.md.
options:
  _input:
    description: The image reference the pods ran.
    type: str
    required: true
  pods:
    description: The pods (C(k8s_info) resources) that ran it; their C(imageID) gives the digest.
    type: list
    elements: dict
    default: []
  facts:
    description: M(rlstack.validation.nccl_log_info)'s result for the log, or null.
    type: dict
  log:
    description: The log text (aws-ofi-nccl, libfabric and CUDA driver versions are read from it).
    type: str
    default: ""
  nodes:
    description: The nodes, C([{node, instance_type, gpus, efa}]).
    type: list
    elements: dict
    default: []
"""

EXAMPLES = r"""
- name: Describe what Phase 0 proved
  ansible.builtin.set_fact:
    phase0_efa_fingerprint: >-
      {{ phase0_efa_nccl_tests_image | rlstack.validation.stack_fingerprint(runner_nccl_pods,
         runner_nccl_item.facts, runner_mpijob_result.log, runner_nccl_nodes) }}
"""

RETURN = r"""
_value:
  description: >-
    C({schema, image, image_digest, declared: {cuda, efa_installer, aws_ofi_nccl, nccl, nccl_tests}, observed: {nccl,
    nccl_tests, aws_ofi_nccl, libfabric, cuda_driver, network, ofi_provider, nranks}, instance_type, nodes, node_names,
    gpus_per_node, busbw: [{size_bytes, busbw_gbps}], peak_busbw_gbps, busbw_at_largest_size_gbps, date})
  type: dict
"""

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _fingerprint
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain


def stack_fingerprint(image, pods=None, facts=None, log="", nodes=None):
    facts = plain(facts) if facts else None
    return _fingerprint.fingerprint(str(image or ""), plain(pods or []), facts if isinstance(facts, dict) else None,
                                    str(log or ""), plain(nodes or []))


class FilterModule:
    """Stack fingerprint."""

    def filters(self):
        return {"stack_fingerprint": stack_fingerprint}
