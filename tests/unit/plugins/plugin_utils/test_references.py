# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/plugin_utils/_references.py: Ansible references, kustomization files, shell `source` lines."""

from __future__ import annotations

import os

import pytest

from ansible_collections.rlstack.validation.plugins.plugin_utils import _references as p

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


# ------------------------------------------------------------------------------------------ references


def write(base, rel, text):
    path = os.path.join(str(base), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


@pytest.fixture
def collection(tmp_path):
    write(tmp_path, "roles/r/tasks/main.yml", """---
# a comment about {{ role_path }}/files/not_checked.py
- name: Included
  ansible.builtin.include_tasks: other.yml
- name: Dynamic
  ansible.builtin.include_tasks: "{{ some_var }}"
- name: Pattern
  ansible.builtin.include_tasks: "probe_{{ transport }}.yml"
- name: Missing
  include_tasks:
    file: missing.yml
- name: Template
  ansible.builtin.template:
    src: t.j2
    dest: /tmp/t
- name: Missing template
  ansible.builtin.template: {src: gone.j2, dest: /tmp/g}
- name: Remote copy is not checked
  ansible.builtin.copy: {src: /etc/hosts, dest: /tmp/h, remote_src: true}
- name: Files
  ansible.builtin.set_fact:
    a: "{{ lookup('ansible.builtin.file', 'data.txt') }}"
    b: "{{ role_path }}/files/probe.py"
    c: "{{ role_path }}/files/{{ name }}.py"
    d: "{{ lookup('file', some_variable) }}"
- name: Vars
  ansible.builtin.include_vars:
    file: "{{ role_path }}/../{{ item }}/defaults/main.yml"
  loop: [r, s]
- name: Other role
  ansible.builtin.include_role:
    name: ns.coll.s
    tasks_from: go.yml
- name: Missing entry point
  ansible.builtin.import_role:
    name: s
    tasks_from: nowhere
- name: Another collection
  ansible.builtin.include_role:
    name: kubernetes.core.helm
""")
    write(tmp_path, "roles/r/tasks/other.yml", "---\n[]\n")
    write(tmp_path, "roles/r/tasks/probe_host.yml", "---\n[]\n")
    write(tmp_path, "roles/r/templates/t.j2",
          "{# {{ lookup('template', 'commented.j2') }} #}\n{{ lookup('ansible.builtin.template', 'labels.j2') }}\n")
    write(tmp_path, "roles/r/templates/labels.j2", "a: b\n")
    write(tmp_path, "roles/r/files/data.txt", "x\n")
    write(tmp_path, "roles/r/files/probe.py", "x\n")
    write(tmp_path, "roles/r/files/probe_x.py", "x\n")
    write(tmp_path, "roles/r/defaults/main.yml", "---\n{}\n")
    write(tmp_path, "roles/s/defaults/main.yml", "---\n{}\n")
    write(tmp_path, "roles/s/tasks/go.yml", "---\n[]\n")
    write(tmp_path, "roles/s/files/broken.yml", "not: [checked\n")  # files/ is not scanned
    write(tmp_path, "playbooks/site.yml", """---
- name: Other playbook
  ansible.builtin.import_playbook: ns.coll.other
- name: Missing playbook
  ansible.builtin.import_playbook: gone.yml
- name: Play
  hosts: all
  roles:
    - r
    - role: ns.coll.s
    - {role: missing_role}
  tasks: []
""")
    write(tmp_path, "playbooks/other.yml", "---\n[]\n")
    return tmp_path


def test_reference_scanner(collection):
    checks, refs = p.reference_checks(str(collection), "ns.coll")
    by_ref = dict((r["ref"], r) for r in refs)
    assert by_ref["other.yml"]["status"] == "ok"
    assert by_ref["{{ some_var }}"]["status"] == "dynamic"
    assert by_ref["probe_{{ transport }}.yml"]["status"] == "ok"
    assert by_ref["missing.yml"]["status"] == "missing"
    assert by_ref["t.j2"]["status"] == "ok"
    assert by_ref["gone.j2"]["status"] == "missing"
    assert "/etc/hosts" not in by_ref
    assert by_ref["data.txt"]["status"] == "ok"
    assert by_ref["{{ role_path }}/files/probe.py"]["status"] == "ok"
    assert by_ref["{{ role_path }}/files/{{ name }}.py"]["status"] == "ok"
    assert by_ref["{{ role_path }}/../{{ item }}/defaults/main.yml"]["status"] == "ok"
    assert by_ref["go.yml"]["status"] == "ok"
    assert by_ref["nowhere"]["status"] == "missing"
    assert by_ref["kubernetes.core.helm"]["status"] == "external"
    assert by_ref["labels.j2"]["status"] == "ok"
    assert "commented.j2" not in by_ref
    assert not any("not_checked" in r for r in by_ref)
    assert by_ref["ns.coll.other"]["status"] == "ok"
    assert by_ref["gone.yml"]["status"] == "missing"
    assert by_ref["missing_role"]["status"] == "missing"
    assert by_ref["r"]["status"] == "ok"
    assert by_ref["missing.yml"]["line"] == 11
    failed = sorted(c["node"] for c in checks if c["actual"])
    main = os.path.join("roles", "r", "tasks", "main.yml")
    assert [n for n in failed if n.startswith(main)] == [main + ":11", main + ":17", main + ":37"]
    assert [n for n in failed if n.startswith(os.path.join("playbooks", "site.yml"))]
    message = [c for c in checks if c["node"] == main + ":11"][0]["fail_msg"]
    assert message == "%s line 11: tasks missing.yml does not exist (looked in roles/r/tasks, roles/r)" % main
    assert [f["line"] for f in p.reference_findings(refs) if f["file"] == main] == [11, 17, 37]


def test_reference_checks_of_this_collection():
    checks, refs = p.reference_checks(ROOT, "rlstack.validation")
    missing = [r for r in refs if r["status"] == "missing"]
    assert missing == []
    assert len(checks) > 10
    assert any(r["ref"] == "labels.yml.j2" and r["status"] == "ok" for r in refs)
