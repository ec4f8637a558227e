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
from ansible_collections.rlstack.validation.plugins.module_utils.workloads._workloads import head_service, watched_jobs


class ApiException(Exception):
    def __init__(self, status):
        super().__init__("(%s)" % status)
        self.status = status
        self.reason = "Forbidden" if status == 403 else None  # as kubernetes.client's ApiException has it
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


def claim(name):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name}}


def test_each_job_gets_its_efa_claim_template_which_is_created_before_the_jobs():
    # templates/jobs.yml.j2 renders each Job followed by its claim template <job>-efa when EFA comes through DRA
    one, two = job("one")["definition"], job("two", nodes=2)["definition"]
    described = [{"name": "a", "example": {"framework": "trl"}, "job": {}}, {"name": "b", "example": {}, "job": {}}]
    jobs = watched_jobs([one, claim("one-efa"), two], described, "train")
    assert [(j["name"], (j["claim"] or {}).get("metadata")) for j in jobs] == [("a", {"name": "one-efa"}), ("b", None)]
    assert jobs[0]["watch"] == {"name": "one", "framework": "trl", "mode": "train", "launched": {}}
    assert [(o["kind"], o["metadata"]["name"]) for o in _job_run.objects_of(jobs)] == [
        ("Service", "two"), ("ResourceClaimTemplate", "one-efa"), ("Job", "one"), ("Job", "two")]
    with pytest.raises(ValueError, match="1 Jobs rendered for 2 examples"):
        watched_jobs([one, claim("one-efa")], described, "train")


def test_what_the_start_created_is_deleted_in_reverse_then_the_pods(monkeypatch):
    calls = []

    class Deleting:
        def call_api(self, path, method, body=None, **_kw):
            calls.append((method, path, body["propagationPolicy"]))
            if path.endswith("/gone"):
                raise ApiException(404)
            if path.endswith("/denied"):
                raise ApiException(403)
            return Raw()

    core = types.SimpleNamespace(api_client=Deleting())
    monkeypatch.setattr(_job_run._pod_batch, "delete_selected", lambda c, ns, sel: calls.append(("pods", ns, sel)) or {
        "deleted": ["pod-1"], "left": [], "failed": []})
    created = [claim("one-efa"), {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "gone"}},
               job("one")["definition"]]
    out = _job_run.delete_created(KUBERNETES, core, "ns", "a=b", created)
    assert calls == [("DELETE", "/apis/batch/v1/namespaces/ns/jobs/one", "Background"),
                     ("DELETE", "/api/v1/namespaces/ns/services/gone", "Background"),
                     ("DELETE", "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaimtemplates/one-efa", "Background"),
                     ("pods", "ns", "a=b")]
    assert out == {"deleted": ["one", "one-efa", "pod-1"], "left": [], "delete_errors": [], "left_nothing": True}
    calls.clear()
    out = _job_run.delete_created(KUBERNETES, core, "ns", "a=b", [claim("denied")])
    assert out["left_nothing"] is False and out["delete_errors"][0]["name"] == "denied"


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


FAILED_POD = {"metadata": {"name": "one-abc", "labels": {"batch.kubernetes.io/job-name": "one"}},
              "status": {"phase": "Failed",
                         "containerStatuses": [{"state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}}


class FailingCluster(Cluster):
    """A Job of backoffLimit 0 whose controller records its failure on the recorded_on-th read."""

    def jobs(self):
        self.reads += 1
        conditions = ([{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                        "message": "Job has reached the specified backoff limit"}]
                      if self.reads >= self.recorded_on else [])
        return [{"metadata": {"name": "one"}, "spec": {"backoffLimit": 0}, "status": {"conditions": conditions}}]


def test_a_success_the_pods_show_is_the_outcome_at_once():
    # every pod of the Job succeeded: the controller's record would add nothing (it batches pod updates for a second)
    clock = Clock()
    cluster = Cluster(recorded_on=3)
    params = {"grace_s": 45, "workloads": None, "record_wait_s": 10}
    summary = _job_run.read_outcome(cluster, lambda: ([POD], "1"), [POD], params, clock=clock,
                                    sleep=clock.sleep)[2]
    assert cluster.reads == 1 and clock.now == 0
    assert summary["states"][0]["complete"] and summary["states"][0]["source"] == "pods"


def test_the_end_gives_the_job_controller_a_few_seconds_to_record_why_a_job_failed():
    clock = Clock()
    cluster = FailingCluster(recorded_on=3)
    params = {"grace_s": 45, "workloads": None, "record_wait_s": 10}
    state = _job_run.read_outcome(cluster, lambda: ([FAILED_POD], "1"), [FAILED_POD], params, clock=clock,
                                  sleep=clock.sleep)[2]["states"][0]
    assert cluster.reads == 3 and clock.now == 2 * _job_run.REREAD_S
    assert state["failed"] and state["source"] != "pods" and state["reason"] == "BackoffLimitExceeded"


def test_without_the_controllers_record_the_failed_pods_are_the_outcome_after_record_wait_s():
    clock = Clock()
    cluster = FailingCluster(recorded_on=99)
    params = {"grace_s": 45, "workloads": None, "record_wait_s": 4}
    state = _job_run.read_outcome(cluster, lambda: ([FAILED_POD], "1"), [FAILED_POD], params, clock=clock,
                                  sleep=clock.sleep)[2]["states"][0]
    assert clock.now == 4 and state["source"] == "pods" and state["failed"] and state["reason"] == "PodFailed"


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
