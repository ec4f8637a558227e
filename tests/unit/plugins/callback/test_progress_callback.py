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
from types import SimpleNamespace

import pytest

from ansible_collections.rlstack.validation.plugins.callback import progress

ROOT = Path(__file__).resolve().parents[4]

# Returns its argument as kubernetes.core.k8s_info returns pods: {resources: [...]}.
PODS_MODULE = """#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule
module = AnsibleModule(argument_spec={"resources": {"type": "list", "elements": "dict"}})
module.exit_json(changed=False, resources=module.params["resources"])
"""

# Returns its argument as rlstack.validation.level_assert returns a row's verdict (named like it: the console reads
# the results of level_assert, debug and the runner's level facts only).
VERDICT_MODULE = """#!/usr/bin/python
from ansible.module_utils.basic import AnsibleModule
module = AnsibleModule(argument_spec={"verdict": {"type": "dict"}})
module.exit_json(changed=False, verdict=module.params["verdict"])
"""

PLAYBOOK = """
- name: A level like the runner's
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Start the level
      ansible.builtin.set_fact:
        runner_level: {id: l3_multi_gpu, level: L3, name: Multi GPU, order: 3}
        runner_level_gpu: []
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
    - name: Judge the level
      level_assert:
        verdict:
          id: l3_multi_gpu
          level: L3
          status: FAIL
          checks:
            - {name: nccl_network, node: p5-node-1, passed: false, message: "nccl_network expected efa, saw socket",
               hint: NCCL fell back to TCP sockets, excerpt: [one, two, three, "NCCL WARN NET/OFI failed"]}
    - name: Decide whether the later levels run
      ansible.builtin.set_fact:
        runner_stop: true
    - name: Fail the run
      ansible.builtin.fail:
        msg: validation_foo must be one of a, b, not 'c'.
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
        "RLSTACK_PROGRESS_FIRST_AFTER_S": "0",
        "PATH": "%s:%s" % (Path(sys.executable).parent, env.get("PATH", "")),
        "ANSIBLE_LIBRARY": str(tmp_path / "library"),
    })
    (tmp_path / "library").mkdir(exist_ok=True)
    (tmp_path / "library" / "pods.py").write_text(PODS_MODULE)
    (tmp_path / "library" / "level_assert.py").write_text(VERDICT_MODULE)
    return env


def _check(stdout):
    assert "FAILED - RETRYING" not in stdout, stdout
    assert "Unknown error" not in stdout, stdout
    assert "L3    waiting for the nccl-tests launcher: " in stdout, stdout
    assert "(1/2 workers running, 1 pending, launcher not created yet)" in stdout, stdout
    assert "L3    stopped waiting for the nccl-tests launcher after " in stdout, stdout
    assert "\x1b" not in stdout and "\r" not in stdout


def _play(tmp_path, *args, **env):
    book = tmp_path / "wait.yml"
    book.write_text(PLAYBOOK)
    return subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(book), *args], cwd=str(ROOT),
                          env=dict(_env(tmp_path), **env), capture_output=True, text=True, timeout=120, check=False)


def test_the_console_prints_the_level_its_waits_its_verdict_and_one_sentence(tmp_path):
    proc = _play(tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    _check(proc.stdout)
    assert proc.stdout.count("L3    waiting for the nccl-tests launcher") == 3
    lines = proc.stdout.splitlines()
    assert lines[0] == "L3    Multi GPU: starting (probe pods on the GPU nodes, then an nccl-tests MPIJob)"
    end = [i for i, line in enumerate(lines) if line.startswith("L3    Multi GPU: FAIL in ")]
    assert len(end) == 1
    assert lines[end[0] + 1:end[0] + 7] == [
        "      p5-node-1: nccl_network expected efa, saw socket", "      -> NCCL fell back to TCP sockets",
        "      | two", "      | three", "      | NCCL WARN NET/OFI failed",
        "localhost: validation_foo must be one of a, b, not 'c'."]
    for noise in ("TASK [", "PLAY [", "PLAY RECAP", "Origin:", "fatal:", "[ERROR]"):
        assert noise not in proc.stdout + proc.stderr, noise


LOOPS = """
- name: Loops, as awx_configure.yml has them
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Say what each credential lacks
      ansible.builtin.debug:
        msg: "Credential {{ item }} not created"
      loop: [a, b]
    - name: Stop on each inventory that could not import its hosts
      ansible.builtin.fail:
        msg: "Inventory '{{ item }}' could not import its hosts."
      loop: [x, y, z]
      when: item != 'y'
