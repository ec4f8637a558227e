# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_pod_batch: bounded parallel creates, one refusal sentence, delete-collection then a bounded wait.
The real requests run against the simulated cluster's API server in every sim level (tests/sim)."""
from __future__ import annotations

import json
import threading
import time

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _pod_batch


class StatusError(Exception):
    """Shaped as the kubernetes client's ApiException: an HTTP status and the Status body."""

    def __init__(self, status, message):
        super().__init__("(%s)\nReason: x\nHTTP response headers: {...}\nHTTP response body: ..." % status)
        self.status, self.reason = status, "x"
        self.body = json.dumps({"kind": "Status", "status": "Failure", "message": message, "code": status})


def pods(n):
    return [{"metadata": {"name": "probe-%d" % i}} for i in range(n)]


def test_creates_run_in_parallel_within_the_bound():
    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def create(_definition):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1

    out = _pod_batch.create_all(create, pods(40), workers=8, deadline_s=30)
    assert out == {"created": ["probe-%d" % i for i in range(40)], "existing": [], "failed": []}
    assert 1 < state["most"] <= 8


def test_a_pod_that_exists_already_is_not_a_failure():
    def create(definition):
        if definition["metadata"]["name"] == "probe-1":
            raise StatusError(409, 'pods "probe-1" already exists')

    out = _pod_batch.create_all(create, pods(3))
    assert out == {"created": ["probe-0", "probe-2"], "existing": ["probe-1"], "failed": []}


def test_a_refusal_is_the_api_servers_own_sentence():
    quota = ('pods "probe-2" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=8, '
             'used: requests.nvidia.com/gpu=16, limited: requests.nvidia.com/gpu=16')

    def create(definition):
        if definition["metadata"]["name"] in ("probe-2", "probe-3"):
            raise StatusError(403, quota)

    out = _pod_batch.create_all(create, pods(4))
    assert out["created"] == ["probe-0", "probe-1"]
    assert out["failed"] == [{"name": "probe-2", "error": "(403) " + quota}, {"name": "probe-3", "error": "(403) " + quota}]
    assert _pod_batch.failure_message("gpu-validation", out, 4) == (
        "2 of 4 pods could not be created in namespace gpu-validation; the first, probe-2: (403) " + quota)


def test_an_error_without_a_status_body_is_its_first_line():
    assert _pod_batch.api_message(ValueError("boom\nmore")) == "ValueError: boom"
    assert _pod_batch.api_message(ValueError("")) == "ValueError"
    unreadable = StatusError(500, "x")
    unreadable.body = "<html>"
    assert _pod_batch.api_message(unreadable) == "StatusError: (500)"


def test_creates_past_the_deadline_are_failures():
    out = _pod_batch.create_all(lambda _d: time.sleep(0.5), pods(2), workers=1, deadline_s=0.1)
    assert [f["name"] for f in out["failed"]] == ["probe-0", "probe-1"]
    assert all("no answer within" in f["error"] for f in out["failed"])


def test_deletes_run_in_parallel_and_a_pod_gone_already_is_not_a_failure():
    deleted = []

    def delete(name):
        if name == "gone":
            raise StatusError(404, 'pods "gone" not found')
        if name == "denied":
            raise StatusError(403, 'pods "denied" is forbidden: User "u" cannot delete resource "pods"')
        deleted.append(name)

    out = _pod_batch.delete_all(delete, ["a", "gone", "b", "denied"], workers=4)
    assert sorted(deleted) == ["a", "b"]
    assert out == {"failed": [{"name": "denied", "error": '(403) pods "denied" is forbidden: User "u" cannot '
                                                          'delete resource "pods"'}]}


def test_wait_until_none_is_left():
    listed = [["a", "b"], ["b"], []]
    out = _pod_batch.wait_gone(lambda: listed.pop(0), wait_s=10, sleep=lambda _s: None)
    assert out["left"] == [] and not listed


def test_the_wait_after_the_delete_is_bounded():
    clock = iter(range(100)).__next__
    out = _pod_batch.wait_gone(lambda: ["stuck"], wait_s=5, clock=clock, sleep=lambda _s: None)
    assert out["left"] == ["stuck"] and out["waited_s"] <= 6


