"""L0 probe_node: nvidia-smi CSV parsing, EFA listing, storage check."""
import os

import pytest

from probe_helpers import SHARED_RECORDED, load_probe, run_probe

node = load_probe("node")

H200 = "0, NVIDIA H200, 143771, GPU-8892012e-03ab-4aca-2bdb-06bf4855a831, 00000000:00:06.0, 580.159.04"


def fake_smi(tmp_path, body, name="nvidia-smi"):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_parse_one_h200_line():
    gpus, unparsed = node.parse_nvidia_smi_csv(H200 + "\n")
    assert unparsed == []
    assert gpus == [{"index": 0, "name": "NVIDIA H200", "memory_mib": 143771,
                     "uuid": "GPU-8892012e-03ab-4aca-2bdb-06bf4855a831",
                     "pci_bus_id": "00000000:00:06.0", "driver_version": "580.159.04"}]


def test_parse_recorded_csv_with_header_and_units():
    path = os.path.join(SHARED_RECORDED, "h200x2", "nvidia-smi-query.csv")
    if not os.path.exists(path):
        pytest.skip("shared fixtures not present")
    gpus, unparsed = node.parse_nvidia_smi_csv(open(path).read())
    assert [g["index"] for g in gpus] == [0, 1]
    assert {g["memory_mib"] for g in gpus} == {143771}
    assert gpus[1]["uuid"] == "GPU-29605401-df27-eb4d-9b6b-be36861f9d41"
    assert unparsed == []


def test_parse_eight_gpus_out_of_order_na_fields_and_garbage():
    lines = ["%d, NVIDIA H100 80GB HBM3, 81559, GPU-%d, 00000000:%02X:00.0, 550.54.15" % (i, i, i)
             for i in (7, 6, 5, 4, 3, 2, 1, 0)]
    lines.append("8, NVIDIA H100 80GB HBM3, [N/A], [N/A], 00000000:99:00.0, 550.54.15")
    lines.append("garbage line")
    lines.append("")
    gpus, unparsed = node.parse_nvidia_smi_csv("\n".join(lines))
    assert [g["index"] for g in gpus] == list(range(9))
    assert gpus[8]["memory_mib"] is None and gpus[8]["uuid"] is None
    assert unparsed == ["garbage line"]


def test_probe_with_fake_nvidia_smi(tmp_path):
    smi = fake_smi(tmp_path, "echo '%s'\necho '%s'" % (H200, H200.replace("0, NVIDIA", "1, NVIDIA", 1)))
    run = run_probe("node", {"nvidia_smi": smi, "infiniband_dir": str(tmp_path / "none")})
    assert run.rc == 0, run
    j = run.json
    assert j["gpu_count"] == 2 and j["driver"] == "580.159.04" and j["drivers"] == ["580.159.04"]
    assert j["nvidia_smi"]["ok"] and j["nvidia_smi"]["rc"] == 0 and j["error"] is None
    assert "--format=csv,noheader,nounits" in j["nvidia_smi"]["command"]
    assert "--query-gpu=index,name,memory.total,uuid,pci.bus_id,driver_version" in j["nvidia_smi"]["command"]


def test_nvidia_smi_missing(tmp_path):
    run = run_probe("node", {"nvidia_smi": str(tmp_path / "nvidia-smi"), "infiniband_dir": str(tmp_path)})
    j = run.json
    assert run.rc == 0 and j["gpu_count"] == 0 and j["gpus"] == [] and j["driver"] is None
    assert j["nvidia_smi"]["ok"] is False
    assert j["nvidia_smi"]["error"].startswith("nvidia-smi not found")
    assert j["error"] == j["nvidia_smi"]["error"]


def test_nvidia_smi_fails(tmp_path):
    smi = fake_smi(tmp_path, "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\nexit 9")
    j = run_probe("node", {"nvidia_smi": smi}).json
    assert j["gpu_count"] == 0
    assert j["nvidia_smi"]["rc"] == 9
    assert j["nvidia_smi"]["error"].startswith("nvidia-smi exited 9: NVIDIA-SMI has failed")


def test_nvidia_smi_no_devices(tmp_path):
    smi = fake_smi(tmp_path, "echo 'No devices were found'\nexit 6")
    j = run_probe("node", {"nvidia_smi": smi}).json
    assert j["gpu_count"] == 0 and "No devices were found" in j["error"]


def test_nvidia_smi_hangs(tmp_path):
    smi = fake_smi(tmp_path, "sleep 30")
    run = run_probe("node", {"nvidia_smi": smi, "nvidia_smi_timeout_s": 0.5})
    j = run.json
    assert run.rc == 0 and j["gpu_count"] == 0 and j["timed_out"] is False
    assert j["nvidia_smi"]["error"] == "nvidia-smi timed out after 0.5 s"
    assert j["duration_s"] < 15


