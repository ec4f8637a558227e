"""L0 probe: GPUs (nvidia-smi), their health, EFA/RDMA devices, the locked-memory limit, shared-storage write/read/delete.

Usage: python3 probe_node.py '{"storage_path": "/fsx"}'   -- fields: docs/probes.md (L0)
Standard library only. Prints one JSON object on the last stdout line; exits 0 whatever it finds.
"""
import csv
import errno
import glob
import json
import os
import re
import resource
import socket
import sys
import time
import uuid
import xml.etree.ElementTree as ET

PROBE = "node"
# The helpers every probe shares are in probe_common.py, shipped next to the probe; in the repository it
# lives in roles/runner/files (search order: probe_common.py's docstring).
_PROBE_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _PROBE_DIR)
if not os.path.isfile(os.path.join(_PROBE_DIR, "probe_common.py")):
    sys.path.insert(1, os.path.join(_PROBE_DIR, "..", "..", "runner", "files"))
try:
    from probe_common import _tail, main_wrapper, run_cmd
except Exception as exc:  # without it: still the contract's one JSON line (docs/probes.md), exit 1
    _why = "is missing next to" if isinstance(exc, ModuleNotFoundError) and exc.name == "probe_common" else "cannot be imported next to"
    print("\n" + json.dumps({
        "probe": PROBE, "schema": 1, "node": os.environ.get("NODE_NAME") or socket.gethostname(), "duration_s": 0.0,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "params": {}, "warnings": [],
        "timed_out": False, "crashed": True,
        "error": "probe_common.py %s %s: %s: %s" % (_why, os.path.abspath(__file__), type(exc).__name__, exc)}), flush=True)
    sys.exit(1)

QUERY_FIELDS = ["index", "name", "memory.total", "uuid", "pci.bus_id", "driver_version"]
SPEC = {
    "node": (None, "str?"),
    "nvidia_smi": ("nvidia-smi", "str"),
    "nvidia_smi_timeout_s": (30, "num"),
    "infiniband_dir": ("/sys/class/infiniband", "str"),
    "storage_path": (None, "str?"),
    "storage_bytes": (1048576, "int"),
    "health": (True, "bool"),
    "kmsg_path": ("/dev/kmsg", "str"),
    "efa_module_dir": ("/sys/module/efa", "str"),
    "dcgm_level": (0, "int"),
    "dcgmi": ("dcgmi", "str"),
    "dcgm_host": (None, "str?"),
    "dcgm_timeout_s": (300, "num"),
    "timeout_s": (120, "num"),
}


def _na(value):
    value = value.strip()
    return None if value in ("", "N/A", "[N/A]", "[Not Supported]", "Not Supported") else value


def _int_or_none(value):
    value = _na(value or "")
    if value is None:
        return None
    m = re.match(r"^(-?\d+)", value)  # tolerates units ("143771 MiB") when nounits was not used
    return int(m.group(1)) if m else None


def parse_nvidia_smi_csv(text):
    """Parse `--query-gpu=index,name,memory.total,uuid,pci.bus_id,driver_version --format=csv,noheader,nounits`.

    Returns (gpus, unparsed_lines). A header line (starting with "index") is skipped.
    """
    gpus, unparsed = [], []
    for line in text.splitlines():
        if not line.strip() or line.strip().lower().startswith("index"):
            continue
        try:
            fields = next(csv.reader([line], skipinitialspace=True))
        except (csv.Error, StopIteration):
            unparsed.append(line)
            continue
        if len(fields) < len(QUERY_FIELDS):
            unparsed.append(line)
            continue
        index = _int_or_none(fields[0])
        if index is None:
            unparsed.append(line)
            continue
        gpus.append({
            "index": index,
            "name": _na(fields[1]),
            "memory_mib": _int_or_none(fields[2]),
            "uuid": _na(fields[3]),
            "pci_bus_id": _na(fields[4]),
            "driver_version": _na(fields[5]),
        })
    gpus.sort(key=lambda g: g["index"])
    return gpus, unparsed


