"""`exec` into simulated pods: kwok runs the command on this machine, `python3` is the probe replayer.

The recordings used here are the committed test fixture sim/replay/probes/probe_smoke/healthy/
(default.out, p5.48xlarge.out, p5-node-1.out), one per step of replay.py's lookup order.
"""
from __future__ import annotations

import json

import pytest

import simkit

pytestmark = pytest.mark.sim

PROBE_CMD = 'python3 /opt/rlstack/probe_smoke.py "{}"; echo __rc=$?'


def _running_pod(core, ns, body):
    name = body["metadata"]["name"]
    core.create_namespaced_pod(ns, body)
    simkit.wait_until(lambda: core.read_namespaced_pod(name, ns).status.phase == "Running", 30, f"{name} Running")
    # The node runtime gives the pod its Exec object once it is scheduled; retry until exec answers.
    simkit.wait_until(lambda: "__rc=0" in simkit.exec_raw(core, ns, name, ["sh", "-c", "echo __rc=$?"]), 20,
                      f"exec into {name}")
    return name


def _probe(core, ns, pod):
    out = simkit.exec_raw(core, ns, pod, ["sh", "-c", PROBE_CMD])
    body, _marker, tail = out.rpartition("__rc=")
    return body.strip(), int(tail.split()[0])


def test_exec_replays_probe_recording(core, namespace):
    pod = _running_pod(core, namespace, simkit.pod_body("probe"))
    body, rc = _probe(core, namespace, pod)
    assert rc == 0
    recorded = (simkit.SIM / "replay/probes/probe_smoke/healthy/default.out").read_text()
    assert json.loads(body) == json.loads(recorded) == {"probe": "smoke", "ok": True, "matched": "default"}


def test_exec_environment_of_the_node_runtime(core, namespace):
    pod = _running_pod(core, namespace, simkit.pod_body("env"))
    out, rc = simkit.exec_sh(core, namespace, pod,
                             'echo "$SIM_NODE|$SIM_INSTANCE_TYPE|$SIM_POD|$SIM_LEVEL"; pwd; command -v python3')
    assert rc == 0
    ident, cwd, python = out.splitlines()
    assert ident == f"system-node-0|m5.2xlarge|{namespace}/env|"
    assert cwd == str(simkit.STATE / "exec")
    assert python == str(simkit.STATE / "fakebin" / "python3")


def test_exec_lookup_order_node_then_instance_type_then_default(core, namespace):
    """p5-node-1 has its own recording, p5-node-0 falls back to the p5.48xlarge one."""
    pods = {}
    for node in ("p5-node-0", "p5-node-1"):
        body = simkit.pod_body(f"on-{node}", tolerate_gpu=True, node_selector={"kubernetes.io/hostname": node})
        pods[node] = _running_pod(core, namespace, body)
    assert json.loads(_probe(core, namespace, pods["p5-node-1"])[0])["matched"] == "node"
    assert json.loads(_probe(core, namespace, pods["p5-node-0"])[0])["matched"] == "instance-type"


def test_exec_exit_codes(core, namespace):
    pod = _running_pod(core, namespace, simkit.pod_body("rc"))
    # The convention: the exit code travels in the output.
    out = simkit.exec_raw(core, namespace, pod, ["sh", "-c", "sh -c 'echo before; exit 3'; echo __rc=$?"])
    assert out.splitlines() == ["before", "__rc=3"]
    assert simkit.exec_sh(core, namespace, pod, "exit 3")[1] == 3
    assert simkit.exec_sh(core, namespace, pod, "false")[1] == 1
    # A probe without a recording: the replayer says so and exits 127.
    out, rc = simkit.exec_sh(core, namespace, pod, "python3 /opt/rlstack/probe_not_recorded.py 2>&1")
    assert rc == 127 and "no recording of probe probe_not_recorded" in out


def test_exec_without_the_convention_loses_the_exit_code(core, namespace):
    """Why the convention exists (sim-cluster.md 4.3): kwok reports a failed command as an InternalError
    without the exit code in `details`, so the client cannot tell the code, and stream() does not raise."""
    from kubernetes.stream import stream
    pod = _running_pod(core, namespace, simkit.pod_body("lost"))
    # The preloaded form returns the output and swallows the failure.
    assert simkit.exec_raw(core, namespace, pod, ["sh", "-c", "echo hi; exit 3"]) == "hi\n"
    resp = stream(core.connect_get_namespaced_pod_exec, pod, namespace, command=["sh", "-c", "exit 3"],
                  stdin=False, stdout=True, stderr=True, tty=False, _preload_content=False)
    resp.run_forever(timeout=20)
    status = json.loads(resp.read_channel(3))
    assert status["status"] == "Failure" and status["reason"] == "InternalError"
    assert "exit status 3" in status["message"]
    assert "details" not in status  # what WSClient.returncode would need for the code
    resp2 = stream(core.connect_get_namespaced_pod_exec, pod, namespace, command=["sh", "-c", "exit 3"],
                   stdin=False, stdout=True, stderr=True, tty=False, _preload_content=False)
    resp2.run_forever(timeout=20)
    with pytest.raises((KeyError, TypeError, ValueError)):
        resp2.returncode  # noqa: B018 - kubernetes 34.x raises KeyError('details')
