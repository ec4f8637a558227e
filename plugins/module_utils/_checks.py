# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turn each level's evidence into the checks that rlstack.validation.level_assert judges.

Standard library only. Each function returns a list of check dicts (name, node, op, actual, expected,
unit, hint, message, evidence_missing), one per thing a level promises, so a failing check names the
node, what was expected, what was seen and what to do. Expectations come from the instance profile of
each node (plugins/module_utils/_profiles.py) unless the inventory overrides them.
"""

from __future__ import annotations

import json
import re

from ansible_collections.rlstack.validation.plugins.module_utils import _gpu_health
from ansible_collections.rlstack.validation.plugins.module_utils import _k8s_status
from ansible_collections.rlstack.validation.plugins.module_utils import _log_excerpt
from ansible_collections.rlstack.validation.plugins.module_utils import _nccl_network, _nccl_results
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain as _plain
from ansible_collections.rlstack.validation.plugins.module_utils._verdict import (
    CONFIG_HINT,
    VerdictError,
    as_list,
    fmt_value,
    format_size,
    parse_size,
    to_bool,
)

try:  # imported as part of the collection
    from ansible_collections.rlstack.validation.plugins.module_utils import _frameworks
    from ansible_collections.rlstack.validation.plugins.module_utils import _profiles
except ImportError:  # pragma: no cover - only when the file is used on its own
    _frameworks = _profiles = None

HINT_GPU = ("a GPU the device plugin advertises is not visible to nvidia-smi (fell off the bus, XID 79, driver "
            "mismatch): drain the node, check `nvidia-smi -q` and dmesg for XID errors, replace the instance")
HINT_EFA = ("the EFA devices are missing in the pod: check the EFA driver on the node (efa kernel module), the "
            "aws-efa-k8s-device-plugin DaemonSet and the pod's vpc.amazonaws.com/efa request")
HINT_EFA_DRA = ("the EFA DRA driver (DRANET, aws-dranet chart) publishes fewer EFA devices than the instance has: "
                "check its DaemonSet pod on this node, the efa kernel module, and the node's EFA interfaces")
HINT_STORAGE = ("the shared storage is not writable from the pod: check the FSx for Lustre CSI driver, the "
                "PersistentVolume and claim, the security group (port 988) and the mount options")


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
    events = outcome.get("events") or []
    message = outcome.get("error") or "the probe produced no result"
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


def l0_checks(nodes, probes, expect):
    """L0 infrastructure. nodes: Node objects (k8s transport) or []; probes: {node: probe outcome};
    expect: {selector, all_node_labels, overrides, daemonsets (list of {name, found, desired, ready}),
    storage_claim ({name, phase} or None), storage (bool), transport, host_instance_type, resource_slices
    (resource.k8s.io ResourceSlices: EFA counted from the EFA DRA driver's when a node does not advertise
    the vpc.amazonaws.com/efa extended resource)}."""
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
        if not (node.get("spec") or {}).get("unschedulable") is True:
            pass
        else:
            checks.append(check("node_schedulable", name, "false", True, False,
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
        if exp["gpu_count"] is not None:
            msg = "" if not (data.get("nvidia_smi") or {}).get("error") else "nvidia-smi: %s" % data["nvidia_smi"]["error"]
            checks.append(check("gpu_count", name, "eq", data.get("gpu_count"), int(exp["gpu_count"]),
                                hint=HINT_GPU, message=msg))
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
                                hint=HINT_EFA, message=("under %s: %s" % (
                                    (data.get("params") or {}).get("infiniband_dir", "/sys/class/infiniband"),
                                    ", ".join(data.get("efa_devices") or []) or data.get("infiniband_error") or "none"))))
        if expect.get("storage"):
            storage = data.get("storage") or {}
            failed = [k for k, v in sorted((storage.get("steps") or {}).items()) if not (v or {}).get("ok")]
            checks.append(check("storage_rw", name, "true", bool(storage.get("ok")), True, hint=HINT_STORAGE,
                                message="write/read/delete on %s: %s" % (
                                    storage.get("path") or expect.get("storage_path", ""),
                                    storage.get("error") or ("failed steps: " + ", ".join(failed) if failed else "ok"))))
        checks.extend(_gpu_health.gpu_checks(name, data, exp))
        checks.extend(_gpu_health.dcgm_checks(name, data.get("dcgm")))
    checks.extend(_gpu_health.consistency_checks(probed, overrides))
    return checks


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
    if bench is not None and status == "ok" and (expect or {}).get("expect_tasks") is not None:
        checks.append(check("benchmark_tasks", node, "eq", bench.get("n_tasks"), int(expect["expect_tasks"]),
                            message="%s: %s" % (bench.get("name", ""), bench.get("error") or ""),
                            hint="the benchmark is missing tasks: check the dataset directory and version"))
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


def nccl_item(result, name, expect, instance_types=None):
    """A registered nccl_log_info result (possibly from a loop) as a level_assert `nccl` item; instance_types
    ({node: type}) gives the item its node's instance type (for the report's busbw limit, judges nothing)."""
    result = result or {}
    item = result.get("item")
    node = item.get("key", "") if isinstance(item, dict) else ""
    facts = None if (result.get("failed") or result.get("skipped")) else result
    item = {"name": name, "node": node, "facts": facts, "expect": dict(expect or {})}
    if (instance_types or {}).get(node):
        item["instance_type"] = str(instance_types[node])
    return item


# ----------------------------------------------------------------------------------------------- NCCL

# Signatures reported but not failing the level by default (socket_fallback and wrong_results are soft
# too when the network / wrong checks judge them).
NCCL_SOFT_SIGNATURES = ("nccl_warn",)
HINT_NCCL_LOG = ("the NCCL log could not be read or parsed: check the launcher pod name, the namespace and "
                 "that the job wrote its log before it was collected")
HINT_NETWORK_SOCKET = (
    "NCCL fell back to TCP sockets: the aws-ofi-nccl plugin did not load or found no EFA device. "
    "Request vpc.amazonaws.com/efa in the pod, set FI_PROVIDER=efa, check that the image ships "
    "aws-ofi-nccl (NCCL_DEBUG=INFO shows 'NET/OFI Selected provider is efa')"
)
HINT_NETWORK = ("NCCL chose another network than expected: check FI_PROVIDER, NCCL_NET, the EFA device plugin "
                "and the NCCL_DEBUG=INFO 'Using network ...' line")
HINT_NETWORK_MISSING = ("run with NCCL_DEBUG=INFO so the log has the 'Using network ...' / 'NET/OFI Selected "
                        "provider' lines")
HINT_BUSBW = ("busbw below the floor: check the network check above (socket fallback gives ~3 GB/s), EFA device "
              "count per pod, FI_EFA_USE_DEVICE_RDMA on RDMA-capable types only, and GPU clocks")
ONE_GPU_TEXT = "not measurable on one GPU (busbw is 0 by definition with a single rank)"


def _flag(value, default):
    try:
        return to_bool(value, "flag") if value is not None else default
    except VerdictError:
        return default


SWEEP_MAX_POINTS = 64  # a sweep doubling from 8 B to 16 GiB has 32 rows; bounds what report.json carries


def nccl_sweep(item):
    """The busbw sweep of one NCCL item for the report, or None when its log has no table with rows.

    From the table the checks judge (_nccl_results.last_table): {name, node, test, nranks, nnodes, instance_type,
    points [{size, busbw}] (bytes, GB/s), floors [{size, floor}]}; instance_type is the item's own (nccl_item's
    instance_types), else the transport expectation's (MPIJob on EFA, Phase 0), else None.
    """
    item = dict(_plain(item) or {})
    facts = item.get("facts")
    if not isinstance(facts, dict) or facts.get("failed") or facts.get("skipped"):
        return None
    expect = dict(item.get("expect") or {})
    table = _nccl_results.last_table(facts, expect.get("test") or None)
    if table is None:
        return None
    points = []
    for row in table["rows"]:
        size, busbw = row.get("size"), _nccl_results.row_busbw(row)
        if isinstance(size, (int, float)) and not isinstance(size, bool) and busbw is not None:
            points.append({"size": int(size), "busbw": float(busbw)})
    floors = []
    for floor_item in expect.get("min_busbw") or []:
        floor_item = dict(floor_item or {})
        try:
            floors.append({"size": parse_size(floor_item.get("size")), "floor": float(floor_item.get("floor"))})
        except (VerdictError, TypeError, ValueError):
            continue  # the busbw check already reports the bad floor
    transport = expect.get("transport") if isinstance(expect.get("transport"), dict) else {}
    return {"name": str(item.get("name") or "nccl"), "node": str(item.get("node") or ""),
            "test": table.get("test"), "nranks": _int(facts.get("nranks")), "nnodes": _int(facts.get("nnodes")),
            "instance_type": item.get("instance_type") or transport.get("instance_type") or None,
            "points": points[-SWEEP_MAX_POINTS:],
            "floors": floors}


def _nccl_network_check(name, node, facts, allowed, one_gpu):
    """<name>_network: the network NCCL used, in _nccl_network.NETWORKS' words, is one of the allowed ones."""
    allowed = [a for a in (_nccl_network.normalize_network(a) for a in allowed) if a]
    seen = _nccl_network.normalize_network(facts.get("network"), facts.get("ofi_provider"))
    raw = facts.get("network_raw") or facts.get("network")
    allowed_text = " or ".join(fmt_value(a) for a in allowed)
    if one_gpu and not seen:
        return check(name, node, "info", None, allowed, message="%s; network not used" % ONE_GPU_TEXT)
    if not seen:
        return check(name, node, "in", None, allowed, hint=HINT_NETWORK_MISSING, evidence_missing=True,
                     message="the log does not say which network NCCL used; expected %s" % allowed_text)
    if seen == "ofi" and "efa" in allowed:
        # aws-ofi-nccl is in use but the log does not name the libfabric provider: not a socket
        # fallback; a tcp provider would still fail the busbw floors
        return check(name, node, "info", seen, allowed,
                     message="NCCL used %s (aws-ofi-nccl); the log does not name the provider, efa assumed "
                             "(NCCL_DEBUG=INFO prints 'Selected provider is ...')" % fmt_value(raw))
    if "ofi" in allowed and (seen == "efa" or seen.startswith("ofi")):
        return check(name, node, "info", seen, allowed,
                     message="NCCL used %s through aws-ofi-nccl (expected any OFI provider)" % fmt_value(seen))
    hint = HINT_NETWORK_SOCKET if seen == "socket" else HINT_NETWORK
    said = "NCCL printed %s" % fmt_value(raw) if raw and str(raw) != seen else ""
    return check(name, node, "in", seen, allowed, hint=hint, message=said)


