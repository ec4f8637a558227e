"""L1 probe: torch / CUDA / cuDNN / NCCL versions, GPUs seen by torch, and isolated imports.

Usage: python3 probe_runtime.py '{"imports": ["transformers", "flash_attn", "verl", "ray"]}'
Fields: docs/probes.md (L1). The torch query and each import run in their own child python with a
timeout, so one failing, crashing or hanging import cannot stop the others.
"""
import json
import math
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

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


PROBE = "runtime"
MARKER = "__RLSTACK_PROBE__ "
SPEC = {
    "node": (None, "str?"),
    "imports": ([], "list"),
    "import_timeout_s": (120, "num"),
    "torch_timeout_s": (180, "num"),
    "python": (None, "str?"),
    "timeout_s": (900, "num"),
}

TORCH_SNIPPET = r'''
import json, sys, time
M = "__RLSTACK_PROBE__ "
r = {}
t0 = time.time()
try:
    import torch
except BaseException as e:
    r["torch_error"] = "%s: %s" % (type(e).__name__, e)
    print("\n" + M + json.dumps(r)); sys.exit(0)
r["torch"] = str(torch.__version__)
r["torch_import_s"] = round(time.time() - t0, 3)
r["cuda"] = getattr(torch.version, "cuda", None)
r["hip"] = getattr(torch.version, "hip", None)
try:
    r["cudnn"] = torch.backends.cudnn.version()
except BaseException as e:
    r["cudnn"] = None
try:
    v = torch.cuda.nccl.version()
    r["nccl_raw"] = list(v) if isinstance(v, tuple) else v
except BaseException as e:
    r["nccl_error"] = "%s: %s" % (type(e).__name__, e)
try:
    r["cuda_available"] = bool(torch.cuda.is_available())
    n = torch.cuda.device_count() if r["cuda_available"] else 0
    r["gpu_count"] = n
    devs = []
    for i in range(n):
        p = torch.cuda.get_device_properties(i)
        devs.append({"index": i, "name": p.name, "capability": "%d.%d" % (p.major, p.minor),
                     "memory_mib": int(p.total_memory // (1024 * 1024))})
    r["devices"] = devs
except BaseException as e:
    r["cuda_error"] = "%s: %s" % (type(e).__name__, e)
if r.get("cuda_available"):
    try:
        x = torch.ones(1024, device="cuda:0")
        s = float(x.sum().item())
        r["cuda_smoke"] = {"ok": s == 1024.0, "error": None if s == 1024.0 else "sum was %r, expected 1024" % s}
    except BaseException as e:
        r["cuda_smoke"] = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
print("\n" + M + json.dumps(r))
'''

IMPORT_SNIPPET = r'''
import importlib, json, sys, time
M = "__RLSTACK_PROBE__ "
name = sys.argv[1]
r = {"ok": False, "version": None, "error": None, "error_type": None, "file": None}
t0 = time.time()
try:
    m = importlib.import_module(name)
    r["ok"] = True
    r["file"] = getattr(m, "__file__", None)
    v = getattr(m, "__version__", None)
    if v is not None and not isinstance(v, str):
        v = str(v)
    if not v:
        try:
            from importlib import metadata
            cands = [name, name.split(".")[0]]
            try:
                cands += metadata.packages_distributions().get(name.split(".")[0], [])
            except Exception:
                pass
            for c in cands:
                try:
                    v = metadata.version(c)
                    break
                except Exception:
                    pass
        except Exception:
            pass
    r["version"] = v or None
except BaseException as e:
    r["error"] = "%s: %s" % (type(e).__name__, e)
    r["error_type"] = type(e).__name__
r["import_s"] = round(time.time() - t0, 3)
sys.stdout.flush()
print("\n" + M + json.dumps(r, default=str))
'''