def query_gpus(nvidia_smi, timeout_s):
    cmd = [nvidia_smi, "--query-gpu=" + ",".join(QUERY_FIELDS), "--format=csv,noheader,nounits"]
    info = {"ok": False, "error": None, "command": cmd, "rc": None, "duration_s": None, "unparsed_lines": []}
    res = run_cmd(cmd, timeout_s)
    info["rc"], info["duration_s"] = res["rc"], res["duration_s"]
    gpus = []
    if res["error"]:
        info["error"] = ("nvidia-smi not found: %s" if res.get("not_found") else "nvidia-smi could not run: %s") % res["error"]
        info["not_found"] = bool(res.get("not_found"))
    elif res["timed_out"]:
        info["error"] = "nvidia-smi timed out after %s s" % timeout_s
    elif res["rc"] != 0:
        text = (res["stdout"].strip() + "\n" + res["stderr"].strip()).strip()
        info["error"] = "nvidia-smi exited %s: %s" % (res["rc"], _tail(text, 1000))
    else:
        gpus, info["unparsed_lines"] = parse_nvidia_smi_csv(res["stdout"])
        info["ok"] = True
    return gpus, info


def _natural_key(name):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def list_infiniband(ib_dir):
    """Entries of /sys/class/infiniband with their kernel driver; EFA ones flagged."""
    if not os.path.isdir(ib_dir):
        return [], "%s: no such directory" % ib_dir
    try:
        names = sorted(os.listdir(ib_dir), key=_natural_key)
    except OSError as exc:
        return [], "%s: %s" % (ib_dir, exc)
    devices = []
    for name in names:
        driver = None
        link = os.path.join(ib_dir, name, "device", "driver")
        if os.path.exists(link):
            driver = os.path.basename(os.path.realpath(link)) or None
        if driver:
            efa = driver == "efa"
        else:
            efa = name.startswith("efa") or name.startswith("rdmap")
        devices.append({"name": name, "driver": driver, "efa": efa})
    return devices, None


