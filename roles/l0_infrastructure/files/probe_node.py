"""L0 probe: GPUs (nvidia-smi), EFA/RDMA devices, shared-storage write/read/delete.

Usage: python3 probe_node.py '{"storage_path": "/fsx"}'   -- fields: docs/probes.md (L0)
Standard library only. Prints one JSON object on the last stdout line; exits 0 whatever it finds.
"""
import csv
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid

# --- common (keep identical in every probe) ---
# Contract: docs/probes.md. Parameters = one JSON object in argv[1] (or "@file"); the last stdout line
# is one JSON object; exit 0 whatever was found, 1 when the probe itself crashed, 2 on bad parameters.
SCHEMA = 1
_CHILD_GROUPS = set()  # process groups of running children, killed if the watchdog fires


class ProbeParamError(Exception):
    pass


def _finite(obj):
    """JSON-safe copy: NaN/inf become None, unknown objects become str."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in list(obj.items())}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    return str(obj)


def err_info(exc, tb_lines=12):
    """{"ok": False, "error", "error_type", "traceback_tail"} for a caught exception."""
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    tail = "".join(tb).rstrip().splitlines()[-tb_lines:]
    msg = str(exc)
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        msg = repr(exc.args[0])
    return {"ok": False, "error": msg[:2000], "error_type": type(exc).__name__,
            "traceback_tail": "\n".join(tail)}


def not_attempted(why):
    return {"ok": False, "error": "not attempted (%s)" % why}


def _check_type(name, value, kind):
    """kind: 'str' 'int' 'num' 'bool' 'list' 'dict' 'any'; a trailing '?' allows null."""
    if kind.endswith("?"):
        if value is None:
            return
        kind = kind[:-1]
    ok = {
        "str": isinstance(value, str),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "num": isinstance(value, (int, float)) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "list": isinstance(value, list),
        "dict": isinstance(value, dict),
        "any": True,
    }[kind]
    if not ok:
        raise ProbeParamError("param %r must be %s, got %s" % (name, kind, type(value).__name__))


def parse_params(argv, spec):
    """spec: {name: (default, kind)}. Returns (params, warnings). Raises ProbeParamError."""
    raw = argv[1] if len(argv) > 1 else ""
    if raw.startswith("@"):
        try:
            with open(raw[1:]) as fh:
                raw = fh.read()
        except OSError as exc:
            raise ProbeParamError("cannot read params file %s: %s" % (raw[1:], exc))
    given = {}
    if raw.strip():
        try:
            given = json.loads(raw)
        except ValueError as exc:
            raise ProbeParamError("argv[1] is not JSON: %s" % exc)
    if not isinstance(given, dict):
        raise ProbeParamError("argv[1] must be a JSON object, got %s" % type(given).__name__)
    params, warnings = {}, []
    for name, (default, kind) in spec.items():
        value = given.get(name, default)
        _check_type(name, value, kind)
        params[name] = value
    for name in given:
        if name not in spec:
            warnings.append("unknown param %r ignored" % name)
    return params, warnings


def node_name(param):
    return param or os.environ.get("NODE_NAME") or socket.gethostname()


def _flush_c_stdio():
    """Flush C-level stdio (NCCL writes its INFO lines there) so it lands before our JSON."""
    try:
        import ctypes
        ctypes.CDLL(None).fflush(None)
    except Exception:
        pass


class Probe(object):
    """Holds the result envelope, the current stage, and a watchdog that prints it on a hang."""

    def __init__(self, name):
        self.t0 = time.monotonic()
        self.stage = "start"
        self.quiet = False  # True: print the JSON to stderr (L3 ranks other than 0)
        self._lock = threading.Lock()
        self._emitted = False
        self.result = {
            "probe": name, "schema": SCHEMA, "node": node_name(None), "duration_s": None,
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "params": {}, "warnings": [], "timed_out": False, "error": None,
        }

    def setup(self, argv, spec):
        params, warnings = parse_params(argv, spec)
        self.result["params"] = params
        self.result["warnings"].extend(warnings)
        self.result["node"] = node_name(params.get("node"))
        return params

    def start_watchdog(self, timeout_s):
        if not timeout_s or timeout_s <= 0:
            return
        timer = threading.Timer(float(timeout_s), self._on_timeout, args=(timeout_s,))
        timer.daemon = True
        timer.start()

    def _on_timeout(self, timeout_s):
        for pgid in list(_CHILD_GROUPS):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        self.result["timed_out"] = True
        self.result["error"] = "probe timed out after %s s during stage %r" % (timeout_s, self.stage)
        self.emit()
        os._exit(0)

    def emit(self, crashed=False):
        """Print the JSON line once (thread-safe). Returns False if it was already printed."""
        if not self._lock.acquire(timeout=30):
            return False
        if self._emitted:
            self._lock.release()
            return False
        self._emitted = True
        self.result["duration_s"] = round(time.monotonic() - self.t0, 3)
        if crashed:
            self.result["crashed"] = True
        line = None
        for _attempt in range(3):  # another thread may still be mutating the result
            try:
                line = json.dumps(_finite(self.result), sort_keys=False)
                break
            except RuntimeError:
                time.sleep(0.05)
        if line is None:
            line = json.dumps({"probe": self.result.get("probe"), "schema": SCHEMA,
                               "node": self.result.get("node"), "error": "could not serialise result",
                               "duration_s": self.result["duration_s"]})
        _flush_c_stdio()
        stream = sys.stderr if self.quiet else sys.stdout
        try:
            sys.stderr.flush()
            stream.write("\n" + line + "\n")
            stream.flush()
        except Exception:
            os.write(2 if self.quiet else 1, ("\n" + line + "\n").encode("utf-8", "replace"))
        return True


def main_wrapper(name, spec, body, watchdog_s=None):
    """Run body(probe, params); map a bad-params error to exit 2 and a crash to exit 1.

    watchdog_s(params) gives the watchdog's seconds (default: params["timeout_s"]).
    """
    probe = Probe(name)
    try:
        params = probe.setup(sys.argv, spec)
        probe.start_watchdog(watchdog_s(params) if watchdog_s else params.get("timeout_s"))
    except ProbeParamError as exc:
        probe.result["error"] = "bad params: %s" % exc
        probe.emit()
        return 2
    try:
        body(probe, params)
    except ProbeParamError as exc:
        probe.result["error"] = "bad params: %s" % exc
        probe.emit()
        return 2
    except Exception:
        probe.result["error"] = "probe crashed in stage %r: %s" % (probe.stage, traceback.format_exc()[-4000:])
        probe.emit(crashed=True)
        return 1
    probe.emit()
    return 0


def _tail(text, n=4000):
    return text if len(text) <= n else text[-n:]


def _read_back(fh, limit=4 * 1024 * 1024):
    try:
        fh.flush()
        size = fh.seek(0, 2)
        fh.seek(max(0, size - limit))
        return fh.read().decode("utf-8", "replace")
    except Exception:
        return ""


def run_cmd(cmd, timeout_s, env=None, stdin="devnull", cwd=None, on_timeout=None):
    """Run cmd (a list) in its own process group, output to temp files, whole group killed at timeout.

    stdin: "devnull", or "pipe" (an open pipe nobody writes to, closed only after the child ended).
    on_timeout(pid) is called before the kill (to inspect the stuck child).
    Returns {"rc", "stdout", "stderr", "timed_out", "duration_s", "error", "on_timeout"}.
    """
    res = {"rc": None, "stdout": "", "stderr": "", "timed_out": False, "duration_s": None,
           "error": None, "on_timeout": None}
    t0 = time.monotonic()
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    rfd = wfd = None
    try:
        if stdin == "pipe":
            rfd, wfd = os.pipe()
            stdin_arg = rfd
        else:
            stdin_arg = subprocess.DEVNULL
        try:
            proc = subprocess.Popen(cmd, stdin=stdin_arg, stdout=out, stderr=err, env=env, cwd=cwd,
                                    start_new_session=True)
        except OSError as exc:
            res["error"] = "%s: %s" % (cmd[0], exc.strerror or exc)
            res["not_found"] = isinstance(exc, FileNotFoundError)
            return res
        finally:
            if rfd is not None:
                os.close(rfd)
        _CHILD_GROUPS.add(proc.pid)
        try:
            res["rc"] = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            res["timed_out"] = True
            if on_timeout is not None:
                try:
                    res["on_timeout"] = on_timeout(proc.pid)
                except Exception as exc:
                    res["on_timeout"] = {"error": str(exc)}
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                res["rc"] = proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                res["rc"] = None
        _CHILD_GROUPS.discard(proc.pid)
        res["stdout"] = _read_back(out)
        res["stderr"] = _read_back(err)
        return res
    finally:
        if wfd is not None:
            os.close(wfd)
        out.close()
        err.close()
        res["duration_s"] = round(time.monotonic() - t0, 3)


def signal_name(rc):
    if rc is not None and rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return "signal %d" % -rc
    return None
# --- end common ---


PROBE = "node"
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