def nccl_checks(item):
    """The checks of one NCCL result: item {name, node, facts, expect} (see level_assert's ``nccl``).

    facts: a nccl_log_info result; expect: network, nranks, nnodes, require_complete, max_wrong,
    min_busbw [{size, floor, tolerance}], tolerance, test, forbid_signatures, single_rank_ok. Returns
    generic check specs for level_assert, named ``<name>_network``, ``<name>_busbw_1GiB``, ...
    """
    item = dict(_plain(item) or {})
    prefix = str(item.get("name") or "nccl")
    node = str(item.get("node") or "")
    facts = item.get("facts")
    expect = dict(item.get("expect") or {})
    checks = []

    def name(suffix):
        return "%s_%s" % (prefix, suffix)

    if not isinstance(facts, dict) or not facts or facts.get("failed") or facts.get("skipped"):
        why = "no parsed NCCL result"
        if isinstance(facts, dict) and facts.get("msg"):
            why = str(facts.get("msg"))
        elif isinstance(facts, dict) and facts.get("skipped"):
            why = "the parse task was skipped"
        return [check(name("log"), node, "true", None, True, message=why, hint=HINT_NCCL_LOG,
                      evidence_missing=True)]

    tolerance = expect.get("tolerance")
    test = expect.get("test") or None
    nranks = _int(facts.get("nranks"))
    single_rank = nranks == 1
    one_gpu = single_rank and _flag(expect.get("single_rank_ok"), False)

    network = expect.get("network")
    if network not in (None, "", []):
        checks.append(_nccl_network_check(name("network"), node, facts, as_list(network), one_gpu))

    if expect.get("nranks") not in (None, ""):
        checks.append(check(name("nranks"), node, "eq", facts.get("nranks"), expect.get("nranks"),
                            hint="not every GPU joined the job: compare -np with nodes x GPUs per node, and "
                                 "slotsPerWorker with the nvidia.com/gpu request"))
    if expect.get("nnodes") not in (None, ""):
        checks.append(check(name("nnodes"), node, "eq", facts.get("nnodes"), expect.get("nnodes"),
                            hint="the ranks did not spread over the expected nodes: check the worker replicas "
                                 "and pod anti-affinity / topology spread"))

    require_complete = _flag(expect.get("require_complete"), True)
    if require_complete and facts.get("complete") is None and not facts.get("tables"):
        checks.append(check(name("complete"), node, "true", False, True,
                            message="the log has no nccl-tests results table (the test did not start, or its "
                                    "output was not captured)",
                            hint="read the launcher log, not a worker's; set require_complete: false for logs "
                                 "that are not nccl-tests output"))
    elif require_complete:
        checks.append(check(name("complete"), node, "true", bool(facts.get("complete")), True,
                            message="the NCCL test did not finish (no 'Avg bus bandwidth' footer)",
                            hint="the job crashed, hung or was killed before the end; see the signature checks "
                                 "and the launcher log"))
    max_wrong = expect.get("max_wrong")
    if max_wrong in (None, ""):
        max_wrong = 0
    wrong = facts.get("wrong_total")
    if wrong is None:
        checks.append(check(name("wrong"), node, "info", None, max_wrong,
                            message="not checked by the test (run with -c 0 or no #wrong column)"))
    else:
        checks.append(check(name("wrong"), node, "le", wrong, max_wrong,
                            message="the NCCL test reported %s wrong results (data corruption)" % fmt_value(wrong),
                            hint="a GPU, NVLink or NIC corrupts data: rerun per node pair to isolate it and "
                                 "check XID errors (dmesg / nvidia-smi -q)"))

    transport = expect.get("transport")
    if isinstance(transport, dict) and transport and not one_gpu:
        checks.extend(_nccl_transport_checks(name, node, facts, transport))
    checks.extend(_nccl_busbw_checks(name, node, facts, expect, tolerance, test, single_rank, one_gpu))
    checks.extend(_nccl_signature_checks(name, node, facts, expect))
    return _with_isolate_hint(checks, expect.get("isolate_command"), prefix)