def memlock_limit():
    """RLIMIT_MEMLOCK of this container: {"soft", "hard"} in bytes, "unlimited" for RLIM_INFINITY, "error".

    libfabric's EFA provider pins (registers) its buffers, which the kernel charges to this limit. The
    container runtime sets it per container from the node's defaults (containerd's base runtime spec,
    Bottlerocket's OCI defaults; Kubernetes has no pod field for it and a device plugin cannot set it), so any
    container on the node shows what the training pods will get, whatever it requests. A process may raise its
    soft limit up to the hard one itself; the judge reads the soft limit, the one the ranks start with."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    except (OSError, ValueError, AttributeError) as exc:
        return {"soft": None, "hard": None, "error": "getrlimit(RLIMIT_MEMLOCK): %s" % exc}

    def shown(value):  # Python gives RLIM_INFINITY as -1 on Linux
        return "unlimited" if value == resource.RLIM_INFINITY or value < 0 else int(value)
    return {"soft": shown(soft), "hard": shown(hard), "error": None}


def _mount_of(path):
    """(mount_point, fs_type) of the longest /proc/mounts entry containing path."""
    try:
        real = os.path.realpath(path)
        best = (None, None)
        with open("/proc/mounts") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 3:
                    continue
                mnt = parts[1].replace("\\040", " ")
                if real == mnt or real.startswith(mnt.rstrip("/") + "/") or mnt == "/":
                    if best[0] is None or len(mnt) >= len(best[0]):
                        best = (mnt, parts[2])
        return best
    except OSError:
        return (None, None)


def _step(fn):
    t0 = time.monotonic()
    try:
        fn()
        return {"ok": True, "error": None, "duration_s": round(time.monotonic() - t0, 6)}
    except Exception as exc:
        return {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc), "duration_s": round(time.monotonic() - t0, 6)}


def storage_check(path, nbytes, node, probe=None):
    steps = ("write", "read", "compare", "delete")
    res = {"ok": False, "error": None, "path": path, "bytes": nbytes, "file": None,
           "fs_type": None, "mount_point": None, "free_bytes": None,
           "steps": {}, "write_mb_s": None, "read_mb_s": None}

    def skip_rest(first, why):
        for s in steps[steps.index(first):]:
            res["steps"].setdefault(s, {"ok": False, "error": "not attempted (%s)" % why, "duration_s": None})

    if not os.path.exists(path):
        res["error"] = "storage_path %s does not exist" % path
        skip_rest("write", "storage_path missing")
        return res
    if not os.path.isdir(path):
        res["error"] = "storage_path %s is not a directory" % path
        skip_rest("write", "storage_path not a directory")
        return res
    res["mount_point"], res["fs_type"] = _mount_of(path)
    try:
        st = os.statvfs(path)
        res["free_bytes"] = st.f_bavail * st.f_frsize
    except OSError:
        pass
    safe_node = re.sub(r"[^A-Za-z0-9_.-]", "_", node)[:64]
    fname = os.path.join(path, ".rlstack-probe-%s-%d-%s" % (safe_node, os.getpid(), uuid.uuid4().hex[:12]))
    res["file"] = fname
    data = os.urandom(nbytes)
    got = {}
    created = {"v": False}

    def write():
        fd = os.open(fname, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        created["v"] = True
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)

    def read():
        with open(fname, "rb") as fh:
            got["data"] = fh.read()

    def compare():
        back = got["data"]
        if back != data:
            first = next((i for i, (a, b) in enumerate(zip(data, back)) if a != b), min(len(data), len(back)))
            raise ValueError("content mismatch: wrote %d bytes, read %d, first difference at offset %d"
                             % (len(data), len(back), first))

    def delete():
        os.remove(fname)
        if os.path.exists(fname):
            raise OSError("file still exists after delete")

    if probe:
        probe.stage = "storage write"
    res["steps"]["write"] = _step(write)
    if res["steps"]["write"]["ok"]:
        if probe:
            probe.stage = "storage read"
        res["steps"]["read"] = _step(read)
        if res["steps"]["read"]["ok"]:
            res["steps"]["compare"] = _step(compare)
        else:
            skip_rest("compare", "read failed")
    else:
        skip_rest("read", "write failed")
    if created["v"]:
        if probe:
            probe.stage = "storage delete"
        res["steps"]["delete"] = _step(delete)
    else:
        skip_rest("delete", "write failed")
    for name in ("write", "read"):
        d = res["steps"][name].get("duration_s")
        if res["steps"][name]["ok"] and d:
            res[name + "_mb_s"] = round(nbytes / 1e6 / d, 1)
    failed = [s for s in steps if not res["steps"][s]["ok"]]
    res["ok"] = not failed
    if failed:
        res["error"] = "%s failed: %s" % (failed[0], res["steps"][failed[0]]["error"])
    return res


# -- GPU health (docs/probes.md, "L0 health") -------------------------------------------------------
# The probe only reads and reports; thresholds, severities and hints live on the controller
# (plugins/module_utils/gpu/_gpu_health.py), next to the instance profiles they come from.
THROTTLE_REASONS = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown",
                    "sw_power_cap", "gpu_idle", "applications_clocks_setting", "sync_boost",
                    "display_clocks_setting")
XID_LINE = re.compile(r"NVRM: Xid \(PCI:(?P<pci>[0-9A-Fa-f:.]+)\): (?P<xid>\d+),?\s*(?P<text>.*)")
NVLINK_GPU_LINE = re.compile(r"^GPU (?P<index>\d+): (?P<name>.*?)(?: \(UUID: (?P<uuid>[^)]*)\))?\s*$")
NVLINK_LINK_LINE = re.compile(r"^\s*Link (?P<link>\d+): (?P<state>.*?)\s*$")


def _text(elem, path):
    """Stripped text at path under elem, None when missing or N/A."""
    if elem is None:
        return None
    found = elem.find(path)
    if found is None or found.text is None:
        return None
    return _na(found.text)


def _num(elem, path):
    value = _text(elem, path)
    if value is None:
        return None
    m = re.match(r"^(-?\d+(?:\.\d+)?)", value)  # "34 C", "16x", "700.00 W"
    if not m:
        return None
    number = float(m.group(1))
    return int(number) if number == int(number) else number


def _yes(elem, path):
    value = _text(elem, path)
    if value is None:
        return None
    return value.strip().lower() in ("yes", "true", "enabled", "active")


def _ecc_sum(scope, uncorrectable):
    """Sum of the uncorrectable (or correctable) ECC counters of one scope (volatile / aggregate).

    Driver >= 535 prints flat counters (dram_uncorrectable, sram_uncorrectable_parity, ...); older drivers
    print single_bit/double_bit groups with a total each. None when no counter is readable.
    """
    if scope is None:
        return None
    total, seen = 0, False
    groups = {"double_bit": True, "single_bit": False}
    for child in list(scope):
        tag = child.tag
        if tag in groups:
            if groups[tag] == uncorrectable:
                value = _num(child, "total")
                if value is not None:
                    total, seen = total + value, True
            continue
        if not tag.endswith("correctable") and "uncorrectable" not in tag:
            continue
        if ("uncorrectable" in tag) != uncorrectable:
            continue
        value = _num(scope, tag)
        if value is not None:
            total, seen = total + value, True
    return total if seen else None


def _throttle(gpu):
    """Active clock event (throttle) reasons: clocks_event_reasons (driver >= 535) or clocks_throttle_reasons."""
    for group, prefix in (("clocks_event_reasons", "clocks_event_reason_"), ("clocks_throttle_reasons", "clocks_throttle_reason_")):
        node = gpu.find(group)
        if node is None:
            continue
        active, read = [], False
        for child in list(node):
            state = _na(child.text or "")
            if state is None:
                continue
            read = True
            if state.lower() == "active":
                active.append(child.tag[len(prefix):] if child.tag.startswith(prefix) else child.tag)
        return active if read else None
    return None


def parse_smi_xml(text):
    """`nvidia-smi -q -x` -> {"driver_version", "cuda_version", "gpus": [per-GPU health facts]}. Raises ValueError."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ValueError("nvidia-smi -q -x did not print XML: %s" % exc)
    out = {"driver_version": _text(root, "driver_version"), "cuda_version": _text(root, "cuda_version"), "gpus": []}
    for i, gpu in enumerate(root.findall("gpu")):
        link = gpu.find("pci/pci_gpu_link_info")
        ecc = gpu.find("ecc_errors")
        retired = gpu.find("retired_pages")
        rows = gpu.find("remapped_rows")
        temp = gpu.find("temperature")
        minor = _num(gpu, "minor_number")
        out["gpus"].append({
            "index": i, "minor_number": minor, "pci_bus_id": gpu.get("id") or _text(gpu, "pci/pci_bus_id"),
            "uuid": _text(gpu, "uuid"), "name": _text(gpu, "product_name"),
            "vbios_version": _text(gpu, "vbios_version"), "gsp_firmware_version": _text(gpu, "gsp_firmware_version"),
            "inforom_image": _text(gpu, "inforom_version/img_version"),
            "persistence_mode": _text(gpu, "persistence_mode"), "performance_state": _text(gpu, "performance_state"),
            "mig_mode": _text(gpu, "mig_mode/current_mig"),
            "ecc_mode": _text(gpu, "ecc_mode/current_ecc"),
            "ecc_volatile_uncorrectable": _ecc_sum(ecc.find("volatile") if ecc is not None else None, True),
            "ecc_aggregate_uncorrectable": _ecc_sum(ecc.find("aggregate") if ecc is not None else None, True),
            "ecc_volatile_correctable": _ecc_sum(ecc.find("volatile") if ecc is not None else None, False),
            "ecc_aggregate_correctable": _ecc_sum(ecc.find("aggregate") if ecc is not None else None, False),
            "sram_threshold_exceeded": _yes(ecc, "aggregate/sram_threshold_exceeded"),
            "channel_repair_pending": _yes(ecc, "channel_repair_pending"),
            "tpc_repair_pending": _yes(ecc, "tpc_repair_pending"),
            "unrepairable_memory": _yes(ecc, "unrepairable_memory"),
            "retired_pages_sbe": _num(retired, "multiple_single_bit_retirement/retired_count"),
            "retired_pages_dbe": _num(retired, "double_bit_retirement/retired_count"),
            "retired_pages_pending": _yes(retired, "pending_retirement"),
            "remapped_rows_correctable": _num(rows, "remapped_row_corr"),
            "remapped_rows_uncorrectable": _num(rows, "remapped_row_unc"),
            "remapped_rows_pending": _yes(rows, "remapped_row_pending"),
            "remapped_rows_failure": _yes(rows, "remapped_row_failure"),
            "remap_banks_none_left": _num(rows, "row_remapper_histogram/row_remapper_histogram_none"),
            "pcie_gen_current": _num(link, "pcie_gen/current_link_gen"),
            "pcie_gen_max": _num(link, "pcie_gen/max_link_gen"),
            "pcie_gen_device_max": _num(link, "pcie_gen/max_device_link_gen"),
            "pcie_width_current": _num(link, "link_widths/current_link_width"),
            "pcie_width_max": _num(link, "link_widths/max_link_width"),
            "pcie_replays": _num(gpu, "pci/replay_counter"),
            "clock_events_active": _throttle(gpu),
            "temperature_c": _num(temp, "gpu_temp"),
            "temperature_slowdown_c": _num(temp, "gpu_temp_slow_threshold"),
            "temperature_tlimit_margin_c": _num(temp, "gpu_temp_tlimit"),
            "temperature_slowdown_tlimit_c": _num(temp, "gpu_temp_slow_tlimit_threshold"),
            "fabric_state": _text(gpu, "fabric/state"), "fabric_status": _text(gpu, "fabric/status"),
            "recovery_action": _text(gpu, "gpu_recovery_action"),
        })
    return out


