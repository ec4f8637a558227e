# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The interrupt watchdog's protocol and messages, with the real kubernetes client against a closed port
(the deletions themselves are measured against the simulated cluster: tests/faults)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.plugin_utils import _run_guard as guard

ROOT = Path(__file__).resolve().parents[4]
KINDS = [{"api_version": "batch/v1", "kind": "Job"}, {"api_version": "v1", "kind": "Pod"}]


def closed_port_client(_auth):
    import kubernetes
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return kubernetes.client.ApiClient(kubernetes.client.Configuration(host="http://127.0.0.1:%d" % port))


def run_event(host="sim-eks"):
    return {"event": "run", "host": host, "namespace": "ns1", "run_id": "r1", "anchor": "rlsv-r1-anchor",
            "auth": {}, "kinds": KINDS}


def feed(events, close=True):
    read, write = os.pipe()
    with os.fdopen(write, "wb") as handle:
        for event in events:
            handle.write((json.dumps(event) + "\n").encode())
    return os.fdopen(read, "rb")


def test_a_normal_end_deletes_nothing():
    said = []
    assert guard.watch(feed([run_event(), {"event": "end"}]), os.getpid(), said.append, closed_port_client) == "end"
    assert said == []


def test_a_run_that_removed_its_objects_itself_needs_nothing():
    said = []
    result = guard.watch(feed([run_event(), {"event": "done", "host": "sim-eks"}]), os.getpid(), said.append,
                         closed_port_client)
    assert result == "nothing" and said == []


def test_an_interrupted_run_whose_api_server_is_gone_leaves_it_to_the_lease():
    said = []
    started = time.monotonic()
    assert guard.watch(feed([run_event()]), os.getpid(), said.append, closed_port_client) == "cleaned"
    assert time.monotonic() - started < 30
    assert len(said) == 1
    assert said[0].startswith("rlstack.validation: the run r1 on sim-eks was interrupted and its objects in "
                              "namespace ns1 could not all be deleted (")
    assert "lease" in said[0] and "validation_run_id=r1" in said[0]


def test_the_watchdog_notices_a_dead_parent_even_if_the_pipe_stays_open():
    read, write = os.pipe()
    os.write(write, (json.dumps(run_event()) + "\n").encode())
    parent = subprocess.Popen([sys.executable, "-c", "pass"])
    parent.wait()
    said = []
    assert guard.watch(os.fdopen(read, "rb"), parent.pid, said.append, closed_port_client, poll_s=0.1) == "cleaned"
    os.close(write)


