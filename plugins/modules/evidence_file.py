#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: evidence_file
short_description: Write one record (JSON or text) of the evidence directory whole, in one step
version_added: 1.0.0
description:
  - Writes O(content) to O(path), making its directory first when missing; the record goes into a temporary file of
    that directory and is renamed over the old one, so a reader never sees half of it. Unchanged content writes nothing.
  - Made for the run's records (a Phase 0 record, a cluster's baseline), which the next run reads; one step instead of
    M(ansible.builtin.file) and M(ansible.builtin.copy), each a module run (a copy with content also runs a stat).
  - On a local connection (the controller, or C(delegate_to) C(localhost)) its action writes the file in the
    controller, with no module run; on another host the module writes it there.
author:
  - rlstack.validation maintainers (@rlstack)
extends_documentation_fragment:
  - rlstack.validation._attributes
options:
  path:
    description: The file to write.
    type: path
    required: true
  content:
    description:
      - What to write. A string is written as it is; anything else (a dict, a list) as indented JSON with sorted keys
        and a final newline.
    type: raw
    required: true
  mode:
    description: The file's permissions, as octal text (C("0644")) or a number.
    type: raw
    default: "0644"
attributes:
  check_mode:
    support: full
    details: In check mode nothing is written; C(changed) says whether it would be.
  diff_mode:
    support: none
    details: It returns whether the record changed, not a diff.
seealso:
  - module: ansible.builtin.copy
"""

EXAMPLES = r"""
- name: Write the Phase 0 record to the evidence directory
  rlstack.validation.evidence_file:
    path: "{{ evidence_dir }}/phase0/{{ inventory_hostname }}-{{ run_id }}.json"
    content: "{{ phase0_record }}"
  delegate_to: localhost
"""

RETURN = r"""
path:
  description: The file written.
  type: str
  returned: always
bytes:
  description: Its size in bytes.
  type: int
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._evidence_file import (
    argument_spec, file_mode, write)


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    params = module.params
    try:
        module.exit_json(**write(params["path"], params["content"], file_mode(params["mode"]), module.check_mode))
    except (OSError, ValueError) as exc:
        module.fail_json(msg="evidence_file: cannot write %s: %s" % (params["path"], exc))


if __name__ == "__main__":
    main()
