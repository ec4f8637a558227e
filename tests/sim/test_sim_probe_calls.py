# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The probe level in one module (issue 27): probe_run extends the run's lease, ships the ConfigMap, creates the pods,
waits for them, reads their logs and deletes the pods and the ConfigMap, repeated by `until` as the runner does; an
attempt that finds the ConfigMap (its start marker) creates nothing; the events of pods that never ran, read per pod
or as the namespace's pages. Against the simulated cluster's API server, through ansible-playbook as the roles call
it. About 40 s."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import simkit
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _probe_run

pytestmark = pytest.mark.sim

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/rlstack.validation.k8s: {kubeconfig: "%(kubeconfig)s"}
  tasks:
    - name: Lease, ConfigMap, pods, wait, logs and delete in one module
      rlstack.validation.probe_run:
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
        label_selectors: ["run=%(run)s"]
        expected: 1
        start_timeout_s: 60
        step_s: 5
        deadline_at: "{{ now(utc=true).timestamp() + 12 }}"
      register: probe
      until: probe.finished | default(false)
      retries: 20
      delay: 1
    - name: Keep what the calls returned
      ansible.builtin.copy:
        content: >-
          {{ {'started': probe.started, 'created': probe.created, 'deleted': probe.deleted, 'left': probe.left,
              'left_nothing': probe.left_nothing, 'logs': probe.pods | map(attribute='name') | list,
              'settled': probe.settled} | to_json }}
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


def test_one_call_runs_the_probe_pods_from_start_to_finish(core, batch, namespace, tmp_path):
    run = "calls-" + uuid.uuid4().hex[:6]
    batch.create_namespaced_job(namespace, {
        "metadata": {"name": "anchor"},
        "spec": {"activeDeadlineSeconds": 60, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "anchor", "image": "busybox"}]}}}})
    first = _play(tmp_path, namespace, run, 900, "print(1)")
    # the simulated node keeps this pod running (it is no probe of the collection): the attempt at the deadline reads
    # and deletes it all the same (the registered result is the last attempt's, which started nothing)
    assert first == {"started": False, "created": [], "deleted": ["probe-0"], "left": [], "left_nothing": True,
                     "logs": ["probe-0"], "settled": False}
    assert batch.read_namespaced_job("anchor", namespace).spec.active_deadline_seconds == 900
    assert core.list_namespaced_pod(namespace, label_selector="run=" + run).items == []
    assert [c.metadata.name for c in core.list_namespaced_config_map(namespace).items if c.metadata.name == "probe"] == []


def test_an_attempt_that_finds_the_configmap_creates_nothing(core, batch, namespace, tmp_path):
    """The first ConfigMap marks the start: a repeat of the task (until) only waits, and never brings back a pod that
    was deleted during the wait; the pod it expects is then gone, which settles the wait."""
    run = "calls-" + uuid.uuid4().hex[:6]
    batch.create_namespaced_job(namespace, {
        "metadata": {"name": "anchor"},
        "spec": {"activeDeadlineSeconds": 60, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "anchor", "image": "busybox"}]}}}})
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "probe"}, "data": {"probe.py": "print(0)"}})
    again = _play(tmp_path, namespace, run, 1200, "print(2)")
    assert again["started"] is False and again["created"] == [] and again["logs"] == []
    assert again["left_nothing"] is True
    # the lease was not moved: the attempt that started the probe did that
    assert batch.read_namespaced_job("anchor", namespace).spec.active_deadline_seconds == 60
    assert core.list_namespaced_pod(namespace, label_selector="run=" + run).items == []


def test_the_events_of_pods_that_never_ran_are_the_same_per_pod_and_as_pages(core, namespace):
    """pod_events reads a few pods' events one list each, more as the namespace's pod events in pages
    (_probe_run.EVENTS_PAGE): both give each pod the scheduler's own words, and nothing of another pod."""
    pods = ["never-%d" % i for i in range(3)]
    for name in pods + ["bystander"]:
        core.create_namespaced_pod(namespace, {
            "metadata": {"name": name},
            "spec": {"restartPolicy": "Never", "nodeSelector": {"sim.rlstack.io/nowhere": name},
                     "containers": [{"name": "c", "image": "busybox"}]}})

    def scheduler_spoke():
        seen = {e.involved_object.name for e in core.list_namespaced_event(namespace).items
                if e.reason == "FailedScheduling"}
        return seen >= set(pods + ["bystander"])

    simkit.wait_until(scheduler_spoke, 60, "the scheduler's FailedScheduling events")
    states = [{"pod": name, "phase": "Pending", "target": "n%d" % i} for i, name in enumerate(pods)]
    per_pod = _probe_run.pod_events(core, namespace, states, workers=8, deadline_s=30)
    paged = _probe_run.pod_events(core, namespace, states, workers=1, deadline_s=30)
    for out in (per_pod, paged):
        assert [entry["item"]["pod"] for entry in out] == pods
        for entry in out:
            assert entry["resources"], entry["item"]["pod"]
            assert {e["involvedObject"]["name"] for e in entry["resources"]} == {entry["item"]["pod"]}
            assert any("didn't match Pod's node affinity/selector" in e["message"] for e in entry["resources"])
    assert [{e["message"] for e in entry["resources"]} for entry in per_pod] == \
        [{e["message"] for e in entry["resources"]} for entry in paged]