def parse_nvlink_status(text):
    """`nvidia-smi nvlink -s` -> {gpu index: {"name", "uuid", "links", "active", "inactive": [link numbers]}}.

    A link line is "Link 3: 26.562 GB/s" (up) or "Link 3: <inactive>" (down); a GPU without NVLink has no
    link lines (0 links).
    """
    gpus, current = {}, None
    for line in text.splitlines():
        m = NVLINK_GPU_LINE.match(line.strip())
        if m:
            current = {"name": m.group("name"), "uuid": m.group("uuid"), "links": 0, "active": 0, "inactive": []}
            gpus[int(m.group("index"))] = current
            continue
        m = NVLINK_LINK_LINE.match(line)
        if m and current is not None:
            current["links"] += 1
            if "inactive" in m.group("state").lower() or not re.search(r"\d", m.group("state")):
                current["inactive"].append(int(m.group("link")))
            else:
                current["active"] += 1
    return gpus


def nvlink_from_nvml():
    """The same shape as parse_nvlink_status from NVML (pynvml / nvidia-ml-py), or (None, why)."""
    try:
        import pynvml  # noqa: F401 - optional: only when the image ships nvidia-ml-py
    except Exception as exc:
        return None, "pynvml not importable: %s" % exc
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        return None, "nvmlInit failed: %s" % exc
    try:
        gpus = {}
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            entry = {"name": None, "uuid": None, "links": 0, "active": 0, "inactive": []}
            for link in range(getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18)):
                try:
                    state = pynvml.nvmlDeviceGetNvLinkState(handle, link)
                except pynvml.NVMLError:
                    break  # not supported / past the last link
                entry["links"] += 1
                if state == getattr(pynvml, "NVML_FEATURE_ENABLED", 1):
                    entry["active"] += 1
                else:
                    entry["inactive"].append(link)
            gpus[index] = entry
        return gpus, None
    except Exception as exc:
        return None, "NVML NVLink query failed: %s" % exc
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _smi(nvidia_smi, args, timeout_s):
    cmd = [nvidia_smi] + list(args)
    res = run_cmd(cmd, timeout_s)
    info = {"ok": False, "error": None, "command": cmd, "rc": res["rc"], "duration_s": res["duration_s"]}
    if res["error"]:
        info["error"] = res["error"]
    elif res["timed_out"]:
        info["error"] = "timed out after %s s" % timeout_s
    elif res["rc"] != 0:
        info["error"] = "exited %s: %s" % (res["rc"], _tail((res["stdout"] + "\n" + res["stderr"]).strip(), 1000))
    else:
        info["ok"] = True
    return res["stdout"], info


