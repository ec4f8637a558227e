# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/verdicts/_checks.py: each probe level's evidence (L0-L4) turned into
level_assert checks. L5/L6 log checks: test_checks_jobs.py; NCCL checks: test_nccl_checks.py.

Probe evidence comes from real recorded probe output (sim/replay/recorded/h200x1, sim/replay/probes) read
through _probe_pods.probe_output, as the runner reads it; every check is also judged by the same
evaluate_check that level_assert uses, so "fails" here means the level would fail.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks as checks
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _probe_pods
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _verdict

from checks_kit import FRAMEWORK_LOGS, REPO, failing, find, names, passed

RECORDED = REPO / "sim" / "replay" / "recorded" / "h200x1"
SIM_PROBES = REPO / "sim" / "replay" / "probes"
LOGS = REPO / "sim" / "replay" / "logs"

P5_HEALTHY = SIM_PROBES / "probe_node" / "healthy" / "p5.48xlarge.out"
P5_GPU_MISSING = SIM_PROBES / "probe_node" / "gpu-missing" / "p5.48xlarge.out"
P5_EFA_MISSING = SIM_PROBES / "probe_node" / "efa-missing" / "p5.48xlarge.out"
G6_HEALTHY = SIM_PROBES / "probe_node" / "healthy" / "g6.8xlarge.out"
H200_NODE = RECORDED / "probe_node.out"


def outcome(path, marker_rc=0):
    """A probe outcome as the runner builds it: the probe's stdout plus the exec's rc marker."""
    return _probe_pods.probe_output(Path(path).read_text(encoding="utf-8") + "__rlstack_rc=%d\n" % marker_rc)


def data_outcome(path, **changes):
    """The recorded outcome with some data fields changed."""
    out = copy.deepcopy(outcome(path))
    out["data"].update(changes)
    return out


def log(name):
    return (LOGS / name).read_text(encoding="utf-8")


def make_node(name, itype="p5.48xlarge", gpus="8", efa="32", ready=True, cordoned=False, label="node.kubernetes.io/instance-type"):
    capacity = {"cpu": "192", "memory": "2097152Mi", "nvidia.com/gpu": gpus}
    if efa is not None:
        capacity["vpc.amazonaws.com/efa"] = efa
    return {"metadata": {"name": name, "labels": {label: itype, "kubernetes.io/os": "linux"}},
            "spec": {"unschedulable": True} if cordoned else {},
            "status": {"capacity": capacity, "conditions": [{"type": "MemoryPressure", "status": "False"},
                                                            {"type": "Ready", "status": "True" if ready else "False"}]}}


def k8s_expect(**extra):
    expect = {"selector": "node.kubernetes.io/instance-type=p5.48xlarge", "overrides": {}, "min_nodes": 1, "daemonsets": [],
              "storage_claim": None, "storage": False, "storage_path": "/fsx", "transport": "kubernetes", "host_instance_type": ""}
    expect.update(extra)
    return expect


# -------------------------------------------------------------------------------------------------- check


def test_check_shape():
    assert checks.check("gpu_count", "n1", "eq", 7, 8, hint="h", message="m", unit="GPUs") == {
        "name": "gpu_count", "node": "n1", "op": "eq", "actual": 7, "expected": 8, "hint": "h", "fail_msg": "m",
        "unit": "GPUs", "evidence_missing": False}
    assert checks.check("x", None, tolerance="0.05")["tolerance"] == 0.05
    assert "tolerance" not in checks.check("x")


# ---------------------------------------------------------------------------------------- node_expectations


def test_node_expectations_p5_profile():
    assert checks.node_expectations("p5.48xlarge", {}) == {
        "instance_type": "p5.48xlarge", "known_type": True, "gpu_count": 8, "efa_count": 32,
        "gpu_name_pattern": "H100.*80GB", "gpu_name": "NVIDIA H100 80GB HBM3", "gpu_memory_mib_min": 72479,
        "nvlink_per_gpu": 18, "nvswitch": True, "pcie_gen": 5, "pcie_width": 16}


def test_node_expectations_g6_profile():
    assert checks.node_expectations("g6.8xlarge", None) == {
        "instance_type": "g6.8xlarge", "known_type": True, "gpu_count": 1, "efa_count": 1,
        "gpu_name_pattern": r"\bL4\b", "gpu_name": "NVIDIA L4", "gpu_memory_mib_min": 21743,
        "nvlink_per_gpu": 0, "nvswitch": False, "pcie_gen": None, "pcie_width": None}


def test_node_expectations_overrides_win_even_when_zero():
    exp = checks.node_expectations("p5.48xlarge", {"gpu_count": 4, "efa_count": 0, "gpu_name_pattern": "H100",
                                                   "gpu_memory_mib_min": 80000})
    assert (exp["gpu_count"], exp["efa_count"], exp["gpu_name_pattern"], exp["gpu_memory_mib_min"]) == (4, 0, "H100", 80000)
    assert exp["gpu_name"] == "NVIDIA H100 80GB HBM3"


def test_node_expectations_empty_overrides_fall_back_to_the_profile():
    exp = checks.node_expectations("p5.48xlarge", {"gpu_count": "", "efa_count": None})
    assert (exp["gpu_count"], exp["efa_count"]) == (8, 32)


def test_node_expectations_unknown_type():
    assert checks.node_expectations("m5.large", {}) == {
        "instance_type": "m5.large", "known_type": False, "gpu_count": None, "efa_count": None, "gpu_name_pattern": None,
        "gpu_name": None, "gpu_memory_mib_min": None, "nvlink_per_gpu": None, "nvswitch": None, "pcie_gen": None,
        "pcie_width": None}
    exp = checks.node_expectations("", {"gpu_count": 2, "efa_count": 0})
    assert (exp["instance_type"], exp["known_type"], exp["gpu_count"], exp["efa_count"]) == ("", False, 2, 0)


