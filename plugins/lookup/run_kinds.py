# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: run_kinds
author:
  - rlstack.validation maintainers (@rlstack)
version_added: 1.2.0
short_description: The kinds a validation run may create, in the order the cleanup deletes them
description:
  - Returns C(RUN_KINDS) of C(plugins/module_utils/k8s/_objects_absent.py), the one list that the level cleanup, the
    interrupt watchdog and C(playbooks/cleanup.yml) delete (owners first), each a dict with C(api_version) and C(kind).
"""

EXAMPLES = r"""
- name: Delete a run's objects
  rlstack.validation.objects_absent:
    namespace: default
    label_selectors: [rlstack.io/run-id=20261201-1200-ab12]
    kinds: "{{ query('rlstack.validation.run_kinds') }}"
"""

RETURN = r"""
_raw:
  description: One dict per kind (C(api_version), C(kind)), owners first.
  type: list
  elements: dict
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _objects_absent


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        return _objects_absent.run_kinds()
