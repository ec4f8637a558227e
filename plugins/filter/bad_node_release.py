# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: bad_node_release
short_description: The node patches that undo what rlstack.validation applied to bad nodes
version_added: 1.2.0
author:
  - rlstack.validation maintainers (@rlstack)
description:
  - For each node carrying the collection's mark (label C(rlstack.io/validation=bad) or its run annotation), the
    JSON merge patch that removes the label, the annotations and the taint C(rlstack.io/validation-bad), and
    uncordons the node only when the collection cordoned it. Other nodes get no patch; nodes marked by another run
    than O(run_id) are left alone when it is given.
options:
  _input:
    description: Node objects (C(kubernetes.core.k8s_info) resources).
    type: list
    elements: dict
    required: true
  run_id:
    description: Only the nodes this run marked; empty for every marked node.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Describe the undo
  ansible.builtin.set_fact:
    release_patches: "{{ _release_nodes.resources | rlstack.validation.bad_node_release(validation_run_id | default('')) }}"
"""

RETURN = r"""
_value:
  description: C({name, patch, run, undoes}), one per marked node.
  type: list
  elements: dict
"""

from ansible_collections.rlstack.validation.plugins.module_utils.fleet import _bad_nodes
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain


def bad_node_release(nodes, run_id=""):
    return _bad_nodes.release_patches(plain(nodes or []), str(run_id or ""))


class FilterModule:
    """Bad-node release."""

    def filters(self):
        return {"bad_node_release": bad_node_release}
