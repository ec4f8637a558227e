# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: levels
author:
  - rlstack.validation maintainers (@rlstack)
version_added: 1.1.0
short_description: The validation levels, in the registry's order (the level registry)
description:
  - Returns the level registry of C(plugins/module_utils/_levels.py), the one list of the levels that the
    runner, the plan, the report, the AWX surveys, C(validate.sh) and local mode read or are tested against.
  - Each level is a dict with C(id), C(level), C(name), C(order), C(tags), C(skip_to), C(kind), C(probe),
    C(per_example), C(local), C(only_when_enabled), C(runs_before) (a level that runs ahead of its place, Phase 0
    runs before L3) and the fields the runner decides by instead of a level's id (C(example_needs),
    C(judge_without_targets), C(after_probe), C(preflight), C(isolate_from),
    C(opens_phase0_gate), C(phase0_gated)), each filled with its default where a row leaves it out;
    C(plugins/module_utils/_levels.py) and C(docs/architecture.md) describe them.
options:
  _terms:
    description: Level ids to return (a row id such as V(l5_training_step/libero) names its level); none returns every level.
    required: false
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Every level, in order
  ansible.builtin.debug:
    msg: "{{ query('rlstack.validation.levels') | map(attribute='level') | list }}"

- name: The entry of one level
  ansible.builtin.set_fact:
    my_level: "{{ query('rlstack.validation.levels', 'l3_multi_gpu') | first }}"
"""

RETURN = r"""
_raw:
  description: One dict per level (every level without terms, else one per term, in the order given).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.rlstack.validation.plugins.module_utils import _levels


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        if not terms:
            return _levels.levels()
        try:
            return [_levels.by_id(str(term)) for term in terms]
        except KeyError as exc:
            raise AnsibleLookupError(exc.args[0]) from None