def test_node_expectations_normalises_the_type_name():
    exp = checks.node_expectations("ml.P5.48XLARGE", {})
    assert exp["known_type"] is True
    assert exp["gpu_count"] == 8


# -------------------------------------------------------------------------------------------------- l0_checks


def test_l0_selector_matches_nothing():
    labels = ["kubernetes.io/os=linux", "eks.amazonaws.com/nodegroup=system", "kubernetes.io/os=linux",
              "node.kubernetes.io/instance-type=m5.xlarge"]
    result = checks.l0_checks([], {}, k8s_expect(all_node_labels=labels))
    assert len(result) == 1
    check = result[0]
    assert (check["name"], check["node"], check["op"], check["actual"], check["expected"]) == ("gpu_nodes", "", "ge", 0, 1)
    assert check["fail_msg"] == ("the node selector 'node.kubernetes.io/instance-type=p5.48xlarge' matches no node; the nodes have these "
                                 "labels: eks.amazonaws.com/nodegroup=system, kubernetes.io/os=linux, "
                                 "node.kubernetes.io/instance-type=m5.xlarge")
    assert "validation_gpu_node_selector" in check["hint"]
    assert not passed(check)


def test_l0_selector_matches_nothing_without_any_node():
    result = checks.l0_checks([], {}, k8s_expect())
    assert result[0]["fail_msg"].endswith("the nodes have these labels: (no nodes)")


def test_l0_selector_lists_at_most_40_labels():
    labels = ["label-%02d=x" % i for i in range(60)]
    message = checks.l0_checks([], {}, k8s_expect(all_node_labels=labels))[0]["fail_msg"]
    assert "label-39=x" in message
    assert "label-40=x" not in message


def test_l0_healthy_p5_nodes_pass_every_check():
    nodes = [make_node("p5-node-1"), make_node("p5-node-2")]
    probes = {"p5-node-1": outcome(P5_HEALTHY), "p5-node-2": outcome(P5_HEALTHY)}
    result = checks.l0_checks(nodes, probes, k8s_expect())
    assert failing(result) == []
    assert names(result, "") == ["gpu_nodes"]
    assert names(result, "p5-node-1")[:7] == ["node_ready", "capacity_gpu", "capacity_efa", "gpu_count", "gpu_model",
                                              "gpu_memory", "efa_devices"]
    # then the GPU health checks of the replay (tests/unit/plugins/module_utils/test_gpu_health.py)
    assert {"remapped_rows_pending", "nvlink_links", "pcie_width", "driver_consistent"} <= set(names(result, "p5-node-1"))
    assert (find(result, "gpu_nodes")["actual"], find(result, "gpu_nodes")["expected"]) == (2, 1)
    gpu = find(result, "gpu_count", "p5-node-2")
    assert (gpu["actual"], gpu["expected"], gpu["fail_msg"]) == (8, 8, "")
    model = find(result, "gpu_model", "p5-node-1")
    assert (model["op"], model["actual"], model["expected"]) == ("matches", "NVIDIA H100 80GB HBM3", "H100.*80GB")
    memory = find(result, "gpu_memory", "p5-node-1")
    assert (memory["op"], memory["actual"], memory["expected"], memory["unit"]) == ("ge", 81559, 72479, "MiB")
    efa = find(result, "efa_devices", "p5-node-1")
    assert (efa["actual"], efa["expected"]) == (32, 32)
    assert efa["fail_msg"].startswith("under /sys/class/infiniband: rdmap")
    assert "rdmap110s0" in efa["fail_msg"]


def test_l0_fewer_nodes_than_min_nodes():
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": outcome(P5_HEALTHY)}, k8s_expect(min_nodes=2))
    check = find(result, "gpu_nodes")
    assert (check["actual"], check["expected"]) == (1, 2)
    assert failing(result) == [("gpu_nodes", "")]
    assert "desired size" in check["hint"]


def test_l0_capacity_per_node():
    nodes = [make_node("p5-node-1"), make_node("p5-node-2", gpus="7", efa=None)]
    probes = {"p5-node-1": outcome(P5_HEALTHY), "p5-node-2": outcome(P5_HEALTHY)}
    result = checks.l0_checks(nodes, probes, k8s_expect())
    assert failing(result) == [("capacity_gpu", "p5-node-2"), ("capacity_efa", "p5-node-2")]
    gpu = find(result, "capacity_gpu", "p5-node-2")
    assert (gpu["actual"], gpu["expected"]) == (7, 8)
    assert "device plugin" in gpu["hint"]
    efa = find(result, "capacity_efa", "p5-node-2")
    assert (efa["actual"], efa["expected"]) == (0, 32)
    assert efa["hint"] == checks.HINT_EFA


def test_l0_capacity_with_unreadable_count_is_zero():
    result = checks.l0_checks([make_node("p5-node-1", gpus="lots")], {"p5-node-1": outcome(P5_HEALTHY)}, k8s_expect())
    assert find(result, "capacity_gpu")["actual"] == 0


def test_l0_beta_instance_type_label():
    node = make_node("p5-node-1", label="beta.kubernetes.io/instance-type")
    result = checks.l0_checks([node], {"p5-node-1": outcome(P5_HEALTHY)}, k8s_expect())
    assert find(result, "capacity_gpu")["expected"] == 8


