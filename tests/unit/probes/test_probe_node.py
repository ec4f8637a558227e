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


# -------------------------------------------------------------------------------------------- GPU health
SMI_FIXTURES = os.path.join(os.path.dirname(SHARED_RECORDED), "nvidia-smi")
H200_XML = os.path.join(SHARED_RECORDED, "h200x1", "nvidia-smi-q.xml")


def fixture(name):
    with open(os.path.join(SMI_FIXTURES, name)) as fh:
        return fh.read()


def test_parse_recorded_h200_xml():
    with open(H200_XML) as fh:
        parsed = node.parse_smi_xml(fh.read())
    assert (parsed["driver_version"], parsed["cuda_version"]) == ("580.159.04", "13.0")
    (gpu,) = parsed["gpus"]
    assert gpu["pci_bus_id"] == "00000000:00:06.0" and gpu["gsp_firmware_version"] == "580.159.04"
    assert gpu["vbios_version"] == "96.00.A5.00.1A" and gpu["persistence_mode"] == "Enabled"
    assert (gpu["ecc_mode"], gpu["ecc_volatile_uncorrectable"], gpu["ecc_aggregate_uncorrectable"]) == ("Enabled", 0, 0)
    assert (gpu["remapped_rows_pending"], gpu["remapped_rows_failure"], gpu["remapped_rows_uncorrectable"]) == (False, False, 0)
    assert gpu["retired_pages_pending"] is None  # Hopper remaps rows instead: nvidia-smi prints N/A
    assert (gpu["pcie_gen_current"], gpu["pcie_gen_max"], gpu["pcie_width_current"], gpu["pcie_width_max"]) == (5, 5, 16, 16)
    assert gpu["clock_events_active"] == ["gpu_idle"]
    assert (gpu["temperature_c"], gpu["temperature_tlimit_margin_c"], gpu["temperature_slowdown_tlimit_c"]) == (34, 53, -2)
    assert gpu["fabric_state"] is None and gpu["recovery_action"] == "None"


def test_parse_xml_counts_uncorrectable_and_old_driver_groups():
    xml = ("<nvidia_smi_log><driver_version>535.1</driver_version><gpu id='00000000:53:00.0'><ecc_errors><volatile>"
           "<single_bit><total>4</total></single_bit><double_bit><total>2</total></double_bit></volatile>"
           "<aggregate><sram_correctable>1</sram_correctable><sram_uncorrectable_parity>3</sram_uncorrectable_parity>"
           "<dram_uncorrectable>5</dram_uncorrectable></aggregate></ecc_errors>"
           "<clocks_throttle_reasons><clocks_throttle_reason_hw_slowdown>Active</clocks_throttle_reason_hw_slowdown>"
           "</clocks_throttle_reasons></gpu></nvidia_smi_log>")
    (gpu,) = node.parse_smi_xml(xml)["gpus"]
    assert (gpu["ecc_volatile_uncorrectable"], gpu["ecc_volatile_correctable"]) == (2, 4)
    assert (gpu["ecc_aggregate_uncorrectable"], gpu["ecc_aggregate_correctable"]) == (8, 1)
    assert gpu["clock_events_active"] == ["hw_slowdown"]
    with pytest.raises(ValueError):
        node.parse_smi_xml("NVIDIA-SMI has failed")


def test_parse_nvlink_status_real_outputs():
    h100 = node.parse_nvlink_status(fixture("nvlink-status-h100-bottlerocket-4418.txt"))
    assert {i: (g["links"], g["active"], g["inactive"]) for i, g in h100.items()} == {0: (18, 18, []), 1: (18, 18, [])}
    assert h100[1]["uuid"] == "GPU-dd3b269a-8f3a-d2d5-1518-2713ba03fcf7"
    v100 = node.parse_nvlink_status(fixture("nvlink-status-v100-inactive-azhpc-73.txt"))
    assert (v100[3]["links"], v100[3]["active"], v100[3]["inactive"]) == (6, 4, [3, 5])


def test_read_xids_from_a_saved_kernel_log(tmp_path):
    log = tmp_path / "kmsg"
    log.write_text("6,100,5,-;random line\n" + fixture("kmsg-xid79-nvsentinel-155.txt"))
    xid = node.read_xids(str(log))
    assert xid["visible"] is True and xid["error"] is None
    assert xid["events"] == [{"pci": "0000:44:00", "xid": 79, "text": "GPU has fallen off the bus"}]
    missing = node.read_xids(str(tmp_path / "nope"))
    assert missing["visible"] is False and "No such file" in missing["error"]


def test_probe_reports_health_from_fake_nvidia_smi(tmp_path):
    (tmp_path / "q.xml").write_text(open(H200_XML).read())
    (tmp_path / "nvlink.txt").write_text(fixture("nvlink-status-v100-inactive-azhpc-73.txt").replace("GPU 3:", "GPU 0:"))
    smi = fake_smi(tmp_path, 'case "$1" in -q) cat %s/q.xml;; nvlink) cat %s/nvlink.txt;; *) echo "%s";; esac'
                   % (tmp_path, tmp_path, H200))
    ib = tmp_path / "ib"
    (ib / "rdmap16s27").mkdir(parents=True)
    (ib / "rdmap16s27" / "fw_ver").write_text("1.2.3\n")
    efa_mod = tmp_path / "efa"
    efa_mod.mkdir()
    (efa_mod / "version").write_text("2.13.0g\n")
    j = run_probe("node", {"nvidia_smi": smi, "infiniband_dir": str(ib), "efa_module_dir": str(efa_mod),
                           "kmsg_path": str(tmp_path / "no-kmsg")}).json
    h = j["health"]
    assert h["xml"]["ok"] and h["driver_version"] == "580.159.04" and h["nvlink_source"] == "nvidia-smi nvlink -s"
    assert h["gpus"][0]["nvlinks"] == {"links": 6, "active": 4, "inactive": [3, 5]}
    assert h["efa"] == {"driver_version": "2.13.0g", "firmware": {"rdmap16s27": "1.2.3"}, "firmware_versions": ["1.2.3"]}
    assert h["xid"]["visible"] is False and set(h["image"]) == {"nccl", "aws_ofi_nccl"}


