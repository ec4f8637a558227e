# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: instance_profile
author:
  - rlstack.validation maintainers (@rlstack)
version_added: 1.0.0
short_description: What a node of an EC2 GPU instance type should show (GPUs, EFA, RDMA, busbw, price)
description:
  - Returns the profile of one or more EC2 instance types as data with a source for every number, so
    roles derive their defaults (GPU count and name, EFA devices, whether to set C(FI_EFA_USE_DEVICE_RDMA),
    the largest NCCL message size, busbw expectations and floors) from the node's instance type.
  - Unknown numbers are V(null), never guessed. See C(docs/instance-profiles.md) for the fields and sources.
  - "Known types: p4d.24xlarge, p4de.24xlarge, p5.48xlarge, p5e.48xlarge, p5en.48xlarge, p6-b200.48xlarge,
    g5.8xlarge, g5.12xlarge, g5.48xlarge, g6.8xlarge, g6e.24xlarge, g6e.48xlarge. Case and a SageMaker C(ml.)
    prefix are ignored."
options:
  _terms:
    description: Instance types, for example V(p5.48xlarge) (the node label C(node.kubernetes.io/instance-type)).
    required: true
    type: list
    elements: str
  errors:
    description:
      - V(strict) raises an error naming the known types for an unknown type.
      - V(ignore) returns an empty dict for an unknown type.
    type: str
    default: strict
    choices: [strict, ignore]
"""

EXAMPLES = r"""
- name: Derive the expectations from the node's instance type
  ansible.builtin.set_fact:
    l0_infrastructure_profile: "{{ lookup('rlstack.validation.instance_profile', 'p5.48xlarge') }}"

- name: Show the GPU count and the default busbw floor
  ansible.builtin.debug:
    msg: >-
      {{ l0_infrastructure_profile.gpu_count }} GPUs,
      floor {{ l0_infrastructure_profile.busbw_floor.floor_gbps }} GB/s at 1 GiB

- name: Set FI_EFA_USE_DEVICE_RDMA only where the type supports it
  ansible.builtin.set_fact:
    phase0_efa_env: >-
      {{ {'FI_EFA_USE_DEVICE_RDMA': '1'}
         if lookup('rlstack.validation.instance_profile', node_type).rdma_capable else {} }}

- name: Several types at once, unknown types as empty dicts
  ansible.builtin.set_fact:
    profiles: "{{ query('rlstack.validation.instance_profile', 'g6.8xlarge', 'm5.large', errors='ignore') }}"
"""

RETURN = r"""
_raw:
  description:
    - One profile per term (a dict; an empty dict for an unknown type with O(errors=ignore)).
    - "Keys: instance_type, family, gpu_count, gpu_model, gpu_name (as nvidia-smi names it), gpu_name_pattern
      (regex), gpu_memory_gb, gpu_memory_mib, gpu_memory_mib_min, efa_devices, network_gbps, nvlink_per_gpu,
      nvlink_generation, rdma_capable, fi_efa_use_device_rdma, max_message_bytes, gpu_resource, efa_resource,
      expected_busbw_2node (C(1GiB) and C(16GiB): busbw_gbps, range, source, note, or null), busbw_floor
      (nodes, size, size_bytes, floor_gbps, tolerance, source, rule), price_per_hour_usd, sources, notes."
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.rlstack.validation.plugins.module_utils.gpu._profiles import (
    ProfileNotFound,
    get_profile,
)


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        errors = self.get_option("errors")
        profiles = []
        for term in terms:
            try:
                profiles.append(get_profile(str(term)))
            except ProfileNotFound as exc:
                if errors == "ignore":
                    profiles.append({})
                    continue
                raise AnsibleLookupError(str(exc)) from None
        return profiles
