# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: phase0_record
short_description: The Phase 0 record written to the evidence directory and AWX artifacts
version_added: 1.1.0
author:
  - rlstack.validation maintainers (@rlstack)
description:
  - One JSON document per Phase 0 run; the Phase 0 gate reads them (docs/phase0.md).
options:
  _input:
    description: The level status, C(PASS) or C(FAIL).
    type: str
    required: true
  run_id:
    description: The run id.
    type: str
    required: true
  cluster:
    description: The cluster (inventory host) Phase 0 ran on.
    type: str
    required: true
  fingerprint:
    description: M(rlstack.validation.stack_fingerprint)'s result.
    type: dict
    required: true
  checks_failed:
    description: Messages of the failed checks.
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Write down what Phase 0 proved
  ansible.builtin.set_fact:
    my_phase0_record: >-
      {{ runner_level_status | rlstack.validation.phase0_record(runner_run, inventory_hostname, phase0_efa_fingerprint) }}
"""

RETURN = r"""
_value:
  description: C({schema, status, run_id, cluster, passed_at, fingerprint, checks_failed, cost})
  type: dict
"""

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _gate
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain


def phase0_record(status, run_id, cluster, fingerprint, checks_failed=None):
    return _gate.record(str(status), str(run_id), str(cluster), plain(fingerprint or {}),
                        [str(c) for c in plain(checks_failed or [])])


class FilterModule:
    """Phase 0 record."""

    def filters(self):
        return {"phase0_record": phase0_record}
