"""The real kube-scheduler against the fake nodes: GPU/EFA capacity, the GPU taint, node selectors."""
from __future__ import annotations

import pytest

import simkit

pytestmark = pytest.mark.sim

GPU_NODES = {"p5-node-0", "p5-node-1", "g6-node-0", "g6-node-1"}


def _scheduled(core, ns, name):
    pod = core.read_namespaced_pod(name, ns)
    return pod if pod.spec.node_name else None


def _unschedulable(core, ns, name, needle):
    pod = core.read_namespaced_pod(name, ns)
    cond = simkit.condition(pod.status.conditions, "PodScheduled")
    if (cond is not None and cond.status == "False" and cond.reason == "Unschedulable"
            and needle in (cond.message or "")):
        return pod
    return None


def test_eight_gpu_pod_fills_a_p5_node(core, namespace):
    core.create_namespaced_pod(namespace, simkit.gpu_pod_body("gpu-a"))
    first = simkit.wait_until(lambda: _scheduled(core, namespace, "gpu-a"), 30, "gpu-a to be scheduled")
    node = first.spec.node_name
    assert node in ("p5-node-0", "p5-node-1")
    simkit.wait_until(lambda: core.read_namespaced_pod("gpu-a", namespace).status.phase == "Running", 30,
                      "gpu-a Running")

    # A second 8-GPU pod pinned to the same node does not fit.
    core.create_namespaced_pod(namespace, simkit.gpu_pod_body(
        "gpu-b", node_selector={simkit.INSTANCE_TYPE: simkit.P5, "kubernetes.io/hostname": node}))
    pod = simkit.wait_until(lambda: _unschedulable(core, namespace, "gpu-b", "Insufficient nvidia.com/gpu"), 30,
                            "gpu-b PodScheduled=False with Insufficient nvidia.com/gpu")
    assert pod.status.phase == "Pending" and not pod.spec.node_name
    events = simkit.wait_until(
        lambda: [e for e in simkit.events_for(core, namespace, "gpu-b") if e.reason == "FailedScheduling"], 30,
        "a FailedScheduling event for gpu-b")
    assert any("Insufficient nvidia.com/gpu" in (e.message or "") for e in events), [e.message for e in events]
    assert all(e.type == "Warning" for e in events)
    # ... and it stays Pending.
    assert simkit.holds_for(lambda: not core.read_namespaced_pod("gpu-b", namespace).spec.node_name, 2)


def test_pod_without_toleration_avoids_gpu_nodes(core, namespace):
    names = [f"plain-{i}" for i in range(3)]
    for name in names:
        core.create_namespaced_pod(namespace, simkit.pod_body(name))
    for name in names:
        pod = simkit.wait_until(lambda: _scheduled(core, namespace, name), 30, f"{name} to be scheduled")
        assert pod.spec.node_name == "system-node-0"

    # Needing a GPU but not tolerating the taint: no node fits, it stays Pending.
    core.create_namespaced_pod(namespace, simkit.pod_body("wants-gpu", gpus=1))
    pod = simkit.wait_until(lambda: _unschedulable(core, namespace, "wants-gpu", "untolerated taint"), 30,
                            "wants-gpu Unschedulable (untolerated taint)")
    message = simkit.condition(pod.status.conditions, "PodScheduled").message
    # The GPU nodes are excluded by their taint, the system node has no GPU.
    assert "4 node(s) had untolerated taint" in message and "1 Insufficient nvidia.com/gpu" in message, message
    assert simkit.holds_for(lambda: not core.read_namespaced_pod("wants-gpu", namespace).spec.node_name, 2)
    assert not any(p.spec.node_name in GPU_NODES for p in core.list_namespaced_pod(namespace).items)
