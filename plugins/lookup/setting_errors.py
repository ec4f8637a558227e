# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: setting_errors
author:
  - rlstack.validation maintainers (@rlstack)
version_added: 1.1.0
short_description: One sentence for every setting of a run that has a value it may not have
description:
  - Reads the argument specs of the run-wide settings (the runner role's C(plan) entry point, the
    C(validation_*) settings) and of every level of the level registry (each level role's C(main)), takes
    each setting's value (the inventory, C(-e), an AWX survey, else the level role's default), and returns one
    sentence per value that is not allowed (the setting, the value, what is allowed).
  - Stricter than Ansible's own argument-spec check, and it knows the allowed range of each number, so a
    run it lets through is not stopped later by a role's argument spec. C(roles/runner/tasks/settings.yml)
    runs it before the run creates anything.
options:
  _terms:
    description: Level ids to check (the registry's); none checks the run-wide settings and every level.
    required: false
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Refuse bad settings before anything is created
  ansible.builtin.fail:
    msg: "{{ errors | join('\n') }}"
  when: errors | length > 0
  vars:
    errors: "{{ query('rlstack.validation.setting_errors') }}"
"""

RETURN = r"""
_raw:
  description: One sentence per bad setting, in the order of the argument specs; empty when every setting is allowed.
  type: list
  elements: str
"""

import os

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase

from ansible_collections.rlstack.validation.plugins.module_utils import _levels
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain
from ansible_collections.rlstack.validation.plugins.plugin_utils import _settings

ROLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles")


class LookupModule(LookupBase):

    def _load(self, *parts):
        path = os.path.join(ROLES, *parts)
        if not os.path.exists(path):
            return {}
        return self._loader.load_from_file(path, trusted_as_template=True) or {}

    def _specs(self, level_ids):
        """[(source, entry point options, role defaults)] of the run-wide settings and of each level."""
        out = []
        if not level_ids:
            plan = self._load("runner", "meta", "argument_specs.yml")["argument_specs"]["plan"]
            out.append(("", plan.get("options") or {}, {}))
        for level_id in level_ids or (_levels.ids() + _levels.diagnostic_ids()):
            spec = self._load(level_id, "meta", "argument_specs.yml").get("argument_specs", {}).get("main", {})
            out.append((level_id, spec.get("options") or {}, self._load(level_id, "defaults", "main.yml")))
        return out

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables or {}
        specs = self._specs([str(term) for term in terms or []])
        available = {}
        for _source, _options, defaults in specs:
            available.update(defaults)
        available.update(variables)
        templar = self._templar.copy_with_new_env(available_variables=available)
        settings = []
        for source, options, defaults in specs:
            for name, spec in options.items():
                if name in variables:
                    raw, where = variables[name], ""
                elif name in defaults:
                    raw, where = defaults[name], "the default of roles/%s" % source
                else:
                    continue
                try:
                    value = plain(templar.template(raw))
                except AnsibleError as exc:
                    value = _settings.Unreadable(exc.message if hasattr(exc, "message") else exc)
                settings.append((name, value, plain(spec), where))
        return _settings.check_all(settings)
