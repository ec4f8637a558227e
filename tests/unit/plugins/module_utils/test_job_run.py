# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_job_run: the objects and their order, the start marker, the Job controller's few seconds, the empty log read again,
the deadline (with fake clients; tests/sim/test_sim_job_run.py runs the real API)."""
from __future__ import annotations

import json
import types

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _job_run
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._module_end import StartFailed
from ansible_collections.rlstack.validation.plugins.module_utils.workloads._workloads import head_service


class ApiException(Exception):
    def __init__(self, status):
        super().__init__("(%s)" % status)
        self.status = status
        self.body = None


KUBERNETES = types.SimpleNamespace(client=types.SimpleNamespace(exceptions=types.SimpleNamespace(ApiException=ApiException)))


class Raw:
    def __init__(self, body=None):
        self.data = json.dumps(body or {}).encode()

    def release_conn(self):
        pass


class ApiClient:
    """call_api as the kubernetes client has it: POSTs recorded, 409 for what exists."""

    def __init__(self, existing=()):
        self.existing, self.posted = set(existing), []

    def call_api(self, path, method, body=None, **_kw):
        name = body["metadata"]["name"]
        self.posted.append((method, path, body["kind"], name))
        if (body["kind"], name) in self.existing:
            raise ApiException(409)
        self.existing.add((body["kind"], name))
        return Raw()


def job(name, nodes=1):
    spec = {"completionMode": "Indexed", "completions": nodes} if nodes > 1 else {}
    definition = {"apiVersion": "batch/v1", "kind": "Job", "spec": spec,
                  "metadata": {"name": name, "namespace": "ns", "labels": {"rlstack.io/level": "l5"},
                               "ownerReferences": [{"name": "anchor"}]}}
    return {"name": name, "definition": definition, "service": head_service(definition),
            "watch": {"name": name, "framework": "custom", "mode": "train", "launched": {}}}


def test_the_head_service_of_a_multi_node_job_is_made_from_the_job_and_created_first():
    jobs = [job("one"), job("two", nodes=2)]
    assert jobs[0]["service"] is None
    service = jobs[1]["service"]
    assert service["metadata"] == {"name": "two", "namespace": "ns", "labels": {"rlstack.io/level": "l5"},
                                   "ownerReferences": [{"name": "anchor"}]}
    assert service["spec"] == {"clusterIP": "None", "selector": {"batch.kubernetes.io/job-name": "two"},
                               "ports": [{"name": "ray", "port": 6379}]}
    api = ApiClient()
    assert _job_run.create_objects(KUBERNETES, api, "ns", _job_run.objects_of(jobs)) is True
    assert api.posted == [("POST", "/api/v1/namespaces/ns/services", "Service", "two"),
                          ("POST", "/apis/batch/v1/namespaces/ns/jobs", "Job", "one"),
                          ("POST", "/apis/batch/v1/namespaces/ns/jobs", "Job", "two")]


def test_an_attempt_that_finds_the_first_object_creates_nothing():
    api = ApiClient(existing={("Job", "one")})
    assert _job_run.create_objects(KUBERNETES, api, "ns", _job_run.objects_of([job("one"), job("two")])) is False
    assert [p[3] for p in api.posted] == ["one"]


def test_a_refused_create_is_a_failed_start_with_the_clients_exception_as_its_cause():
    class Refusing(ApiClient):
        def call_api(self, path, method, body=None, **_kw):
            raise ApiException(403)

    core = types.SimpleNamespace(api_client=Refusing())
    with pytest.raises(StartFailed) as caught:
        _job_run.start_objects(KUBERNETES, core, "ns", None, _job_run.objects_of([job("one")]))
    assert caught.value.__cause__.status == 403


class Cluster:
    """The Jobs as the controller records them: Complete only from the `recorded_on`-th read on."""

    def __init__(self, recorded_on):
        self.reads, self.recorded_on = 0, recorded_on

    def jobs(self):
        self.reads += 1
        conditions = [{"type": "Complete", "status": "True"}] if self.reads >= self.recorded_on else []
        return [{"metadata": {"name": "one"}, "status": {"conditions": conditions}}]


POD = {"metadata": {"name": "one-abc", "labels": {"batch.kubernetes.io/job-name": "one"}},
       "status": {"phase": "Succeeded",
                  "containerStatuses": [{"state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}}


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_the_end_gives_the_job_controller_a_few_seconds_to_record_the_outcome():
    clock = Clock()
    cluster = Cluster(recorded_on=3)
    params = {"grace_s": 45, "workloads": None, "record_wait_s": 10}
    summary = _job_run.read_outcome(cluster, lambda: ([POD], "1"), [POD], params, clock=clock,
                                    sleep=clock.sleep)[2]
    assert cluster.reads == 3 and clock.now == 2 * _job_run.REREAD_S
    assert summary["states"][0]["complete"] and summary["states"][0]["source"] != "pods"


def test_without_the_controllers_record_the_finished_pods_are_the_outcome_after_record_wait_s():
    clock = Clock()
    cluster = Cluster(recorded_on=99)
    params = {"grace_s": 45, "workloads": None, "record_wait_s": 4}
    summary = _job_run.read_outcome(cluster, lambda: ([POD], "1"), [POD], params, clock=clock,
                                    sleep=clock.sleep)[2]
    assert clock.now == 4 and summary["states"][0]["source"] == "pods" and summary["states"][0]["complete"]


def test_an_empty_log_is_read_again_and_a_log_error_is_not(monkeypatch):
    reads = []
    logs = {"a": ["", "", "late line"], "b": ["printed"], "c": [""], "gone": []}

    def read_logs(kubernetes, core, namespace, selector, names=(), **_kw):
        reads.append(list(names))
        out = []
        for name in names:
            if name == "gone":  # listed no more: no entry
                continue
            text = logs[name].pop(0) if logs[name] else ""
            out.append({"name": name, "log": text, "error": "gone" if name == "c" else ""})
        return list(names), out

    clock = Clock()
    monkeypatch.setattr(_job_run._pod_batch, "read_logs", read_logs)
    states = [{"pods": [{"pod": "x"}, {"pod": name}]} for name in ("a", "b", "c", "gone")] + [{"pods": []}]
    params = {"namespace": "ns", "concurrency": 4, "read_deadline_s": 60, "limit_bytes": 1000}
    out = _job_run.read_last_logs(KUBERNETES, None, params, "sel", states, clock=clock, sleep=clock.sleep)
    assert reads[:3] == [["a", "b", "c", "gone"], ["a", "gone"], ["a", "gone"]]
    # a pod that is gone is asked for until the bound, then left out
    assert reads[3:] == [["gone"]] * (len(reads) - 3) and clock.now == _job_run.EMPTY_LOG_WAIT_S
    assert [(e["name"], e["log"]) for e in out] == [("a", "late line"), ("b", "printed"), ("c", "")]


def test_the_attempt_at_the_deadline_finishes_and_a_start_without_a_wait_keeps_no_state(monkeypatch, tmp_path):
    monkeypatch.setattr(_job_run, "start_objects", lambda *a: False)
    monkeypatch.setattr(_job_run, "pod_calls", lambda *a: (lambda: ([], "1"), lambda v, t: iter(())))
    monkeypatch.setattr(_job_run, "Cluster", lambda *a: types.SimpleNamespace(job_names=lambda: {"one"}))
    monkeypatch.setattr(_job_run, "finish", lambda *a: {"examples": {"one": {}}})
    state_file = tmp_path / "state.json"
    params = {"namespace": "ns", "label_selectors": ["a=b"], "jobs": [job("one")], "lease": None, "grace_s": 45, "poll_s": 2,
              "step_s": 30, "deadline_at": 100.0, "request_timeout_s": 5, "state_file": str(state_file),
              "wait": False}
    out = _job_run.run(KUBERNETES, None, None, params, now=lambda: 50.0)
    assert (out["finished"], out["resources"]) == (False, []) and not state_file.exists()
    params["wait"] = True
    out = _job_run.run(KUBERNETES, None, None, params, now=lambda: 100.0)
    # no pod yet at the deadline: timed out, and the outcome read
    assert (out["finished"], out["settled"], out["timed_out"], out["examples"]) == (True, False, True, {"one": {}})
    assert not state_file.exists()  # removed when the wait ended

    # an attempt after the one that created them creates nothing, even a Job deleted meanwhile
    def no_start(*_args):
        raise AssertionError("an attempt after the first created objects again")

    monkeypatch.setattr(_job_run, "start_objects", no_start)
    state_file.write_text('{"started": 90.0, "created": true}')
    params["deadline_at"] = 200.0
    out = _job_run.run(KUBERNETES, None, None, params, now=lambda: 200.0)
    assert out["started"] is False and out["finished"] is True
