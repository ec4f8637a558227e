# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""L0 GPU health: the probe's `health` facts, node conditions and run-wide versions turned into checks.

Standard library only. The probe (roles/l0_infrastructure/files/probe_node.py) reads nvidia-smi and
reports; every threshold, severity and operator hint lives here, once (HEALTH_CHECKS), with its source.
Each function returns check dicts as plugins/module_utils/_checks.check builds them, plus ``severity``
("fail" or "warn": a failed warn check is reported, the level still passes). One check per node and
health item; ``actual`` lists the GPUs at fault ("GPU 3 00000000:53:00.0: ..."), empty when healthy.
docs/verdicts.md lists them all.
"""

from __future__ import annotations

SRC_SMI = "nvidia-smi -q -x (field in the recorded H200 output, tests/unit/fixtures/recorded/h200x1/nvidia-smi-q.xml)"
SRC_NMA = ("EKS node monitoring agent docs/node-health-issues.adoc (aws/eks-node-monitoring-agent): which GPU "
           "faults are a Condition (repair) and which an Event")
SRC_MEMERR = "NVIDIA GPU memory error management (row remapping: a pending remap needs a GPU reset; a failed remap means RMA)"
SRC_NVLINK = ("instance profile nvlink_per_gpu (plugins/module_utils/gpu/_profiles.py); link states from `nvidia-smi nvlink -s` "
              "(format: bottlerocket-os/bottlerocket#4418 (H100, 18 links up), Azure/azhpc-diagnostics#73 (<inactive>))")
SRC_AKT = "aws-k8s-tester GPU suites: GSP firmware version equal to the driver version"
SRC_FABRIC = ("NVIDIA/NVSentinel fabric_state_check (Completed + Success is healthy; Not Started / In Progress / other "
              "status is a fault); EKS node monitoring agent NvidiaFabricError")
SRC_DCGM = ("dcgmi diag -j (NVIDIA/DCGM: JSON keys nvvs/include/NvvsJsonStrings.h, shape testing/python3/"
            "dcgm_diag_schema.json, results Pass/Fail/Warn/Skip dcgmi/Diag.cpp, error categories and severities "
            "dcgmlib/dcgm_errors.h)")
SRC_PCIE = ("NVML/nvidia-smi: max_link_gen/max_link_width are what GPU and host both support (cuda.core PciInfo docs); "
            "current values may be lowered while the GPU is idle, so a lower generation is a warning; a narrower width "
            "is judged a link trained down (to confirm on an idle GPU: docs/hardware.md)")


def _health(severity, threshold, source, hint):
    return (severity, threshold, source, hint)


# name: (severity, threshold, source, hint). The one home of each health check's judgement (docs/verdicts.md).
HEALTH_CHECKS = {
    "gpu_health": _health(
        "fail",
        "nvidia-smi -q -x answers and prints XML",
        SRC_SMI,
        "nvidia-smi -q -x failed in the pod: run it by hand on the node; a driver that does not answer needs a reboot or a new instance"),
    "ecc_mode": _health(
        "warn",
        "ECC Enabled on every GPU",
        SRC_SMI,
        "ECC is off, so memory errors go unnoticed: `nvidia-smi -e 1` and reset the GPU"),
    "ecc_uncorrectable_volatile": _health(
        "fail",
        "0 uncorrectable (DRAM + SRAM) errors since the last reset",
        SRC_NMA + " (NvidiaDoubleBitError: Condition); threshold 0",
        "uncorrectable memory errors since the last reset: drain the node, reset the GPU (`nvidia-smi -r`); if they come back, replace the instance"),
    "ecc_uncorrectable_aggregate": _health(
        "warn",
        "0 uncorrectable errors in the GPU's life",
        SRC_SMI + "; lifetime counter, threshold 0",
        "this GPU had uncorrectable errors in its life: watch it, replace it if the volatile count or remapping failures follow"),
    "sram_threshold_exceeded": _health(
        "fail",
        "No",
        SRC_SMI,
        "the GPU's SRAM error count passed its threshold: replace the instance"),
    "remapped_rows_pending": _health(
        "fail",
        "No row remap pending",
        SRC_MEMERR,
        "a row remap is waiting for a GPU reset: drain the node and reset the GPU (`nvidia-smi -r`) or reboot it before training"),
    "remapped_rows_failure": _health(
        "fail",
        "No row remap failure",
        SRC_MEMERR,
        "row remapping failed (no spare rows left): replace the instance"),
    "retired_pages_pending": _health(
        "fail",
        "No page retirement pending (GPUs that retire pages)",
        SRC_MEMERR + " (page retirement, pre-A100)",
        "a page retirement waits for a reset: drain the node and reset the GPU"),
    "memory_repair": _health(
        "fail",
        "No channel/TPC repair pending, no unrepairable memory",
        SRC_SMI + " (channel/TPC repair pending, unrepairable memory)",
        "pending repair: reset the GPU; unrepairable memory: replace the instance"),
    "recovery_action": _health(
        "fail",
        "gpu_recovery_action None",
        SRC_SMI + " (gpu_recovery_action; 'None' when healthy)",
        "the driver asks for the action shown (GPU reset, node reboot, drain): do it before training"),
    "gsp_firmware": _health(
        "fail",
        "GSP firmware version == driver version",
        SRC_AKT,
        "the GSP firmware does not match the driver: reinstall the driver or use the node group's matching AMI"),
    "nvlink_links": _health(
        "fail",
        "active NVLinks per GPU >= profile nvlink_per_gpu (18 on p5/p5e/p5en/p6, 12 on p4d/p4de)",
        SRC_NVLINK,
        "NVLinks are down: reset the GPUs and restart nvidia-fabricmanager; if a link stays down, replace the instance (NCCL falls back to slower paths)"),
    "fabric_manager": _health(
        "fail",
        "fabric state Completed, status Success (profile nvswitch: true)",
        SRC_FABRIC,
        "the NVSwitch fabric is not up: check nvidia-fabricmanager (its version must equal the driver's) and restart it; replace the instance if it "
        "persists"),
    "pcie_width": _health(
        "fail",
        "current link width == max link width",
        SRC_PCIE,
        "the GPU's PCIe link runs narrower than it can: stop and start the instance (a new host), or replace it"),
    "pcie_gen": _health(
        "warn",
        "current link generation == max link generation",
        SRC_PCIE,
        "the PCIe link runs below its maximum generation: normal at idle, a fault under load; re-check with the GPU busy, replace the instance if it "
        "stays low"),
    "pcie_max": _health(
        "fail",
        "max link gen/width >= profile pcie_gen/pcie_width (Gen5 x16 on H100/H200/B200, Gen4 x16 on A100)",
        "instance profile pcie_gen / pcie_width (plugins/module_utils/gpu/_profiles.py)",
        "the GPU or host cannot reach the PCIe generation/width this instance type has: replace the instance"),
    "pcie_replays": _health(
        "warn",
        "0 PCIe replays",
        SRC_NMA + " (NvidiaPCIeError: Event)",
        "PCIe replays recovered transmission errors: watch the counter, replace the instance if it grows"),
    "persistence_mode": _health(
        "warn",
        "Enabled",
        SRC_SMI,
        "persistence mode is off: the driver re-initialises per process (slow starts); enable nvidia-persistenced on the node"),
    "clocks_hw_slowdown": _health(
        "fail",
        "hw_slowdown and hw_power_brake_slowdown Not Active",
        SRC_SMI + " (clocks_event_reasons hw_slowdown, hw_power_brake_slowdown)",
        "hardware slowdown or power brake is active: a power supply or board fault; drain the node and replace the instance"),
    "clocks_thermal": _health(
        "warn",
        "hw_thermal_slowdown and sw_thermal_slowdown Not Active",
        SRC_SMI + "; EKS node monitoring agent docs/node-health-issues.adoc (aws/eks-node-monitoring-agent): which GPU faults are a Condition (repair) "
                  "and which an Event (NvidiaThermalError: Event)",
        "the GPU throttles for heat: check its temperature under load; replace if it persists"),
    "temperature": _health(
        "warn",
        "below the GPU's own slowdown threshold (or T.Limit margin above its slowdown margin)",
        SRC_SMI + " (gpu_temp against the GPU's own slowdown threshold / T.Limit margin)",
        "the GPU is at its slowdown temperature while the check runs: check cooling, replace if it persists"),
    "xid": _health(
        "fail",
        "no XID of FATAL_XIDS in the kernel log (when the pod can read it)",
        SRC_NMA + " (NvidiaXID[Code]Error: Condition)",
        "the kernel log shows GPU errors (XID): drain the node and replace it for the codes named"),
    "dcgm_diag": _health(
        "fail",
        "no DCGM test result Fail",
        SRC_DCGM,
        "a DCGM diagnostic test failed on the GPU named (see the DCGM error): drain the node; category Hardware: replace the instance, severity Reset: "
        "reset the GPU"),
    "dcgm_diag_warnings": _health(
        "warn",
        "no DCGM test result Warn",
        SRC_DCGM,
        "DCGM warns about the GPU named: read the warning; re-run the level"),
    "dcgm_unavailable": _health(
        "fail",
        "dcgmi ran and printed its JSON",
        SRC_DCGM,
        "the DCGM diagnostic was asked for but could not run: dcgmi must be in the image and reach a host engine (l0_infrastructure_dcgm_host, e.g. "
        "'$HOST_IP' with the GPU Operator's nvidia-dcgm on port 5555)"),
    "health_unmeasured": _health(
        "warn",
        "every item above readable",
        SRC_SMI,
        "these health items could not be read on this node (N/A, no permission): check them by hand before trusting the node"),
    "driver_consistent": _health(
        "fail",
        "== l0_infrastructure_expected.driver_version, else the strict majority of the run's nodes",
        "one driver per run (a mixed fleet gives NCCL and CUDA failures that look random)",
        "the node runs another driver than the others: move it to the node group's AMI"),
    "cuda_consistent": _health(
        "fail",
        "== l0_infrastructure_expected.cuda_version, else the majority",
        "as driver_consistent",
        "the node's CUDA driver version differs: use the same AMI"),
    "vbios_consistent": _health(
        "warn",
        "== the majority of the nodes of the same instance type",
        "one VBIOS per GPU model and run",
        "the GPU firmware differs from the other nodes: ask for a firmware update or replace the instance"),
    "efa_driver_consistent": _health(
        "fail",
        "== the majority",
        "one EFA driver per run",
        "install the same EFA driver (AMI) on every node"),
    "efa_firmware_consistent": _health(
        "warn",
        "== the majority",
        "one EFA firmware per run",
        "the EFA firmware differs: replace the instance"),
    "nccl_consistent": _health(
        "fail",
        "== the majority",
        "one image per run",
        "the node runs another image's NCCL: pin the image by digest"),
    "aws_ofi_nccl_consistent": _health(
        "fail",
        "== the majority",
        "one image per run",
        "the node runs another aws-ofi-nccl: pin the image by digest"),
    "accelerated_hardware_ready": _health(
        "fail",
        "condition status True (when the condition exists)",
        SRC_NMA + " (condition AcceleratedHardwareReady)",
        "the EKS node monitoring agent found a GPU fault (reason above); node auto repair reboots or replaces it: drain it and let repair run"),
    "gpu_problem_conditions": _health(
        "fail",
        "no GPU/XID/NVLink/DCGM-named condition with status True",
        "node-problem-detector convention: a problem condition is True while the problem lasts (NVSentinel and NPD GPU monitors)",
        "a GPU health monitor reports a problem on this node: read the condition, drain the node"),
    "gpu_operator_labels": _health(
        "fail",
        "nvidia.com/gpu-driver-upgrade-state != upgrade-failed, nvidia.com/mig.config.state != failed",
        "NVIDIA GPU Operator node labels (nvidia.com/gpu-driver-upgrade-state, nvidia.com/mig.config.state)",
        "the GPU Operator failed on this node (driver upgrade or MIG config): read its pod logs"),
}

# XIDs that set AcceleratedHardwareReady=False (repair): WellKnownXidCodes of the EKS node monitoring agent,
# monitors/nvidia/dcgm/dcgm_policies.go (aws/eks-node-monitoring-agent, 2026 version); any other XID is a
# warning there and here (13, 31, 43 usually come from the application).
FATAL_XIDS = (46, 48, 54, 62, 63, 64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 142, 143, 151, 155, 156, 158)
THERMAL_REASONS = ("hw_thermal_slowdown", "sw_thermal_slowdown")
HW_REASONS = ("hw_slowdown", "hw_power_brake_slowdown")
OPERATOR_BAD_LABELS = {"nvidia.com/gpu-driver-upgrade-state": ("upgrade-failed",),
                       "nvidia.com/mig.config.state": ("failed",)}
READY_CONDITIONS = ("AcceleratedHardwareReady",)
CONSISTENCY = (  # (check, what, per-node value from the probe data, grouped by instance type)
    ("driver_consistent", "driver", lambda d: (d.get("health") or {}).get("driver_version") or d.get("driver"), False),
    ("cuda_consistent", "CUDA driver version", lambda d: (d.get("health") or {}).get("cuda_version"), False),
    ("vbios_consistent", "VBIOS", lambda d: _joined(g.get("vbios_version") for g in (d.get("health") or {}).get("gpus") or []), True),
    ("efa_driver_consistent", "EFA driver", lambda d: ((d.get("health") or {}).get("efa") or {}).get("driver_version"), False),
    ("efa_firmware_consistent", "EFA firmware",
     lambda d: _joined(((d.get("health") or {}).get("efa") or {}).get("firmware_versions") or []), True),
    ("nccl_consistent", "NCCL", lambda d: (((d.get("health") or {}).get("image") or {}).get("nccl") or {}).get("version"), False),
    ("aws_ofi_nccl_consistent", "aws-ofi-nccl",
     lambda d: (((d.get("health") or {}).get("image") or {}).get("aws_ofi_nccl") or {}).get("version"), False),
)
PIN_KEYS = {"driver_consistent": "driver_version", "cuda_consistent": "cuda_version"}


def _joined(values):
    values = sorted({v for v in values if v})
    return ", ".join(values) or None


def _check(name, node, bad, message="", op="eq", actual=None, expected=None, evidence_missing=False):
    severity, _threshold, _source, hint = HEALTH_CHECKS[name]
    out = {"name": name, "node": node or "", "op": op,
           "actual": list(bad) if actual is None and not evidence_missing else actual,
           "expected": [] if expected is None and op == "eq" else expected, "hint": hint, "fail_msg": message,
           "unit": "", "evidence_missing": bool(evidence_missing), "severity": severity}
    return out


def _gpu_label(gpu):
    return "GPU %s %s" % (gpu.get("index"), gpu.get("pci_bus_id") or "")


def _scan(gpus, test, unread):
    """[label: detail] for each GPU where test(gpu) gives a detail; test returns None (fine) or a string.
    A GPU whose fields are all unreadable for this item (test raises KeyError) counts in unread."""
    bad, read = [], 0
    for gpu in gpus:
        try:
            detail = test(gpu)
        except KeyError:
            continue
        read += 1
        if detail:
            bad.append("%s: %s" % (_gpu_label(gpu), detail))
    if not read:
        unread.append(True)
    return bad


def _need(gpu, *keys):
    values = [gpu.get(k) for k in keys]
    if all(v is None for v in values):
        raise KeyError(keys[0])
    return values


def gpu_checks(node, data, profile):
    """Per-GPU health of one node: data is its probe JSON, profile its instance profile (or {})."""
    profile = profile or {}
    health = (data or {}).get("health")
    if not health:
        return []
    xml = health.get("xml") or {}
    if not xml.get("ok"):
        return [_check("gpu_health", node, [], evidence_missing=True,
                       message="nvidia-smi -q -x: %s" % (xml.get("error") or "no result"))]
    gpus = health.get("gpus") or []
    checks, unmeasured = [], []

    def item(name, test):
        unread = []
        bad = _scan(gpus, test, unread)
        if unread:
            unmeasured.append(name)
            return
        checks.append(_check(name, node, bad))

    def flag(*keys):
        def test(gpu):
            values = _need(gpu, *keys)
            hits = [k for k, v in zip(keys, values) if v]
            return ", ".join(hits) if hits else None
        return test

    def count(key, what):
        def test(gpu):
            (value,) = _need(gpu, key)
            return "%s %s" % (value, what) if value else None
        return test

    item("ecc_mode", lambda g: None if (_need(g, "ecc_mode")[0] or "").lower() == "enabled" else "ECC %s" % g["ecc_mode"])
    item("ecc_uncorrectable_volatile", count("ecc_volatile_uncorrectable", "uncorrectable ECC errors since reset"))
    item("ecc_uncorrectable_aggregate", count("ecc_aggregate_uncorrectable", "uncorrectable ECC errors (lifetime)"))
    item("sram_threshold_exceeded", flag("sram_threshold_exceeded"))
    item("remapped_rows_pending", flag("remapped_rows_pending"))
    item("remapped_rows_failure", flag("remapped_rows_failure"))
    if any(g.get("retired_pages_pending") is not None for g in gpus):
        item("retired_pages_pending", flag("retired_pages_pending"))
    item("memory_repair", flag("channel_repair_pending", "tpc_repair_pending", "unrepairable_memory"))
    item("recovery_action", lambda g: None if (_need(g, "recovery_action")[0] or "").lower() == "none"
         else "driver asks for: %s" % g["recovery_action"])
    driver = health.get("driver_version")
    item("gsp_firmware", lambda g: None if _need(g, "gsp_firmware_version")[0] == driver or not driver
         else "GSP firmware %s, driver %s" % (g["gsp_firmware_version"], driver))
    links_expected = profile.get("nvlink_per_gpu")
    if links_expected:
        item("nvlink_links", lambda g: _nvlink(g, int(links_expected)))
        if profile.get("nvswitch"):
            item("fabric_manager", _fabric)
    item("pcie_width", lambda g: None if _need(g, "pcie_width_current")[0] >= (g.get("pcie_width_max") or 0)
         else "x%s of x%s" % (g["pcie_width_current"], g["pcie_width_max"]))
    item("pcie_gen", lambda g: None if _need(g, "pcie_gen_current")[0] >= (g.get("pcie_gen_max") or 0)
         else "Gen%s of Gen%s (%s)" % (g["pcie_gen_current"], g["pcie_gen_max"], g.get("performance_state") or "?"))
    if profile.get("pcie_gen") or profile.get("pcie_width"):
        item("pcie_max", lambda g: _pcie_max(g, profile))
    item("pcie_replays", count("pcie_replays", "PCIe replays"))
    item("persistence_mode", lambda g: None if (_need(g, "persistence_mode")[0] or "").lower() == "enabled"
         else "persistence mode %s" % g["persistence_mode"])
    item("clocks_hw_slowdown", lambda g: _reasons(g, HW_REASONS))
    item("clocks_thermal", lambda g: _reasons(g, THERMAL_REASONS))
    item("temperature", _temperature)
    checks.extend(_xid_checks(node, health.get("xid"), gpus, unmeasured))
    if unmeasured:
        checks.append(_check("health_unmeasured", node, unmeasured,
                             message="not reported on this node: %s" % ", ".join(unmeasured)))
    return checks


def _nvlink(gpu, expected):
    links = gpu.get("nvlinks")
    if links is None:
        raise KeyError("nvlinks")
    if links.get("active", 0) >= expected:
        return None
    down = links.get("inactive") or []
    return "%s of %s NVLinks up%s" % (links.get("active", 0), expected,
                                      " (down: %s)" % ", ".join(str(x) for x in down) if down else "")


def _fabric(gpu):
    state, status = _need(gpu, "fabric_state", "fabric_status")
    if state is None or state.lower() in ("not supported",):
        raise KeyError("fabric_state")
    if state == "Completed" and status == "Success":
        return None
    return "fabric state %s, status %s" % (state, status)


def _pcie_max(gpu, profile):
    gen, width = _need(gpu, "pcie_gen_max", "pcie_width_max")
    want_gen, want_width = profile.get("pcie_gen"), profile.get("pcie_width")
    bad = []
    if want_gen and gen is not None and gen < want_gen:
        bad.append("max Gen%s, instance type has Gen%s" % (gen, want_gen))
    if want_width and width is not None and width < want_width:
        bad.append("max x%s, instance type has x%s" % (width, want_width))
    return "; ".join(bad) or None


def _reasons(gpu, names):
    (active,) = _need(gpu, "clock_events_active")
    hits = [r for r in active or [] if r in names]
    return "clock event %s active" % ", ".join(hits) if hits else None


def _temperature(gpu):
    temp, slow, margin, slow_margin = _need(
        gpu, "temperature_c", "temperature_slowdown_c", "temperature_tlimit_margin_c", "temperature_slowdown_tlimit_c")
    if slow is not None and temp is not None and temp >= slow:
        return "%s C, slowdown at %s C" % (temp, slow)
    if margin is not None and slow_margin is not None and margin <= slow_margin:
        return "%s C below T.Limit, slowdown at %s C" % (margin, slow_margin)
    if temp is None and margin is None:
        raise KeyError("temperature_c")
    return None


def _xid_checks(node, xid, gpus, unmeasured):
    xid = xid or {}
    if not xid.get("visible"):
        unmeasured.append("xid (%s)" % (xid.get("error") or "kernel log not readable"))
        return []
    by_pci = {}
    for gpu in gpus:
        bus = (gpu.get("pci_bus_id") or "").lower()
        by_pci[bus[4:] if bus.startswith("0000") and len(bus) > 12 else bus] = gpu
    fatal, other = [], []
    for event in xid.get("events") or []:
        gpu = next((g for key, g in by_pci.items() if key.startswith(event.get("pci", "")[:12])), None)
        where = _gpu_label(gpu) if gpu else "PCI %s" % event.get("pci")
        text = "%s: XID %s %s" % (where, event.get("xid"), event.get("text") or "")
        (fatal if event.get("xid") in FATAL_XIDS else other).append(text.strip())
    out = [_check("xid", node, fatal)]
    if other:
        warn = _check("xid", node, other, message="XIDs that usually come from the application")
        warn["severity"] = "warn"
        warn["name"] = "xid_other"
        out.append(warn)
    return out


# -- run-wide consistency --------------------------------------------------------------------------

def consistency_checks(nodes, pins=None):
    """nodes: [(node name, instance type, probe data)] of the run. A value that differs from the pinned one
    (pins: driver_version, cuda_version), or from the strict majority, fails on that node with the majority
    value beside it; a split without a majority fails on every node and says so."""
    pins = pins or {}
    checks = []
    for name, what, getter, by_type in CONSISTENCY:
        values = {}
        for node, itype, data in nodes:
            value = getter(data or {}) if (data or {}).get("health") else None
            if value is not None:
                values[node] = (itype if by_type else "", value)
        groups = {}
        for node, (group, value) in values.items():
            groups.setdefault(group, {})[node] = value
        for group, members in sorted(groups.items()):
            pinned = pins.get(PIN_KEYS.get(name, ""))
            counts = {}
            for value in members.values():
                counts[value] = counts.get(value, 0) + 1
            ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            if pinned:
                reference, why = str(pinned), "the inventory pins %s" % pinned
            elif len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
                reference, why = ranked[0][0], "%s of %s nodes have %s" % (ranked[0][1], len(members), ranked[0][0])
            else:
                reference = None
                why = "no majority: " + "; ".join(
                    "%s on %s" % (value, ", ".join(sorted(n for n, x in members.items() if x == value)))
                    for value, _count in ranked)
            for node in sorted(members):
                seen = members[node]
                ok = reference is not None and seen == reference
                checks.append(_check(name, node, [] if ok else ["%s %s" % (what, seen)],
                                     message="%s %s; %s%s" % (what, seen, why,
                                                              " (set l0_infrastructure_expected.%s to say which is "
                                                              "right)" % PIN_KEYS[name] if reference is None and name in PIN_KEYS else "")))
    return checks


# -- node conditions, taints, labels -----------------------------------------------------------------

def condition_checks(node_obj):
    """AcceleratedHardwareReady, NPD-style GPU problem conditions and GPU Operator failure labels of one Node."""
    meta = node_obj.get("metadata") or {}
    name = meta.get("name", "")
    labels = meta.get("labels") or {}
    conditions = (node_obj.get("status") or {}).get("conditions") or []
    taints = ["%s=%s:%s" % (t.get("key"), t.get("value", ""), t.get("effect")) for t in (node_obj.get("spec") or {}).get("taints") or []]
    checks = []
    for cond in conditions:
        ctype = cond.get("type") or ""
        detail = "%s=%s %s: %s" % (ctype, cond.get("status"), cond.get("reason") or "", cond.get("message") or "")
        if ctype in READY_CONDITIONS:
            bad = [] if cond.get("status") == "True" else [detail.strip()]
            checks.append(_check("accelerated_hardware_ready", name, bad,
                                 message="%s (taints: %s)" % (detail.strip(), ", ".join(taints) or "none")))
    problems = ["%s=%s %s: %s" % (c.get("type"), c.get("status"), c.get("reason") or "", c.get("message") or "")
                for c in conditions if _gpu_problem(c)]
    if any(_gpu_problem(c, any_status=True) for c in conditions):
        checks.append(_check("gpu_problem_conditions", name, [p.strip() for p in problems]))
    bad_labels = ["%s=%s" % (k, labels[k]) for k, bad in sorted(OPERATOR_BAD_LABELS.items()) if labels.get(k) in bad]
    if any(k in labels for k in OPERATOR_BAD_LABELS):
        checks.append(_check("gpu_operator_labels", name, bad_labels))
    return checks


def _gpu_problem(cond, any_status=False):
    ctype = cond.get("type") or ""
    if ctype in READY_CONDITIONS or ctype in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"):
        return False
    looks_gpu = "gpu" in ctype.lower() or ctype.lower().startswith(("nvidia", "xid", "nvlink", "dcgm"))
    return looks_gpu and (any_status or cond.get("status") == "True")


# -- opt-in DCGM diagnostic ---------------------------------------------------------------------------
# dcgmErrorCategory_t and dcgmErrorSeverity_t of NVIDIA/DCGM dcgmlib/dcgm_errors.h
DCGM_CATEGORIES = {0: "none", 1: "performance threshold", 2: "performance violation", 3: "software config",
                   4: "software library", 5: "software XID", 6: "software CUDA", 7: "software EUD",
                   8: "software other", 9: "hardware thermal", 10: "hardware memory", 11: "hardware NVLink",
                   12: "hardware NVSwitch", 13: "hardware PCIe", 14: "hardware power", 15: "hardware other",
                   16: "internal other"}
DCGM_SEVERITIES = {0: "none", 1: "monitor", 2: "isolate", 3: "unknown", 4: "triage", 5: "config", 6: "reset"}
# Upper bounds of `dcgmi diag -r N` on one 8-GPU node, with margin: the DCGM user guide's run levels are
# quick (level 1, under a minute), medium (level 2, a few minutes) and long (level 3, about 15-30 minutes);
# not re-verified on hardware in this project (docs/hardware.md).
DCGM_LEVEL_BOUNDS_S = {1: 300, 2: 900, 3: 2700}


def dcgm_plan(level, gpus=0):
    """{level, bound_s, gpu_minutes, notice} for the DCGM diagnostic on `gpus` GPUs; level 0: off."""
    level = int(level or 0)
    if level == 0:
        return {"level": 0, "bound_s": 0, "gpu_minutes": 0, "notice": ""}
    if level not in DCGM_LEVEL_BOUNDS_S:
        raise ValueError("l0_infrastructure_dcgm_level must be 0, 1, 2 or 3, not %s" % level)
    bound = DCGM_LEVEL_BOUNDS_S[level]
    minutes = int(gpus) * bound // 60
    notice = "DCGM diagnostic level %s runs on every GPU node, up to %s min per node%s" % (
        level, bound // 60, ": %s GPUs, at most %s GPU-minutes" % (gpus, minutes) if gpus else "")
    if level == 3:
        notice += ("; level 3 stresses and holds every GPU for the whole time (nothing else can run there), "
                   "press Ctrl-C now to stop")
    return {"level": level, "bound_s": bound, "gpu_minutes": minutes, "notice": notice}


def dcgm_checks(node, dcgm):
    """The probe's `dcgm` result (None when not asked for) as checks: one per node for failures, one for warnings."""
    if not dcgm:
        return []
    results = dcgm.get("results") or []
    if dcgm.get("error") or (not results and not dcgm.get("runtime_error")):
        return [_check("dcgm_unavailable", node, [], evidence_missing=True,
                       message=dcgm.get("error") or "dcgmi diag printed no result")]
    failed, warned, skipped = [], [], []
    if dcgm.get("runtime_error"):
        failed.append("DCGM runtime error: %s" % dcgm["runtime_error"])
    for res in results:
        status = (res.get("status") or "").lower()
        where = "%s %s" % (res.get("entity_group") or "GPU", res.get("entity_id"))
        text = "%s %s (%s): %s" % (where, res.get("test"), res.get("category"), res.get("status"))
        details = ["DCGM error %s, %s, severity %s: %s" % (
            w.get("error_id"), DCGM_CATEGORIES.get(w.get("error_category"), w.get("error_category")),
            DCGM_SEVERITIES.get(w.get("error_severity"), w.get("error_severity")), (w.get("warning") or "").strip())
            for w in res.get("warnings") or []]
        text += " - " + "; ".join(details) if details else ""
        if status == "fail":
            failed.append(text)
        elif status == "warn":
            warned.append(text)
        elif status == "skip":
            skipped.append("%s %s" % (where, res.get("test")))
    tail = "level %s, DCGM %s, %s results" % (dcgm.get("level"), dcgm.get("version") or "?", len(results))
    if skipped:
        tail += "; skipped: %s" % ", ".join(sorted(set(skipped))[:10])
    return [_check("dcgm_diag", node, failed, message=tail), _check("dcgm_diag_warnings", node, warned, message=tail)]


def describe():
    """[{name, severity, threshold, source, hint}] for the docs and the tests."""
    return [{"name": k, "severity": v[0], "threshold": v[1], "source": v[2], "hint": v[3]}
            for k, v in sorted(HEALTH_CHECKS.items())]
