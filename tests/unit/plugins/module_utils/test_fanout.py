"""bounded_map: order, concurrency bound, errors and the shared deadline; pooled_core_api."""
import threading
import time
import types

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _fanout
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._fanout import bounded_map


def test_results_keep_the_order_of_the_items():
    out = bounded_map(lambda x: x * 2, [3, 1, 2], workers=3)
    assert [e["value"] for e in out] == [6, 2, 4]
    assert all(e["ok"] and not e["timed_out"] for e in out)


def test_no_more_than_workers_calls_are_in_flight():
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def call(_item):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.02)
        with lock:
            state["now"] -= 1

    bounded_map(call, range(40), workers=4, deadline_s=30)
    assert state["peak"] == 4


def test_an_exception_is_reported_for_its_item_only():
    def call(x):
        if x == 2:
            raise ValueError("bad pod")
        return x

    out = bounded_map(call, [1, 2, 3], workers=2)
    assert [e["ok"] for e in out] == [True, False, True]
    assert out[1]["error"] == "ValueError: bad pod"
    assert out[2]["value"] == 3


def test_a_call_error_is_reported_as_its_own_sentence():
    def call(_x):
        raise _fanout.CallError("HTTP 500: the kubelet did not answer")

    assert bounded_map(call, [1])[0]["error"] == "HTTP 500: the kubelet did not answer"


def test_calls_past_the_deadline_are_timed_out_and_the_map_returns_on_time():
    release = threading.Event()

    def call(x):
        if x == "stuck":
            release.wait(5)
        return x

    t0 = time.monotonic()
    out = bounded_map(call, ["a", "stuck", "b"], workers=3, deadline_s=0.3)
    elapsed = time.monotonic() - t0
    release.set()
    assert elapsed < 2
    assert [e["timed_out"] for e in out] == [False, True, False]
    assert out[1]["error"] == "no answer within 0 s" or out[1]["error"].startswith("no answer within")


def test_no_items_and_odd_worker_counts():
    assert bounded_map(lambda x: x, []) == []
    assert bounded_map(lambda x: x, [1], workers=0)[0]["value"] == 1


def test_pooled_core_api_copies_the_modules_configuration_with_a_pool_as_big_as_the_fan_out():
    kubernetes = pytest.importorskip("kubernetes")
    configuration = kubernetes.client.Configuration()
    configuration.host = "https://127.0.0.1:6443"
    module_client = types.SimpleNamespace(configuration=configuration, client=types.SimpleNamespace(
        client=types.SimpleNamespace(default_headers={"User-Agent": "rlstack"})))
    core = _fanout.pooled_core_api(kubernetes, module_client, 16)
    assert isinstance(core, kubernetes.client.CoreV1Api)
    assert core.api_client.configuration.connection_pool_maxsize == 16
    assert core.api_client.configuration.host == "https://127.0.0.1:6443"
    assert core.api_client.default_headers["User-Agent"] == "rlstack"
    assert configuration.connection_pool_maxsize != 16  # the module's own configuration is left as it was