def _with_isolate_hint(checks, command, prefix):
    """A multi-node bandwidth, completeness or crash check names the command that finds the bad node
    (bad-node isolation, docs/isolation.md); the hint only shows when the check fails."""
    if not command:
        return checks
    marks = tuple("%s_%s" % (prefix, part) for part in ("busbw_", "complete", "signature_"))
    for spec in checks:
        if str(spec.get("name") or "").startswith(marks) and spec.get("op") != "info":
            spec["hint"] = ("%s; to find the node: %s" % (spec.get("hint") or "", " ".join(str(command).split()))
                            ).lstrip("; ")
    return checks


HINT_OFI_PROVIDER = ("aws-ofi-nccl did not select the efa libfabric provider: check that the pod has its EFA "
                     "devices (vpc.amazonaws.com/efa or a DRA ResourceClaim), that 'fi_info -p efa' lists them "
                     "and that FI_PROVIDER is efa")
HINT_EFA_NICS = ("the plugin found fewer EFA NICs than the node has: a device is down or was not given to the pod; "
                 "compare 'fi_info -p efa' and /sys/class/infiniband on that node with the instance type, check the "
                 "pod's EFA request, and replace the node when a device is missing")
HINT_OFI_PROTOCOL = ("aws-ofi-nccl uses another transport protocol than its AWS platform code sets for this "
                     "instance type: an OFI_NCCL_PROTOCOL override, or an aws-ofi-nccl built without "
                     "--enable-platform-aws; use the EFA installer's plugin")
