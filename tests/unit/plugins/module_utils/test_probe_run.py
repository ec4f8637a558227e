# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_probe_run: the start marker, the reads at the end, the deadline (with fake clients; the sim test runs the real
API: tests/sim/test_sim_probe_calls.py)."""
from __future__ import annotations

import json
import types

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _probe_run


class ApiException(Exception):
    def __init__(self, status):
        super().__init__("(%s)" % status)
        self.status = status
        self.body = None


KUBERNETES = types.SimpleNamespace(client=types.SimpleNamespace(exceptions=types.SimpleNamespace(ApiException=ApiException)))


class Raw:
    def __init__(self, body):
        self.data = json.dumps(body).encode()

    def release_conn(self):
        pass


class FakeCore:
    def __init__(self, config_maps=()):
        self.config_maps = set(config_maps)
        self.pods = {}
        self.calls = []
        self.api_client = None

    def create_namespaced_config_map(self, namespace, body, **_kw):
        self.calls.append(("create_cm", body["metadata"]["name"]))
        if body["metadata"]["name"] in self.config_maps:
            raise ApiException(409)
        self.config_maps.add(body["metadata"]["name"])
        return Raw({})

    def delete_namespaced_config_map(self, name, namespace, **_kw):
        self.calls.append(("delete_cm", name))
        if name not in self.config_maps:
            raise ApiException(404)
        self.config_maps.discard(name)
        return Raw({})

    def create_namespaced_pod(self, namespace, body, **_kw):
        self.calls.append(("create_pod", body["metadata"]["name"]))
        self.pods[body["metadata"]["name"]] = body
        return Raw({})

    def list_namespaced_event(self, namespace, field_selector, **_kw):
        self.calls.append(("events", field_selector))
        return Raw({"items": [{"message": "0/2 nodes are available"}]})

    def list_node(self, label_selector, **_kw):
        self.calls.append(("nodes", label_selector))
        return Raw({"items": [{"metadata": {"name": "n1", "managedFields": [1]}, "status": {"images": [1], "x": 1}}]})


def _params(**kw):
    params = {"namespace": "ns", "config_maps": [{"metadata": {"name": "marker"}, "data": {}}],
              "definitions": [{"metadata": {"name": "p0"}}], "lease": None, "concurrency": 4, "create_deadline_s": 30}
    params.update(kw)
    return params


def test_the_first_attempt_creates_the_configmap_and_the_pods():
    core = FakeCore()
    out = _probe_run.start(KUBERNETES, core, _params())
    assert out == {"started": True, "created": ["p0"], "existing": []}
    assert ("create_pod", "p0") in core.calls


def test_an_attempt_that_finds_the_marker_creates_nothing():
    core = FakeCore(config_maps=["marker"])
    out = _probe_run.start(KUBERNETES, core, _params())
    assert out == {"started": False, "created": [], "existing": []}
    assert not [c for c in core.calls if c[0] == "create_pod"]


def test_the_events_are_read_only_for_pods_that_never_ran():
    core = FakeCore()
    states = [{"pod": "p0", "phase": "Pending", "target": "n0"}, {"pod": "p1", "phase": "Succeeded", "target": "n1"}]
    out = _probe_run.pod_events(core, "ns", states)
    assert out == [{"item": states[0], "resources": [{"message": "0/2 nodes are available"}]}]
    assert core.calls == [("events", "involvedObject.name=p0")]


def test_the_nodes_read_again_leave_out_what_nothing_reads():
    node = _probe_run.nodes_again(FakeCore(), "role=gpu")[0]
    assert "managedFields" not in node["metadata"] and "images" not in node["status"] and node["status"]["x"] == 1


def test_deleting_a_configmap_that_is_gone_is_no_error():
    core = FakeCore()
    assert _probe_run.delete_config_maps(KUBERNETES, core, "ns", [{"metadata": {"name": "gone"}}]) == []


@pytest.mark.parametrize("deadline_at, now, finished", [(0, 100.0, False), (150.0, 100.0, False), (150.0, 151.0, True)])
def test_an_attempt_finishes_when_settled_or_at_the_deadline(monkeypatch, deadline_at, now, finished):
    monkeypatch.setattr(_probe_run, "pod_calls", lambda *a: (lambda: ([], "1"), lambda v, t: iter(())))
    monkeypatch.setattr(_probe_run, "pods_summary", lambda pods, **kw: {"settled": False, "ok": False, "states": []})
    monkeypatch.setattr(_probe_run, "finish", lambda *a: {"pods": [], "left_nothing": True})
    params = _params(definitions=[], label_selectors=["run=x"], expected=1, grace_s=45, start_timeout_s=60, step_s=0,
                     deadline_at=deadline_at, request_timeout_s=5)
    out = _probe_run.run(KUBERNETES, None, FakeCore(), params, now=lambda: now)
    assert out["finished"] is finished and out["settled"] is False
    assert ("left_nothing" in out) is finished


def test_a_refused_start_ends_the_task_and_a_failed_wait_does_not(monkeypatch):
    """A refusal while starting (a missing permission) fails alike on every attempt: run() says StartFailed, which the
    module returns as start_failed (the task's until stops on it); an error while waiting propagates as it is."""
    class Refusing(FakeCore):
        def create_namespaced_config_map(self, namespace, body, **_kw):
            raise ApiException(403)

    params = _params(label_selectors=["run=x"], expected=1, grace_s=45, start_timeout_s=60, step_s=0, deadline_at=0,
                     request_timeout_s=5)
    with pytest.raises(_probe_run.StartFailed) as caught:
        _probe_run.run(KUBERNETES, None, Refusing(), params)
    assert isinstance(caught.value.__cause__, ApiException) and caught.value.__cause__.status == 403

    def broken_list():
        raise ApiException(500)

    monkeypatch.setattr(_probe_run, "pod_calls", lambda *a: (broken_list, lambda v, t: iter(())))
    with pytest.raises(ApiException):
        _probe_run.run(KUBERNETES, None, FakeCore(), params)
