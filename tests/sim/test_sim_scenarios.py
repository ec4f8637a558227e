"""Scenarios (sim/scenarios.yaml): switching them, and what the pod-level ones do to the collection's pods."""
from __future__ import annotations

import json

import pytest

import simkit

pytestmark = pytest.mark.sim

# kwok's own stages that every scenario keeps (simctl.py applies them from the kwok module at `up`).
BASE_STAGES = {"node-initialize", "node-heartbeat-with-lease", "pod-ready", "pod-delete"}
P5_NODES = {"p5-node-0", "p5-node-1"}


def _stage_names(custom, label_selector=None) -> set:
    kw = {"label_selector": label_selector} if label_selector else {}
    items = custom.list_cluster_custom_object("kwok.x-k8s.io", "v1alpha1", "stages", **kw)["items"]
    return {s["metadata"]["name"] for s in items}


def _expected_scenario_stages(spec: dict) -> set:
    names = {"sim-outcome-default"}
    if spec.get("image_pull_error"):
        names.add("sim-image-pull-backoff")
    for key in spec.get("outcomes") or {}:
        names.add("sim-outcome-" + key.replace("/", "-").replace("@", "-").replace("_", "-"))
    if any((entry or {}).get("crash") for entry in (spec.get("pairs") or {}).values()):
        names.add("sim-outcome-pair-crash")  # bad-node isolation: pairs with a crashing node
    return names


def _cordoned(core) -> set:
    return {n.metadata.name for n in core.list_node().items if n.spec.unschedulable}


def _expected_cordoned(core, spec: dict) -> set:
    cordon = spec.get("cordon") or {}
    if not cordon:
        return set()
    return {n.metadata.name for n in core.list_node().items
            if all((n.metadata.labels or {}).get(k) == v for k, v in cordon.items())}


def test_every_scenario_switches(core, custom, scenario):
    table = simkit.scenario_table()
    assert {"healthy", "image-pull-error", "unschedulable", "train-fails", "nccl-crash"} <= set(table)
    # Spot checks, spelled out independently of the rule in _expected_scenario_stages.
    spot = {
        "image-pull-error": {"sim-image-pull-backoff", "sim-outcome-default"},
        "train-fails": {"sim-outcome-l5-training-step", "sim-outcome-default"},
        "nccl-crash": {"sim-outcome-l3-multi-gpu-launcher", "sim-outcome-default"},
        "healthy": {"sim-outcome-default"},
    }
    for name in [n for n in table if n != "healthy"] + ["healthy"]:
        spec = table[name]
        assert spec.get("description") and "fails" in spec, name
        scenario(name, settle=False)
        assert simkit.current_scenario() == name
        replay = json.loads((simkit.STATE / "replay.json").read_text())
        assert replay == {"scenario": name, "replay": spec.get("replay") or {},
                          "probe_duration_s": spec.get("probe_duration_s") or {}}, name
        assert BASE_STAGES <= _stage_names(custom), name
        stages = _stage_names(custom, "sim.rlstack.io/stage=scenario")
        assert stages == _expected_scenario_stages(spec), name
        if name in spot:
            assert stages == spot[name], name
        assert _cordoned(core) == _expected_cordoned(core, spec), name
        if name == "unschedulable":
            assert _cordoned(core) == P5_NODES
        if name == "train-fails":
            stage = custom.get_cluster_custom_object("kwok.x-k8s.io", "v1alpha1", "stages",
                                                     "sim-outcome-l5-training-step")
            assert stage["spec"]["delay"]["durationMilliseconds"] == 10000
            assert "exitCode: 1" in stage["spec"]["next"]["statusTemplate"]


def test_unknown_scenario_is_refused():
    before = simkit.current_scenario()
    proc = simkit.simctl("scenario", "no-such-scenario", check=False)
    assert proc.returncode == 1
    assert "unknown scenario 'no-such-scenario'" in proc.stderr and "healthy" in proc.stderr
    assert simkit.current_scenario() == before


def _backoff(pod):
    statuses = pod.status.container_statuses or []
    waiting = statuses[0].state.waiting if statuses else None
    return (pod, waiting) if waiting and waiting.reason == "ImagePullBackOff" else None


def test_image_pull_error(core, namespace, scenario):
    scenario("image-pull-error")
    created = core.create_namespaced_pod(namespace, simkit.pod_body("managed", labels=simkit.MANAGED))
    rv = created.metadata.resource_version
    # A pod the collection did not create is not affected.
    core.create_namespaced_pod(namespace, simkit.pod_body("other"))

    pod, waiting = simkit.watch_pod_until(core, namespace, "managed", _backoff, 30, "ImagePullBackOff",
                                          resource_version=rv)
    assert pod.status.phase == "Pending" and pod.spec.node_name == "system-node-0"
    assert simkit.IMAGE in waiting.message and "Back-off pulling image" in waiting.message
    events = simkit.wait_until(
        lambda: [e for e in simkit.events_for(core, namespace, "managed") if e.type == "Warning"], 20,
        "a Warning event for the managed pod")
    assert any(e.reason == "Failed" and "pull" in e.message for e in events), [(e.reason, e.message)
                                                                               for e in events]
    simkit.wait_until(lambda: core.read_namespaced_pod("other", namespace).status.phase == "Running", 20,
                      "the unmanaged pod Running")


def test_image_pull_error_pod_stays_waiting(core, namespace, scenario):
    scenario("image-pull-error")
    created = core.create_namespaced_pod(namespace, simkit.pod_body("managed", labels=simkit.MANAGED))
    rv = created.metadata.resource_version
    simkit.watch_pod_until(core, namespace, "managed", _backoff, 30, "ImagePullBackOff", resource_version=rv)
    assert simkit.holds_for(lambda: _backoff(core.read_namespaced_pod("managed", namespace)), 3)


def test_unschedulable(core, namespace, scenario):
    scenario("unschedulable")
    core.create_namespaced_pod(namespace, simkit.gpu_pod_body("gpu", labels=simkit.MANAGED))

    def unschedulable():
        pod = core.read_namespaced_pod("gpu", namespace)
        cond = simkit.condition(pod.status.conditions, "PodScheduled")
        return cond if cond is not None and cond.status == "False" else None
    cond = simkit.wait_until(unschedulable, 30, "PodScheduled=False")
    assert cond.reason == "Unschedulable"
    assert "2 node(s) were unschedulable" in cond.message, cond.message
    assert simkit.holds_for(lambda: not core.read_namespaced_pod("gpu", namespace).spec.node_name, 2)
    # Back to healthy: the nodes are uncordoned and the scheduler places the pod.
    scenario("healthy")
    node = simkit.wait_until(lambda: core.read_namespaced_pod("gpu", namespace).spec.node_name, 40,
                             "the pod to be scheduled after uncordoning")
    assert node in P5_NODES