def test_l0_not_ready_node():
    result = checks.l0_checks([make_node("p5-node-1", ready=False)], {"p5-node-1": outcome(P5_HEALTHY)}, k8s_expect())
    check = find(result, "node_ready", "p5-node-1")
    assert (check["op"], check["actual"], check["expected"]) == ("true", False, True)
    assert "kubelet" in check["hint"]
    assert failing(result) == [("node_ready", "p5-node-1")]


def test_l0_node_without_conditions_is_not_ready():
    node = make_node("p5-node-1")
    node["status"].pop("conditions")
    assert find(checks.l0_checks([node], {}, k8s_expect()), "node_ready")["actual"] is False


def test_l0_cordoned_node():
    nodes = [make_node("p5-node-1", cordoned=True), make_node("p5-node-2")]
    probes = {"p5-node-1": outcome(P5_HEALTHY), "p5-node-2": outcome(P5_HEALTHY)}
    result = checks.l0_checks(nodes, probes, k8s_expect())
    check = find(result, "node_schedulable")
    assert (check["node"], check["op"], check["actual"], check["expected"]) == ("p5-node-1", "true", False, True)
    assert check["fail_msg"] == "the node is cordoned"
    assert _verdict.evaluate_check(check)["message"] == "node_schedulable: the node is cordoned (expected true, saw false)"
    assert "uncordon" in check["hint"]
    assert failing(result) == [("node_schedulable", "p5-node-1")]


def test_l0_unknown_type_without_overrides_needs_expectations():
    node = make_node("trn-node-1", itype="trn1.32xlarge", gpus="0")
    result = checks.l0_checks([node], {"trn-node-1": outcome(P5_HEALTHY)}, k8s_expect())
    check = find(result, "expectations", "trn-node-1")
    assert check["evidence_missing"] is True
    assert check["fail_msg"] == "instance type 'trn1.32xlarge' has no profile and the inventory sets no GPU count"
    assert "l0_infrastructure_expected" in check["hint"]
    assert "capacity_gpu" not in names(result)
    assert "gpu_count" not in names(result)


def test_l0_unknown_type_with_overrides():
    node = make_node("custom-1", itype="x9.metal", gpus="8", efa="0")
    result = checks.l0_checks([node], {"custom-1": outcome(P5_EFA_MISSING)}, k8s_expect(overrides={"gpu_count": 8, "efa_count": 0}))
    assert failing(result) == []
    assert find(result, "capacity_gpu")["expected"] == 8
    assert find(result, "efa_devices")["expected"] == 0
    assert "gpu_model" not in names(result)


def test_l0_daemonsets():
    daemonsets = [
        {"name": "nvidia_device_plugin", "label": "NVIDIA GPU Operator device plugin", "namespace": "gpu-operator", "found": False,
         "desired": 0, "ready": 0},
        {"name": "efa", "label": "EFA device plugin", "namespace": "kube-system", "found": True, "desired": 2, "ready": 1},
        {"name": "healthy", "namespace": "kube-system", "found": True, "desired": 2, "ready": 2, "hint": "custom hint"},
        {"name": "nothing_scheduled", "label": "Nothing scheduled", "namespace": "kube-system", "found": True, "desired": 0, "ready": 0},
    ]
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": outcome(P5_HEALTHY)}, k8s_expect(daemonsets=daemonsets))
    missing = find(result, "daemonset_nvidia_device_plugin")
    assert (missing["node"], missing["op"], missing["actual"], missing["expected"]) == ("", "true", False, True)
    assert missing["fail_msg"] == "NVIDIA GPU Operator device plugin: not found in namespace gpu-operator"
    assert "install or repair" in missing["hint"]
    partial = find(result, "daemonset_efa")
    assert (partial["actual"], partial["fail_msg"]) == (False, "EFA device plugin: 1 of 2 pods ready")
    healthy = find(result, "daemonset_healthy")
    assert (healthy["actual"], healthy["fail_msg"], healthy["hint"]) == (True, "healthy: 2 of 2 pods ready", "custom hint")
    assert find(result, "daemonset_nothing_scheduled")["actual"] is False
    assert failing(result) == [("daemonset_nvidia_device_plugin", ""), ("daemonset_efa", ""), ("daemonset_nothing_scheduled", "")]


@pytest.mark.parametrize("phase,expected_actual", [("Bound", "Bound"), ("Pending", "Pending"), (None, "missing"), ("", "missing")])
def test_l0_storage_claim(phase, expected_actual):
    claim = {"name": "fsx-claim", "phase": phase}
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": outcome(P5_HEALTHY)}, k8s_expect(storage_claim=claim))
    check = find(result, "storage_claim")
    assert (check["actual"], check["expected"], check["fail_msg"]) == (expected_actual, "Bound", "PersistentVolumeClaim fsx-claim")
    assert check["hint"] == checks.HINT_STORAGE
    assert passed(check) is (phase == "Bound")


def test_l0_no_storage_claim_no_check():
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": outcome(P5_HEALTHY)}, k8s_expect(storage_claim=None))
    assert "storage_claim" not in names(result)


def test_an_event_that_repeats_the_pods_condition_is_said_once():
    said = "0/259 nodes are available: 256 node(s) were unschedulable."
    not_started = {"status": "not_started", "data": None, "error": "Unschedulable: " + said,
                   "hint": "uncordon", "events": [said, "Scheduled elsewhere"]}
    result = checks.l0_checks([make_node("p5-node-2")], {"p5-node-2": not_started}, k8s_expect())
    assert find(result, "pod_start", "p5-node-2")["fail_msg"] == "Unschedulable: %s (events: Scheduled elsewhere)" % said
    only = dict(not_started, events=[said])
    result = checks.l0_checks([make_node("p5-node-2")], {"p5-node-2": only}, k8s_expect())
    assert find(result, "pod_start", "p5-node-2")["fail_msg"] == "Unschedulable: " + said


