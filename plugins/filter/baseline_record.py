# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: baseline_record
short_description: The cluster's baseline from one run's level results
version_added: 1.2.0
author:
  - rlstack.validation maintainers (@rlstack)
description:
  - Per passed level its time and its busbw per message size, and the versions that matter (NCCL, aws-ofi-nccl,
    libfabric, driver, image and digest from the levels' stack fingerprints; instance type and node count from the
    GPU nodes). See docs/baselines.md.
options:
  _input:
    description: "The level results by level id, each with its C(fingerprint) (or none)."
    type: dict
    required: true
  cluster:
    description: The cluster (inventory host).
    type: str
    required: true
  run_id:
    description: The run id.
    type: str
    required: true
  date:
    description: When the run ended, ISO 8601 in UTC.
    type: str
    required: true
  nodes:
    description: The GPU nodes, C([{node, instance_type, gpus, efa}]).
    type: list
    elements: dict
    required: true
  stored:
    description:
      - The stored baseline (JSON text or dict) to merge into, for the baseline a passing run stores; this run's
        levels and versions replace the stored ones, other levels are kept. Empty gives this run's alone; an
        unreadable one is replaced.
    type: raw
    default: ""
"""

EXAMPLES = r"""
- name: Describe this run as a baseline
  ansible.builtin.set_fact:
    runner_baseline_now: >-
      {{ runner_results | rlstack.validation.baseline_record(inventory_hostname, runner_run,
         now(utc=true).strftime('%Y-%m-%dT%H:%M:%SZ'), runner_gpu_nodes) }}
"""

RETURN = r"""
_value:
  description: C({schema, cluster, run_id, date, levels, versions}).
  type: dict
"""

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _baseline
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain


def baseline_record(results, cluster, run_id, date, nodes, stored=""):
    current = _baseline.record(plain(results or {}), str(cluster), str(run_id), str(date), plain(nodes or []))
    try:
        previous = _baseline.load(plain(stored))
    except _baseline.BaselineError:
        previous = None
    return _baseline.merge(previous, current) if previous else current


class FilterModule:
    """Baseline record."""

    def filters(self):
        return {"baseline_record": baseline_record}
