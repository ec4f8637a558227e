# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: baseline_checks
short_description: Checks comparing a run with the cluster's stored baseline
version_added: 1.2.0
author:
  - rlstack.validation maintainers (@rlstack)
description:
  - One check per level and measure (busbw at the size that fell most, the level's time), failing when this run is
    worse than the stored baseline by more than the tolerances of C(plugins/module_utils/_limits.py); each message
    names the baseline's date and run and what changed between the two runs. See docs/baselines.md.
  - No stored baseline gives one info check; a stored baseline that cannot be read gives one failing check.
options:
  _input:
    description: This run's baseline (M(rlstack.validation.baseline_record)).
    type: dict
    required: true
  stored:
    description: The stored baseline, its JSON text or a dict; empty when there is none.
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: Compare with the stored baseline
  ansible.builtin.set_fact:
    runner_baseline_checks: "{{ runner_baseline_now | rlstack.validation.baseline_checks(_runner_baseline_text) }}"
"""

RETURN = r"""
_value:
  description: Check specs for M(rlstack.validation.level_assert).
  type: list
  elements: dict
"""

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _baseline
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain


def baseline_checks(current, stored):
    try:
        baseline = _baseline.load(plain(stored))
    except _baseline.BaselineError as exc:
        return [{"name": "baseline", "node": "", "op": "eq", "actual": "unreadable", "expected": "readable",
                 "fail_msg": str(exc),
                 "hint": "remove or fix the stored baseline (docs/baselines.md); the next passing run stores a new one"}]
    return _baseline.compare(plain(current or {}), baseline)


class FilterModule:
    """Baseline checks."""

    def filters(self):
        return {"baseline_checks": baseline_checks}