def test_l0_probe_not_started_with_events():
    events = ["Scheduled", "Pulling image", "Failed to pull image", "Error: ErrImagePull", "Back-off pulling image"]
    not_started = {"status": "not_started", "data": None, "error": "ImagePullBackOff: Back-off pulling image \"rlstack/probe:v1\"",
                   "hint": "check the image name and tag", "events": events}
    nodes = [make_node("p5-node-1"), make_node("p5-node-2")]
    result = checks.l0_checks(nodes, {"p5-node-1": outcome(P5_HEALTHY), "p5-node-2": not_started}, k8s_expect())
    check = find(result, "pod_start", "p5-node-2")
    assert (check["op"], check["actual"], check["expected"], check["evidence_missing"]) == ("true", None, True, True)
    assert check["fail_msg"] == ('ImagePullBackOff: Back-off pulling image "rlstack/probe:v1" '
                                 "(events: Failed to pull image; Error: ErrImagePull; Back-off pulling image)")
    assert check["hint"] == "check the image name and tag"
    assert names(result, "p5-node-2") == ["node_ready", "capacity_gpu", "capacity_efa", "pod_start"]
    assert failing(result) == [("pod_start", "p5-node-2")]
    assert _verdict.evaluate_check(check)["evidence_missing"] is True


def test_l0_probe_result_missing_for_a_node():
    result = checks.l0_checks([make_node("p5-node-1")], {}, k8s_expect())
    check = find(result, "pod_start", "p5-node-1")
    assert check["fail_msg"] == "no probe result for this node"
    assert check["evidence_missing"] is True
    assert "run the probe by hand" in check["hint"]


def test_l0_probe_crashed():
    stdout = '{"probe": "node", "schema": 1, "crashed": true, "error": "Traceback (most recent call last):\\nOSError: [Errno 5] EIO"}\n'
    crashed = _probe_pods.probe_output(stdout + "__rlstack_rc=1\n")
    assert crashed["status"] == "crashed"
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": crashed}, k8s_expect())
    check = find(result, "probe", "p5-node-1")
    assert check["evidence_missing"] is True
    assert check["fail_msg"] == "the probe crashed (exit code 1): OSError: [Errno 5] EIO"
    assert "gpu_count" not in names(result)


def test_l0_probe_timed_out():
    timed_out = data_outcome(P5_HEALTHY, timed_out=True, error="nvidia-smi did not answer within 30 s")
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": timed_out}, k8s_expect())
    check = find(result, "probe", "p5-node-1")
    assert (check["actual"], check["expected"], check["evidence_missing"]) == (False, True, False)
    assert check["fail_msg"] == "the L0 probe timed out: nvidia-smi did not answer within 30 s"
    assert "hung" in check["hint"]
    assert "gpu_count" not in names(result)
    assert failing(result) == [("probe", "p5-node-1")]


def test_l0_gpu_count_7_of_8_names_the_node():
    nodes = [make_node("p5-node-1"), make_node("p5-node-2")]
    probes = {"p5-node-1": outcome(P5_HEALTHY), "p5-node-2": outcome(P5_GPU_MISSING)}
    result = checks.l0_checks(nodes, probes, k8s_expect())
    assert failing(result) == [("gpu_count", "p5-node-2")]
    check = find(result, "gpu_count", "p5-node-2")
    assert (check["op"], check["actual"], check["expected"]) == ("eq", 7, 8)
    assert check["hint"] == checks.HINT_GPU
    assert "XID" in check["hint"]
    message = _verdict.evaluate_check(check)["message"]
    assert "8" in message and "7" in message


