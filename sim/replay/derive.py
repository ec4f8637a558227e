"""Build the simulated nodes' replay data (probes/) from the outputs recorded on real H200s (recorded/).

Most replays are the recorded output as is. The L0 node probe is adapted per simulated instance type,
because no p5.48xlarge or g6.8xlarge was available to record: GPU count, name and memory come from the
instance profile (nvidia-smi's names), EFA devices are listed as the EFA driver names them, and the
storage path is /fsx; timings, driver, the storage steps and every other field are the H200's.
The failure variants (gpu-missing, efa-missing) change exactly one fact each. DERIVED.md lists it all.

The probe's `health` section is made by the probe's own parser (health_from_outputs in
roles/l0_infrastructure/files/probe_node.py) from real outputs: the recorded H200 `nvidia-smi -q -x`
(tests/unit/fixtures/recorded/h200x1/nvidia-smi-q.xml) with its <gpu> element repeated per simulated GPU,
and `nvidia-smi nvlink -s` of a real 8 x H100 (tests/unit/fixtures/nvidia-smi/, bottlerocket #4418) with
its GPU 0 block repeated per GPU. Each health fault variant edits one field of those outputs, on one GPU
(HEALTH_FAULTS; DERIVED.md).
Run again after recording: python3 sim/replay/derive.py
"""
import copy
import importlib.util
import json
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
REC = HERE / "recorded"
OUT = HERE / "probes"
ROOT = HERE.parents[1]
FIXTURES = ROOT / "tests" / "unit" / "fixtures"
SMI_XML = FIXTURES / "recorded" / "h200x1" / "nvidia-smi-q.xml"
NVLINK_H100 = FIXTURES / "nvidia-smi" / "nvlink-status-h100-bottlerocket-4418.txt"

