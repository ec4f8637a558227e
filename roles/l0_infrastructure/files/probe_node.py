"""L0 probe: GPUs (nvidia-smi), EFA/RDMA devices, shared-storage write/read/delete.

Usage: python3 probe_node.py '{"storage_path": "/fsx"}'   -- fields: docs/probes.md (L0)
Standard library only. Prints one JSON object on the last stdout line; exits 0 whatever it finds.
"""
import csv
import json
import os
import re
import socket
import sys
import time
import uuid

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
    r["storage"] = None
    if p["storage_path"]:
        probe.stage = "storage"
        r["storage"] = storage_check(p["storage_path"], max(1, p["storage_bytes"]), r["node"], probe)
    probe.stage = "done"


if __name__ == "__main__":
    sys.exit(main_wrapper(PROBE, SPEC, body))