HINT_GDRDMA = ("NET channels do not use GPUDirect RDMA on an instance type that requires it: check the "
               "efa_nv_peermem (or nvidia_peermem) module on the node, FI_EFA_USE_DEVICE_RDMA=1 and that the "
               "image's libfabric supports FI_HMEM for CUDA")
NOT_PRINTED = "not checked: the log does not say (%s)"


def _nccl_transport_checks(name, node, facts, transport):
    """Proof that the fabric is the one expected, beyond 'not Socket': provider, NICs found, protocol, GDRDMA.

    transport: provider (e.g. efa), nics (EFA devices per pod: the number aws-ofi-nccl must find on each
    host), protocol (RDMA or SENDRECV, what aws-ofi-nccl's AWS platform code sets for the type), gdrdma
    (true when the type requires GPUDirect RDMA), fabric (optional: efa or efa-direct), instance_type."""
    checks = []
    itype = transport.get("instance_type") or "the instance type"
    provider = transport.get("provider")
    if provider:
        seen = facts.get("ofi_provider")
        why = "the log has no 'NET/OFI Selected provider is ...' line"
        if facts.get("ofi_no_eligible_providers"):
            why += "; aws-ofi-nccl printed 'No eligible providers were found'"
        checks.append(check(name("ofi_provider"), node, "eq", seen, provider, hint=HINT_OFI_PROVIDER,
                            evidence_missing=seen is None, message=why if seen is None else ""))
    fabric = transport.get("fabric")
    if fabric:
        seen = facts.get("ofi_fabric")
        if seen is None:
            checks.append(check(name("ofi_fabric"), node, "info", None, fabric,
                                message=NOT_PRINTED % "aws-ofi-nccl 1.14+ prints 'fabric is ...'"))
        else:
            checks.append(check(name("ofi_fabric"), node, "in", seen, as_list(fabric), hint=HINT_OFI_PROVIDER))
    nics = _int(transport.get("nics"))
    if nics:
        by_host = facts.get("ofi_nics_by_host") or {}
        if by_host:
            for host in sorted(by_host):
                found = _int(by_host[host])
                checks.append(check(name("efa_nics"), host, "ge", found, nics, hint=HINT_EFA_NICS,
                                    message="aws-ofi-nccl on %s found %s of the %d EFA NICs of %s"
                                            % (host, found, nics, itype)))
        else:
            found = facts.get("ofi_nics")
            checks.append(check(name("efa_nics"), node, "ge", found, nics, hint=HINT_EFA_NICS,
                                evidence_missing=found is None,
                                message=("the log has no 'NET/OFI Selected provider ... (found N nics)' line"
                                         if found is None else
                                         "aws-ofi-nccl found %s of the %d EFA NICs of %s" % (found, nics, itype))))
    protocol = transport.get("protocol")
    if protocol:
        seen = facts.get("ofi_protocol")
        if seen is None:
            checks.append(check(name("ofi_protocol"), node, "info", None, protocol,
                                message=NOT_PRINTED % "aws-ofi-nccl prints 'Using transport protocol ...'"))
        else:
            checks.append(check(name("ofi_protocol"), node, "eq", seen, protocol, hint=HINT_OFI_PROTOCOL,
                                message="aws-ofi-nccl uses %s on %s" % (seen, itype)))
    if _flag(transport.get("gdrdma"), False):
        seen = facts.get("gdrdma")
        if seen is None:
            checks.append(check(name("gdrdma"), node, "info", None, True,
                                message=NOT_PRINTED % "no 'Channel ... via NET/...' line"))
        else:
            hosts = facts.get("hosts_without_gdrdma") or []
            checks.append(check(name("gdrdma"), node, "true", bool(seen), True, hint=HINT_GDRDMA,
                                message="NET channels without /GDRDMA on %s" % (", ".join(hosts) or "a host")))
    return checks


