# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: bad_node_patches
short_description: The node patches that mark the nodes found bad
version_added: 1.2.0
author:
  - rlstack.validation maintainers (@rlstack)
description:
  - One JSON merge patch per node with findings (label C(rlstack.io/validation=bad), the reason and run id
    annotations, and the taint C(rlstack.io/validation-bad:NoSchedule) or C(spec.unschedulable) as O(action)
    asks). Nodes without findings get no patch.
  - See docs/fleet-scale.md for the names and playbooks/release_nodes.yml for the undo.
options:
  _input:
    description: The run's findings (each level result's C(findings), from C(plugins/module_utils/fleet/_bad_nodes.py), added up).
    type: list
    elements: dict
    required: true
  nodes:
    description: The Node objects of the nodes with findings, read just before.
    type: list
    elements: dict
    required: true
  action:
    description: C(validation_on_bad_node).
    type: str
    choices: [report, label, taint, cordon]
    required: true
  run_id:
    description: The run id the annotation (and the taint's value) carries.
    type: str
    required: true
  suspects:
    description: Bad-node isolation's suspects, C([{node, confidence, evidence}]) (roles/isolate), also acted on.
    type: list
    elements: dict
    default: []
"""

EXAMPLES = r"""
- name: Describe the patches
  ansible.builtin.set_fact:
    runner_bad_node_patches: >-
      {{ runner_bad_node_findings | rlstack.validation.bad_node_patches(_runner_bad_node_objects, 'taint', runner_run) }}
"""

RETURN = r"""
_value:
  description: C({name, patch, applies, reasons, check}); C(check) is an info check for the report's row.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rlstack.validation.plugins.module_utils.fleet import _bad_nodes
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain


def bad_node_patches(findings, nodes, action, run_id, suspects=None):
    try:
        return _bad_nodes.node_patches(plain(findings or []), plain(nodes or []), str(action), str(run_id),
                                       plain(suspects or []))
    except _bad_nodes.BadNodeError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    """Bad-node patches."""

    def filters(self):
        return {"bad_node_patches": bad_node_patches}
