# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: phase0_gate
short_description: Whether the expensive multi-node levels may run, from the Phase 0 records
version_added: 1.1.0
author:
  - rlstack.validation maintainers (@rlstack)
description:
  - Before L3 multi-node, L5 and L6 on an instance type above the price threshold (or without a known price), looks
    for a Phase 0 pass whose fingerprint matches the run's on the image (digest when known), NCCL, aws-ofi-nccl, the
    EFA installer and libfabric, within the freshness window. Names every difference. See docs/phase0.md.
options:
  _input:
    description: The Phase 0 records found (evidence directory, AWX workflow artifacts, object storage).
    type: list
    elements: dict
    required: true
  mode:
    description: C(fail), C(warn) or C(off).
    type: str
    default: fail
  plan:
    description: The run's plan (C(runner_plan)); its selected rows decide which gated levels run.
    type: list
    elements: dict
    required: true
  selected_ids:
    description: The level ids the run may run (C(runner_survey.ids)).
    type: list
    elements: str
    required: true
  nodes:
    description: The GPU nodes of the cluster under test, C([{node, instance_type}]).
    type: list
    elements: dict
    required: true
  image:
    description: The nccl-tests image the run uses.
    type: str
    required: true
  threshold_usd:
    description: Instance price per hour at or above which the gate applies.
    type: float
    default: 20
  max_age_h:
    description: How old a Phase 0 pass may be, in hours.
    type: float
    default: 168
  prices:
    description: C(validation_prices) (overrides of the instance profiles' prices).
    type: dict
    default: {}
  phase0_in_run:
    description:
      - Phase 0 runs in this run, before the gated levels; the gate then waits for its verdict (action C(defer)) and
        M(rlstack.validation.phase0_gate_settle#filter) decides.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Decide the Phase 0 gate
  ansible.builtin.set_fact:
    runner_phase0_gate: >-
      {{ runner_phase0_records | rlstack.validation.phase0_gate(runner_phase0_gate_mode, runner_plan,
         runner_survey.ids, runner_gpu_nodes, runner_phase0_gate_image) }}
"""

RETURN = r"""
_value:
  description: >-
    C({action: pass|warn|fail|skip|defer, reason: ok|missing|stale|mismatch|cheap|off|no_level|same_run, message,
    differences, not_compared, record, mode, instance_type, levels, blocked, nodes, price_per_hour, what})
  type: dict
"""

import time

from ansible.errors import AnsibleFilterError

from ansible_collections.rlstack.validation.plugins.module_utils.fleet import _cost
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _fingerprint, _gate
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain


def phase0_gate(records, mode, plan, selected_ids, nodes, image, threshold_usd=20.0, max_age_h=168.0, prices=None,
                phase0_in_run=False):
    mode = str(mode or "fail").strip().lower()
    if mode not in _gate.MODES:
        raise AnsibleFilterError("validation_phase0_gate must be one of %s, not %r" % (", ".join(_gate.MODES), mode))
    nodes = [n for n in plain(nodes or []) if isinstance(n, dict)]
    chosen = set(str(i) for i in plain(selected_ids or []))
    levels = []
    for item in plain(plan or []):
        level_id = str(item.get("id") or "").split("/", 1)[0]
        if item.get("selected", True) and level_id in _gate.GATED_LEVELS and level_id in chosen \
                and level_id not in levels:
            if level_id in _gate.GATED_MULTI_NODE and len(nodes) < 2:
                continue  # L3 on one node never crosses the network
            levels.append(level_id)
    types = sorted(set(str(n.get("instance_type") or "") for n in nodes) - {""})
    instance_type = types[0] if types else ""
    price = _cost.price(instance_type, plain(prices or {}))["price_per_hour_usd"] if instance_type else None
    current = _fingerprint.fingerprint(str(image or ""), nodes=nodes)
    count = len([n for n in nodes if str(n.get("instance_type") or "") == instance_type])
    return _gate.decide(mode, levels, instance_type, price, float(threshold_usd),
                        [r for r in plain(records or []) if isinstance(r, dict)], current, time.time(),
                        float(max_age_h) * 3600.0, bool(phase0_in_run), count)


def phase0_gate_settle(gate, phase0_status, must_pass=True):
    return _gate.settle(plain(gate or {}), str(phase0_status or ""), bool(must_pass))


class FilterModule:
    """Phase 0 gate."""

    def filters(self):
        return {"phase0_gate": phase0_gate, "phase0_gate_settle": phase0_gate_settle}
