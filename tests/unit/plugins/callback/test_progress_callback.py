# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The progress stdout callback in real runs: ansible-playbook, and ansible-runner as AWX runs a job
(awx_display built on top of the callback named in ANSIBLE_STDOUT_CALLBACK, ansible-runner 2.4.3
config/_base.py: ORIGINAL_STDOUT_CALLBACK; display_callback/callback/awx_display.py: DefaultCallbackModule)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]

# Returns its argument as kubernetes.core.k8s_info returns pods: {resources: [...]}.
PODS_MODULE = """#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule
module = AnsibleModule(argument_spec={"resources": {"type": "list", "elements": "dict"}})
module.exit_json(changed=False, resources=module.params["resources"])
"""

PLAYBOOK = """
- name: A wait like the runner's
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Start the level
      ansible.builtin.set_fact:
        runner_level: {id: l3_multi_gpu, level: L3, name: Multi GPU, order: 3}
    - name: Wait until the pods run
      pods:
        resources:
          - {metadata: {labels: {training.kubeflow.org/job-role: worker}}, status: {phase: Running}}
          - {metadata: {labels: {training.kubeflow.org/job-role: worker}}, status: {phase: Pending}}
      register: _pods
      until: false
      retries: 3
      delay: 1
      failed_when: false
      vars:
        runner_progress: the nccl-tests launcher
"""


def _env(tmp_path):
    env = dict(os.environ)
    env.update({
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_COLLECTIONS_PATH": str(ROOT / ".collections"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCALHOST_WARNING": "0",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        "RLSTACK_PROGRESS_INTERVAL_S": "0",
        "PATH": "%s:%s" % (Path(sys.executable).parent, env.get("PATH", "")),
        "ANSIBLE_LIBRARY": str(tmp_path / "library"),
    })
    (tmp_path / "library").mkdir(exist_ok=True)
    (tmp_path / "library" / "pods.py").write_text(PODS_MODULE)
    return env


def _check(stdout):
    assert "FAILED - RETRYING" not in stdout, stdout
    assert "Unknown error" not in stdout, stdout
    assert "L3  waiting for the nccl-tests launcher: " in stdout, stdout
    assert "(1/2 workers running, 1 pending, launcher not created yet)" in stdout, stdout
    assert "L3  stopped waiting for the nccl-tests launcher after " in stdout, stdout
    assert "\x1b" not in stdout and "\r" not in stdout


def test_ansible_playbook_prints_progress_not_retrying(tmp_path):
    book = tmp_path / "wait.yml"
    book.write_text(PLAYBOOK)
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(book)], cwd=str(ROOT),
                          env=_env(tmp_path), capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check(proc.stdout)
    assert proc.stdout.count("L3  waiting for the nccl-tests launcher") == 3


def test_under_ansible_runner_awx_display_builds_on_it(tmp_path):
    ansible_runner = pytest.importorskip("ansible_runner")
    book = tmp_path / "project" / "wait.yml"
    book.parent.mkdir()
    book.write_text(PLAYBOOK)
    env = _env(tmp_path)
    envvars = {k: env[k] for k in ("ANSIBLE_CONFIG", "ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_NOCOLOR", "PATH",
                                   "RLSTACK_PROGRESS_INTERVAL_S", "ANSIBLE_LIBRARY")}
    envvars["ANSIBLE_STDOUT_CALLBACK"] = "rlstack.validation.progress"
    (tmp_path / "private").mkdir()
    runner = ansible_runner.run(private_data_dir=str(tmp_path / "private"), project_dir=str(book.parent),
                                playbook=str(book), envvars=envvars, quiet=True, timeout=120)
    stdout = runner.stdout.read()
    assert runner.rc == 0, stdout
    assert runner.config.env["ANSIBLE_STDOUT_CALLBACK"] == "awx_display"
    _check(stdout)
    retries = [e for e in runner.events if e.get("event") == "runner_retry"]
    assert len(retries) == 3
    assert all("waiting for the nccl-tests launcher" in e["stdout"] for e in retries)