def _nccl_busbw_checks(name, node, facts, expect, tolerance, test, single_rank, one_gpu):
    checks = []
    for floor_item in expect.get("min_busbw") or []:
        floor_item = dict(floor_item or {})
        floor = floor_item.get("floor")
        tol = floor_item.get("tolerance") if floor_item.get("tolerance") not in (None, "") else tolerance
        try:
            size_bytes = parse_size(floor_item.get("size"))
        except VerdictError as exc:
            checks.append(check(name("busbw"), node, "true", False, True, unit="GB/s",
                                message="cannot check: %s" % exc, hint=CONFIG_HINT))
            continue
        label = name("busbw_" + format_size(size_bytes))
        if one_gpu:
            checks.append(check(label, node, "info", None, floor, unit="GB/s", message=ONE_GPU_TEXT))
            continue
        value = _nccl_results.busbw_at_size(facts, size_bytes, test)
        if value is None:
            largest = _nccl_results.largest_size(facts, test)
            seen = ("the largest size measured was %s" % format_size(largest)) if largest else "no result rows"
            checks.append(check(label, node, "ge", None, floor, unit="GB/s", evidence_missing=True,
                                message="no row for %s in the %sNCCL table; %s"
                                        % (format_size(size_bytes), (test + " ") if test else "", seen),
                                hint="run all_reduce_perf with -e %s or larger, and check that the job finished"
                                     % format_size(size_bytes).replace("iB", "")))
            continue
        hint = HINT_BUSBW
        if single_rank:
            hint = "one rank has no bus bandwidth: run with 2+ ranks, or set single_rank_ok"
        checks.append(check(label, node, "ge", value, floor, unit="GB/s", tolerance=tol, hint=hint))
    return checks