def read_xids(kmsg_path, max_records=200000, budget_s=3.0):
    """XID lines in the kernel ring buffer, when the pod may read it (/dev/kmsg; usually not without privileges)."""
    out = {"visible": False, "source": kmsg_path, "error": None, "events": []}
    try:
        fd = os.open(kmsg_path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        out["error"] = "%s: %s" % (kmsg_path, exc.strerror or exc)
        return out
    out["visible"] = True
    t0 = time.monotonic()
    try:
        for _record_number in range(max_records):
            if time.monotonic() - t0 > budget_s:
                out["error"] = "stopped reading after %s s" % budget_s
                break
            try:
                record = os.read(fd, 8192)
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # a record was overwritten while reading: go on
                    continue
                if exc.errno != errno.EAGAIN:
                    out["error"] = "%s: %s" % (kmsg_path, exc.strerror or exc)
                break
            if not record:
                break
            # /dev/kmsg gives one "prio,seq,usec,flags;message" record per read; a saved log (a plain
            # file) gives many lines per read
            for line in record.decode("utf-8", "replace").splitlines():
                m = XID_LINE.search(line)
                if m:
                    out["events"].append({"pci": m.group("pci").lower(), "xid": int(m.group("xid")),
                                          "text": m.group("text")[:200]})
    finally:
        os.close(fd)
    return out


def _read(path):
    try:
        with open(path) as fh:
            return fh.read().strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def efa_versions(efa_module_dir, ib_dir, devices):
    """EFA kernel driver version (/sys/module/efa/version) and each EFA device's firmware (fw_ver)."""
    firmware = {}
    for dev in devices:
        if dev.get("efa"):
            firmware[dev["name"]] = _read(os.path.join(ib_dir, dev["name"], "fw_ver"))
    versions = sorted({v for v in firmware.values() if v})
    return {"driver_version": _read(os.path.join(efa_module_dir, "version")),
            "firmware": firmware, "firmware_versions": versions}


def image_versions():
    """NCCL and aws-ofi-nccl in the image the probe runs in (the training image)."""
    nccl = {"version": None, "source": None}
    try:
        from importlib import metadata
        for dist in metadata.distributions():
            name = (dist.metadata.get("Name") or "").lower()
            if re.match(r"^nvidia[-_]nccl[-_]cu\d+$", name):
                nccl = {"version": dist.version, "source": "python package %s" % name}
                break
    except Exception:
        pass
    lib_dirs = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/lib", "/usr/lib64",
                "/opt/nccl/build/lib", "/usr/local/nccl/lib")
    if nccl["version"] is None:
        for lib_dir in lib_dirs:
            for path in sorted(glob.glob(os.path.join(lib_dir, "libnccl.so.2.*"))):
                m = re.search(r"libnccl\.so\.(\d+\.\d+\.\d+)$", path)
                if m:
                    nccl = {"version": m.group(1), "source": path}
                    break
            if nccl["version"]:
                break
    ofi = {"version": None, "source": None}
    for pattern in ("/opt/amazon/ofi-nccl/lib*/libnccl-net*.so*", "/opt/aws-ofi-nccl/lib*/libnccl-net*.so*",
                    "/usr/local/lib/libnccl-net*.so*"):
        found = sorted(glob.glob(pattern))
        if found:
            m = re.search(r"\.so\.(\d+\.\d+\.\d+)", found[-1])
            ofi = {"version": m.group(1) if m else None, "source": found[-1]}
            break
    return {"nccl": nccl, "aws_ofi_nccl": ofi}


