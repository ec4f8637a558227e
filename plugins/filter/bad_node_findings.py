# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: bad_node_findings
short_description: The bad-node findings of one level result
version_added: 1.2.0
author:
  - rlstack.validation maintainers (@rlstack)
description:
  - The failed checks of a level result that name a node of the cluster, as findings C({node, level, check, reason}).
  - Warnings and checks that could not collect their evidence are not findings; neither are checks naming something
    that is not one of O(node_names) (a pod's hostname, an example). See docs/fleet-scale.md.
options:
  _input:
    description: A level result (M(rlstack.validation.level_assert)'s C(result)).
    type: dict
    required: true
  node_names:
    description: The names of the cluster's nodes.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Add this level's bad-node findings
  ansible.builtin.set_fact:
    runner_bad_node_findings: >-
      {{ runner_bad_node_findings + (_runner_verdict.result
         | rlstack.validation.bad_node_findings(runner_gpu_nodes | map(attribute='node'))) }}
"""

RETURN = r"""
_value:
  description: Findings, C({node, level, check, reason}), one per failed check that names a node.
  type: list
  elements: dict
"""

from ansible_collections.rlstack.validation.plugins.module_utils import _bad_nodes
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain


def bad_node_findings(result, node_names):
    return _bad_nodes.findings(plain(result or {}), [str(n) for n in plain(node_names or [])])


class FilterModule:
    """Bad-node findings."""

    def filters(self):
        return {"bad_node_findings": bad_node_findings}