def decode_version_code(v):
    """NCCL/cuDNN int codes: >= 10000 -> major*10000+minor*100+patch, else major*1000+minor*100+patch."""
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return ".".join(str(x) for x in v)
    if isinstance(v, str):
        return v
    v = int(v)
    if v >= 10000:
        return "%d.%d.%d" % (v // 10000, (v % 10000) // 100, v % 100)
    return "%d.%d.%d" % (v // 1000, (v % 1000) // 100, v % 100)


def last_marker_json(stdout):
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                return json.loads(line[len(MARKER):])
            except ValueError:
                return None
    return None


def _child_env():
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _crash_text(res):
    sig = signal_name(res["rc"])
    err = _tail(res["stderr"].strip(), 800)
    return "exit %s%s%s" % (res["rc"], ", " + sig if sig else "", ": " + err if err else "")


def query_torch(python, timeout_s):
    res = run_cmd([python, "-c", TORCH_SNIPPET], timeout_s, env=_child_env())
    out = {"torch": None, "torch_error": None, "torch_import_s": None, "cuda": None, "hip": None,
           "cudnn": None, "cudnn_version": None, "nccl": None, "nccl_error": None,
           "cuda_available": False, "gpu_count": 0, "gpus": [], "devices": [],
           "cuda_smoke": not_attempted("CUDA not available"), "cuda_error": None}
    if res["error"]:
        out["torch_error"] = "torch query could not start: %s" % res["error"]
        return out
    if res["timed_out"]:
        out["torch_error"] = "torch query timed out after %s s" % timeout_s
        return out
    data = last_marker_json(res["stdout"])
    if data is None:
        out["torch_error"] = "torch query crashed (%s)" % _crash_text(res)
        return out
    for key in ("torch", "torch_error", "torch_import_s", "cuda", "hip", "cudnn", "nccl_error",
                "cuda_error", "cuda_smoke"):
        if key in data:
            out[key] = data[key]
    out["cudnn_version"] = decode_version_code(out["cudnn"])
    if data.get("nccl_raw") is not None:
        out["nccl"] = decode_version_code(data["nccl_raw"])
    out["cuda_available"] = bool(data.get("cuda_available", False))
    out["devices"] = data.get("devices") or []
    out["gpu_count"] = int(data.get("gpu_count") or 0)
    out["gpus"] = [d["name"] for d in out["devices"]]
    return out


def try_import(python, name, timeout_s):
    entry = {"ok": False, "version": None, "error": None, "error_type": None, "import_s": None,
             "timed_out": False, "file": None}
    res = run_cmd([python, "-c", IMPORT_SNIPPET, name], timeout_s, env=_child_env())
    if res["error"]:
        entry["error"] = "import could not start: %s" % res["error"]
        return entry
    if res["timed_out"]:
        entry.update(timed_out=True, import_s=res["duration_s"],
                     error="import timed out after %s s" % timeout_s, error_type="Timeout")
        return entry
    data = last_marker_json(res["stdout"])
    if data is None:
        entry["error"] = "import crashed (%s)" % _crash_text(res)
        entry["error_type"] = "Crash"
        entry["import_s"] = res["duration_s"]
        return entry
    entry.update({k: data.get(k) for k in ("ok", "version", "error", "error_type", "import_s", "file")})
    return entry


def body(probe, p):
    r = probe.result
    python = p["python"] or sys.executable
    r["python"] = platform.python_version()
    r["executable"] = sys.executable
    r["env"] = {k: os.environ.get(k) for k in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")}
    for name in p["imports"]:
        if not isinstance(name, str) or not name:
            raise ProbeParamError("imports must be a list of module names")
    probe.stage = "torch"
    r.update(query_torch(python, p["torch_timeout_s"]))
    if r["torch"] is None:
        r["error"] = "torch is not importable: %s" % r["torch_error"]
    elif not r["cuda_available"]:
        r["error"] = "CUDA not available to torch" + (": %s" % r["cuda_error"] if r["cuda_error"] else "")
    r["imports"] = {}
    for name in p["imports"]:
        probe.stage = "import %s" % name
        r["imports"][name] = try_import(python, name, p["import_timeout_s"])
    r["imports_ok"] = all(v["ok"] for v in r["imports"].values())
    probe.stage = "done"


if __name__ == "__main__":
    sys.exit(main_wrapper(PROBE, SPEC, body))
