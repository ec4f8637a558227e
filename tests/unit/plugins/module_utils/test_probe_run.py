# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_probe_run: the start marker, the reads at the end, the deadline (with fake clients; the sim test runs the real
API: tests/sim/test_sim_probe_calls.py)."""
from __future__ import annotations

import json
import threading
import time
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
              "definitions": [{"metadata": {"name": "p0"}}], "lease": None, "concurrency": 4, "create_deadline_s": 30,
              "limit_bytes": 4194304}
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


class EventsCore(FakeCore):
    """Events as the API server lists them: per pod (involvedObject.name=...) or all pods' (involvedObject.kind=Pod)
    in pages of `limit`. Each list takes `delay_s` and counts how many are in flight; a list naming a pod of
    `failing`, or the page numbered `failing_page`, is refused."""

    def __init__(self, events, delay_s=0.0, failing=(), failing_page=None):
        super().__init__()
        self.events, self.delay_s, self.failing, self.failing_page = events, delay_s, set(failing), failing_page
        self.lock = threading.Lock()
        self.in_flight = self.most_in_flight = 0

    def list_namespaced_event(self, namespace, field_selector, limit=None, _continue=None, **kw):
        assert kw.get("_request_timeout"), "each read carries its own bound: a thread cannot be stopped"
        self.calls.append(("events", field_selector, _continue))
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            time.sleep(self.delay_s)
            key, value = field_selector.split("=", 1)
            if key == "involvedObject.name":
                if value in self.failing:
                    raise ApiException(500)
                return Raw({"items": [e for e in self.events if e["involvedObject"]["name"] == value]})
            assert field_selector == "involvedObject.kind=Pod" and limit
            start = int(_continue or 0)
            if start // limit == self.failing_page:
                raise ApiException(500)
            more = start + limit < len(self.events)
            return Raw({"items": self.events[start:start + limit],
                        "metadata": {"continue": str(start + limit) if more else ""}})
        finally:
            with self.lock:
                self.in_flight -= 1


def _never_ran(count):
    return [{"pod": "p%d" % i, "phase": "Pending", "target": "n%d" % i} for i in range(count)]


def _pull_events(count, other=()):
    events = [{"involvedObject": {"kind": "Pod", "name": "p%d" % i}, "message": "Back-off pulling image for p%d" % i}
              for i in range(count)]
    return events + [{"involvedObject": {"kind": "Pod", "name": name}, "message": "not ours"} for name in other]


def test_the_events_of_a_few_pods_are_read_per_pod_at_once():
    core = EventsCore(_pull_events(8, other=["someone-else"]), delay_s=0.05)
    out = _probe_run.pod_events(core, "ns", _never_ran(8), workers=8, deadline_s=30)
    assert 1 < core.most_in_flight <= 8
    assert [entry["item"]["pod"] for entry in out] == ["p%d" % i for i in range(8)]
    assert [[e["message"] for e in entry["resources"]] for entry in out] == [
        ["Back-off pulling image for p%d" % i] for i in range(8)]
    assert {call[1] for call in core.calls} == {"involvedObject.name=p%d" % i for i in range(8)}


def test_the_events_of_many_pods_are_one_list_of_the_namespace_in_pages():
    """A fleet-wide image pull error: each per-pod list is a scan of the namespace's events on the API server, so
    more pods than workers read the namespace's pod events once, page by page, and keep each pod's own."""
    core = EventsCore(_pull_events(1200, other=["someone-else"]))
    out = _probe_run.pod_events(core, "ns", _never_ran(1100), workers=16)
    assert [call[1:] for call in core.calls] == [("involvedObject.kind=Pod", c) for c in (None, "500", "1000")]
    assert len(out) == 1100
    assert all([e["message"] for e in entry["resources"]] == ["Back-off pulling image for %s" % entry["item"]["pod"]]
               for entry in out)


def test_a_pod_whose_events_cannot_be_read_has_none_and_the_others_keep_theirs():
    core = EventsCore(_pull_events(3), failing={"p1"})
    out = _probe_run.pod_events(core, "ns", _never_ran(3), workers=4)
    assert [len(entry["resources"]) for entry in out] == [1, 0, 1]


def test_a_page_that_cannot_be_read_keeps_the_events_read_before_it():
    core = EventsCore(_pull_events(1200), failing_page=1)
    out = _probe_run.pod_events(core, "ns", _never_ran(1200), workers=16)
    assert [len(entry["resources"]) for entry in out] == [1] * 500 + [0] * 700


def test_events_not_read_by_the_deadline_are_left_out():
    core = EventsCore(_pull_events(4), delay_s=0.5)
    started = time.monotonic()
    out = _probe_run.pod_events(core, "ns", _never_ran(4), workers=4, deadline_s=0.2)
    assert time.monotonic() - started < 0.45
    assert [entry["resources"] for entry in out] == [[], [], [], []]


def test_the_pages_stop_at_the_deadline():
    clock = iter([0.0, 0.0, 5.0, 11.0]).__next__  # the deadline, then before each page
    core = EventsCore(_pull_events(1200))
    out = _probe_run.pod_events(core, "ns", _never_ran(1200), workers=16, deadline_s=10, clock=clock)
    assert len(core.calls) == 2
    assert sum(len(entry["resources"]) for entry in out) == 1000


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


# A probe pod as the API server returns it after it ran (the fields of the collection's probe_pod.yml.j2 and of a
# kubelet's status): the runner's readers must see the same in the slim copy the module returns.
RAN_POD = {
    "metadata": {"name": "rlsv-run1-l0-infrastructure-p5-node-0", "namespace": "rlsv", "uid": "u-1",
                 "labels": {"rlstack.io/run": "run1", "rlstack.io/target": "p5-node-0"},
                 "creationTimestamp": "2026-12-06T10:00:00Z", "ownerReferences": [{"kind": "Job", "name": "anchor"}]},
    "spec": {"nodeName": "p5-node-0", "restartPolicy": "Never", "tolerations": [{"operator": "Exists"}],
             "volumes": [{"name": "probe", "configMap": {"name": "rlsv-run1-l0"}}],
             "containers": [{"name": "probe", "image": "public.ecr.aws/x/probe:1",
                             "command": ["python3", "/probe/probe_node.py"], "env": [{"name": "A", "value": "1"}],
                             "resources": {"limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "8"}}}]},
    "status": {"phase": "Succeeded", "startTime": "2026-12-06T10:00:01Z",
               "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-12-06T10:00:01Z"}],
               "containerStatuses": [{"name": "probe", "image": "public.ecr.aws/x/probe:1",
                                      "imageID": "public.ecr.aws/x/probe@sha256:" + "a" * 64, "restartCount": 0,
                                      "state": {"terminated": {"exitCode": 0,
                                                               "finishedAt": "2026-12-06T10:00:09Z"}}}]},
}


def test_the_returned_pods_keep_what_the_gpu_time_and_the_image_digest_read():
    from ansible_collections.rlstack.validation.plugins.module_utils.fleet._cost import gpu_usage
    from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._fingerprint import image_digest

    slim = _probe_run.returned_pod(RAN_POD)
    full_usage = gpu_usage([RAN_POD], 1796564500.0, {"p5-node-0": "p5.48xlarge"})
    assert full_usage["gpu_seconds"] == 64.0
    assert gpu_usage([slim], 1796564500.0, {"p5-node-0": "p5.48xlarge"}) == full_usage
    assert image_digest([slim], "public.ecr.aws/x/probe:1") == image_digest([RAN_POD], "public.ecr.aws/x/probe:1") == "sha256:" + "a" * 64
    assert "volumes" not in slim["spec"] and "command" not in slim["spec"]["containers"][0]
    assert slim["metadata"]["labels"] == RAN_POD["metadata"]["labels"]


def test_the_result_echoes_the_arguments_without_the_definitions():
    params = {"namespace": "rlsv", "definitions": [{"kind": "Pod"}] * 3, "config_maps": [{"kind": "ConfigMap"}],
              "expected": 3}
    assert _probe_run.echoed_args(params) == {"namespace": "rlsv", "expected": 3, "definitions_count": 3,
                                              "config_maps_count": 1, "targets_count": 0}


def test_a_pod_template_makes_one_pod_per_target():
    template = {"metadata": {"labels": {"rlstack.io/run": "r1"}},
                "spec": {"containers": [{"name": "probe", "command": ["python3", "probe.py", "{}"]}]}}
    params = _params(definitions=[], pod_template=template, name_prefix="rlsv-r1-l0",
                     targets=[{"node": "p5-node-0", "gpus": 8, "efa": 32}, {"node": "p5-node-1", "gpus": 8}])
    pods = _probe_run.definitions_of(params)
    assert [p["metadata"]["name"] for p in pods] == ["rlsv-r1-l0-p5-node-0", "rlsv-r1-l0-p5-node-1"]
    assert [p["spec"]["nodeSelector"]["kubernetes.io/hostname"] for p in pods] == ["p5-node-0", "p5-node-1"]
    assert json.loads(pods[0]["spec"]["containers"][0]["command"][-1]) == {"node": "p5-node-0"}
    # a level with reads of its own and no target starts nothing
    assert _probe_run.has_pods(params) and not _probe_run.has_pods(dict(params, targets=[]))