def health_from_outputs(xml_text, xml_info, nvlink_text, nvlink_info, nvml_links=None, nvml_error=None):
    """The GPU part of `health` from what `nvidia-smi -q -x` and `nvidia-smi nvlink -s` printed (and NVML's
    NVLink states when nvidia-smi nvlink failed). sim/replay/derive.py calls this on recorded outputs."""
    health = {"driver_version": None, "cuda_version": None, "gpus": [], "xml": xml_info, "nvlink": nvlink_info,
              "nvlink_source": None}
    if xml_info["ok"]:
        try:
            parsed = parse_smi_xml(xml_text)
            health.update(driver_version=parsed["driver_version"], cuda_version=parsed["cuda_version"],
                          gpus=parsed["gpus"])
        except ValueError as exc:
            xml_info.update(ok=False, error=str(exc))
    links = parse_nvlink_status(nvlink_text) if nvlink_info["ok"] else None
    if links is not None:
        health["nvlink_source"] = "nvidia-smi nvlink -s"
    elif nvml_links is not None:
        links, health["nvlink_source"] = nvml_links, "nvml"
    elif nvml_error:
        nvlink_info["nvml_error"] = nvml_error
    for gpu in health["gpus"]:
        entry = None if links is None else (links.get(gpu["index"]) or {"links": 0, "active": 0, "inactive": []})
        gpu["nvlinks"] = None if entry is None else {k: entry[k] for k in ("links", "active", "inactive")}
    return health