NODE_TYPES = {  # nvidia-smi names and memory.total (MiB) as the instance profiles give them
    "p5.48xlarge": {"gpus": 8, "name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559, "efa": 32, "nvswitch": True},
    "g6.8xlarge": {"gpus": 1, "name": "NVIDIA L4", "memory_mib": 23034, "efa": 1, "nvswitch": False},
}
# A real p5's fabric, as NVML reports it on H100 HGX (leptonai/gpud #1151: "state":"Completed","status":"Success");
# the recording is a one-GPU VM where nvidia-smi prints N/A.
FABRIC_OK = {"state": "Completed", "status": "Success"}
# A real driver of an 8 x H100 box (NVIDIA/nccl #1264: "Driver Version: 550.54.15", fabric manager 550.54.15).
OTHER_DRIVER = "550.54.15"
# variant: (GPU index, edits of the nvidia-smi -q -x <gpu> element {path: text}, NVLink links set <inactive>,
#           driver of the whole node); every edit is one field of the real output.
HEALTH_FAULTS = {
    "row-remap-pending": (3, {"remapped_rows/remapped_row_pending": "Yes"}, [], None),
    "nvlink-down": (5, {}, [17], None),
    "pcie-degraded": (2, {"pci/pci_gpu_link_info/pcie_gen/current_link_gen": "3",
                          "pci/pci_gpu_link_info/link_widths/current_link_width": "8x"}, [], None),
    "ecc-uncorrectable": (6, {"ecc_errors/volatile/dram_uncorrectable": "2",
                              "ecc_errors/aggregate/dram_uncorrectable": "2"}, [], None),
    "driver-mismatch": (None, {}, [], OTHER_DRIVER),
}


def load_probe():
    path = ROOT / "roles" / "l0_infrastructure" / "files" / "probe_node.py"
    spec = importlib.util.spec_from_file_location("probe_node_for_derive", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def smi_xml(spec, gpus, fault=None):
    """The recorded H200 `nvidia-smi -q -x` with one <gpu> per simulated GPU (name, UUID, bus id per GPU)."""
    root = ET.fromstring(SMI_XML.read_text())
    template = root.find("gpu")
    root.remove(template)
    index, edits, _links, driver = fault or (None, {}, [], None)
    if driver:
        root.find("driver_version").text = driver
    root.find("attached_gpus").text = str(gpus)
    for i in range(gpus):
        gpu = copy.deepcopy(template)
        bus = "00000000:%02X:00.0" % (0x53 + 0x10 * i)
        gpu.set("id", bus)
        gpu.find("pci/pci_bus_id").text = bus
        gpu.find("product_name").text = spec["name"]
        gpu.find("uuid").text = sim_uuid(i)
        gpu.find("minor_number").text = str(i)
        if spec["nvswitch"]:
            for key, value in FABRIC_OK.items():
                gpu.find("fabric/" + key).text = value
        if driver:
            gpu.find("gsp_firmware_version").text = driver
        if i == index:
            for path, value in edits.items():
                gpu.find(path).text = value
        root.append(gpu)
    return ET.tostring(root, encoding="unicode")


def nvlink_status(spec, gpus, fault=None):
    """`nvidia-smi nvlink -s` of the real H100's GPU 0 block, once per GPU; None for a board without NVLink."""
    if not spec["nvswitch"]:
        return None
    lines = NVLINK_H100.read_text().splitlines()
    block = lines[1:lines.index(next(x for x in lines[1:] if x.startswith("GPU ")))]
    index, _edits, down, _driver = fault or (None, {}, [], None)
    out = []
    for i in range(gpus):
        out.append("GPU %d: %s (UUID: %s)" % (i, spec["name"], sim_uuid(i)))
        for line in block:
            link = int(line.split("Link ")[1].split(":")[0])
            out.append(line.split(":")[0] + ": <inactive>" if i == index and link in down else line)
    return "\n".join(out) + "\n"


def sim_uuid(i):
    return "GPU-%08x-sim0-0000-0000-%012x" % (i, i)


def health(probe, spec, gpus, fault=None):
    info = {"ok": True, "error": None, "rc": 0, "duration_s": 0.2}
    xml_info = dict(info, command=["nvidia-smi", "-q", "-x"])
    text = nvlink_status(spec, gpus, fault)
    if text is None:
        nvlink_info = dict(info, ok=False, rc=None, command=["nvidia-smi", "nvlink", "-s"],
                           error="not recorded: no NVLink on this instance type")
    else:
        nvlink_info = dict(info, command=["nvidia-smi", "nvlink", "-s"])
    out = probe.health_from_outputs(smi_xml(spec, gpus, fault), xml_info, text or "", nvlink_info)
    # What an unprivileged pod sees (no /dev/kmsg in the container), the recorded image's NCCL (versions.txt:
    # torch's NCCL 2.28.9) and no EFA sysfs versions (none were recorded).
    out["xid"] = {"visible": False, "source": "/dev/kmsg", "error": "/dev/kmsg: No such file or directory", "events": []}
    out["efa"] = {"driver_version": None, "firmware": {}, "firmware_versions": []}
    out["image"] = {"nccl": {"version": "2.28.9", "source": "recorded versions.txt (torch's NCCL)"},
                    "aws_ofi_nccl": {"version": None, "source": None}}
    return out


def split(path):
    text = path.read_text()
    lines = text.rstrip("\n").split("\n")
    return lines[:-1], json.loads(lines[-1])


def write(path, head, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(head + [json.dumps(data)]) + "\n")


def node_variant(base, spec, gpus=None, efa=None, probe=None, fault=None):
    data = copy.deepcopy(base)
    gpus = spec["gpus"] if gpus is None else gpus
    efa = spec["efa"] if efa is None else efa
    template = base["gpus"][0]
    data["gpus"] = [dict(template, index=i, name=spec["name"], memory_mib=spec["memory_mib"],
                         uuid="GPU-%08x-sim0-0000-0000-%012x" % (i, i),
                         pci_bus_id="00000000:%02X:00.0" % (0x53 + 0x10 * i)) for i in range(gpus)]
    data["gpu_count"] = gpus
    devices = ["rdmap%ds0" % (79 + i) for i in range(efa)]
    data["infiniband_devices"] = [{"name": d, "driver": "efa", "efa": True} for d in devices]
    data["efa_devices"] = devices
    data["efa_count"] = efa
    storage = data.get("storage") or {}
    recorded_path = storage.get("path") or ""
    for key in ("path", "file"):
        if storage.get(key):
            storage[key] = storage[key].replace(recorded_path, "/fsx")
    storage.update(fs_type="lustre", mount_point="/fsx")
    data["params"] = dict(data.get("params") or {}, storage_path="/fsx")
    if probe is not None:
        # parameters the recorded probe did not have yet, at the probe's defaults
        data["params"] = dict({k: v[0] for k, v in probe.SPEC.items()}, **data["params"])
        data["dcgm"] = None
        data["health"] = health(probe, spec, gpus, fault)
        driver = data["health"]["driver_version"]
        for gpu in data["gpus"]:
            gpu["driver_version"] = driver
        data["driver"], data["drivers"] = driver, [driver]
    return data


def main():
    head, node = split(REC / "h200x1" / "probe_node.out")
    probe = load_probe()
    for itype, spec in NODE_TYPES.items():
        write(OUT / "probe_node" / "healthy" / f"{itype}.out", head, node_variant(node, spec, probe=probe))
    p5 = NODE_TYPES["p5.48xlarge"]
    write(OUT / "probe_node" / "gpu-missing" / "p5.48xlarge.out", head, node_variant(node, p5, gpus=7, probe=probe))
    write(OUT / "probe_node" / "efa-missing" / "p5.48xlarge.out", head, node_variant(node, p5, efa=0, probe=probe))
    for variant, fault in HEALTH_FAULTS.items():
        write(OUT / "probe_node" / variant / "p5.48xlarge.out", head, node_variant(node, p5, probe=probe, fault=fault))

    verbatim = {
        ("probe_runtime", "healthy"): "h200x1/probe_runtime.out",
        ("probe_model", "healthy"): "h200x1/probe_model.out",
        ("probe_multigpu", "healthy"): "h200x2/probe_multigpu_torchrun_2gpu.out",
        ("probe_sim_import", "healthy"): "h200x1/probe_sim_import_ok.out",
        ("probe_sim_import", "sim-hang"): "h200x1/probe_sim_import_pipe.out",
    }
    for (probe, variant), rel in verbatim.items():
        dest = OUT / probe / variant / "default.out"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text((REC / rel).read_text())


if __name__ == "__main__":
    main()
