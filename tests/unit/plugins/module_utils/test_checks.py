# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/verdicts/_checks.py: each level's evidence turned into level_assert checks.

Probe evidence comes from real recorded probe output (sim/replay/recorded/h200x1, sim/replay/probes) read
through _probe_pods.probe_output, as the runner reads it; every check is also judged by the same
evaluate_check that level_assert uses, so "fails" here means the level would fail.
"""

from __future__ import annotations

import copy
import gzip
from pathlib import Path

import pytest
import yaml

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks as checks
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _nccl_checks
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _probe_pods
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _verdict

REPO = Path(__file__).resolve().parents[4]
RECORDED = REPO / "sim" / "replay" / "recorded" / "h200x1"
SIM_PROBES = REPO / "sim" / "replay" / "probes"
LOGS = REPO / "sim" / "replay" / "logs"

P5_HEALTHY = SIM_PROBES / "probe_node" / "healthy" / "p5.48xlarge.out"
P5_GPU_MISSING = SIM_PROBES / "probe_node" / "gpu-missing" / "p5.48xlarge.out"
P5_EFA_MISSING = SIM_PROBES / "probe_node" / "efa-missing" / "p5.48xlarge.out"
G6_HEALTHY = SIM_PROBES / "probe_node" / "healthy" / "g6.8xlarge.out"
H200_NODE = RECORDED / "probe_node.out"

FRAMEWORK_LOGS = REPO / "tests" / "unit" / "fixtures" / "frameworks"
L5_ERROR_PATTERNS = yaml.safe_load((REPO / "roles" / "l5_training_step" / "defaults" / "main.yml").read_text(encoding="utf-8"))[
    "l5_training_step_error_patterns"]


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


def fw_log(name):
    """A recorded or framework-printed log (tests/unit/fixtures/frameworks/SOURCES.md); logs with tqdm's
    carriage returns are kept gzipped, byte for byte."""
    data = (FRAMEWORK_LOGS / name).read_bytes()
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")


def make_node(name, itype="p5.48xlarge", gpus="8", efa="32", ready=True, cordoned=False, label="node.kubernetes.io/instance-type"):
    capacity = {"cpu": "192", "memory": "2097152Mi", "nvidia.com/gpu": gpus}
    if efa is not None:
        capacity["vpc.amazonaws.com/efa"] = efa
    return {"metadata": {"name": name, "labels": {label: itype, "kubernetes.io/os": "linux"}},
            "spec": {"unschedulable": True} if cordoned else {},
            "status": {"capacity": capacity, "conditions": [{"type": "MemoryPressure", "status": "False"},
                                                            {"type": "Ready", "status": "True" if ready else "False"}]}}


def find(result, name, node=None):
    found = [c for c in result if c["name"] == name and (node is None or c["node"] == node)]
    assert len(found) == 1, "expected one %s check for %r, got %s" % (name, node, [(c["name"], c["node"]) for c in result])
    return found[0]


def names(result, node=None):
    return [c["name"] for c in result if node is None or c["node"] == node]


def passed(check):
    return _verdict.evaluate_check(check)["passed"]


def failing(result):
    return [(c["name"], c["node"]) for c in result if not passed(c)]


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
    assert (check["node"], check["op"], check["actual"], check["expected"]) == ("p5-node-1", "false", True, False)
    assert check["fail_msg"] == "the node is cordoned"
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


# ---------------------------------------------------------------------------------------- log_checks, l6


def _job_state(*conditions, pods=None):
    job = {"metadata": {"name": "rlsv-run1-l5-libero"}, "status": {"conditions": list(conditions)}}
    return k8s.job_state(job, pods or [], now=2.0e9)


def _pod(phase, exit_code=None, waiting=None):
    statuses = []
    if exit_code is not None:
        statuses.append({"name": "main", "state": {"terminated": {"exitCode": exit_code}}})
    if waiting:
        statuses.append({"name": "main", "state": {"waiting": waiting}})
    return {"metadata": {"name": "rlsv-run1-l5-libero-x7k2p", "creationTimestamp": "2026-11-30T02:00:00Z"},
            "spec": {"nodeName": "p5-node-1"}, "status": {"phase": phase, "containerStatuses": statuses}}


COMPLETE = {"type": "Complete", "status": "True"}
FAILED = {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}


@pytest.mark.parametrize("fixture", ["trl/trl-train-one-step.log.gz", "trl/trl-train-one-step-h200.log.gz"])
def test_log_checks_recorded_trl_one_step_passes(fixture):
    state = _job_state(COMPLETE, pods=[_pod("Succeeded", 0)])
    expect = {"framework": "trl", "mode": "train", "error_patterns": L5_ERROR_PATTERNS}
    result = checks.log_checks(fw_log(fixture), state, "cpu-host", expect)
    assert names(result) == ["job", "completion_marker", "log_errors"]
    assert failing(result) == []
    assert find(result, "completion_marker")["fail_msg"] == "looked for \"'train_runtime':\""


@pytest.mark.parametrize("fixture,framework", [("rlinf/rlinf-train-one-step.log", "rlinf"),
                                               ("verl/verl-train-one-step.log", "verl")])
def test_log_checks_framework_printed_one_step_passes(fixture, framework):
    result = checks.log_checks(fw_log(fixture), _job_state(COMPLETE), "n", {"framework": framework, "mode": "train"})
    assert failing(result) == []
    assert find(result, "completion_marker")["actual"] is True


def test_log_checks_recorded_crash_fails_with_the_traceback():
    state = _job_state(FAILED, pods=[_pod("Failed", 1)])
    expect = {"framework": "trl", "mode": "train", "error_patterns": L5_ERROR_PATTERNS}
    result = checks.log_checks(fw_log("trl/trl-train-crash.log.gz"), state, "cpu-host", expect)
    job = find(result, "job")
    assert (job["actual"], job["expected"]) == ("Failed", "Complete")
    assert job["fail_msg"] == "BackoffLimitExceeded: Job has reached the specified backoff limit (exit code 1)"
    assert find(result, "completion_marker")["actual"] is False
    traceback = [c for c in result if c["name"] == "log_errors"][0]
    assert traceback["actual"] == ["Traceback (most recent call last):"]
    assert [n for n, node in failing(result)] == ["job", "completion_marker", "log_errors"]


@pytest.mark.parametrize("fixture,framework,seen", [
    ("trl/trl-train-no-max-steps.log.gz", "trl", "0%|          | 0/96 ["),
    ("rlinf/rlinf-train-override-ignored.log", "rlinf", "Global Step:    1/1000"),
    ("verl/verl-train-override-ignored.log", "verl", "'step:2 -'"),
])
def test_log_checks_override_ignored_fails_on_the_real_log(fixture, framework, seen):
    launched = {"command": ["bash", "examples/embodiment/run_embodiment.sh", "maniskill_ppo_openvlaoft"],
                "overrides": ["runner.max_steps=1"], "delivery": "environment variable HYDRA_OVERRIDES"}
    state = _job_state(pods=[_pod("Running")])  # deleted while it ran
    result = checks.log_checks(fw_log(fixture), state, "n", {"framework": framework, "mode": "train",
                                                             "launched": launched})
    assert names(result) == ["override"]
    check = result[0]
    assert check["actual"] is False and seen in check["fail_msg"]
    assert check["fail_msg"].startswith("the one-step override did not take effect: bash examples/embodiment/"
                                        "run_embodiment.sh maniskill_ppo_openvlaoft ignored runner.max_steps=1 "
                                        "(passed as environment variable HYDRA_OVERRIDES)")
    assert "overrides_env" in check["hint"]


def test_log_checks_problem_before_start():
    waiting = {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "rlinf/rlinf:agentic-v0.2"'}
    state = _job_state(pods=[_pod("Pending", waiting=waiting)])
    assert state["settled"] is True
    result = checks.log_checks("", state, "p5-node-1", {"success_markers": ["x"], "error_patterns": L5_ERROR_PATTERNS})
    assert len(result) == 1
    check = result[0]
    assert (check["name"], check["node"], check["actual"], check["expected"]) == ("job", "p5-node-1", "ImagePullBackOff", "Complete")
    assert check["fail_msg"] == 'pod rlsv-run1-l5-libero-x7k2p cannot run: Back-off pulling image "rlinf/rlinf:agentic-v0.2"'
    assert check["hint"] == k8s.HINTS["image"]


def test_log_checks_still_running():
    state = _job_state(pods=[_pod("Running")])
    assert state["settled"] is False
    result = checks.log_checks("step 0 ...", state, "n", {})
    assert [(c["name"], c["actual"], c["fail_msg"]) for c in result] == [("job", "still running", "the Job did not finish within the wait")]


@pytest.mark.parametrize("log_error,message", [(None, "the Job's log is empty"),
                                               ('pods "rlsv-run1-l5-libero-x7k2p" not found', 'pods "rlsv-run1-l5-libero-x7k2p" not found')])
def test_log_checks_empty_log_is_missing_evidence(log_error, message):
    result = checks.log_checks("", _job_state(COMPLETE), "n", {"success_markers": ["x"], "log_error": log_error})
    assert names(result) == ["job", "log"]
    check = find(result, "log")
    assert (check["actual"], check["evidence_missing"], check["fail_msg"]) == (None, True, message)
    assert _verdict.evaluate_check(check)["evidence_missing"] is True


def test_log_checks_without_state():
    result = checks.log_checks("", None, "", None)
    assert (find(result, "job")["actual"], find(result, "job")["fail_msg"]) == ("unknown", "")
    assert find(result, "log")["evidence_missing"] is True


def test_log_checks_error_hits_are_capped_at_three():
    text = "\n".join("  ERROR: worker %d lost" % i for i in range(6))
    result = checks.log_checks(text, _job_state(COMPLETE), "n", {"error_patterns": [r"(^|\s)ERROR:"]})
    assert find(result, "log_errors")["actual"] == ["ERROR: worker 0 lost", "ERROR: worker 1 lost", "ERROR: worker 2 lost"]


def test_log_checks_give_one_log_errors_check_for_every_pattern():
    # Two checks of one name hid each other in the report's grid (the passing one was shown, the failing one lost).
    text = "step 1\nTraceback (most recent call last):\nValueError: boom\n"
    result = checks.log_checks(text, _job_state(COMPLETE), "n", {"error_patterns": L5_ERROR_PATTERNS})
    assert names(result).count("log_errors") == 1
    assert find(result, "log_errors")["actual"] == ["Traceback (most recent call last):"]
    assert passed(find(result, "log_errors")) is False


def test_log_checks_marker_is_any_of_and_a_regex():
    result = checks.log_checks(fw_log("trl/trl-train-one-step.log.gz"), _job_state(COMPLETE), "n",
                               {"success_markers": [r"Global Step:\s+1/1\b", "TRAINING_STEP_TEST_PASSED"]})
    assert find(result, "completion_marker")["actual"] is True
    result = checks.log_checks(fw_log("rlinf/rlinf-train-one-step.log"), _job_state(COMPLETE), "n",
                               {"success_markers": ["Global Step: 1/1"]})  # the old substring never matched
    assert find(result, "completion_marker")["actual"] is False


def test_success_rates_accepts_a_pattern_or_a_list():
    pattern = r"(?P<name>[\w/.-]*success_rate)\s*[:=]\s*(?P<value>[0-9.]+)"
    assert checks.success_rates("success_rate=0.2\nsuccess_rate=0.4\n", pattern) == {"success_rate": 0.4}
    assert checks.success_rates("success_rate: 1.2.3\n", [pattern]) == {}
    assert checks.success_rates(None, pattern) == {}
    assert checks.success_rates("success_rate: 0.5", r"success_rate:\s*([0-9.]+)") == {}


@pytest.mark.parametrize("fixture,framework,metrics", [
    ("trl/trl-eval.log", "trl", {"eval/success_rate": 0.4375}),
    ("rlinf/rlinf-eval.log", "rlinf", {"eval/success_once": 0.6875, "eval/success_at_end": 0.640625}),
    ("verl/verl-val-only.log", "verl", {"val-core/openai/gsm8k/acc/mean@1": 0.75}),
])
def test_l6_reads_every_success_metric_of_the_real_log(fixture, framework, metrics):
    expect = {"framework": framework, "floor": 0.4, "error_patterns": L5_ERROR_PATTERNS}
    result = checks.l6_checks(fw_log(fixture), _job_state(COMPLETE), "n", expect)
    assert "completion_marker" not in names(result)
    assert {c["name"][len("success_rate:"):]: c["actual"] for c in result if c["name"].startswith("success_rate:")} \
        == pytest.approx(metrics)
    assert failing(result) == []


@pytest.mark.parametrize("fixture,framework,name,value", [
    ("trl/trl-eval-low.log", "trl", "eval/success_rate", 0.0),
    ("rlinf/rlinf-eval-low.log", "rlinf", "eval/success_once", 0.203125),
    ("verl/verl-val-only-low.log", "verl", "val-core/openai/gsm8k/acc/mean@1", 0.25),
])
def test_l6_below_the_floor_fails_on_the_real_log(fixture, framework, name, value):
    result = checks.l6_checks(fw_log(fixture), _job_state(COMPLETE), "n", {"framework": framework, "floor": 0.5})
    check = find(result, "success_rate:" + name)
    assert (check["actual"], check["expected"], check["op"]) == (pytest.approx(value), 0.5, "ge")
    assert not passed(check) and "floor" in check["hint"]


def test_l6_floor_per_metric_over_the_default():
    expect = {"framework": "rlinf", "floor": 0.9, "floors": {"success_once": 0.6, "eval/success_at_end": 0.6}}
    result = checks.l6_checks(fw_log("rlinf/rlinf-eval.log"), _job_state(COMPLETE), "n", expect)
    assert [(c["name"], c["expected"]) for c in result if c["name"].startswith("success_rate:")] == [
        ("success_rate:eval/success_at_end", 0.6), ("success_rate:eval/success_once", 0.6)]
    assert failing(result) == []


def test_l6_evaluation_that_trains_fails():
    launched = {"command": ["python3", "-m", "verl.trainer.main_ppo"], "overrides": ["trainer.val_only=True"]}
    result = checks.l6_checks(fw_log("verl/verl-train-one-step.log"), _job_state(COMPLETE), "n",
                              {"framework": "verl", "launched": launched})
    assert names(result) == ["override"]
    assert result[0]["fail_msg"].startswith("the evaluation started training: python3 -m verl.trainer.main_ppo ran "
                                            "training steps despite trainer.val_only=True")


def test_l6_default_floor_is_zero_and_default_pattern():
    result = checks.l6_checks("libero_spatial/success_rate = 0.0\n", _job_state(COMPLETE), "n", {})
    check = find(result, "success_rate:libero_spatial/success_rate")
    assert (check["actual"], check["expected"]) == (0.0, 0.0)
    assert passed(check)


def test_l6_no_metric_is_missing_evidence():
    result = checks.l6_checks(fw_log("trl/trl-train-one-step.log.gz"), _job_state(COMPLETE), "n", {"framework": "rlinf"})
    check = find(result, "success_rate")
    assert (check["actual"], check["evidence_missing"]) == (None, True)
    assert check["fail_msg"].startswith("no success metric in the log (patterns '(?P<name>eval/success_")
    assert "evaluation.pattern" in check["hint"]


def test_l6_failed_job_stops_before_rates():
    result = checks.l6_checks(fw_log("trl/trl-eval.log"), _job_state(FAILED, pods=[_pod("Failed", 137)]), "n",
                              {"floor": 0.5})
    assert names(result) == ["job"]
    assert find(result, "job")["fail_msg"] == "BackoffLimitExceeded: Job has reached the specified backoff limit (exit code 137)"


def test_l6_empty_log_stops_before_rates():
    result = checks.l6_checks("", _job_state(COMPLETE), "n", {"floor": 0.5})
    assert names(result) == ["job", "log"]


def test_l6_error_lines_do_not_hide_the_rates():
    text = fw_log("trl/trl-eval.log") + "\nERROR: env worker 3 restarted\n"
    expect = {"error_patterns": [r"(^|\s)ERROR:"], "floor": 0.4, "framework": "trl"}
    result = checks.l6_checks(text, _job_state(COMPLETE), "n", expect)
    assert failing(result) == [("log_errors", "n")]
    assert len([c for c in result if c["name"].startswith("success_rate:")]) == 1


def test_l6_problem_before_start():
    waiting = {"reason": "CreateContainerConfigError", "message": 'secret "wandb" not found'}
    result = checks.l6_checks("", _job_state(pods=[_pod("Pending", waiting=waiting)]), "n", {})
    assert [(c["name"], c["actual"]) for c in result] == [("job", "CreateContainerConfigError")]


# ------------------------------------------------------------------------------------------- nccl_item, mpijob


def test_nccl_item_from_a_loop_result():
    result = {"item": {"key": "p5-node-1", "value": {}}, "changed": False, "nranks": 8, "complete": True, "network": "NVLink"}
    item = _nccl_checks.nccl_item(result, "sweep", {"min_busbw": [{"size": "1G", "floor": 300}]})
    assert item == {"name": "sweep", "node": "p5-node-1", "facts": result, "expect": {"min_busbw": [{"size": "1G", "floor": 300}]}}


def test_nccl_item_failed_or_skipped_has_no_facts():
    for result in ({"failed": True, "msg": "no NCCL output"}, {"skipped": True, "item": {"key": "n2"}}):
        item = _nccl_checks.nccl_item(result, "nccl", None)
        assert item["facts"] is None
        assert item["expect"] == {}
    assert _nccl_checks.nccl_item({"skipped": True, "item": {"key": "n2"}}, "nccl", {})["node"] == "n2"


def test_nccl_item_plain_item_and_empty_result():
    assert _nccl_checks.nccl_item({"item": "p5-node-1", "nranks": 8}, "nccl", {})["node"] == ""
    assert _nccl_checks.nccl_item(None, "nccl", {}) == {"name": "nccl", "node": "", "facts": {}, "expect": {}}


def test_nccl_item_copies_the_expectation():
    expect = {"nranks": 16}
    item = _nccl_checks.nccl_item({}, "nccl", expect)
    item["expect"]["nranks"] = 1
    assert expect == {"nranks": 16}


P5_NODES = [{"node": "p5-node-1", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32},
            {"node": "p5-node-2", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32}]
G6_NODES = [{"node": "g6-node-1", "instance_type": "g6.8xlarge", "gpus": 1, "efa": 1},
            {"node": "g6-node-2", "instance_type": "g6.8xlarge", "gpus": 1, "efa": 1}]
IMAGE = "public.ecr.aws/hpc-cloud/nccl-tests:latest"


def test_nccl_mpijob_p5():
    job = _workloads.nccl_mpijob(P5_NODES, "rlsv-run1-l3", IMAGE, None, None, 0.0)
    assert job["instance_type"] == "p5.48xlarge"
    assert job["mpijob"] == {"name": "rlsv-run1-l3-nccl", "workers": 2, "gpus_per_worker": 8, "efa_per_worker": 32,
                             "node_selector": {"node.kubernetes.io/instance-type": "p5.48xlarge"}, "image": IMAGE, "rdma": True,
                             "min_bytes": "8", "max_bytes": "16G"}
    assert job["expect"] == {"network": ["efa"], "nranks": 16, "min_busbw": [{"size": 1073741824, "floor": 100.0}],
                             "tolerance": 0.0, "require_complete": True,
                             # aws-ofi-nccl must find every EFA NIC, use RDMA and GPUDirect RDMA on p5
                             "transport": {"instance_type": "p5.48xlarge", "provider": "efa", "nics": 32,
                                           "protocol": "RDMA", "gdrdma": True}}


def test_nccl_mpijob_g6():
    job = _workloads.nccl_mpijob(G6_NODES, "rlsv-run1-phase0", IMAGE, [], [], 0.1)
    assert (job["mpijob"]["rdma"], job["mpijob"]["max_bytes"], job["mpijob"]["gpus_per_worker"]) == (False, "1G", 1)
    assert (job["mpijob"]["efa_per_worker"], job["mpijob"]["workers"]) == (1, 2)
    assert job["expect"] == {"network": ["efa"], "nranks": 2, "min_busbw": [{"size": 1073741824, "floor": 1.0}],
                             "tolerance": 0.1, "require_complete": True,
                             # g6 is not in aws-ofi-nccl's platform table: no protocol, no GPUDirect RDMA
                             "transport": {"instance_type": "g6.8xlarge", "provider": "efa", "nics": 1,
                                           "protocol": None, "gdrdma": False}}


def test_nccl_mpijob_explicit_floors_and_network_win():
    floors = [{"size": "16G", "floor": 400}]
    job = _workloads.nccl_mpijob(P5_NODES, "l3", IMAGE, floors, ["efa", "ib"], 0.05)
    assert job["expect"]["min_busbw"] == floors
    assert job["expect"]["network"] == ["efa", "ib"]
    assert job["expect"]["tolerance"] == 0.05


def test_nccl_mpijob_expectation_is_judged_by_the_verdict_engine():
    job = _workloads.nccl_mpijob(P5_NODES, "l3", IMAGE, None, None, 0.0)
    entries = judged({"name": "nccl_tests", "node": "", "facts": None, "expect": job["expect"]})
    assert entries
    assert all(not e["passed"] for e in entries)


def test_nccl_mpijob_without_efa_or_gpus():
    nodes = [{"node": "p5-node-1", "instance_type": "p5.48xlarge", "efa": 0}]
    job = _workloads.nccl_mpijob(nodes, "l3", IMAGE, None, None, None)
    assert job["mpijob"]["gpus_per_worker"] == 8
    assert job["expect"]["network"] == []
    assert job["expect"]["nranks"] == 8
    assert job["expect"]["tolerance"] == 0.0


def test_nccl_mpijob_unknown_type_and_no_nodes():
    job = _workloads.nccl_mpijob([{"node": "x", "instance_type": "x9.metal"}], "l3", IMAGE, None, None, 0)
    assert job["mpijob"]["node_selector"] == {"node.kubernetes.io/instance-type": "x9.metal"}
    assert (job["mpijob"]["rdma"], job["mpijob"]["max_bytes"], job["mpijob"]["gpus_per_worker"]) == (False, "1G", 1)
    assert job["expect"]["min_busbw"] == []
    empty = _workloads.nccl_mpijob([], "l3", IMAGE, None, None, 0)
    assert (empty["mpijob"]["workers"], empty["mpijob"]["node_selector"], empty["expect"]["nranks"]) == (0, {}, 0)
    assert empty["instance_type"] == ""


def test_example_job_train_appends_the_contract_overrides_and_keeps_the_simulator_env():
    example = {"name": "maniskill", "framework": "rlinf", "command": ["python", "train.py"], "overrides": "data.n=2",
               "env": {"A": "1"}}
    job = _workloads.example_job(example, "train", [{"node": "n0", "gpus": 8, "efa": 32}], "img:1", 3600,
                                 {"LIBERO_CONFIG_PATH": "/etc/libero", "A": "0"})
    assert job["name"] == "train-maniskill" and job["image"] == "img:1"
    assert job["env"] == {"LIBERO_CONFIG_PATH": "/etc/libero", "A": "1"}
    assert job["command"] == ["python", "train.py"]
    assert job["args"] == ["runner.max_steps=1", "runner.save_interval=-1", "runner.val_check_interval=-1", "data.n=2"]
    assert job["launched"]["delivery"] == "appended arguments"
    assert (job["gpus"], job["efa"], job["nodes"], job["deadline_s"]) == (8, 32, 1, 3600)


def test_example_job_overrides_in_the_variable_the_launcher_reads():
    example = {"name": "eks", "framework": "rlinf", "command": ["bash", "run_training_eks.sh"],
               "overrides_env": "HYDRA_OVERRIDES"}
    job = _workloads.example_job(example, "train", [], "img", 60)
    assert job["args"] == []
    assert job["env"]["HYDRA_OVERRIDES"] == "runner.max_steps=1 runner.save_interval=-1 runner.val_check_interval=-1"
    assert job["launched"]["delivery"] == "environment variable HYDRA_OVERRIDES"


def test_example_job_eval_uses_the_evaluation_command_and_overrides():
    example = {"name": "x", "framework": "verl", "command": ["train"], "gpus": 1, "nodes": 2,
               "evaluation": {"command": ["python3", "-m", "verl.trainer.main_ppo"], "overrides": ["data.val=1"]}}
    job = _workloads.example_job(example, "eval", [], "img:2", 600)
    assert job["command"] == ["python3", "-m", "verl.trainer.main_ppo"]
    assert job["args"] == ["trainer.val_only=True", "trainer.val_before_train=True", "trainer.logger=[console]",
                           "data.val=1"]
    assert (job["name"], job["gpus"], job["efa"], job["nodes"]) == ("eval-x", 1, 0, 2)


def test_example_job_unknown_framework_is_one_sentence():
    with pytest.raises(ValueError, match="framework 'nope' has no contract; use one of custom, rlinf, trl, verl"):
        _workloads.example_job({"name": "x", "framework": "nope"}, "train", [], "img", 60)


# ------------------------------------------------------------------------------------------ nccl


def row(size, busbw, in_place=None):
    return {"size": size, "count": size // 4, "type": "float", "redop": "sum", "root": -1,
            "out_of_place": {"time_us": 1.0, "algbw": busbw / 1.875, "busbw": busbw, "wrong": 0},
            "in_place": {"time_us": 1.0, "algbw": 1.0, "busbw": in_place if in_place is not None else busbw,
                         "wrong": 0}}


def facts(**kw):
    """A literal nccl_log_info result (the keys of _nccl.py's parser)."""
    base = {
        "network": "efa", "ofi_provider": "efa", "nranks": 16, "nnodes": 2, "hosts": ["a", "b"],
        "complete": True, "wrong_total": 0, "signatures": [], "nccl_version": "2.27.7",
        "tables": [{"test": "all_reduce", "rows": [row(512 << 20, 300.0), row(1 << 30, 437.9, 440.0),
                                                   row(16 << 30, 487.1)],
                    "avg_busbw": 52.9, "complete": True}],
        "peak_busbw": 487.1, "busbw_at_largest_size": 487.1, "largest_size": 16 << 30, "avg_busbw_reported": 52.9,
    }
    base.update(kw)
    return base


def judged(item):
    """nccl_checks' specs judged by the verdict engine, as level_assert does."""
    return [_verdict.evaluate_check(spec) for spec in _nccl_checks.nccl_checks(item)]


def nccl_checks(fact_dict, **expect):
    return dict((c["name"], c) for c in judged({"name": "nccl", "node": "p5", "facts": fact_dict,
                                                "expect": expect}))


def test_nccl_checks_all_good():
    checks = nccl_checks(facts(), network="efa", nranks=16, nnodes=2,
                         min_busbw=[{"size": "1G", "floor": 400}, {"size": "16GiB", "floor": 450}])
    assert sorted(checks) == sorted([
        "nccl_network", "nccl_nranks", "nccl_nnodes", "nccl_complete", "nccl_wrong", "nccl_busbw_1GiB",
        "nccl_busbw_16GiB", "nccl_signatures"])
    assert all(c["passed"] for c in checks.values()), [c["message"] for c in checks.values()]
    assert checks["nccl_busbw_1GiB"]["unit"] == "GB/s" and checks["nccl_busbw_1GiB"]["node"] == "p5"


def test_nccl_checks_socket_fallback_fails_the_network():
    checks = nccl_checks(facts(network="Socket"), network=["efa"])
    net = checks["nccl_network"]
    assert not net["passed"]
    assert net["message"] == "nccl_network: NCCL printed 'Socket' (expected one of 'efa', saw 'socket')"
    assert "fell back to TCP sockets" in net["hint"]


def test_nccl_checks_network_list_and_unknown():
    assert nccl_checks(facts(network="IB"), network=["efa", "ib"])["nccl_network"]["passed"]
    libfabric = nccl_checks(facts(network="Libfabric", ofi_provider=None), network="efa")["nccl_network"]
    assert libfabric["passed"] and "efa assumed" in libfabric["message"]
    assert not nccl_checks(facts(network="Libfabric", ofi_provider=None), network="ib")["nccl_network"]["passed"]
    missing = nccl_checks(facts(network=None, ofi_provider=None), network="efa")["nccl_network"]
    assert not missing["passed"] and missing["evidence_missing"]
    assert "NCCL_DEBUG=INFO" in missing["hint"]


def test_nccl_checks_busbw_floor_tolerance_and_string_floor():
    ok = nccl_checks(facts(), min_busbw=[{"size": "1G", "floor": "480"}], tolerance=0.1)
    assert ok["nccl_busbw_1GiB"]["passed"]  # 437.9 >= 432
    per_size = nccl_checks(facts(), min_busbw=[{"size": "1G", "floor": 480, "tolerance": 0.0}], tolerance=0.5)
    assert not per_size["nccl_busbw_1GiB"]["passed"]


def test_nccl_checks_busbw_size_not_measured():
    entry = nccl_checks(facts(), min_busbw=[{"size": "32G", "floor": 1}])["nccl_busbw_32GiB"]
    assert not entry["passed"] and entry["evidence_missing"]
    assert "largest size measured was 16GiB" in entry["message"]
    assert "-e 32G" in entry["hint"]


def test_nccl_checks_single_rank_ok_is_informational():
    one = facts(nranks=1, nnodes=1, network=None, tables=[{"test": "all_reduce", "rows": [row(1 << 30, 0.0)]}])
    checks = nccl_checks(one, network="efa", min_busbw=[{"size": "1G", "floor": 100}], single_rank_ok=True)
    assert checks["nccl_busbw_1GiB"]["passed"]
    assert "not measurable on one GPU" in checks["nccl_busbw_1GiB"]["message"]
    assert checks["nccl_network"]["passed"]


def test_nccl_checks_single_rank_without_permission_fails():
    one = facts(nranks=1, tables=[{"test": "all_reduce", "rows": [row(1 << 30, 0.0)]}])
    entry = nccl_checks(one, min_busbw=[{"size": "1G", "floor": 100}])["nccl_busbw_1GiB"]
    assert not entry["passed"] and "2+ ranks" in entry["hint"]


def test_nccl_checks_wrong_results_fail():
    entry = nccl_checks(facts(wrong_total=128))["nccl_wrong"]
    assert not entry["passed"]
    assert "128 wrong results" in entry["message"]
    assert nccl_checks(facts(wrong_total=2), max_wrong="4")["nccl_wrong"]["passed"]
    assert nccl_checks(facts(wrong_total=None))["nccl_wrong"]["passed"]  # -c 0: not checked


def test_nccl_checks_incomplete_run_fails():
    entry = nccl_checks(facts(complete=False))["nccl_complete"]
    assert not entry["passed"] and "did not finish" in entry["message"]
    assert "nccl_complete" not in nccl_checks(facts(complete=False), require_complete=False)


def test_nccl_checks_forbidden_signature_fails_and_default_allows_nccl_warn():
    sigs = [
        {"id": "cm_req_handle_error_entry", "line_no": 42, "line": "NCCL WARN NET/OFI Request ... completed with error",
         "hint": "security group must allow all traffic between the EFA nodes"},
        {"id": "cm_req_handle_error_entry", "line_no": 50, "line": "again", "hint": ""},
        {"id": "nccl_warn", "line_no": 7, "line": "NCCL WARN something", "hint": ""},
    ]
    checks = nccl_checks(facts(signatures=sigs))
    bad = checks["nccl_signature_cm_req_handle_error_entry"]
    assert not bad["passed"]
    assert "(line 42, 2 occurrences)" in bad["message"]
    assert bad["hint"].startswith("security group")
    assert checks["nccl_signature_nccl_warn"]["passed"]
    assert "nccl_signatures" not in checks
    strict = nccl_checks(facts(signatures=sigs), forbid_signatures=["all"])
    assert not strict["nccl_signature_nccl_warn"]["passed"]
    lenient = nccl_checks(facts(signatures=sigs), forbid_signatures=[])
    assert lenient["nccl_signature_cm_req_handle_error_entry"]["passed"]


def test_nccl_checks_missing_facts_is_missing_evidence():
    for value in (None, {}, {"failed": True, "msg": "no such file: /logs/launcher.log"}, {"skipped": True}):
        checks = judged({"facts": value, "expect": {"network": "efa"}})
        assert [c["name"] for c in checks] == ["nccl_log"]
        assert checks[0]["evidence_missing"] and not checks[0]["passed"]
    assert "no such file" in judged({"facts": {"failed": True, "msg": "no such file"}})[0]["message"]


def test_nccl_checks_signatures_judged_by_other_checks_are_soft():
    sigs = [{"id": "socket_fallback", "line_no": 3, "line": "Using network Socket", "hint": "set NCCL_NET=ofi"},
            {"id": "wrong_results", "line_no": 9, "line": "Out of bounds values : 4 FAILED", "hint": ""}]
    judged = nccl_checks(facts(signatures=sigs, network="socket", wrong_total=4), network=["efa"])
    assert not judged["nccl_network"]["passed"] and not judged["nccl_wrong"]["passed"]
    assert judged["nccl_signature_socket_fallback"]["passed"]
    assert judged["nccl_signature_wrong_results"]["passed"]
    alone = nccl_checks(facts(signatures=sigs, network="socket", wrong_total=None))
    assert not alone["nccl_signature_socket_fallback"]["passed"]
    assert not alone["nccl_signature_wrong_results"]["passed"]


def test_nccl_checks_busbw_reads_out_of_place_and_needs_the_size():
    checks = nccl_checks(facts(), min_busbw=[{"size": "1G", "floor": 437.9}, {"size": "768M", "floor": 1}])
    assert checks["nccl_busbw_1GiB"]["actual"] == 437.9  # out-of-place, not the in-place 440
    # 768 MiB: the 512 MiB row is too small to answer for it
    assert checks["nccl_busbw_768MiB"]["evidence_missing"]
    rounded = facts(tables=[{"test": "all_gather", "rows": [row(17179868160, 400.0)]}])
    assert nccl_checks(rounded, min_busbw=[{"size": "16G", "floor": 350}])["nccl_busbw_16GiB"]["passed"]


def test_nccl_checks_busbw_of_one_collective_and_flat_rows():
    two = facts(tables=[{"test": "all_reduce", "rows": [row(1 << 30, 400.0)]},
                        {"test": "sendrecv", "rows": [row(1 << 30, 20.0)]}])
    assert not nccl_checks(two, min_busbw=[{"size": "1G", "floor": 100}])["nccl_busbw_1GiB"]["passed"]
    assert nccl_checks(two, min_busbw=[{"size": "1G", "floor": 100}], test="all_reduce")["nccl_busbw_1GiB"]["passed"]
    flat = facts(tables=[{"rows": [{"size": 1 << 30, "busbw": 3.0}]}])
    assert nccl_checks(flat, min_busbw=[{"size": "1G", "floor": 2}])["nccl_busbw_1GiB"]["passed"]


def test_nccl_checks_log_without_results_table():
    checks = nccl_checks(facts(tables=[], complete=None), network="efa")
    assert not checks["nccl_complete"]["passed"]
    assert "no nccl-tests results table" in checks["nccl_complete"]["message"]
    assert "nccl_complete" not in nccl_checks(facts(tables=[], complete=None), require_complete=False)


# ------------------------------------------------------------------------------------- transport proof

FIXTURES_NCCL = REPO / "tests" / "unit" / "fixtures" / "nccl"


def parsed_log(path):
    from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl
    return _nccl.parse_file(str(path))


def l3_checks(log, nodes=None):
    job = _workloads.nccl_mpijob(nodes or P5_NODES, "l3", IMAGE, None, None, 0.0)
    return judged({"name": "nccl_tests", "node": "", "facts": parsed_log(log), "expect": job["expect"]})


def test_transport_proof_passes_on_the_healthy_p5_log():
    entries = l3_checks(LOGS / "l3-efa-healthy.log")
    by_name = {}
    for entry in entries:
        by_name.setdefault(entry["name"], []).append(entry)
    assert all(e["passed"] for e in entries), [e["message"] for e in entries if not e["passed"]]
    hosts = ["compute-gpu-st-distributed-ml-1", "compute-gpu-st-distributed-ml-2"]
    assert [e["node"] for e in by_name["nccl_tests_efa_nics"]] == hosts
    assert by_name["nccl_tests_ofi_provider"][0]["actual"] == "efa"
    assert by_name["nccl_tests_gdrdma"][0]["actual"] is True
    # aws-ofi-nccl 1.7.3 does not print the protocol: recorded, not judged
    assert "does not say" in by_name["nccl_tests_ofi_protocol"][0]["message"]


def test_a_host_with_31_of_32_nics_fails_with_that_message():
    entries = l3_checks(LOGS / "l3-efa-nic-missing.log")
    failed = [e for e in entries if not e["passed"]]
    assert [(e["name"], e["node"]) for e in failed] == [("nccl_tests_efa_nics", "compute-gpu-st-distributed-ml-2")]
    assert failed[0]["message"] == (
        "nccl_tests_efa_nics: aws-ofi-nccl on compute-gpu-st-distributed-ml-2 found 31 of the 32 EFA NICs of "
        "p5.48xlarge (expected >= 32, saw 31)")
    assert "fewer EFA NICs" in failed[0]["hint"]
    result = _verdict.build_level_result("l3_multi_gpu", checks=_nccl_checks.nccl_checks(
        {"name": "nccl_tests", "facts": parsed_log(LOGS / "l3-efa-nic-missing.log"),
         "expect": _workloads.nccl_mpijob(P5_NODES, "l3", IMAGE, None, None, 0.0)["expect"]}))
    assert result["status"] == "FAIL" and result["nodes"]["compute-gpu-st-distributed-ml-2"]["status"] == "FAIL"


def test_socket_fallback_fails_the_provider_too():
    entries = {e["name"]: e for e in l3_checks(FIXTURES_NCCL / "ofi-plugin-init-failed-socket-fallback-p4d.log")}
    assert not entries["nccl_tests_network"]["passed"]
    provider = entries["nccl_tests_ofi_provider"]
    assert not provider["passed"] and provider["evidence_missing"]
    assert "no 'NET/OFI Selected provider is ...' line" in provider["message"]
    # aws-ofi-nccl printed its protocol before it failed: SENDRECV is not what p5 needs
    assert not entries["nccl_tests_ofi_protocol"]["passed"]
    assert "SENDRECV" in entries["nccl_tests_ofi_protocol"]["message"]


def test_gdrdma_required_only_where_the_plugin_requires_it():
    g6e = FIXTURES_NCCL / "efa-g6e-l40s-4pod-deepspeed-nccl-info.log"     # no /GDRDMA on its channels
    g6e_nodes = [{"node": "n%d" % i, "instance_type": "g6e.48xlarge", "gpus": 1, "efa": 4} for i in range(4)]
    entries = {e["name"]: e for e in l3_checks(g6e, g6e_nodes)}
    assert "nccl_tests_gdrdma" not in entries and "nccl_tests_ofi_protocol" not in entries
    assert entries["nccl_tests_efa_nics"]["passed"] and entries["nccl_tests_ofi_provider"]["passed"]
    p5 = {e["name"]: e for e in l3_checks(g6e)}
    assert not p5["nccl_tests_gdrdma"]["passed"]
    assert "llama-3-8b-node-0-0" in p5["nccl_tests_gdrdma"]["message"]
    assert not p5["nccl_tests_efa_nics"]["passed"]                   # 4 of 32


def test_transport_fabric_and_missing_nic_line():
    item = {"name": "nccl", "facts": facts(ofi_fabric="efa", ofi_nics=None, ofi_nics_by_host={}),
            "expect": {"transport": {"fabric": ["efa-direct"], "nics": 16}}}
    entries = {e["name"]: e for e in judged(item)}
    assert not entries["nccl_ofi_fabric"]["passed"]
    assert entries["nccl_efa_nics"]["evidence_missing"]
    old = {e["name"]: e for e in judged({"facts": facts(), "expect": {"transport": {"fabric": "efa-direct"}}})}
    assert old["nccl_ofi_fabric"]["passed"] and "1.14+" in old["nccl_ofi_fabric"]["message"]


def test_a_failed_multi_node_bandwidth_check_names_the_isolation_command():
    cmd = "ansible-playbook playbooks/validate.yml -i inv --tags isolate -e validation_hosts=eks"
    got = nccl_checks(facts(), network="efa", min_busbw=[{"size": "1G", "floor": 450}], isolate_command=cmd)
    assert not got["nccl_busbw_1GiB"]["passed"]
    assert got["nccl_busbw_1GiB"]["hint"].endswith("to find the node: " + cmd)
    assert "isolate" not in got["nccl_network"]["hint"]
    plain = nccl_checks(facts(), network="efa", min_busbw=[{"size": "1G", "floor": 450}])
    assert "isolate" not in plain["nccl_busbw_1GiB"]["hint"]