def collect_health(p, devices):
    """Everything the controller judges per GPU and per node (docs/probes.md "health")."""
    timeout = p["nvidia_smi_timeout_s"]
    xml_text, xml_info = _smi(p["nvidia_smi"], ["-q", "-x"], timeout)
    nvlink_text, nvlink_info = _smi(p["nvidia_smi"], ["nvlink", "-s"], timeout)
    nvml_links = nvml_error = None
    if not nvlink_info["ok"]:
        nvml_links, nvml_error = nvlink_from_nvml()
    health = health_from_outputs(xml_text, xml_info, nvlink_text, nvlink_info, nvml_links, nvml_error)
    health["xid"] = read_xids(p["kmsg_path"])
    health["efa"] = efa_versions(p["efa_module_dir"], p["infiniband_dir"], devices)
    health["image"] = image_versions()
    return health


def parse_dcgm_json(text):
    """`dcgmi diag -r N -j` -> {"version", "driver", "runtime_error", "results": [...]}. Raises ValueError.

    Keys as DCGM writes them (NVIDIA/DCGM nvvs/include/NvvsJsonStrings.h; shape: testing/python3/
    dcgm_diag_schema.json): {"DCGM Diagnostic": {"test_categories": [{"category", "tests": [{"name", "results":
    [{"entity_group", "entity_group_id", "entity_id", "status", "warnings": [{"error_id", "error_category",
    "error_severity", "warning"}], "info"}], "test_summary": {"status"}}]}], "runtime_error"}, "metadata": {...}}.
    """
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("dcgmi printed no JSON")
    try:
        doc = json.loads(text[start:end + 1])
    except ValueError as exc:
        raise ValueError("dcgmi printed bad JSON: %s" % exc)
    diag = doc.get("DCGM Diagnostic") if isinstance(doc, dict) else None
    if not isinstance(diag, dict):
        raise ValueError("dcgmi JSON has no 'DCGM Diagnostic' object")
    meta = doc.get("metadata") or {}
    out = {"version": meta.get("version"), "driver": meta.get("Driver Version Detected"),
           "runtime_error": diag.get("runtime_error"), "results": []}
    for category in diag.get("test_categories") or []:
        for test in category.get("tests") or []:
            for result in test.get("results") or []:
                warnings = []
                for w in result.get("warnings") or []:
                    if isinstance(w, dict):
                        warnings.append({k: w.get(k) for k in ("error_id", "error_category", "error_severity", "warning")})
                    else:  # older DCGM printed plain strings
                        warnings.append({"error_id": None, "error_category": None, "error_severity": None, "warning": str(w)})
                info = result.get("info") or []
                out["results"].append({
                    "category": category.get("category"), "test": test.get("name"),
                    "entity_group": result.get("entity_group"), "entity_id": result.get("entity_id"),
                    "status": result.get("status") or "", "warnings": warnings,
                    "info": [str(i) for i in (info if isinstance(info, list) else [info])][:5]})
    return out