def test_l0_gpu_count_carries_the_nvidia_smi_error():
    broken = data_outcome(P5_HEALTHY, gpu_count=0, gpus=[],
                          nvidia_smi={"ok": False, "error": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"})
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": broken}, k8s_expect())
    check = find(result, "gpu_count")
    assert check["actual"] == 0
    assert check["fail_msg"] == "nvidia-smi: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
    assert "gpu_model" not in names(result)
    assert "gpu_memory" not in names(result)


def test_l0_nvidia_smi_missing_in_the_pod_points_at_the_container_runtime():
    import importlib.util
    spec = importlib.util.spec_from_file_location("probe_node_for_checks",
                                                  REPO / "roles" / "l0_infrastructure" / "files" / "probe_node.py")
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    _gpus, smi = probe.query_gpus("/nonexistent/nvidia-smi", 5)  # what the real probe reports in a pod without it
    assert smi["not_found"] is True
    without_smi = data_outcome(P5_HEALTHY, gpu_count=0, gpus=[], nvidia_smi=smi)
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": without_smi}, k8s_expect())
    check = find(result, "gpu_count")
    assert check["fail_msg"].startswith("nvidia-smi: nvidia-smi not found")
    assert check["hint"] == checks.HINT_NO_SMI and "NVIDIA runtime" in check["hint"]


def test_l0_gpu_model_pattern_mismatch():
    # a g6.8xlarge answered where the inventory says p5.48xlarge
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": outcome(G6_HEALTHY)}, k8s_expect())
    model = find(result, "gpu_model", "p5-node-1")
    assert (model["actual"], model["expected"]) == ("NVIDIA L4", "H100.*80GB")
    assert "instance type" in model["hint"]
    memory = find(result, "gpu_memory", "p5-node-1")
    assert (memory["actual"], memory["expected"]) == (23034, 72479)
    assert set(failing(result)) == {("gpu_count", "p5-node-1"), ("gpu_model", "p5-node-1"), ("gpu_memory", "p5-node-1"),
                                    ("efa_devices", "p5-node-1")}


def test_l0_g6_node_passes_with_its_own_profile():
    node = make_node("g6-node-1", itype="g6.8xlarge", gpus="1", efa="1")
    result = checks.l0_checks([node], {"g6-node-1": outcome(G6_HEALTHY)}, k8s_expect())
    assert failing(result) == []
    assert find(result, "gpu_model")["expected"] == r"\bL4\b"
    assert find(result, "efa_devices")["fail_msg"] == "under /sys/class/infiniband: rdmap79s0"


def test_l0_gpu_memory_takes_the_smallest_gpu():
    data = outcome(P5_HEALTHY)["data"]
    gpus = copy.deepcopy(data["gpus"])
    gpus[3]["memory_mib"] = 40192  # MIG mode
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": data_outcome(P5_HEALTHY, gpus=gpus)}, k8s_expect())
    check = find(result, "gpu_memory")
    assert (check["actual"], check["expected"]) == (40192, 72479)
    assert "MIG" in check["hint"]
    assert failing(result) == [("gpu_memory", "p5-node-1")]


def test_l0_gpu_memory_override():
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": outcome(P5_HEALTHY)},
                              k8s_expect(overrides={"gpu_memory_mib_min": 100000}))
    check = find(result, "gpu_memory")
    assert (check["actual"], check["expected"]) == (81559, 100000)
    assert not passed(check)


def test_l0_efa_0_of_32():
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": outcome(P5_EFA_MISSING)}, k8s_expect())
    check = find(result, "efa_devices", "p5-node-1")
    assert (check["actual"], check["expected"]) == (0, 32)
    assert check["fail_msg"] == "under /sys/class/infiniband: none"
    assert check["hint"] == checks.HINT_EFA
    assert failing(result) == [("efa_devices", "p5-node-1")]


def test_l0_efa_message_carries_the_infiniband_error_and_dir():
    broken = data_outcome(P5_EFA_MISSING, infiniband_error="[Errno 2] No such file or directory: '/host/sys/class/infiniband'",
                          params={"infiniband_dir": "/host/sys/class/infiniband"})
    check = find(checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": broken}, k8s_expect()), "efa_devices")
    assert check["fail_msg"] == ("under /host/sys/class/infiniband: [Errno 2] No such file or directory: "
                                 "'/host/sys/class/infiniband'")


def test_l0_storage_ok():
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": outcome(P5_HEALTHY)}, k8s_expect(storage=True))
    check = find(result, "storage_rw", "p5-node-1")
    assert (check["actual"], check["expected"]) == (True, True)
    assert check["fail_msg"] == "write/read/delete on /fsx: ok"


def test_l0_storage_failed_steps():
    storage = {"ok": False, "error": None, "path": "/fsx", "steps": {
        "write": {"ok": True, "error": None}, "read": {"ok": False, "error": "[Errno 5] Input/output error"},
        "compare": {"ok": False, "error": "not attempted"}, "delete": {"ok": True, "error": None}}}
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": data_outcome(P5_HEALTHY, storage=storage)},
                              k8s_expect(storage=True))
    check = find(result, "storage_rw", "p5-node-1")
    assert check["actual"] is False
    assert check["fail_msg"] == "write/read/delete on /fsx: failed steps: compare, read"
    assert check["hint"] == checks.HINT_STORAGE
    assert failing(result) == [("storage_rw", "p5-node-1")]


def test_l0_storage_error_and_default_path():
    storage = {"ok": False, "error": "[Errno 30] Read-only file system: '/fsx/.rlstack-probe'", "steps": {}}
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": data_outcome(P5_HEALTHY, storage=storage)},
                              k8s_expect(storage=True, storage_path="/mnt/fsx"))
    assert find(result, "storage_rw")["fail_msg"] == "write/read/delete on /mnt/fsx: [Errno 30] Read-only file system: '/fsx/.rlstack-probe'"
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": data_outcome(P5_HEALTHY, storage=None)}, k8s_expect(storage=True))
    assert find(result, "storage_rw")["actual"] is False


def test_l0_host_transport_with_host_instance_type_and_overrides():
    expect = k8s_expect(transport="host", host_instance_type="p5en.48xlarge", storage=True,
                        overrides={"gpu_count": 1, "efa_count": 0, "gpu_memory_mib_min": 140000})
    result = checks.l0_checks([], {"vm": outcome(H200_NODE)}, expect)
    assert "gpu_nodes" not in names(result)
    assert names(result) == ["gpu_count", "gpu_model", "gpu_memory", "efa_devices", "storage_rw"]
    assert {c["node"] for c in result} == {"vm"}
    assert failing(result) == []
    model = find(result, "gpu_model")
    assert (model["actual"], model["expected"]) == ("NVIDIA H200", "H200")
    assert (find(result, "gpu_memory")["actual"], find(result, "gpu_memory")["expected"]) == (143771, 140000)
    assert find(result, "storage_rw")["fail_msg"] == "write/read/delete on /tmp/rlstack-storage: ok"


def test_l0_host_transport_profile_without_overrides():
    expect = k8s_expect(transport="host", host_instance_type="p5en.48xlarge")
    result = checks.l0_checks([], {"vm": outcome(H200_NODE)}, expect)
    assert (find(result, "gpu_count")["actual"], find(result, "gpu_count")["expected"]) == (1, 8)
    assert (find(result, "efa_devices")["actual"], find(result, "efa_devices")["expected"]) == (0, 16)
    assert set(failing(result)) == {("gpu_count", "vm"), ("efa_devices", "vm")}


