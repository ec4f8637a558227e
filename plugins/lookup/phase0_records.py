# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: phase0_records
author:
  - rlstack.validation maintainers (@rlstack)
version_added: 1.1.0
short_description: The Phase 0 records of evidence directories on the controller
description:
  - Reads every C(phase0/*.json) record under each directory (newest first); files that are not Phase 0 records
    are skipped with a warning. A missing directory gives no records. See docs/phase0.md.
options:
  _terms:
    description: Evidence directories (C(validation_evidence_dir)); C(~) is expanded.
    required: true
    type: list
    elements: str
"""

EXAMPLES = r"""
- name: Read the Phase 0 records
  ansible.builtin.set_fact:
    runner_phase0_records: "{{ query('rlstack.validation.phase0_records', validation_evidence_dir) }}"
"""

RETURN = r"""
_raw:
  description: Phase 0 records (C({schema, status, run_id, cluster, passed_at, fingerprint, checks_failed, source})).
  type: list
  elements: dict
"""

from ansible.plugins.lookup import LookupBase
from ansible.utils.display import Display

from ansible_collections.rlstack.validation.plugins.plugin_utils._evidence import read_records

display = Display()


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        out = []
        for term in terms:
            records, problems = read_records(term)
            for problem in problems:
                display.warning("rlstack.validation.phase0_records: skipped %s" % problem)
            out.extend(records)
        return out
