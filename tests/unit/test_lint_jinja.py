# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for tests/lint_jinja.py, the check that task files build no data with mutating Jinja."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("lint_jinja", REPO / "tests" / "lint_jinja.py")
lint_jinja = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(lint_jinja)

APPENDING = """---
- name: Collect
  ansible.builtin.set_fact:
    result: >-
      {%- set out = [] -%}
      {%- for x in items -%}
      {%-   set _ = out.append(x.name) -%}
      {%- endfor -%}
      {{ out }}
"""

CLEAN = """---
- name: Collect
  ansible.builtin.set_fact:
    result: "{{ items | map(attribute='name') | list }}"
    other: >-
      {%- set out = [] -%}
      {{ out + [1] }}
- name: Another task
  ansible.builtin.set_fact:
    later: "{{ out.append(1) }}"
"""


def test_finds_append_update_and_namespace_blocks():
    assert lint_jinja.mutating_blocks(APPENDING) == [(5, "out")]
    updating = APPENDING.replace("out.append(x.name)", "out.update({x.name: x})").replace("set out = []", "set out = {}")
    assert lint_jinja.mutating_blocks(updating) == [(5, "out")]
    assert lint_jinja.mutating_blocks("    x: \"{% set ns = namespace(n=0) %}{{ ns.n }}\"\n") == [(1, "ns")]


def test_ignores_literals_and_mutations_outside_the_block():
    assert lint_jinja.mutating_blocks(CLEAN) == []


def test_the_tree_is_clean_and_fails_on_a_new_block(tmp_path, capsys):
    assert lint_jinja.main(["lint_jinja", str(REPO)]) == 0
    tasks = tmp_path / "roles" / "x" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "main.yml").write_text(APPENDING, encoding="utf-8")
    assert lint_jinja.main(["lint_jinja", str(tmp_path)]) == 1
    assert "roles/x/tasks/main.yml:5: Jinja `set out` builds data" in capsys.readouterr().out


def test_the_allow_list_only_names_files_that_still_need_it():
    for rel, count in lint_jinja.ALLOWED.items():
        assert rel.startswith("roles/local_checks/"), rel
        found = len(lint_jinja.mutating_blocks((REPO / rel).read_text(encoding="utf-8")))
        assert 1 <= found <= count, "%s has %d mutating blocks: lower or delete its ALLOWED entry" % (rel, found)
