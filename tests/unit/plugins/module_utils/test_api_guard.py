# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The API guard: the kubernetes client (the real one, as kubernetes.core uses it) loaded through the
runner's sitecustomize in a child process, against real sockets: one that accepts and never answers (a
stalled API server), a closed port (a restarting one) and a small HTTP server that answers 503/500 a few
times before it answers. The sim tests (tests/faults) do the same with a real kube-apiserver."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _api_guard as guard

ROOT = Path(__file__).resolve().parents[4]
SITE = ROOT / "roles" / "runner" / "files" / "api_guard"

CLIENT = r"""
import json, sys, time
import kubernetes
cfg = kubernetes.client.Configuration(host=sys.argv[1])
api = kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(cfg))
t0 = time.monotonic()
try:
    if sys.argv[2] == "create":
        api.create_namespaced_config_map("default", {"metadata": {"name": "x"}})
    else:
        api.list_node()
    out = {"ok": True}
except Exception as exc:
    out = {"ok": False, "type": type(exc).__name__, "msg": str(exc), "status": getattr(exc, "status", None)}
out["seconds"] = time.monotonic() - t0
print(json.dumps(out))
"""


def run_client(url, env=None, call="list"):
    environ = dict(os.environ, PYTHONPATH=str(SITE), RLSTACK_CLUSTER="sim-eks", RLSTACK_API_TIMEOUT_S="4",
                   RLSTACK_API_CONNECT_TIMEOUT_S="1", RLSTACK_API_READ_TIMEOUT_S="1")
    environ.update(env or {})
    proc = subprocess.run([sys.executable, "-c", CLIENT, url, call], capture_output=True, text=True, timeout=60,
                          env=environ, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture()
def stalled():
    """A socket that accepts connections and never answers: what a SIGSTOPped kube-apiserver looks like."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield "http://127.0.0.1:%d" % sock.getsockname()[1]
    sock.close()


@pytest.fixture()
def closed_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return "http://127.0.0.1:%d" % port


class _Server(http.server.BaseHTTPRequestHandler):
    plan = []      # status codes to answer, then 200
    requests = []

    def _answer(self):
        self.requests.append((self.command, self.path))
        status, body = (self.plan.pop(0) if self.plan else (200, {"kind": "NodeList", "items": []}))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    _Server.plan, _Server.requests = [], []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd, "http://127.0.0.1:%d" % httpd.server_address[1]
    httpd.shutdown()


def test_a_stalled_server_ends_the_call_within_the_bound_with_one_sentence(stalled):
    out = run_client(stalled)
    assert not out["ok"] and out["type"] == "APIUnreachableError"
    assert 3 <= out["seconds"] < 7, out
    assert out["msg"].startswith("The Kubernetes API server of cluster sim-eks (%s) did not answer GET /api/v1/nodes"
                                 % stalled), out["msg"]
    assert "read timed out" in out["msg"] and "VPN" in out["msg"] and "expired" in out["msg"]


def test_a_refused_connection_is_retried_until_the_bound(closed_port):
    out = run_client(closed_port)
    assert out["type"] == "APIUnreachableError" and "connection refused" in out["msg"], out
    assert 3 <= out["seconds"] < 7
    assert "attempts" in out["msg"]


def test_without_the_guard_a_stalled_server_blocks(stalled):
    """The fact the guard exists for: the client alone has no timeout (killed here after 5 s)."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", CLIENT, stalled, "list"], capture_output=True, timeout=5, env=environ,
                       check=False)


def test_5xx_429_and_etcd_elections_are_retried_then_the_call_succeeds(server):
    _httpd, url = server
    _Server.plan = [(503, {"message": "unavailable"}), (429, {"message": "slow down"}),
                    (500, {"message": "etcdserver: leader changed"})]
    out = run_client(url, {"RLSTACK_API_TIMEOUT_S": "20"})
    assert out["ok"], out
    assert len(_Server.requests) == 4


def test_other_http_errors_are_not_retried(server):
    _httpd, url = server
    _Server.plan = [(404, {"message": "not found"})]
    out = run_client(url)
    assert out["status"] == 404 and len(_Server.requests) == 1


def test_a_create_that_may_have_reached_the_server_is_not_sent_twice(stalled):
    out = run_client(stalled, call="create")
    assert out["type"] == "APIUnreachableError" and "1 attempt," in out["msg"], out
    assert out["seconds"] < 3


def test_once_the_server_was_found_unreachable_later_calls_fail_at_once_with_the_same_sentence(stalled, tmp_path):
    state = tmp_path / "api-state"
    first = run_client(stalled, {"RLSTACK_API_STATE": str(state)})
    assert first["type"] == "APIUnreachableError" and state.exists()
    second = run_client(stalled, {"RLSTACK_API_STATE": str(state), "RLSTACK_API_TIMEOUT_S": "30"})
    assert second["type"] == "APIUnreachableError" and second["seconds"] < 1, second
    assert second["msg"] == first["msg"]
    stale = run_client(stalled, {"RLSTACK_API_STATE": str(state), "RLSTACK_API_STATE_TTL_S": "0.001"})
    assert stale["seconds"] >= 3, stale  # an old record is from an earlier run: the server is tried again