def test_l0_host_transport_checks_every_probed_host_in_order():
    expect = k8s_expect(transport="host", host_instance_type="", overrides={"gpu_count": 1})
    result = checks.l0_checks([], {"b-host": outcome(H200_NODE), "a-host": outcome(P5_HEALTHY)}, expect)
    assert [(c["name"], c["node"]) for c in result if c["name"] == "gpu_count"] == [("gpu_count", "a-host"),
                                                                                    ("gpu_count", "b-host")]
    # b-host's recording predates the health section: only a-host (the replay) has health checks
    assert {c["node"] for c in result if c["name"] != "gpu_count"} == {"a-host"}
    assert failing(result) == [("gpu_count", "a-host")]


def test_l0_host_transport_without_any_expectation_is_not_silent():
    expect = k8s_expect(transport="host", host_instance_type="", storage=True)
    result = checks.l0_checks([], {"vm": outcome(H200_NODE)}, expect)
    check = find(result, "expectations", "vm")
    assert check["evidence_missing"] is True


# -------------------------------------------------------------------------------------------------- l1_checks


def test_l1_recorded_runtime_probe():
    result = checks.l1_checks(outcome(RECORDED / "probe_runtime.out"), "vm", {"gpu_count": 1, "min_versions": {"torch": "2.4", "nccl": "2.18"}})
    assert names(result)[:7] == ["torch", "cuda_available", "gpu_count", "cuda_kernel", "version_torch", "version_nccl", "import_accelerate"]
    assert {c["node"] for c in result} == {"vm"}
    version = find(result, "version_torch")
    assert (version["op"], version["actual"], version["expected"]) == ("version_ge", "2.11.0+cu130", "2.4")
    assert find(result, "version_nccl")["actual"] == "2.28.9"
    flash = find(result, "import_flash_attn")
    assert (flash["actual"], flash["fail_msg"]) == (False, "ModuleNotFoundError: No module named 'flash_attn'")
    assert flash["hint"].startswith("install flash_attn in the training image")
    assert sorted(failing(result)) == sorted(("import_" + m, "vm") for m in ("flash_attn", "verl", "ray", "mujoco", "libero"))


def test_l1_import_version_floor_only_for_modules_that_import():
    expect = {"min_versions": {"transformers": "6.0", "verl": "0.4"}}
    result = checks.l1_checks(outcome(RECORDED / "probe_runtime.out"), "vm", expect)
    check = find(result, "version_transformers")
    assert (check["actual"], check["expected"]) == ("5.17.0", "6.0")
    assert not passed(check)
    assert "version_verl" not in names(result)


def test_l1_cuda_not_available():
    out = data_outcome(RECORDED / "probe_runtime.out", cuda_available=False, gpu_count=0,
                       cuda_error="CUDA driver version is insufficient for CUDA runtime version")
    result = checks.l1_checks(out, "p5-node-1", {"gpu_count": 8})
    cuda = find(result, "cuda_available")
    assert (cuda["actual"], cuda["fail_msg"]) == (False, "CUDA driver version is insufficient for CUDA runtime version")
    assert "nvidia.com/gpu" in cuda["hint"]
    assert "cuda_kernel" not in names(result)
    assert (find(result, "gpu_count")["actual"], find(result, "gpu_count")["expected"]) == (0, 8)


def test_l1_torch_missing_and_kernel_failure():
    out = data_outcome(RECORDED / "probe_runtime.out", torch=None, torch_error="ModuleNotFoundError: No module named 'torch'",
                       cuda_smoke={"ok": False, "error": "CUDA error: no kernel image is available for execution on the device"})
    result = checks.l1_checks(out, "vm", {})
    assert (find(result, "torch")["actual"], find(result, "torch")["fail_msg"]) == (False, "ModuleNotFoundError: No module named 'torch'")
    kernel = find(result, "cuda_kernel")
    assert (kernel["actual"], kernel["fail_msg"]) == (False, "CUDA error: no kernel image is available for execution on the device")
    assert "gpu_count" not in names(result)


def test_l1_no_evidence():
    result = checks.l1_checks({"status": "no_output", "error": "the probe printed no JSON result (exit code 137)"}, "p5-node-1", {})
    assert len(result) == 1
    assert (result[0]["name"], result[0]["node"], result[0]["evidence_missing"]) == ("probe", "p5-node-1", True)
    assert result[0]["fail_msg"] == "the probe printed no JSON result (exit code 137)"
    assert checks.l1_checks(None, "n", None)[0]["fail_msg"] == "no probe result for this node"


# -------------------------------------------------------------------------------------------------- l2_checks


def test_l2_recorded_model_probe_passes():
    expect = {"min_vocab": 400, "min_params": 1.0e6}
    result = checks.l2_checks(outcome(RECORDED / "probe_model.out"), "vm", expect)
    assert names(result) == ["model_path", "config", "config_attributes", "tokenizer", "vocab_size", "model_load", "dtype",
                             "param_count", "forward"]
    assert failing(result) == []
    assert find(result, "model_path")["fail_msg"] == "model path /tmp/rlstack-tiny/ok"
    assert (find(result, "dtype")["actual"], find(result, "dtype")["expected"]) == ("torch.bfloat16", "torch.bfloat16")
    assert (find(result, "param_count")["actual"], find(result, "param_count")["expected"]) == (1844480, 1.0e6)
    assert (find(result, "vocab_size")["actual"], find(result, "vocab_size")["expected"]) == (471, 400)


