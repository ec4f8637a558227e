"""L1 probe: torch / CUDA / cuDNN / NCCL versions, GPUs seen by torch, and isolated imports.

Usage: python3 probe_runtime.py '{"imports": ["transformers", "flash_attn", "verl", "ray"]}'
Fields: docs/probes.md (L1). The torch query and each import run in their own child python with a
timeout, so one failing, crashing or hanging import cannot stop the others.
"""
import json
import os
import platform
import socket
import sys
import time

PROBE = "runtime"
# The helpers every probe shares are in probe_common.py, shipped next to the probe; in the repository it
# lives in roles/runner/files (search order: probe_common.py's docstring).
_PROBE_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _PROBE_DIR)
if not os.path.isfile(os.path.join(_PROBE_DIR, "probe_common.py")):
    sys.path.insert(1, os.path.join(_PROBE_DIR, "..", "..", "runner", "files"))
try:
    from probe_common import ProbeParamError, _tail, main_wrapper, not_attempted, run_cmd, signal_name
except Exception as exc:  # without it: still the contract's one JSON line (docs/probes.md), exit 1
    _why = "is missing next to" if isinstance(exc, ModuleNotFoundError) and exc.name == "probe_common" else "cannot be imported next to"
    print("\n" + json.dumps({
        "probe": PROBE, "schema": 1, "node": os.environ.get("NODE_NAME") or socket.gethostname(), "duration_s": 0.0,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "params": {}, "warnings": [],
        "timed_out": False, "crashed": True,
        "error": "probe_common.py %s %s: %s: %s" % (_why, os.path.abspath(__file__), type(exc).__name__, exc)}), flush=True)
    sys.exit(1)

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