"""


def test_a_loop_speaks_through_its_items(tmp_path):
    book = tmp_path / "loops.yml"
    book.write_text(LOOPS)
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(book)], cwd=str(ROOT),
                          env=_env(tmp_path), capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    # not the loop's own "All items completed" or "One or more items failed"
    assert proc.stdout.splitlines() == [
        "Credential a not created", "Credential b not created",
        "localhost: Inventory 'x' could not import its hosts.", "localhost: Inventory 'z' could not import its hosts."]


@pytest.mark.parametrize("how", [("-v",), ()], ids=["-v", "RLSTACK_CONSOLE_TASKS"])
def test_v_or_the_tasks_setting_bring_the_ansible_stream_back(tmp_path, how):
    proc = _play(tmp_path, *how, **({} if how else {"RLSTACK_CONSOLE_TASKS": "true"}))
    assert "TASK [Wait until the pods run]" in proc.stdout and "PLAY RECAP" in proc.stdout, proc.stdout
    assert "L3    Multi GPU: FAIL in " in proc.stdout
    assert "L3    waiting for the nccl-tests launcher: " in proc.stdout and "FAILED - RETRYING" not in proc.stdout


def test_under_ansible_runner_awx_display_builds_on_it(tmp_path):
    ansible_runner = pytest.importorskip("ansible_runner")
    book = tmp_path / "project" / "wait.yml"
    book.parent.mkdir()
    book.write_text(PLAYBOOK)
    env = _env(tmp_path)
    envvars = {k: env[k] for k in ("ANSIBLE_CONFIG", "ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_NOCOLOR", "PATH",
                                   "RLSTACK_PROGRESS_INTERVAL_S", "RLSTACK_PROGRESS_FIRST_AFTER_S", "ANSIBLE_LIBRARY")}
    envvars["ANSIBLE_STDOUT_CALLBACK"] = "rlstack.validation.progress"
    (tmp_path / "private").mkdir()
    runner = ansible_runner.run(private_data_dir=str(tmp_path / "private"), project_dir=str(book.parent),
                                playbook=str(book), envvars=envvars, quiet=True, timeout=120)
    stdout = runner.stdout.read()
    assert runner.rc == 2, stdout
    assert runner.config.env["ANSIBLE_STDOUT_CALLBACK"] == "awx_display"
    _check(stdout)
    retries = [e for e in runner.events if e.get("event") == "runner_retry"]
    assert len(retries) == 3
    assert all("waiting for the nccl-tests launcher" in e["stdout"] for e in retries)
    assert "L3    Multi GPU: FAIL in " in stdout and "TASK [" not in stdout


def _task(data):
    """A task as a callback sees it: its action as the playbook names it, and its arguments."""
    (action, args), = data.items()
    return SimpleNamespace(action=action, args=args, _uuid="t-1", failed_when=None)


@pytest.mark.parametrize("data,reads", [
    ({"rlstack.validation.level_assert": {"id": "l0_infrastructure"}}, True),
    ({"ansible.builtin.debug": {"msg": "hello"}}, True),
    ({"ansible.builtin.set_fact": {"runner_level": {}, "runner_level_gpu": []}}, True),
    ({"ansible.builtin.set_fact": {"runner_stop": False}}, True),
    ({"ansible.builtin.set_fact": {"runner_phase0_gate": {}}}, True),
    ({"ansible.builtin.set_fact": {"runner_probe_results": {}, "runner_level_gpu": []}}, False),
    ({"rlstack.validation.probe_run": {"namespace": "rlsv"}}, False),
    ({"kubernetes.core.k8s_info": {"kind": "Node"}}, False),
])
def test_the_console_reads_only_results_it_may_speak_of(data, reads):
    assert progress._may_speak(_task(data)) is reads


def test_a_result_the_console_does_not_speak_of_is_never_converted():
    class Result:
        task = _task({"rlstack.validation.probe_run": {"namespace": "rlsv"}})
        host = SimpleNamespace(get_name=lambda: "localhost")

        @property
        def result(self):
            raise AssertionError("the result was read")

    progress.CallbackModule().v2_runner_on_ok(Result())


def test_a_verdict_is_read_as_returned_and_every_row_of_it_is_said():
    row = {"id": "l5_training_step/trl", "level": "L5", "name": "Training step: trl", "status": "PASS", "checks": []}

    class Result:
        task = _task({"rlstack.validation.level_assert": {"id": "l5_training_step"}})
        host = SimpleNamespace(get_name=lambda: "localhost")
        _return_data = {"verdict": dict(row, id="l5_training_step/big", name="Training step: big", status="SKIPPED"),
                        "rows": [{"verdict": row}, {"verdict": dict(row, id="l5_training_step/big",
                                                                    name="Training step: big", status="SKIPPED")}]}

        @property
        def result(self):
            raise AssertionError("the whole result was converted")

    callback = progress.CallbackModule()
    callback._show = lambda lines: None
    callback.v2_runner_on_ok(Result())
    # each row once, the last row's verdict (also the result's own) not twice
    assert [r["id"] for r in callback._con()._levels["localhost"].rows] == [
        "l5_training_step/trl", "l5_training_step/big"]
