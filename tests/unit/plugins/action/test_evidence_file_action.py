# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""evidence_file through a real ansible-playbook run: on a local connection the record is written in the controller (no
module is sent), the same file the module writes; check mode writes nothing."""

from __future__ import annotations

import json

from test_level_assert_action import _ansible_playbook

PLAY = """
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Write the record
      rlstack.validation.evidence_file:
        path: "{{ record }}"
        content: "{{ {'status': 'PASS', 'nodes': ['g6-node-0', 'g6-node-1']} }}"
      register: written
      check_mode: "{{ check | default(false) }}"
    - name: Keep it
      ansible.builtin.copy:
        content: "{{ written | to_json }}"
        dest: "{{ out }}"
        mode: "0644"
      check_mode: false
"""


def test_the_action_writes_the_record_in_the_controller_without_a_module(tmp_path):
    record = tmp_path / "evidence" / "phase0" / "eks-run1.json"
    written, proc = _ansible_playbook(tmp_path, "play.yml", PLAY, {"record": str(record)},
                                      ANSIBLE_KEEP_REMOTE_FILES="1", ANSIBLE_REMOTE_TMP=str(tmp_path / "rtmp"))
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert written["changed"] is True and written["path"] == str(record)
    assert json.loads(record.read_text()) == {"status": "PASS", "nodes": ["g6-node-0", "g6-node-1"]}
    assert not list((tmp_path / "rtmp").rglob("AnsiballZ_evidence_file*"))


def test_check_mode_writes_nothing(tmp_path):
    record = tmp_path / "evidence" / "phase0" / "eks-run1.json"
    written, proc = _ansible_playbook(tmp_path, "play.yml", PLAY, {"record": str(record), "check": True})
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert written["changed"] is True and not record.exists()
