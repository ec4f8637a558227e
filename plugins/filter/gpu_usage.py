# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: gpu_usage
short_description: GPU time a level's pods held, by instance type
version_added: 1.1.0
author:
  - rlstack.validation maintainers (@rlstack)
description:
  - For each pod that requests C(nvidia.com/gpu), the GPUs times the time from its scheduling (the C(PodScheduled)
    condition) to when it let them go (the last container's C(finishedAt), its C(deletionTimestamp), or O(observed_at)
    for a pod still running), summed per instance type of the node it ran on.
  - The same pod in several snapshots counts once. The report turns the result into GPU-minutes and money
    (docs/reports.md, "Cost").
options:
  _input:
    description: Pods as M(kubernetes.core.k8s_info) returns them (C(resources)).
    type: list
    elements: dict
    required: true
  observed_at:
    description: Epoch seconds when the pods were last seen (the end of a pod that still holds its GPUs).
    type: float
    required: true
  nodes:
    description: The GPU nodes, C([{node, instance_type}]) as C(runner_gpu_nodes) lists them.
    type: list
    elements: dict
    default: []
  mpijob:
    description:
      - The MPIJob the pods belong to. Workers the pods list lacks (the operator deletes running workers when the
        launcher ends) count from the MPIJob's C(status.startTime) to its C(completionTime).
    type: dict
  job:
    description: Only the pods of this batch/v1 Job (label C(batch.kubernetes.io/job-name)) count.
    type: str
"""

EXAMPLES = r"""
- name: Count the GPU time of the probe pods
  ansible.builtin.set_fact:
    runner_level_gpu: >-
      {{ runner_level_gpu + [_runner_probe_pods.resources
         | rlstack.validation.gpu_usage(now(utc=true).timestamp(), runner_gpu_nodes)] }}
"""

RETURN = r"""
_value:
  description: "C({pods, gpu_seconds, gpu_minutes, by_instance_type: {<type>: {gpu_seconds, gpu_minutes, nodes}}})"
  type: dict
"""

from ansible_collections.rlstack.validation.plugins.module_utils.fleet import _cost
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain


def gpu_usage(pods, observed_at, nodes=None, mpijob=None, job=None):
    node_types = dict((str(n.get("node", "")), str(n.get("instance_type", "")))
                      for n in plain(nodes or []) if isinstance(n, dict))
    return _cost.gpu_usage(plain(pods or []), float(observed_at), node_types, plain(mpijob) if mpijob else None,
                           str(job) if job else None)


class FilterModule:
    """GPU time."""

    def filters(self):
        return {"gpu_usage": gpu_usage}
