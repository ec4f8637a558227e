# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turn each level's evidence into the checks that rlstack.validation.level_assert judges.

Standard library only. Each function returns a list of check dicts (name, node, op, actual, expected,
unit, hint, message, evidence_missing), one per thing a level promises, so a failing check names the
node, what was expected, what was seen and what to do. Expectations come from the instance profile of
each node (plugins/module_utils/gpu/_profiles.py) unless the inventory overrides them.
"""

from __future__ import annotations

import re

from ansible_collections.rlstack.validation.plugins.module_utils import _limits
from ansible_collections.rlstack.validation.plugins.module_utils.gpu import _gpu_health
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _log_excerpt

try:  # imported as part of the collection
    from ansible_collections.rlstack.validation.plugins.module_utils import _frameworks
    from ansible_collections.rlstack.validation.plugins.module_utils.gpu import _profiles
except ImportError:  # pragma: no cover - only when the file is used on its own
    _frameworks = _profiles = None

HINT_GPU = ("a GPU the device plugin advertises is not visible to nvidia-smi (fell off the bus, XID 79, driver "
            "mismatch): drain the node, check `nvidia-smi -q` and dmesg for XID errors, replace the instance")
# NVIDIA Container Toolkit docs, "Specialized Configurations with Docker", Environment Variables (OCI Spec): the
# runtime mounts the driver's binaries by NVIDIA_DRIVER_CAPABILITIES ("utility: required for using nvidia-smi and
# NVML") only into a container with NVIDIA_VISIBLE_DEVICES set, which the device plugin sets for a GPU request.
HINT_NO_SMI = ("nvidia-smi is not in the pod although it got the node's GPUs: the NVIDIA container runtime did not "
               "mount the driver's tools into it. Check that the node's containerd runs the NVIDIA runtime (the GPU "
               "Operator's toolkit, or the EKS accelerated AMI's nvidia-container-runtime), and that the image does "
               "not set NVIDIA_DRIVER_CAPABILITIES without 'utility'")
HINT_EFA = ("the EFA devices are missing in the pod: check the EFA driver on the node (efa kernel module), the "
            "aws-efa-k8s-device-plugin DaemonSet and the pod's vpc.amazonaws.com/efa request")
HINT_EFA_DRA = ("the EFA DRA driver (DRANET, aws-dranet chart) publishes fewer EFA devices than the instance has: "
                "check its DaemonSet pod on this node, the efa kernel module, and the node's EFA interfaces")
HINT_STORAGE = ("the shared storage is not writable from the pod: check the FSx for Lustre CSI driver, the "
                "PersistentVolume and claim, the security group (port 988) and the mount options")
# With the host transport the probe runs on the host itself (inventories/gpu-host): no pod, container runtime or CSI.
HINTS_ON_A_HOST = {
    HINT_NO_SMI: "nvidia-smi is not on this host's PATH: install the NVIDIA driver (it brings nvidia-smi) or put its "
                 "directory on the PATH of the user Ansible connects as",
    HINT_EFA: "the EFA devices are missing on this host: check the EFA driver (efa kernel module, the EFA installer) "
              "and the instance's EFA network interfaces",
    HINT_STORAGE: "the shared storage is not writable on this host: check that it is mounted at the storage path "
                  "(the FSx for Lustre client, the security group's port 988, the mount options) and writable by "
                  "the user Ansible connects as",
}

# The sources: docs/security.md ("What the pods may do", the EFA bullet).
HINT_MEMLOCK = ("libfabric's EFA provider pins its buffers against this limit and fails with \"Libfabric error: (-12) "
                "Cannot allocate memory\" when it is too low. The node's container runtime sets it: on the AL2023 "
                "EKS AMI add an RLIMIT_MEMLOCK entry (unlimited) to spec.containerd.baseRuntimeSpec.process.rlimits "
                "of the launch template's NodeConfig, keeping the RLIMIT_NOFILE entry (nodeadm doc/examples.md, "
                "\"Modifying container RLIMITs\"), and read `ulimit -l` in a new pod; Bottlerocket sets it unlimited "
                "itself when EFA is attached; without containers: memlock in /etc/security/limits.conf. A finite "
                "limit you chose on purpose: set l0_infrastructure_efa_memlock_min_kib to it")


def check(name, node="", op="eq", actual=None, expected=None, hint="", message="", unit="", tolerance=None,
          evidence_missing=False, excerpt=None):
    out = {"name": name, "node": node or "", "op": op, "actual": actual, "expected": expected, "hint": hint,
           "fail_msg": message, "unit": unit, "evidence_missing": bool(evidence_missing)}
    if tolerance is not None:
        out["tolerance"] = float(tolerance)
    if excerpt:
        out["excerpt"] = [str(line) for line in excerpt]
    return out


def evidence_check(level_name, node, outcome):
    """The probe ran and printed its JSON, or a check that says why there is no evidence."""
    outcome = outcome or {"status": "not_started", "error": "no probe result for this node"}
    if outcome.get("status") == "ok":
        data = outcome.get("data") or {}
        if data.get("timed_out"):
            return check("probe", node, "true", False, True, evidence_missing=False,
                         message="the %s probe timed out: %s" % (level_name, data.get("error") or ""),
                         hint="the step named above hung; run the probe by hand in the pod to see where")
        return None
    message = outcome.get("error") or "the probe produced no result"
    # (the scheduler's event says what the pod's condition says, which the error holds after its reason: once is enough)
    events = [e for e in outcome.get("events") or [] if str(e) != message and not message.endswith(": %s" % e)]
    if events:
        message += " (events: %s)" % "; ".join(str(e) for e in events[-3:])
    hint = outcome.get("hint") or "run the probe by hand in a pod on that node and read its output"
    # A pod that never started (image pull, scheduling) is its own finding, apart from a probe that failed.
    name = "pod_start" if outcome.get("status") == "not_started" else "probe"
    return check(name, node, "true", None, True, evidence_missing=True, message=message, hint=hint)


def _profile(instance_type):
    if _profiles is None or not instance_type:
        return None
    try:
        return _profiles.get_profile(instance_type)
    except Exception:  # unknown type: the inventory must give the expectations
        return None


def node_expectations(instance_type, overrides):
    """Expected GPUs/EFA/memory for a node: inventory overrides first, then the instance profile."""
    overrides = overrides or {}
    prof = _profile(instance_type) or {}

    def pick(key, prof_key):
        value = overrides.get(key)
        return prof.get(prof_key) if value in (None, "") else value
    return {"instance_type": instance_type or "", "known_type": bool(prof),
            "gpu_count": pick("gpu_count", "gpu_count"), "efa_count": pick("efa_count", "efa_devices"),
            "gpu_name_pattern": pick("gpu_name_pattern", "gpu_name_pattern"),
            "gpu_name": prof.get("gpu_name"),
            "gpu_memory_mib_min": pick("gpu_memory_mib_min", "gpu_memory_mib_min"),
            "nvlink_per_gpu": pick("nvlink_per_gpu", "nvlink_per_gpu"), "nvswitch": pick("nvswitch", "nvswitch"),
            "pcie_gen": pick("pcie_gen", "pcie_gen"), "pcie_width": pick("pcie_width", "pcie_width")}


def _ready(node):
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def l0_reads(daemonsets, namespace, storage_claim="", all_nodes=False):
    """What L0 reads from the API besides its GPU nodes, as the reads of its probe (rlstack.validation.probe_run's
    `reads`: in the probe's module run, not one module run each): each looked-for device-plugin DaemonSet's namespace ({label, namespace, name_contains} of
    l0_infrastructure_daemonsets), the storage claim of `namespace` when one is named, the ResourceSlices (EFA
    through DRA), and every node when the selector matched none (their labels say what to select)."""
    queries = [{"kind": "DaemonSet", "api_version": "apps/v1", "namespace": ds.get("namespace"),
                "item": dict(ds, read="daemonset")} for ds in daemonsets or []]
    if storage_claim:
        queries.append({"kind": "PersistentVolumeClaim", "namespace": namespace, "name": storage_claim,
                        "item": {"read": "claim", "name": storage_claim}})
    queries.append({"kind": "ResourceSlice", "api_version": "resource.k8s.io/v1", "item": {"read": "slices"}})
    if all_nodes:
        queries.append({"kind": "Node", "item": {"read": "all_nodes"}})
    return queries


def l0_read_evidence(reads):
    """What l0_checks' expect takes, from the results of the l0_reads queries ([{item, resources, error}]):
    daemonsets (as _k8s_status.daemonset_summary), storage_claim ({name, phase}: phase 'missing' when not found;
    None when no claim was read), resource_slices, all_node_labels (key=value)."""
    def of(kind):
        return [r for r in reads or [] if (r.get("item") or {}).get("read") == kind]

    claim = next(iter(of("claim")), None)
    labels = sorted({"%s=%s" % pair for node in next(iter(of("all_nodes")), {}).get("resources") or []
                     for pair in ((node.get("metadata") or {}).get("labels") or {}).items()})
    return {"daemonsets": _k8s_status.daemonset_summary(of("daemonset")),
            "storage_claim": None if claim is None else {
                "name": claim["item"].get("name"),
                "phase": next(((o.get("status") or {}).get("phase") for o in claim.get("resources") or []), None)
                or "missing"},
            "resource_slices": [s for r in of("slices") for s in r.get("resources") or []],
            "all_node_labels": labels}


def l0_checks(nodes, probes, expect):
    """L0 infrastructure. nodes: Node objects (k8s transport) or []; probes: {node: probe outcome};
    expect: {selector, all_node_labels, overrides, daemonsets (list of {name, found, desired, ready}),
    storage_claim ({name, phase} or None), storage (bool), transport, host_instance_type, resource_slices
    (resource.k8s.io ResourceSlices: EFA counted from the EFA DRA driver's when a node does not advertise
    the vpc.amazonaws.com/efa extended resource)}; l0_read_evidence makes the last four from what L0 read."""
    checks = []
    expect = expect or {}
    overrides = expect.get("overrides") or {}
    transport = expect.get("transport", "kubernetes")
    if transport == "kubernetes":
        if not nodes:
            seen = sorted(set(expect.get("all_node_labels") or []))
            checks.append(check("gpu_nodes", "", "ge", 0, 1,
                                message="the node selector '%s' matches no node; the nodes have these labels: %s"
                                        % (expect.get("selector", ""), ", ".join(seen[:40]) or "(no nodes)"),
                                hint="set validation_gpu_node_selector in the inventory to a label the GPU nodes carry"))
            return checks
        checks.append(check("gpu_nodes", "", "ge", len(nodes), int(expect.get("min_nodes") or 1),
                            hint="fewer GPU nodes than expected: check the node group's desired size"))
    targets = []
    dra_efa = _k8s_status.dra_efa_counts(expect.get("resource_slices"))
    for node in nodes:
        meta = node.get("metadata") or {}
        name = meta.get("name", "")
        labels = meta.get("labels") or {}
        itype = labels.get("node.kubernetes.io/instance-type") or labels.get("beta.kubernetes.io/instance-type") or ""
        exp = node_expectations(itype, overrides)
        cap = (node.get("status") or {}).get("capacity") or {}
        checks.append(check("node_ready", name, "true", _ready(node), True,
                            hint="the node is NotReady: check the kubelet and `kubectl describe node`"))
        if (node.get("spec") or {}).get("unschedulable") is True:
            # (as schedulable: "expected true, saw false" reads as the check's name says)
            checks.append(check("node_schedulable", name, "true", False, True,
                                message="the node is cordoned", hint="uncordon it (kubectl uncordon) or replace it"))
        if exp["gpu_count"] is None:
            checks.append(check("expectations", name, "true", None, True, evidence_missing=True,
                                message="instance type '%s' has no profile and the inventory sets no GPU count" % itype,
                                hint="set l0_infrastructure_expected (gpu_count, efa_count) in the inventory"))
        else:
            checks.append(check("capacity_gpu", name, "eq", _int(cap.get("nvidia.com/gpu"), 0), int(exp["gpu_count"]),
                                hint="the NVIDIA device plugin advertises the wrong number of GPUs: check the GPU "
                                     "Operator's device-plugin pod on this node"))
        if exp["efa_count"] is not None and "vpc.amazonaws.com/efa" not in cap and name in dra_efa:
            checks.append(check("capacity_efa", name, "eq", dra_efa[name], int(exp["efa_count"]), hint=HINT_EFA_DRA,
                                message="EFA devices in the ResourceSlices of the EFA DRA driver (%s)"
                                        % _k8s_status.EFA_DRA_DRIVER))
        elif exp["efa_count"] is not None:
            checks.append(check("capacity_efa", name, "eq", _int(cap.get("vpc.amazonaws.com/efa"), 0),
                                int(exp["efa_count"]), hint=HINT_EFA))
        checks.extend(_gpu_health.condition_checks(node))
        targets.append((name, exp))
    if transport != "kubernetes":
        targets = [(node, node_expectations(expect.get("host_instance_type") or "", overrides))
                   for node in sorted(probes or {})]
        for node, exp in targets:
            if exp["gpu_count"] is None:
                checks.append(check("expectations", node, "true", None, True, evidence_missing=True,
                                    message="the host has no instance type with a profile and the inventory sets no "
                                            "GPU count, so nothing about its GPUs would be checked",
                                    hint="set validation_instance_type, or l0_infrastructure_expected "
                                         "(gpu_count, efa_count, gpu_name_pattern)"))
    for ds in expect.get("daemonsets") or []:
        ready = ds.get("found") and ds.get("desired", 0) > 0 and ds.get("ready", 0) >= ds.get("desired", 0)
        checks.append(check("daemonset_" + ds["name"], "", "true", bool(ready), True,
                            message="%s: %s" % (ds.get("label", ds["name"]),
                                                "not found in namespace %s" % ds.get("namespace") if not ds.get("found")
                                                else "%s of %s pods ready" % (ds.get("ready", 0), ds.get("desired", 0))),
                            hint=ds.get("hint", "install or repair it; GPU pods cannot get their devices without it")))
    claim = expect.get("storage_claim")
    if claim is not None:
        checks.append(check("storage_claim", "", "eq", claim.get("phase") or "missing", "Bound",
                            message="PersistentVolumeClaim %s" % claim.get("name", ""), hint=HINT_STORAGE))
    probed = []
    for name, exp in targets:
        outcome = (probes or {}).get(name)
        missing = evidence_check("L0", name, outcome)
        if missing:
            checks.append(missing)
            continue
        data = outcome.get("data") or {}
        probed.append((name, exp["instance_type"], data))
        checks.extend(_l0_target_checks(name, exp, data, expect, on_host=transport != "kubernetes"))
    checks.extend(_gpu_health.consistency_checks(probed, overrides))
    return checks


def _hint(hint, on_host):
    """`hint` as it reads where the probe ran: in a pod, or on the host itself (HINTS_ON_A_HOST)."""
    return HINTS_ON_A_HOST.get(hint, hint) if on_host else hint


def _l0_target_checks(name, exp, data, expect, on_host):
    """L0's checks of one target's probe data (`data`) against its expectations (`exp`, node_expectations)."""
    checks = []
    if exp["gpu_count"] is not None:
        smi = data.get("nvidia_smi") or {}
        msg = "nvidia-smi: %s" % smi["error"] if smi.get("error") else ""
        checks.append(check("gpu_count", name, "eq", data.get("gpu_count"), int(exp["gpu_count"]),
                            hint=_hint(HINT_NO_SMI, on_host) if smi.get("not_found") else HINT_GPU, message=msg))
    names = sorted(set(g.get("name") or "" for g in data.get("gpus") or []))
    if exp["gpu_name_pattern"] and names:
        checks.append(check("gpu_model", name, "matches", ", ".join(names), exp["gpu_name_pattern"],
                            hint="the node is not the GPU type the inventory expects: check the node group's "
                                 "instance type and the inventory's expectations"))
    if exp["gpu_memory_mib_min"] and data.get("gpus"):
        smallest = min(_int(g.get("memory_mib"), 0) for g in data["gpus"])
        checks.append(check("gpu_memory", name, "ge", smallest, int(exp["gpu_memory_mib_min"]), unit="MiB",
                            hint="a GPU reports less memory than its model has: check for MIG mode or a "
                                 "wrong instance type"))
    if exp["efa_count"] is not None:
        checks.append(check("efa_devices", name, "eq", data.get("efa_count"), int(exp["efa_count"]),
                            hint=_hint(HINT_EFA, on_host), message=("under %s: %s" % (
                                (data.get("params") or {}).get("infiniband_dir", "/sys/class/infiniband"),
                                ", ".join(data.get("efa_devices") or []) or data.get("infiniband_error") or "none"))))
    if expect.get("storage"):
        storage = data.get("storage") or {}
        failed = [k for k, v in sorted((storage.get("steps") or {}).items()) if not (v or {}).get("ok")]
        checks.append(check("storage_rw", name, "true", bool(storage.get("ok")), True,
                            hint=_hint(HINT_STORAGE, on_host), message="write/read/delete on %s: %s" % (
                                storage.get("path") or expect.get("storage_path", ""),
                                storage.get("error") or ("failed steps: " + ", ".join(failed) if failed else "ok"))))
    checks.extend(efa_memlock_checks(name, data, exp, expect.get("efa_memlock_min_kib")))
    checks.extend(_gpu_health.gpu_checks(name, data, exp))
    checks.extend(_gpu_health.dcgm_checks(name, data.get("dcgm")))
    return checks


def _kib_text(value):
    return "unlimited" if value == "unlimited" else "%s bytes (%s KiB)" % (value, int(value) // 1024)


def efa_memlock_checks(node, data, exp, min_kib=None):
    """The locked-memory limit (the probe's `memlock`) of a node with EFA devices (found, or expected by its
    profile or the inventory). min_kib: l0_infrastructure_efa_memlock_min_kib (None: _limits.EFA_MEMLOCK_MIN_KIB);
    0 asks for unlimited, N > 0 for a soft limit of at least N KiB (unlimited passes too). Output of a probe
    older than the field (the sim's recordings) makes no check; a limit the probe could not read is evidence
    missing."""
    if not (_int(exp.get("efa_count"), 0) > 0 or _int(data.get("efa_count"), 0) > 0) or "memlock" not in data:
        return []
    memlock = data.get("memlock") or {}
    soft, hard = memlock.get("soft"), memlock.get("hard")
    min_kib = _limits.EFA_MEMLOCK_MIN_KIB if min_kib in (None, "") else min_kib
    if soft is None or hard is None:
        why = memlock.get("error") or "no value"
        return [check("efa_memlock", node, "true", None, True, evidence_missing=True, hint=HINT_MEMLOCK,
                      message="the probe could not read the locked-memory limit: %s" % why)]
    if _int(min_kib, -1) < 0:
        return [check("efa_memlock", node, "true", False, True,
                      message="l0_infrastructure_efa_memlock_min_kib is %r: give 0 (unlimited) or a number of KiB"
                              % (min_kib,), hint="fix l0_infrastructure_efa_memlock_min_kib in the inventory")]
    message = ("locked-memory limit (RLIMIT_MEMLOCK) in a container on this EFA node: soft %s, hard %s"
               % (_kib_text(soft), _kib_text(hard)))
    if int(min_kib) == 0:
        shown = "unlimited" if soft == "unlimited" else "%s KiB" % (int(soft) // 1024)
        return [check("efa_memlock", node, "eq", shown, "unlimited", hint=HINT_MEMLOCK, message=message)]
    # RLIM_INFINITY is 2**64 - 1 bytes: unlimited compares as that many KiB
    soft_kib = (2 ** 64 - 1) // 1024 if soft == "unlimited" else int(soft) // 1024
    return [check("efa_memlock", node, "ge", soft_kib, int(min_kib), unit="KiB", hint=HINT_MEMLOCK, message=message)]


def l1_checks(probe_outcome, node, expect):
    """L1 runtime: versions, CUDA, each import with its own pass/fail."""
    expect = expect or {}
    missing = evidence_check("L1", node, probe_outcome)
    if missing:
        return [missing]
    data = probe_outcome.get("data") or {}
    checks = [check("torch", node, "true", data.get("torch") is not None, True,
                    message=data.get("torch_error") or "", hint="PyTorch does not import in the training image")]
    checks.append(check("cuda_available", node, "true", bool(data.get("cuda_available")), True,
                        message=data.get("cuda_error") or data.get("error") or "",
                        hint="torch.cuda.is_available() is false: the pod got no GPU (request nvidia.com/gpu), or the "
                             "image's CUDA is newer than the node driver"))
    if expect.get("gpu_count") is not None:
        checks.append(check("gpu_count", node, "eq", data.get("gpu_count"), int(expect["gpu_count"]),
                            hint="torch sees a different number of GPUs than the pod requested"))
    smoke = data.get("cuda_smoke") or {}
    if data.get("cuda_available"):
        checks.append(check("cuda_kernel", node, "true", bool(smoke.get("ok")), True, message=smoke.get("error") or "",
                            hint="a CUDA kernel does not run: the image was built for another GPU architecture "
                                 "or the driver is too old"))
    for key, label in (("torch", "torch"), ("cuda", "cuda"), ("cudnn_version", "cudnn"), ("nccl", "nccl")):
        minimum = (expect.get("min_versions") or {}).get(label)
        if minimum:
            checks.append(check("version_" + label, node, "version_ge", data.get(key), str(minimum),
                                hint="upgrade %s in the training image" % label))
    for module, result in sorted((data.get("imports") or {}).items()):
        result = result or {}
        checks.append(check("import_" + module, node, "true", bool(result.get("ok")), True,
                            message=result.get("error") or "",
                            hint="install %s in the training image (or fix the error above)" % module))
        minimum = (expect.get("min_versions") or {}).get(module)
        if minimum and result.get("ok"):
            checks.append(check("version_" + module, node, "version_ge", result.get("version"), str(minimum),
                                hint="upgrade %s in the training image" % module))
    return checks


def l2_checks(probe_outcome, node, expect):
    """L2 single GPU: config (and its skew), tokenizer, model in bf16, parameter floor, forward pass."""
    expect = expect or {}
    missing = evidence_check("L2", node, probe_outcome)
    if missing:
        return [missing]
    data = probe_outcome.get("data") or {}
    checks = [check("model_path", node, "true", bool(data.get("model_path_exists")), True,
                    message="model path %s" % data.get("model_path"),
                    hint="stage the model on the shared storage first (l2_single_gpu_stage_model: true runs a "
                         "download Job) or fix l2_single_gpu_model_path")]
    if not data.get("model_path_exists"):
        return checks
    config = data.get("config") or {}
    checks.append(check("config", node, "true", bool(config.get("ok")), True, message=config.get("error") or "",
                        hint="config.json does not load with this transformers version"))
    skew = data.get("missing_config_attrs") or []
    checks.append(check("config_attributes", node, "eq", skew, [],
                        message="config.json lacks %s" % ", ".join(skew) if skew else "",
                        hint=data.get("config_skew_hint") or "add the attributes or patch the modeling code"))
    if expect.get("tokenizer", True):
        tok = data.get("tokenizer") or {}
        checks.append(check("tokenizer", node, "true", bool(tok.get("ok")), True, message=tok.get("error") or "",
                            hint="the tokenizer files are missing or do not match the model"))
        if expect.get("min_vocab"):
            checks.append(check("vocab_size", node, "ge", tok.get("vocab_size"), int(expect["min_vocab"])))
    model = data.get("model") or {}
    checks.append(check("model_load", node, "true", bool(model.get("ok")), True,
                        message=model.get("error") or "", hint=model.get("hint") or
                        "the model does not load on one GPU: read the error; out of memory means the model needs "
                        "more than one GPU (shard it) or a smaller dtype"))
    if model.get("ok"):
        checks.append(check("dtype", node, "eq", model.get("dtype"), expect.get("dtype", "torch.bfloat16")))
        if expect.get("min_params"):
            checks.append(check("param_count", node, "ge", model.get("param_count"), float(expect["min_params"]),
                                hint="the checkpoint is smaller than expected: a wrong or partial model was staged"))
    if expect.get("forward", True):
        fwd = data.get("forward") or {}
        checks.append(check("forward", node, "true", bool(fwd.get("ok")) and fwd.get("logits_finite") is not False,
                            True, message=fwd.get("error") or "",
                            hint="the forward pass fails or gives NaN/inf: check dtype support and the weights"))
    return checks


def l3_probe_checks(probe_outcome, node, expect):
    """L3 single node: FSDP wrap + forward/backward, all-reduce correctness (the sweep goes to nccl facts)."""
    missing = evidence_check("L3", node, probe_outcome)
    if missing:
        return [missing]
    data = probe_outcome.get("data") or {}
    init = data.get("init") or {}
    checks = [check("process_group", node, "true", bool(init.get("ok")), True, message=init.get("error") or "",
                    hint="torch.distributed could not start NCCL: check the GPUs and NCCL in the image")]
    if (expect or {}).get("world_size") is not None:
        checks.append(check("world_size", node, "eq", data.get("world_size"), int(expect["world_size"]),
                            hint="fewer ranks took part than GPUs requested"))
    fsdp = data.get("fsdp") or {}
    checks.append(check("fsdp", node, "true", bool(fsdp.get("ok")) and fsdp.get("loss_finite") is not False, True,
                        message=fsdp.get("error") or ("api %s, loss %s" % (fsdp.get("api"), fsdp.get("loss"))),
                        hint="FSDP wrap or forward/backward failed: read the error; OOM means the model does not fit"))
    allreduce = data.get("allreduce") or {}
    checks.append(check("allreduce_correct", node, "true", bool(data.get("allreduce_ok")), True,
                        message=allreduce.get("error") or "%s mismatches" % allreduce.get("mismatches", "?"),
                        hint="NCCL all-reduce returned wrong values: a faulty GPU or NVLink; run nccl-tests with -c 1"))
    return checks


def l4_checks(probe_outcome, node, expect):
    """L4 rollout: the simulator imports without waiting for input, the benchmark has its tasks."""
    missing = evidence_check("L4", node, probe_outcome)
    if missing:
        return [missing]
    data = probe_outcome.get("data") or {}
    status = data.get("status") or "unknown"
    message = data.get("message") or data.get("error") or status
    hint = data.get("hint") or ""
    if data.get("missing_env"):
        message += " (missing: %s)" % ", ".join(data["missing_env"])
    known = _frameworks.simulator_finding((data.get("params") or {}).get("module") or data.get("module") or
                                          (expect or {}).get("module") or "", data) if _frameworks else None
    if known:
        message, hint = known["message"], known["hint"]
    checks = [check("import", node, "eq", status, "ok", message=message, hint=hint)]
    bench = data.get("benchmark")
    if bench is None or status != "ok":
        return checks
    message = "%s: %s" % (bench.get("name", ""), bench.get("error") or "")
    # A call that raised carries its own hint (the probe's: e.g. the dependency its module could not import).
    hint = bench.get("hint") or (
        "%s raised %s: check the benchmark name and the call against the library's version in the image"
        % (bench.get("call"), bench["error_type"]) if bench.get("error_type") else
        "the benchmark is missing tasks: check the dataset directory and version")
    if (expect or {}).get("expect_tasks") is not None:
        checks.append(check("benchmark_tasks", node, "eq", bench.get("n_tasks"), int(expect["expect_tasks"]),
                            message=message, hint=hint))
    elif bench.get("error_type"):
        checks.append(check("benchmark_call", node, "true", False, True, message=message, hint=hint))
    return checks


def log_checks(log, state, node, expect):
    """L5/L6 Jobs: the Job succeeded, the override took effect, the log shows a done marker and no error.

    expect: framework (contract name), mode (train | eval), launched (example_job's `launch`: command,
    overrides, delivery), success_markers (regexes; default the contract's done markers),
    error_patterns, log_error, env (the run's environment: the values of its secret-looking variables are
    redacted from the excerpt that the first failing check carries, _log_excerpt.py)."""
    expect = expect or {}
    checks = []
    state = state or {}
    framework = _framework_contract(expect)
    mode = expect.get("mode") or "train"
    stopped = (_frameworks.overrun(log, framework, mode, expect.get("launched"))
               if framework is not None and _frameworks is not None else None)
    if stopped:
        # The runner deleted the Job as soon as this line appeared, so its state is not the finding.
        checks.append(check("override", node, "true", False, True, message=stopped["message"],
                            hint="pass the overrides the way this launcher reads them: appended arguments for a "
                                 "script that forwards them, or set the example's overrides_env to the variable "
                                 "its launcher reads (docs/frameworks.md)"))
        return checks
    problems = state.get("problems") or []
    if problems and not state.get("complete") and not state.get("failed"):
        first = problems[0]
        prob = first.get("problem") or {}
        # A Job that Kueue holds back has no pod: its own problem says why.
        message = ("pod %s cannot run: %s" % (first["pod"], prob.get("message", "")) if first.get("pod")
                   else prob.get("message", ""))
        checks.append(check("job", node, "eq", prob.get("reason", "not started"), "Complete", message=message,
                            hint=prob.get("hint", "")))
        return checks
    if not state.get("settled", True) and not state.get("complete") and not state.get("failed"):
        checks.append(check("job", node, "eq", "still running", "Complete",
                            message="the Job did not finish within the wait", hint="raise the timeout or find the hang",
                            excerpt=_log_excerpt.excerpt(log, expect.get("env"))))
        return checks
    outcome = "Complete" if state.get("complete") else ("Failed" if state.get("failed") else "unknown")
    exit_codes = [p.get("exit_code") for p in state.get("pods") or [] if p.get("exit_code") is not None]
    detail = (state.get("reason") or "") + (": " + state.get("message") if state.get("message") else "")
    if exit_codes:
        detail += " (exit code %s)" % exit_codes[-1]
    # What the log shows of the cause (traceback, CUDA/NCCL line, last lines), on the first check that fails.
    excerpt = _log_excerpt.excerpt(log, expect.get("env"))
    # A diagnosis of the job's state (e.g. the MPI operator not acting) carries its own fix.
    checks.append(check("job", node, "eq", outcome, "Complete", message=detail.strip(),
                        hint=state.get("hint") or "read the log lines below; fix the training script, image or data",
                        excerpt=excerpt if outcome != "Complete" else None))
    if not log:
        checks.append(check("log", node, "true", None, True, evidence_missing=True,
                            message=expect.get("log_error") or "the Job's log is empty",
                            hint="read the pod's log by hand; the cluster may not keep logs of finished pods"))
        return checks
    markers = expect.get("success_markers") or (
        framework.get("done_markers") if framework is not None and mode == "train" else [])
    if markers:
        found = [m for m in markers if re.search(m, log)]
        checks.append(check("completion_marker", node, "true", bool(found), True,
                            message="looked for %s" % " or ".join(repr(m) for m in markers),
                            hint="the framework did not report the step as done: check the one-step override",
                            excerpt=excerpt if outcome == "Complete" and not found else None))
    patterns = expect.get("error_patterns") or []
    if patterns:
        # One check for every pattern: a report keys checks by name, so two `log_errors` rows would hide each other.
        hits = [_log_excerpt.redact(line.strip()) for line in log.splitlines()
                if any(re.search(pattern, line) for pattern in patterns)]
        shown = any(c.get("excerpt") for c in checks)
        checks.append(check("log_errors", node, "eq", hits[:3], [],
                            message="lines matching %s" % " or ".join(repr(p) for p in patterns),
                            hint="the log shows an error; read the first lines above",
                            excerpt=excerpt if hits and not shown else None))
    return checks


JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
HINT_NODES = ("a multi-node example must run one pod per node: check that every node of the Job has the free GPUs "
              "(kubectl describe pod names why a pod is Pending), that the GPU request fills a node (or add a pod "
              "anti-affinity on batch.kubernetes.io/job-name) and that the workers joined the head")


def placement_checks(log, node, expect):
    """A multi-node example (expect.nodes > 1): its pods ran on that many distinct nodes (`nodes`), and the
    framework's own log shows a cluster of that many nodes (`framework_nodes`, the contract's cluster_patterns).

    expect: nodes, job (the Job's name), pods (Pod objects; those of other Jobs are ignored), scheduled (the
    namespace's Scheduled events: a pod the Job controller deleted before it was read still names its node there),
    framework."""
    expect = expect or {}
    wanted = int(expect.get("nodes") or 1)
    if wanted <= 1:
        return []
    job = expect.get("job") or ""
    pods = [p for p in expect.get("pods") or []
            if ((p.get("metadata") or {}).get("labels") or {}).get(JOB_NAME_LABEL) == job]
    ran, waiting = {}, []
    for pod in sorted(pods, key=lambda p: (p.get("metadata") or {}).get("name") or ""):
        state = _k8s_status.pod_state(pod)
        if state["node"] and state["phase"] in ("Running", "Succeeded", "Failed"):
            ran.setdefault(state["node"], []).append(state["pod"])
        else:
            scheduled = [c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"]
            why = (scheduled[0].get("message") if scheduled else "") or state["phase"]
            waiting.append("%s never started (%s)" % (state["pod"], why))
    listed = set(((p.get("metadata") or {}).get("name")) for p in pods)
    for name, placed in sorted(_scheduled(expect.get("scheduled"), job).items()):
        if name not in listed:
            ran.setdefault(placed, []).append(name + " (scheduled, gone before it was read)")
            listed.add(name)
    seen = ", ".join("%s: %s" % (n, " ".join(sorted(names))) for n, names in sorted(ran.items())) or "none"
    count = sum(len(names) for names in ran.values())
    message = "%d pods on %d distinct nodes expected; %d pod%s ran on %d node%s (%s)%s" % (
        wanted, wanted, count, "" if count == 1 else "s", len(ran), "" if len(ran) == 1 else "s", seen,
        "; " + "; ".join(waiting) if waiting else "")
    if len(listed) < wanted and not waiting:
        message += "; %d of the Job's %d pods were not found (deleted before they were read)" % (
            wanted - len(listed), wanted)
    checks = [check("nodes", node, "eq", len(ran), wanted, message=message, hint=HINT_NODES)]
    framework = _framework_contract(expect)
    patterns = (framework or {}).get("cluster_patterns") or []
    found = _frameworks.cluster_seen(log, framework) if patterns else None
    if found is None:
        name = expect.get("framework") or "custom"
        missing = ("no line of the %s log reports its cluster (patterns %s)" % (name, " or ".join(patterns))
                   if patterns else "the %s contract names no line that reports the cluster's nodes "
                                    "(plugins/module_utils/_frameworks.py cluster_patterns)" % name)
        checks.append(check("framework_nodes", node, "eq", None, wanted, evidence_missing=True, message=missing,
                            hint="a multi-node example is proven by the framework's own report of its cluster; "
                                 "add that line's pattern to the framework contract (docs/frameworks.md)"))
    else:
        checks.append(check("framework_nodes", node, "eq", found["nodes"], wanted,
                            message="the framework saw %s node%s%s" % (
                                found["nodes"], "" if found["nodes"] == 1 else "s",
                                " and %s GPUs" % found["gpus"] if found["gpus"] is not None else ""),
                            hint="the framework started on fewer nodes than the example asks for: check its "
                                 "node-count setting (RLinf cluster.num_nodes) and that every worker joined the head",
                            excerpt=[found["line"]]))
    return checks


SCHEDULED = re.compile(r"^Successfully assigned (?P<pod>[^/\s]+/[^/\s]+) to (?P<node>\S+)$")


def _scheduled(events, job):
    """{pod: node} from kube-scheduler's Scheduled events (`Successfully assigned <ns>/<pod> to <node>`, Eventf in
    kubernetes pkg/scheduler/schedule_one.go, v1.34) of the pods of Job `job` (its pods are named `<job>-...`)."""
    out = {}
    for event in events or []:
        match = SCHEDULED.match(str(event.get("message") or event.get("note") or ""))
        pod = ((event.get("involvedObject") or event.get("regarding") or {}).get("name")) or ""
        if match and pod.startswith(job + "-"):
            out[pod] = match.group("node")
    return out


def _framework_contract(expect):
    """The framework contract an L5/L6 judgement uses, with the example's own patterns over it."""
    if _frameworks is None or not (expect.get("framework") or expect.get("patterns") or expect.get("pattern")):
        return None
    patterns = list(expect.get("patterns") or []) + ([expect["pattern"]] if expect.get("pattern") else [])
    return _frameworks.contract(expect.get("framework") or "custom", {"metric_patterns": patterns})


def success_rates(log, pattern):
    """Success metrics from an evaluation log: {name: value}. pattern (or a list) has groups name and value."""
    patterns = pattern if isinstance(pattern, (list, tuple)) else [pattern]
    return _frameworks.success_metrics(log, {"metric_patterns": patterns})


def l6_checks(log, state, node, expect):
    """L6: the evaluation Job succeeded without training, and every success metric is at its floor.

    expect: as log_checks, plus floor (default floor), floors ({metric name: floor}), pattern/patterns
    (the example's own metric regexes over the contract's)."""
    expect = dict(expect or {}, mode="eval")
    checks = log_checks(log, state, node, dict(expect, success_markers=[]))
    if any(c["name"] == "override" for c in checks) or any(
            c["name"] in ("job", "log") and (c["evidence_missing"] or c["actual"] != c.get("expected"))
            for c in checks if c["name"] == "log" or c["actual"] != "Complete"):
        return checks
    framework = _framework_contract(expect) or _frameworks.contract("custom")
    rates = _frameworks.success_metrics(log, framework)
    if not rates:
        checks.append(check("success_rate", node, "true", None, True, evidence_missing=True,
                            message="no success metric in the log (patterns %s)"
                                    % " or ".join(framework.get("metric_patterns") or []),
                            hint="set the example's evaluation.pattern to your framework's metric lines "
                                 "(groups name and value), see docs/frameworks.md"))
        return checks
    default = float(expect.get("floor", 0.0))
    for name, value in sorted(rates.items()):
        checks.append(check("success_rate:" + name, node, "ge", value,
                            _frameworks.floor_for(name, expect.get("floors"), default),
                            hint="the policy succeeds less often than the floor: check the checkpoint, the "
                                 "environment version and the evaluation settings"))
    return checks


def _int(value, default=None):
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return default