def test_probe_health_off_or_without_gpus(tmp_path):
    assert run_probe("node", {"nvidia_smi": "/nonexistent"}).json["health"] is None
    smi = fake_smi(tmp_path, 'echo "%s"' % H200)
    assert run_probe("node", {"nvidia_smi": smi, "health": False}).json["health"] is None
    h = run_probe("node", {"nvidia_smi": smi}).json["health"]  # -q -x prints CSV here: not XML
    assert h["xml"]["ok"] is False and "did not print XML" in h["xml"]["error"]


def test_dcgm_runs_only_when_asked_and_is_bounded(tmp_path):
    smi = fake_smi(tmp_path, 'echo "%s"' % H200)
    assert run_probe("node", {"nvidia_smi": smi, "health": False}).json["dcgm"] is None
    doc = '{"DCGM Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [{"name": "software", ' \
          '"results": [{"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Fail", "warnings": ' \
          '[{"error_id": 29, "error_category": 3, "error_severity": 5, "warning": "x"}]}], "test_summary": ' \
          '{"status": "Fail"}}]}]}, "metadata": {"version": "4.4.2"}}'
    (tmp_path / "out.json").write_text(doc)
    dcgmi = fake_smi(tmp_path, 'echo "$@" > %s/args; cat %s/out.json; exit 226' % (tmp_path, tmp_path), name="dcgmi")
    j = run_probe("node", {"nvidia_smi": smi, "health": False, "dcgm_level": 2, "dcgmi": dcgmi,
                           "dcgm_host": "$FAKE_HOST:5555"}, env={"FAKE_HOST": "10.0.0.7"}).json
    d = j["dcgm"]
    assert (d["level"], d["rc"], d["error"], d["version"]) == (2, 226, None, "4.4.2")
    assert (tmp_path / "args").read_text().split() == ["diag", "-r", "2", "-j", "--host", "10.0.0.7:5555"]
    assert d["results"][0]["warnings"][0]["error_id"] == 29 and d["results"][0]["status"] == "Fail"
    slow = fake_smi(tmp_path, "sleep 30", name="slow-dcgmi")
    d = run_probe("node", {"nvidia_smi": smi, "health": False, "dcgm_level": 1, "dcgmi": slow,
                           "dcgm_timeout_s": 0.5}).json["dcgm"]
    assert d["timed_out"] and d["error"] == "dcgmi diag -r 1 timed out after 0.5 s"
    d = run_probe("node", {"nvidia_smi": smi, "health": False, "dcgm_level": 1,
                           "dcgmi": str(tmp_path / "nope")}).json["dcgm"]
    assert d["error"].startswith("dcgmi not found")


# -- the locked-memory limit (docs/probes.md "memlock") --------------------------------------------------------

def test_memlock_limit_in_bytes(monkeypatch):
    calls = []

    def getrlimit(which):
        calls.append(which)
        return (67108864, 67108864)  # `ulimit -l` 65536 (KiB), awslabs/awsome-distributed-ai #647
    monkeypatch.setattr(node.resource, "getrlimit", getrlimit)
    assert node.memlock_limit() == {"soft": 67108864, "hard": 67108864, "error": None}
    assert calls == [node.resource.RLIMIT_MEMLOCK]


def test_memlock_limit_unlimited_is_the_word(monkeypatch):
    inf = node.resource.RLIM_INFINITY
    monkeypatch.setattr(node.resource, "getrlimit", lambda which: (inf, inf))
    assert node.memlock_limit() == {"soft": "unlimited", "hard": "unlimited", "error": None}
    monkeypatch.setattr(node.resource, "getrlimit", lambda which: (65536, inf))
    assert node.memlock_limit() == {"soft": 65536, "hard": "unlimited", "error": None}


def test_memlock_limit_that_cannot_be_read(monkeypatch):
    def getrlimit(which):
        raise ValueError("invalid resource specified")
    monkeypatch.setattr(node.resource, "getrlimit", getrlimit)
    out = node.memlock_limit()
    assert (out["soft"], out["hard"]) == (None, None)
    assert out["error"] == "getrlimit(RLIMIT_MEMLOCK): invalid resource specified"


def test_probe_reports_its_own_memlock_limit(tmp_path):
    import resource
    run = run_probe("node", {"nvidia_smi": "/nonexistent/nvidia-smi", "infiniband_dir": str(tmp_path / "ib")})
    assert run.rc == 0, run
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)  # the child inherits this process's limit
    shown = [("unlimited" if v == resource.RLIM_INFINITY else v) for v in (soft, hard)]
    assert run.json["memlock"] == {"soft": shown[0], "hard": shown[1], "error": None}