def test_l2_config_skew_hint():
    result = checks.l2_checks(outcome(RECORDED / "probe_model_skew.out"), "vm", {})
    check = find(result, "config_attributes")
    assert (check["actual"], check["expected"]) == (["use_proprio", "num_action_chunks"], [])
    assert check["fail_msg"] == "config.json lacks use_proprio, num_action_chunks"
    assert "Model/Config Version Skew" in check["hint"]
    assert "getattr(config, 'use_proprio'" in check["hint"]
    assert failing(result) == [("config_attributes", "vm")]


def test_l2_model_load_failure_uses_the_probe_hint():
    result = checks.l2_checks(outcome(RECORDED / "probe_model_skew_remote_code.out"), "vm", {"min_params": 1})
    load = find(result, "model_load")
    assert (load["actual"], load["fail_msg"]) == (False, "'LlamaConfig' object has no attribute 'use_proprio'")
    assert load["hint"].startswith("config.json lacks use_proprio")
    assert "dtype" not in names(result)
    assert "param_count" not in names(result)
    assert find(result, "forward")["fail_msg"] == "not attempted (model not loaded)"
    assert set(failing(result)) == {("config_attributes", "vm"), ("model_load", "vm"), ("forward", "vm")}


def test_l2_missing_model_path_stops_there():
    out = data_outcome(RECORDED / "probe_model.out", model_path="/fsx/models/openvla-7b", model_path_exists=False)
    result = checks.l2_checks(out, "p5-node-1", {})
    assert len(result) == 1
    check = result[0]
    assert (check["name"], check["node"], check["actual"]) == ("model_path", "p5-node-1", False)
    assert check["fail_msg"] == "model path /fsx/models/openvla-7b"
    assert "l2_single_gpu_stage_model" in check["hint"]


def test_l2_optional_parts_can_be_switched_off():
    result = checks.l2_checks(outcome(RECORDED / "probe_model.out"), "vm", {"tokenizer": False, "forward": False, "dtype": "torch.float16"})
    assert "tokenizer" not in names(result)
    assert "forward" not in names(result)
    assert failing(result) == [("dtype", "vm")]


def test_l2_non_finite_logits_fail_the_forward_check():
    out = data_outcome(RECORDED / "probe_model.out", forward={"ok": True, "error": None, "logits_finite": False})
    assert not passed(find(checks.l2_checks(out, "vm", {}), "forward"))


def test_l2_timed_out_probe():
    out = data_outcome(RECORDED / "probe_model.out", timed_out=True, error="model load exceeded 1800 s")
    result = checks.l2_checks(out, "vm", {})
    assert [(c["name"], c["fail_msg"]) for c in result] == [("probe", "the L2 probe timed out: model load exceeded 1800 s")]


# -------------------------------------------------------------------------------------------- l3_probe_checks


def test_l3_recorded_two_gpu_probe_passes():
    result = checks.l3_probe_checks(outcome(SIM_PROBES / "probe_multigpu" / "healthy" / "default.out"), "p5-node-1", {"world_size": 2})
    assert names(result) == ["process_group", "world_size", "fsdp", "allreduce_correct"]
    assert failing(result) == []
    assert (find(result, "world_size")["actual"], find(result, "world_size")["expected"]) == (2, 2)
    assert find(result, "fsdp")["fail_msg"] == "api fully_shard, loss 6.283734321594238"
    assert find(result, "allreduce_correct")["fail_msg"] == "0 mismatches"


def test_l3_recorded_one_gpu_probe_against_eight_expected():
    result = checks.l3_probe_checks(outcome(RECORDED / "probe_multigpu.out"), "vm", {"world_size": 8})
    check = find(result, "world_size")
    assert (check["actual"], check["expected"]) == (1, 8)
    assert failing(result) == [("world_size", "vm")]


def test_l3_allreduce_mismatches_and_fsdp_nan():
    out = data_outcome(RECORDED / "probe_multigpu.out", allreduce_ok=False, allreduce={"ok": False, "error": None, "mismatches": 12},
                       fsdp={"ok": True, "api": "fully_shard", "loss": float("nan"), "loss_finite": False})
    result = checks.l3_probe_checks(out, "vm", None)
    assert "world_size" not in names(result)
    allreduce = find(result, "allreduce_correct")
    assert (allreduce["actual"], allreduce["fail_msg"]) == (False, "12 mismatches")
    assert "nccl-tests with -c 1" in allreduce["hint"]
    assert find(result, "fsdp")["actual"] is False
    assert set(failing(result)) == {("fsdp", "vm"), ("allreduce_correct", "vm")}


def test_l3_process_group_error():
    out = data_outcome(RECORDED / "probe_multigpu.out", init={"ok": False, "error": "NCCL error: unhandled system error"},
                       allreduce={"error": "not attempted"}, allreduce_ok=False)
    result = checks.l3_probe_checks(out, "vm", {})
    assert find(result, "process_group")["fail_msg"] == "NCCL error: unhandled system error"
    assert find(result, "allreduce_correct")["fail_msg"] == "not attempted"


# -------------------------------------------------------------------------------------------------- l4_checks


def test_l4_prompts_for_input_with_hint():
    result = checks.l4_checks(outcome(RECORDED / "probe_sim_import.out"), "vm", {"expect_tasks": 10})
    assert len(result) == 1
    check = result[0]
    assert (check["name"], check["op"], check["actual"], check["expected"]) == ("import", "eq", "prompts_for_input", "ok")
    assert check["fail_msg"] == "import failed: the library prompts for input at import (input() got EOF, stdin is /dev/null)"
    assert "redirect stdin" in check["hint"]
    assert "LIBERO_DATASET_DIR" in check["hint"]
    assert not passed(check)