def test_masked_and_unset_auth_values_are_not_passed_on():
    args = {"kubeconfig": "/k", "context": None, "api_key": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER", "kind": "Job"}
    assert guard.auth_from_module_args(args) == {"kubeconfig": "/k"}


def test_the_anchor_is_recognised_by_its_labels():
    obj = {"kind": "Job", "metadata": {"name": "a", "namespace": "ns", "labels": {
        "app.kubernetes.io/component": "anchor", "app.kubernetes.io/managed-by": "rlstack.validation",
        "rlstack.io/run-id": "r9"}}}
    assert guard.anchor_of({"result": obj}) == ("ns", "r9", "a")
    obj["metadata"]["labels"]["app.kubernetes.io/component"] = "job"
    assert guard.anchor_of({"result": obj}) is None
    assert guard.anchor_of({"result": []}) is None


@pytest.mark.parametrize("api_version,kind,path", [
    ("v1", "ConfigMap", "/api/v1/namespaces/n/configmaps"),
    ("kubeflow.org/v2beta1", "MPIJob", "/apis/kubeflow.org/v2beta1/namespaces/n/mpijobs"),
    ("apps/v1", "StatefulSet", "/apis/apps/v1/namespaces/n/statefulsets")])
def test_collection_paths(api_version, kind, path):
    assert guard.collection_path(api_version, kind, "n") == path


def test_the_auth_event_gives_the_cleanup_the_masked_kubeconfig():
    """kubernetes.core masks its kubeconfig option (no_log), so the module arguments carry no access; the run's
    auth event (roles/runner/tasks/plan.yml, runner_cleanup_auth) does. Found on the integrated main of
    2026-12-01: an interrupted run with validation_kubeconfig and no KUBECONFIG left its objects to the lease."""
    seen = []

    def client_for(auth):
        seen.append(auth)
        return closed_port_client(auth)

    auth = {"event": "auth", "host": "sim-eks", "auth": {"kubeconfig": "/k/config", "context": "c1"}}
    masked = dict(run_event(), auth={"kubeconfig": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"})
    assert guard.auth_from_module_args(masked["auth"]) == {}
    assert guard.watch(feed([dict(run_event(), auth={"context": "own"}), auth]), os.getpid(), [].append,
                       client_for) == "cleaned"
    assert seen == [{"kubeconfig": "/k/config", "context": "own"}]  # the module's own value wins


class RacingApi:
    """An API server whose Job controller creates one more pod after the first deletion of the run's pods
    (it had not yet seen the Job's deletion); deleted objects stay terminating for one more list."""

    def __init__(self):
        self.objects = {"Job": {"j1": False}, "Pod": {"p1": False}}
        self.deletes = []
        self.late_pod = True

    def call_api(self, path, method, **_kwargs):
        kind = "Job" if "/jobs" in path else "Pod"
        if method == "DELETE":
            assert not path.endswith(("/jobs", "/pods")), "one DELETE per object, not deletecollection: " + path
            self.deletes.append(kind)
            for name in self.objects[kind]:
                self.objects[kind][name] = True
            if kind == "Pod" and self.late_pod:
                self.late_pod = False
                self.objects["Pod"]["p2"] = False
            return {}
        items = [{"metadata": dict({"name": name}, **({"deletionTimestamp": "now"} if deleting else {}))}
                 for name, deleting in self.objects[kind].items()]
        # what was terminating at this list is gone at the next
        self.objects[kind] = {name: deleting for name, deleting in self.objects[kind].items() if not deleting}
        return {"items": items}


def test_a_pod_created_after_the_deletion_is_deleted_too():
    api = RacingApi()
    clock = iter(range(1000))
    deleted, left, error = guard.Cleaner(api, clock=lambda: next(clock)).delete_run(
        {"namespace": "ns1", "run_id": "r1", "kinds": KINDS})
    assert (left, error) == ([], "")
    assert api.deletes == ["Job", "Pod", "Pod"], api.deletes
    assert deleted == 3


def test_the_cleanup_stops_at_its_bound_with_what_is_left():
    class StuckApi(RacingApi):
        def call_api(self, path, method, **kwargs):
            if method == "GET" and "/pods" in path:
                return {"items": [{"metadata": {"name": "p1", "deletionTimestamp": "now"}}]}
            return super().call_api(path, method, **kwargs)
    clock = iter(range(0, 10000, 5))
    _deleted, left, error = guard.Cleaner(StuckApi(), clock=lambda: next(clock)).delete_run(
        {"namespace": "ns1", "run_id": "r1", "kinds": KINDS}, bound_s=20)
    assert left == ["Pod/p1"] and error == ""


def test_an_interrupted_run_leaves_none_of_its_controller_files(tmp_path, monkeypatch):
    # the names roles/runner/tasks/jobs_kubernetes.yml and playbooks/vars/api_bounds.yml give them (host "sim/eks"
    # made safe)
    mine = [tmp_path / "rlstack-job-run-sim_eks-r1-l5_training_step-1764900000.0.json",
            tmp_path / "rlstack-api-sim_eks-r1"]
    others = [tmp_path / "rlstack-job-run-sim_eks-r10-l5_training_step-1.json", tmp_path / "rlstack-api-sim_eks-r10",
              tmp_path / "rlstack-api-other-r1"]
    for path in mine + others:
        path.write_text("{}")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert guard.scratch_files("sim/eks", "r1") == sorted(str(p) for p in mine)
    guard.watch(feed([run_event("sim/eks")]), os.getpid(), [].append, closed_port_client)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in others)