def _nccl_signature_checks(name, node, facts, expect):
    checks = []
    forbid = expect.get("forbid_signatures")
    signatures = [s for s in (facts.get("signatures") or []) if isinstance(s, dict)]
    soft = list(NCCL_SOFT_SIGNATURES)
    if expect.get("network") not in (None, "", []):
        soft.append("socket_fallback")  # judged by the network check, which knows what is allowed
    if facts.get("wrong_total") is not None:
        soft.append("wrong_results")  # judged by the wrong check against max_wrong
    forbidden = None if forbid is None else [str(x) for x in as_list(forbid)]
    counts = {}
    for sig in signatures:
        sig_id = str(sig.get("id") or "unknown")
        counts[sig_id] = counts.get(sig_id, 0) + 1
    done = set()
    for sig in signatures:
        sig_id = str(sig.get("id") or "unknown")
        if sig_id in done:
            continue
        done.add(sig_id)
        is_forbidden = (sig_id not in soft) if forbidden is None else ("all" in forbidden or sig_id in forbidden)
        line = str(sig.get("line") or "").strip()
        if len(line) > 240:
            line = line[:237] + "..."
        where = []
        if sig.get("line_no") is not None:
            where.append("line %s" % sig.get("line_no"))
        if counts[sig_id] > 1:
            where.append("%d occurrences" % counts[sig_id])
        where = (" (" + ", ".join(where) + ")") if where else ""
        sig_name = name("signature_" + sig_id)
        if is_forbidden:
            checks.append(check(sig_name, node, "not_contains", [sig_id], sig_id, hint=str(sig.get("hint") or ""),
                                message="the log has failure signature %s%s: %s" % (sig_id, where, line)))
        else:
            checks.append(check(sig_name, node, "info", line, sig_id,
                                message="seen, not forbidden%s: %s" % (where, line)))
    if not done:
        checks.append(check(name("signatures"), node, "info", [], [],
                            message="no known failure signature in the log"))
    return checks


def nccl_mpijob(nodes, name, image, floors, network, tolerance):
    """The nccl-tests MPIJob for these nodes and what its result must show, from their instance profile."""
    nodes = list(nodes or [])
    first = nodes[0] if nodes else {}
    itype = first.get("instance_type", "")
    prof = _profile(itype) or {}
    gpus = int(first.get("gpus") or prof.get("gpu_count") or 1)
    efa = int(first.get("efa") or 0)
    rdma = bool(prof.get("fi_efa_use_device_rdma") or prof.get("rdma_capable"))
    max_bytes = "16G" if rdma and (prof.get("max_message_bytes") or 0) >= (16 << 30) else "1G"
    floor = prof.get("busbw_floor") or {}
    if not floors and floor.get("floor_gbps"):
        floors = [{"size": floor.get("size_bytes") or floor.get("size"), "floor": floor["floor_gbps"]}]
    mpijob = {"name": name + "-nccl", "workers": len(nodes), "gpus_per_worker": gpus, "efa_per_worker": efa,
              "node_selector": {"node.kubernetes.io/instance-type": itype} if itype else {},
              "image": image, "rdma": rdma, "min_bytes": "8", "max_bytes": max_bytes}
    expect = {"network": list(network or (["efa"] if efa > 0 else [])), "nranks": len(nodes) * gpus,
              "min_busbw": list(floors or []), "tolerance": float(tolerance or 0.0), "require_complete": True}
    if efa > 0 and "efa" in [str(n).strip().lower() for n in expect["network"]]:
        # the transport proof: what aws-ofi-nccl must report on this type (docs/verdicts.md)
        expect["transport"] = {"instance_type": itype, "provider": "efa", "nics": efa,
                               "protocol": prof.get("ofi_protocol"), "gdrdma": bool(prof.get("gdr_required"))}
    return {"mpijob": mpijob, "expect": expect, "instance_type": itype}