def test_the_selector_of_a_delete_is_never_empty_by_accident():
    assert _pod_batch.selector_of(["rlstack.io/run-id=r1", "", "app.kubernetes.io/component=probe"]) == \
        "rlstack.io/run-id=r1,app.kubernetes.io/component=probe"
    # nothing in particular selects every pod: the modules refuse with this sentence
    assert _pod_batch.selector_of(["", ""]) == _pod_batch.selector_of(None) == ""
    assert _pod_batch.NO_SELECTOR % ("pod_logs with delete_after", "ns") == \
        "pod_logs with delete_after needs label_selectors: it never deletes every pod of namespace ns"


def test_read_logs_reads_the_listed_pods_json_and_each_log():
    """The pods are listed as JSON (no V1Pod models: seconds of CPU over 256 pods); a log that cannot be read is that
    pod's error, and the others are read."""
    class Response:
        data = json.dumps({"items": [
            {"metadata": {"name": "p-1", "labels": {"a": "b"}}, "spec": {"nodeName": "n1"},
             "status": {"phase": "Succeeded", "containerStatuses": [{"state": {"terminated": {"exitCode": 0}}}]}},
            {"metadata": {"name": "p-0"}, "spec": {},
             "status": {"phase": "Running", "containerStatuses": [{"state": {"running": {}}}]}},
            {"metadata": {"name": "other"}, "spec": {"nodeName": "n2"}, "status": {}}]}).encode()

    class Kubernetes:
        class client:
            class exceptions:
                ApiException = StatusError

    class Core:
        def list_namespaced_pod(self, namespace, label_selector, _request_timeout, _preload_content):
            assert (namespace, label_selector, _preload_content) == ("ns", "run=r", False)
            return Response()

        def read_namespaced_pod_log(self, name, namespace, _request_timeout, limit_bytes):
            if name == "p-0":
                raise StatusError(400, 'container "c" in pod "p-0" is waiting to start')
            return "log of %s" % name

    listed, out = _pod_batch.read_logs(Kubernetes, Core(), "ns", "run=r", names=["p-0", "p-1"])
    assert listed == ["p-1", "p-0", "other"]
    assert out == [
        {"name": "p-0", "node": "", "labels": {}, "phase": "Running", "exit_code": None, "log": "",
         "error": out[0]["error"]},
        {"name": "p-1", "node": "n1", "labels": {"a": "b"}, "phase": "Succeeded", "exit_code": 0, "log": "log of p-1",
         "error": ""}]
    assert "is waiting to start" in out[0]["error"]


def test_logs_read_during_the_wait_are_not_read_again_and_the_rest_are():
    """LogPrefetch reads ended pods' logs while the wait goes on; read_logs takes them as they are and reads only
    the pods it has none for (a prefetch that failed is read again), so what is judged is the same."""
    class Response:
        data = json.dumps({"items": [
            {"metadata": {"name": name}, "spec": {"nodeName": "n"}, "status": {"phase": "Succeeded"}}
            for name in ("p-0", "p-1", "p-2")]}).encode()

    class Kubernetes:
        class client:
            class exceptions:
                ApiException = StatusError

    reads = []

    class Core:
        def list_namespaced_pod(self, namespace, label_selector, _request_timeout, _preload_content):
            return Response()

        def read_namespaced_pod_log(self, name, namespace, _request_timeout, limit_bytes):
            reads.append(name)
            if name == "p-1" and reads.count("p-1") == 1:
                raise StatusError(500, "etcd timeout")
            return "log of %s" % name

    prefetch = _pod_batch.LogPrefetch(_pod_batch.log_reader(Kubernetes, Core(), "ns"), workers=2)
    for name in ("p-0", "p-1", "p-0"):
        prefetch.submit(name)
    ready = prefetch.collect(10)
    assert ready == {"p-0": "log of p-0"} and sorted(reads) == ["p-0", "p-1"]
    _listed, out = _pod_batch.read_logs(Kubernetes, Core(), "ns", "run=r", ready=ready)
    assert sorted(reads) == ["p-0", "p-1", "p-1", "p-2"]
    assert [(o["name"], o["log"], o["error"]) for o in out] == [
        ("p-0", "log of p-0", ""), ("p-1", "log of p-1", ""), ("p-2", "log of p-2", "")]


def test_a_prefetch_closed_unused_reads_nothing_more():
    prefetch = _pod_batch.LogPrefetch(lambda name: name)
    prefetch.close()
    assert prefetch.collect(0) == {}