def test_efa_devices_natural_order_and_drivers(tmp_path):
    ib = tmp_path / "infiniband"
    for i in (0, 1, 2, 10, 3):
        (ib / ("efa%d" % i)).mkdir(parents=True)
    drivers = tmp_path / "drivers"
    for d in ("efa", "mlx5_core"):
        (drivers / d).mkdir(parents=True)
    for name, drv in (("rdmap16s27", "efa"), ("mlx5_0", "mlx5_core")):
        (ib / name / "device").mkdir(parents=True)
        os.symlink(str(drivers / drv), str(ib / name / "device" / "driver"))
    j = run_probe("node", {"nvidia_smi": "/nonexistent", "infiniband_dir": str(ib)}).json
    assert j["efa_devices"] == ["efa0", "efa1", "efa2", "efa3", "efa10", "rdmap16s27"]
    assert j["efa_count"] == 6
    by_name = {d["name"]: d for d in j["infiniband_devices"]}
    assert by_name["mlx5_0"] == {"name": "mlx5_0", "driver": "mlx5_core", "efa": False}
    assert by_name["rdmap16s27"]["driver"] == "efa"
    assert j["infiniband_error"] is None


def test_no_infiniband_dir_is_reported_not_fatal(tmp_path):
    j = run_probe("node", {"nvidia_smi": "/nonexistent", "infiniband_dir": str(tmp_path / "x")}).json
    assert j["efa_count"] == 0 and j["efa_devices"] == []
    assert j["infiniband_error"] == "%s: no such directory" % (tmp_path / "x")


def test_storage_ok_leaves_nothing_behind(tmp_path):
    store = tmp_path / "fsx"
    store.mkdir()
    j = run_probe("node", {"nvidia_smi": "/nonexistent", "storage_path": str(store), "storage_bytes": 65536}).json
    s = j["storage"]
    assert s["ok"] is True and s["error"] is None and s["bytes"] == 65536
    assert [k for k in ("write", "read", "compare", "delete") if s["steps"][k]["ok"]] == ["write", "read", "compare", "delete"]
    assert all(isinstance(s["steps"][k]["duration_s"], float) for k in s["steps"])
    assert s["file"].startswith(str(store) + "/.rlstack-probe-")
    assert os.listdir(str(store)) == []
    assert s["fs_type"] and s["mount_point"] and s["free_bytes"] > 0


def test_storage_missing_path(tmp_path):
    j = run_probe("node", {"nvidia_smi": "/nonexistent", "storage_path": str(tmp_path / "fsx")}).json
    s = j["storage"]
    assert s["ok"] is False
    assert s["error"] == "storage_path %s does not exist" % (tmp_path / "fsx")
    assert s["steps"]["write"] == {"ok": False, "error": "not attempted (storage_path missing)", "duration_s": None}
    assert set(s["steps"]) == {"write", "read", "compare", "delete"}


def test_storage_path_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    s = run_probe("node", {"nvidia_smi": "/nonexistent", "storage_path": str(f)}).json["storage"]
    assert s["ok"] is False and s["error"].endswith("is not a directory")


def test_storage_unwritable(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    s = run_probe("node", {"nvidia_smi": "/nonexistent", "storage_path": str(ro)}).json["storage"]
    assert s["ok"] is False and s["steps"]["write"]["error"].startswith("PermissionError")
    assert s["steps"]["read"]["error"] == "not attempted (write failed)"
    assert s["steps"]["delete"]["error"] == "not attempted (write failed)"


def test_storage_compare_detects_corruption(tmp_path, monkeypatch):
    real_open = open
    calls = {"n": 0}

    class Corrupt(object):
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.fh.close()

        def read(self):
            data = bytearray(self.fh.read())
            data[5] ^= 0xFF
            return bytes(data)

    def fake_open(path, mode="r", *a, **kw):
        if str(path).startswith(str(tmp_path)) and mode == "rb":
            calls["n"] += 1
            return Corrupt(real_open(path, mode, *a, **kw))
        return real_open(path, mode, *a, **kw)

    monkeypatch.setattr(node, "open", fake_open, raising=False)
    s = node.storage_check(str(tmp_path), 64, "n")
    assert calls["n"] == 1
    assert s["ok"] is False and s["steps"]["compare"]["ok"] is False
    assert "first difference at offset 5" in s["steps"]["compare"]["error"]
    assert s["steps"]["delete"]["ok"] is True and os.listdir(str(tmp_path)) == []