def test_l4_real_libero_without_its_config_is_one_precise_finding():
    out = outcome(FRAMEWORK_LOGS / "libero" / "l4-probe-libero-config-missing.out")
    result = checks.l4_checks(out, "polyglot-cpu", {"expect_tasks": 10})
    assert names(result) == ["import"]
    check = result[0]
    assert check["actual"] == "prompts_for_input"
    assert check["fail_msg"] == (
        "libero.libero asks for its dataset folder at import (input(): 'Do you want to specify a custom path for the "
        "dataset folder? (Y/N):') because $LIBERO_CONFIG_PATH/config.yaml (default ~/.libero/config.yaml) is missing")
    assert check["hint"].startswith("write config.yaml with the keys benchmark_root, bddl_files, init_states, "
                                    "datasets, assets, or point LIBERO_CONFIG_PATH at a directory that has one")


def test_l4_real_libero_with_its_config_has_the_10_tasks():
    out = outcome(FRAMEWORK_LOGS / "libero" / "l4-probe-libero-configured.out")
    result = checks.l4_checks(out, "polyglot-cpu", {"expect_tasks": 10})
    assert names(result) == ["import", "benchmark_tasks"]
    assert failing(result) == []
    assert find(result, "benchmark_tasks")["actual"] == 10


def test_l4_real_libero_without_torch_names_the_missing_dependency():
    out = outcome(FRAMEWORK_LOGS / "libero" / "l4-probe-libero-configured-no-torch.out")
    result = checks.l4_checks(out, "cpu-no-torch", {"expect_tasks": 10})
    assert failing(result) == [("benchmark_tasks", "cpu-no-torch")]
    bench = find(result, "benchmark_tasks")
    assert (bench["actual"], bench["expected"]) == (None, 10)
    assert bench["fail_msg"] == ("libero_10: libero.libero.benchmark (for libero.libero.benchmark.get_benchmark) "
                                 "cannot be imported: ModuleNotFoundError: No module named 'torch'")
    assert bench["hint"] == ("install torch in the image (libero.libero.benchmark imports it), "
                             "or run L4 with the image that has it")
    # without expect_tasks the failed call is still a finding, with the same message and hint
    (call,) = [c for c in checks.l4_checks(out, "cpu-no-torch", {}) if c["name"] != "import"]
    assert (call["name"], call["fail_msg"], call["hint"]) == ("benchmark_call", bench["fail_msg"], bench["hint"])
    assert not passed(call)


def test_l4_hang_on_stdin():
    result = checks.l4_checks(outcome(SIM_PROBES / "probe_sim_import" / "sim-hang" / "default.out"), "vm", {})
    assert result[0]["actual"] == "prompts_for_input"
    assert result[0]["fail_msg"] == "import blocked: the library waits for interactive input"


def test_l4_missing_env_names_the_variable():
    result = checks.l4_checks(outcome(RECORDED / "probe_sim_import_missing_env.out"), "vm", {})
    check = find(result, "import")
    assert check["actual"] == "missing_env"
    assert check["fail_msg"] == "missing environment variable(s): FAKE_SIM_DATASET_DIR (missing: FAKE_SIM_DATASET_DIR)"
    assert check["hint"] == "set FAKE_SIM_DATASET_DIR in the pod's env block"


def test_l4_ok_with_benchmark_tasks():
    result = checks.l4_checks(outcome(RECORDED / "probe_sim_import_ok.out"), "vm", {"expect_tasks": 10})
    assert names(result) == ["import", "benchmark_tasks"]
    assert failing(result) == []
    bench = find(result, "benchmark_tasks")
    assert (bench["actual"], bench["expected"], bench["fail_msg"]) == (10, 10, "libero_10: ")


def test_l4_benchmark_missing_tasks():
    result = checks.l4_checks(outcome(RECORDED / "probe_sim_import_ok.out"), "vm", {"expect_tasks": "40"})
    bench = find(result, "benchmark_tasks")
    assert (bench["actual"], bench["expected"]) == (10, 40)
    assert "dataset directory" in bench["hint"]
    assert failing(result) == [("benchmark_tasks", "vm")]


def test_l4_benchmark_not_checked_without_expectation_or_benchmark():
    assert names(checks.l4_checks(outcome(RECORDED / "probe_sim_import_ok.out"), "vm", {})) == ["import"]
    assert names(checks.l4_checks(outcome(RECORDED / "probe_sim_import.out"), "vm", {"expect_tasks": 10})) == ["import"]


def test_l4_unknown_status():
    result = checks.l4_checks({"status": "ok", "data": {}}, "vm", {})
    assert (result[0]["actual"], result[0]["fail_msg"]) == ("unknown", "unknown")


@pytest.mark.parametrize("transport, said", [
    ("kubernetes", ("not in the pod", "not writable from the pod", "missing in the pod")),
    ("host", ("not on this host's PATH", "not writable on this host", "missing on this host")),
])
def test_l0_hints_say_where_the_probe_ran(transport, said):
    probe = data_outcome(H200_NODE, gpu_count=0, gpus=[], efa_count=0,
                         nvidia_smi={"not_found": True, "error": "nvidia-smi not found"},
                         storage={"ok": False, "path": "/fsx", "error": "storage_path /fsx does not exist"})
    expect = k8s_expect(transport=transport, host_instance_type="p5en.48xlarge", storage=True)
    nodes = [make_node("vm")] if transport == "kubernetes" else []
    result = checks.l0_checks(nodes, {"vm": probe}, expect)
    hints = [find(result, name, "vm")["hint"] for name in ("gpu_count", "storage_rw", "efa_devices")]
    assert all(part in hint for part, hint in zip(said, hints)), hints
    if transport == "host":
        assert not any("pod" in hint or "CSI" in hint for hint in hints)
