# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The probe level's fewer module calls (issue 27): pod_batch extends the run's lease and ships the ConfigMap in the
call that creates the pods (a second call, the same task run again, patches the ConfigMap's data), and pod_logs
deletes the pods it read in the same call. Against the simulated cluster's API server, through ansible-playbook as
the roles call them. About 20 s."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/rlstack.validation.k8s: {kubeconfig: "%(kubeconfig)s"}
  tasks:
    - name: Lease, ConfigMap and pods in one call
      rlstack.validation.pod_batch:
        namespace: %(namespace)s
        lease: {job: anchor, active_deadline_s: %(deadline)d}
        config_maps:
          - {apiVersion: v1, kind: ConfigMap, metadata: {name: probe, labels: {run: "%(run)s"}}, data: {probe.py: "%(data)s"}}
        definitions:
          - apiVersion: v1
            kind: Pod
            metadata: {name: probe-0, labels: {run: "%(run)s"}}
            spec:
              restartPolicy: Never
              containers: [{name: probe, image: busybox, command: [sh, -c, "echo hi"]}]
      register: created
    - name: Read the logs and delete the pods
      rlstack.validation.pod_logs:
        namespace: %(namespace)s
        label_selectors: ["run=%(run)s"]
        delete_after: true
        delete_wait_s: 30
      register: read
    - name: Keep what the calls returned
      ansible.builtin.copy:
        content: "{{ {'created': created.created, 'deleted': read.deleted, 'left': read.left} | to_json }}"
        dest: "%(result)s"
        mode: "0600"
"""


def _play(tmp_path, namespace, run, deadline, data):
    book = tmp_path / "book.yml"
    result = tmp_path / "result.json"
    book.write_text(PLAYBOOK % {"kubeconfig": simkit.KUBECONFIG, "namespace": namespace, "run": run,
                                "deadline": deadline, "data": data, "result": result})
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"),
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default",
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "ansible_python_interpreter=" + sys.executable, str(book)],
                          cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return json.loads(result.read_text())


def test_one_call_extends_the_lease_ships_the_configmap_and_creates_the_pods(core, batch, namespace, tmp_path):
    run = "calls-" + uuid.uuid4().hex[:6]
    batch.create_namespaced_job(namespace, {
        "metadata": {"name": "anchor"},
        "spec": {"activeDeadlineSeconds": 60, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "anchor", "image": "busybox"}]}}}})
    first = _play(tmp_path, namespace, run, 900, "print(1)")
    assert first == {"created": ["probe-0"], "deleted": ["probe-0"], "left": []}
    assert batch.read_namespaced_job("anchor", namespace).spec.active_deadline_seconds == 900
    assert core.read_namespaced_config_map("probe", namespace).data == {"probe.py": "print(1)"}
    assert core.list_namespaced_pod(namespace, label_selector="run=" + run).items == []
    # the same task again (a retried run): the ConfigMap exists and gets the new data, the lease moves again
    second = _play(tmp_path, namespace, run, 1200, "print(2)")
    assert second["created"] == ["probe-0"]
    assert batch.read_namespaced_job("anchor", namespace).spec.active_deadline_seconds == 1200
    assert core.read_namespaced_config_map("probe", namespace).data == {"probe.py": "print(2)"}