def nccl_launcher(mpijob):
    """What the nccl-tests launcher runs, for the MPIJob (templates/mpijob.yml.j2) and the TrainJob
    (_trainjob.definition) alike: {np, env, args}. Open MPI's mpirun over np = workers x GPUs ranks, each
    rank through files/nccl_tests_json.sh (mounted at /opt/rlstack), every variable of env passed with -x.
    FI_EFA_USE_DEVICE_RDMA=1 only on RDMA-capable types: libfabric aborts with it on g5/g6."""
    job = dict(mpijob or {})
    np = int(job.get("workers") or 1) * int(job.get("gpus_per_worker") or 1)
    env = {"NCCL_DEBUG": "INFO", "FI_PROVIDER": "efa", "FI_EFA_FORK_SAFE": "1", "NCCL_NVLS_ENABLE": "0"}
    if job.get("rdma"):
        env["FI_EFA_USE_DEVICE_RDMA"] = "1"
    env.update({str(k): str(v) for k, v in (job.get("extra_env") or {}).items()})
    args = ["--allow-run-as-root", "--tag-output", "-np", str(np), "-bind-to", "none", "-map-by", "slot"]
    for key in env:
        args += ["-x", key]
    args += ["/bin/sh", "/opt/rlstack/nccl_tests_json.sh",
             "/opt/nccl-tests/build/" + str(job.get("test") or "all_reduce_perf"),
             "-b", str(job.get("min_bytes") or "8"), "-e", str(job.get("max_bytes") or "1G"),
             "-f", "2", "-g", "1", "-c", "1", "-n", str(job.get("iters") or 20)]
    return {"np": np, "env": env, "args": args}


def example_job(example, mode, nodes, image, deadline_s, simulator_env=None):
    """The Job (runner templates/job.yml.j2 `runner_job`) that runs one example for L5 (mode train) or
    L6 (mode eval): the framework contract's one-step or eval-only overrides plus the example's own,
    appended to the command or in the variable its launcher reads (_frameworks.launch), the
    simulator's environment, and all GPUs/EFA devices of a node by default."""
    example = dict(example or {})
    launched = _frameworks.launch(example.get("framework") or "custom", mode, example)
    first = (nodes or [{}])[0] if nodes else {}
    env = dict(simulator_env or {})
    env.update(example.get("env") or {})
    env.update(launched["env"])
    return {"name": "%s-%s" % (mode, example.get("name", "")), "example": example.get("name", ""),
            "image": example.get("image") or image, "command": launched["command"],
            "args": launched["args"], "env": env, "launched": launched,
            "gpus": example.get("gpus") if example.get("gpus") is not None else (first.get("gpus") or 1),
            "efa": example.get("efa") if example.get("efa") is not None else (first.get("efa") or 0),
            "node_selector": dict(example.get("node_selector") or {}),
            "nodes": int(example.get("nodes") or 1), "worker_command": example.get("worker_command"),
            "deadline_s": int(deadline_s)}


def host_job_result(result):
    """One registered run_example.py result (host transport) as jobs.yml's {state, log, log_error}."""
    result = result or {}
    stdout = (result.get("stdout") or "").strip()
    try:
        run = json.loads(stdout.splitlines()[-1]) if stdout else {}
    except ValueError:
        run = {}
    if not isinstance(run, dict) or not run:
        error = result.get("msg") or result.get("stderr") or "run_example.py printed no result"
        return {"state": {"settled": True, "complete": False, "failed": True, "pods": [], "problems": [],
                          "reason": "NotRun", "message": str(error)[:500]}, "log": "", "log_error": str(error)[:500]}
    rc = run.get("rc")
    if run.get("error"):
        reason, message = "NotRun", run["error"]
    elif run.get("timed_out"):
        reason, message = "DeadlineExceeded", "the command ran past its deadline and was stopped"
    elif run.get("stopped"):
        reason, message = "Stopped", "stopped %ss after the line that showed it" % run["stopped"].get("stopped_after_s")
    else:
        reason, message = ("", "") if rc == 0 else ("Error", "the command exited with %s" % rc)
    complete = rc == 0 and not run.get("timed_out") and not run.get("stopped")
    return {"state": {"settled": True, "complete": complete, "failed": not complete, "reason": reason,
                      "message": message, "problems": [],
                      "pods": [{"pod": "host", "exit_code": rc}] if rc is not None else []},
            "log": run.get("log") or "", "log_error": "", "duration_s": run.get("duration_s")}