def test_an_answer_clears_the_unreachable_state(server, tmp_path):
    _httpd, url = server
    state = tmp_path / "api-state"
    state.write_text("{}")
    os.utime(state, (time.time() - 120, time.time() - 120))  # older than the 60 s it counts for
    assert run_client(url, {"RLSTACK_API_STATE": str(state)})["ok"]
    assert not state.exists()


def test_classify_and_backoff_rules():
    class Status(Exception):
        def __init__(self, status, body="", headers=None):
            super().__init__(status)
            self.status, self.body, self.headers = status, body, headers or {}

    assert guard.classify(Status(503)) == ("status", "HTTP 503")
    assert guard.classify(Status(500, b'{"message":"etcdserver: request timed out"}'))[0] == "status"
    assert guard.classify(Status(500, "internal")) == ("status", "HTTP 500")
    assert guard.classify(Status(403)) is None
    assert guard.classify(ValueError("x")) is None
    wrapped = RuntimeError("pool")
    wrapped.reason = ConnectionRefusedError(111, "refused")
    assert guard.classify(wrapped) == ("connect", "connection refused")
    assert guard.classify(ConnectionResetError()) == ("read", "connection reset")
    assert guard.retry_after(Status(429, headers={"Retry-After": "3"})) == 3.0
    assert not guard.may_retry("POST", "read") and guard.may_retry("POST", "connect")
    assert guard.may_retry("patch", "read")


def test_bounded_call_backs_off_exponentially_inside_the_bound():
    clock = [0.0]
    sleeps = []

    def send(timeout):
        clock[0] += timeout[1]
        raise TimeoutError("timed out")

    bounds = guard.Bounds(total_s=30, connect_s=5, read_s=5, cluster="c1")
    with pytest.raises(guard.APIUnreachableError) as caught:
        guard.bounded_call(send, "GET", "https://api.example:443/api/v1/nodes?limit=1", bounds,
                           clock=lambda: clock[0], sleep=lambda s: (sleeps.append(s), clock.__setitem__(0, clock[0] + s)))
    assert sleeps == [0.5, 1.0, 2.0, 4.0]
    assert clock[0] <= 30
    assert "cluster c1 (https://api.example:443) did not answer GET /api/v1/nodes within" in str(caught.value)


def test_the_environment_sets_the_bounds():
    bounds = guard.Bounds.from_env({"RLSTACK_API_TIMEOUT_S": "12", "RLSTACK_API_READ_TIMEOUT_S": "banana"})
    expected = (12.0, guard.DEFAULTS["read_s"], guard.DEFAULTS["connect_s"])
    assert (bounds.total_s, bounds.read_s, bounds.connect_s) == expected


def test_an_rbac_denial_names_the_missing_permission():
    """The API server's own denials, recorded on the simulated cluster (tests/faults/record_objects.py)."""
    recorded = json.loads((ROOT / "tests" / "unit" / "fixtures" / "k8s" / "forbidden.json").read_text())
    namespaced, cluster = [e["body"]["message"] for e in recorded["api_errors"]]
    namespace = recorded["api_errors"][0]["body"]["details"].get("namespace") or namespaced.rsplit('"', 2)[-2]
    assert guard.forbidden_sentence(namespaced).startswith("forbidden: needs list on pods in namespace %s (" % namespace)
    assert guard.forbidden_sentence(cluster).startswith("forbidden: needs list on nodes at the cluster scope (")
    assert guard.forbidden_sentence("pods is forbidden: exceeded quota") is None


def test_the_call_bound_comes_from_the_runs_bound():
    """One number, validation_api_timeout_s (its default in the runner's argument spec), gives each call's bound
    and the record's freshness: 35 s of the default 60 (the playbook used to compute 35 while the guard's own
    default said 40)."""
    import yaml
    spec = yaml.safe_load((Path(__file__).resolve().parents[4] / "roles/runner/meta/argument_specs.yml").read_text())
    default = next(entry["options"]["validation_api_timeout_s"]["default"] for entry in spec["argument_specs"].values()
                   if "validation_api_timeout_s" in entry.get("options", {}))
    assert guard.RUN_TIMEOUT_DEFAULT_S == default
    assert guard.DEFAULTS["total_s"] == guard.call_bound_s(default) == 35
    assert guard.call_bound_s(20) == 10 and guard.call_bound_s(100) == 75
    bounds = guard.Bounds.from_env({"RLSTACK_API_RUN_TIMEOUT_S": "100"})
    assert (bounds.total_s, bounds.state_ttl_s) == (75.0, 100.0)
