"""Build the simulated nodes' replay data (probes/) from the outputs recorded on real H200s (recorded/).

Most replays are the recorded output as is. The L0 node probe is adapted per simulated instance type,
because no p5.48xlarge or g6.8xlarge was available to record: GPU count, name and memory come from the
instance profile (nvidia-smi's names), EFA devices are listed as the EFA driver names them, and the
storage path is /fsx; timings, driver, the storage steps and every other field are the H200's.
The failure variants (gpu-missing, efa-missing) change exactly one fact each. DERIVED.md lists it all.
Run again after recording: python3 sim/replay/derive.py
"""
import copy
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
REC = HERE / "recorded"
OUT = HERE / "probes"

NODE_TYPES = {  # nvidia-smi names and memory.total (MiB) as the instance profiles give them
    "p5.48xlarge": {"gpus": 8, "name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559, "efa": 32},
    "g6.8xlarge": {"gpus": 1, "name": "NVIDIA L4", "memory_mib": 23034, "efa": 1},
}


def split(path):
    text = path.read_text()
    lines = text.rstrip("\n").split("\n")
    return lines[:-1], json.loads(lines[-1])


def write(path, head, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(head + [json.dumps(data)]) + "\n")


def node_variant(base, spec, gpus=None, efa=None):
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
    return data


def main():
    head, node = split(REC / "h200x1" / "probe_node.out")
    for itype, spec in NODE_TYPES.items():
        write(OUT / "probe_node" / "healthy" / f"{itype}.out", head, node_variant(node, spec))
    p5 = NODE_TYPES["p5.48xlarge"]
    write(OUT / "probe_node" / "gpu-missing" / "p5.48xlarge.out", head, node_variant(node, p5, gpus=7))
    write(OUT / "probe_node" / "efa-missing" / "p5.48xlarge.out", head, node_variant(node, p5, efa=0))

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