def run_dcgm(p):
    """The opt-in DCGM diagnostic (docs/probes.md "dcgm"): dcgmi diag -r <level> -j, bounded by dcgm_timeout_s."""
    cmd = [p["dcgmi"], "diag", "-r", str(p["dcgm_level"]), "-j"]
    if p["dcgm_host"]:
        cmd += ["--host", os.path.expandvars(p["dcgm_host"])]  # "$HOST_IP": the node's DCGM host engine
    res = run_cmd(cmd, p["dcgm_timeout_s"])
    out = {"level": p["dcgm_level"], "command": cmd, "rc": res["rc"], "duration_s": res["duration_s"],
           "timed_out": res["timed_out"], "error": None, "version": None, "driver": None, "runtime_error": None,
           "results": []}
    if res["error"]:
        out["error"] = ("dcgmi not found: %s" if res.get("not_found") else "dcgmi could not run: %s") % res["error"]
    elif res["timed_out"]:
        out["error"] = "dcgmi diag -r %s timed out after %s s" % (p["dcgm_level"], p["dcgm_timeout_s"])
    else:
        try:  # dcgmi exits non-zero when a test fails; the JSON says which
            out.update(parse_dcgm_json(res["stdout"]))
        except ValueError as exc:
            out["error"] = "%s (exit %s): %s" % (exc, res["rc"], _tail((res["stdout"] + res["stderr"]).strip(), 600))
    return out


def body(probe, p):
    r = probe.result
    probe.stage = "nvidia-smi"
    gpus, info = query_gpus(p["nvidia_smi"], p["nvidia_smi_timeout_s"])
    drivers = sorted({g["driver_version"] for g in gpus if g["driver_version"]})
    r.update({"gpu_count": len(gpus), "gpus": gpus,
              "driver": gpus[0]["driver_version"] if gpus else None, "drivers": drivers,
              "nvidia_smi": info})
    if info["error"]:
        r["error"] = info["error"]
    probe.stage = "infiniband"
    devices, ib_error = list_infiniband(p["infiniband_dir"])
    efa = [d["name"] for d in devices if d["efa"]]
    r.update({"efa_count": len(efa), "efa_devices": efa, "infiniband_devices": devices,
              "infiniband_error": ib_error})
    r["memlock"] = memlock_limit()
    r["health"] = None
    if p["health"] and info["ok"]:
        probe.stage = "gpu health"
        r["health"] = collect_health(p, devices)
    r["dcgm"] = None
    if p["dcgm_level"] > 0:
        probe.stage = "dcgm diag -r %s" % p["dcgm_level"]
        r["dcgm"] = run_dcgm(p)
    r["storage"] = None
    if p["storage_path"]:
        probe.stage = "storage"
        r["storage"] = storage_check(p["storage_path"], max(1, p["storage_bytes"]), r["node"], probe)
    probe.stage = "done"


if __name__ == "__main__":
    sys.exit(main_wrapper(PROBE, SPEC, body))
