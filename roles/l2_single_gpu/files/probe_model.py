"""L2 probe: load a checkpoint's config, tokenizer and model on one GPU, run one forward pass.

Usage: python3 probe_model.py '{"model_path": "/fsx/models/openvla-7b",
                                "required_config_attrs": ["use_proprio", "num_action_chunks"]}'
Fields: docs/probes.md (L2). torch and transformers are imported lazily; their absence is reported.
"""
import json
import math
import os
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


PROBE = "model"
SPEC = {
    "node": (None, "str?"),
    "model_path": (None, "str?"),
    "dtype": ("bf16", "str"),
    "device": ("cuda:0", "str"),
    "required_config_attrs": ([], "list"),
    "auto_class": ("AutoModelForCausalLM", "str"),
    "trust_remote_code": (False, "bool"),
    "local_files_only": (True, "bool"),
    "tokenizer": (True, "bool"),
    "tokenizer_path": (None, "str?"),
    "forward": (True, "bool"),
    "forward_text": ("The robot picks up the red block.", "str"),
    "max_forward_tokens": (32, "int"),
    "timeout_s": (1800, "num"),
}
DTYPES = {"bf16": "bfloat16", "bfloat16": "bfloat16", "fp16": "float16", "float16": "float16",
          "half": "float16", "fp32": "float32", "float32": "float32", "float": "float32", "auto": "auto"}


def skew_hint(attrs):
    first = attrs[0]
    return ("config.json lacks %s: the checkpoint was saved by an older version of the modeling code "
            "(Model/Config Version Skew). Patch the modeling code to use getattr(config, '%s', <default>) "
            "(keep patches in examples/patches/), or add the attributes to config.json."
            % (", ".join(attrs), first))


def missing_attrs(config_obj, raw_config, required):
    """Attributes of `required` that the loaded config (or, failing that, the raw config.json) lacks."""
    if config_obj is not None:
        return [a for a in required if not hasattr(config_obj, a)]
    if isinstance(raw_config, dict):
        return [a for a in required if a not in raw_config]
    return list(required)


def _version_tuple(v):
    out = []
    for part in str(v).split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out + [0] * (3 - len(out)))


def _list_files(path, limit=200):
    files, total = [], 0
    for root, dirs, names in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for n in names:
            full = os.path.join(root, n)
            try:
                total += os.path.getsize(full)
            except OSError:
                pass
            if len(files) < limit:
                files.append(os.path.relpath(full, path))
    return sorted(files), total


def _mib(n):
    return round(n / (1024.0 * 1024.0), 1)


def body(probe, p):
    r = probe.result
    required = p["required_config_attrs"]
    if not all(isinstance(a, str) for a in required):
        raise ProbeParamError("required_config_attrs must be a list of str")
    if not p["model_path"]:
        raise ProbeParamError("model_path is required")
    dtype_name = DTYPES.get(p["dtype"].lower())
    if dtype_name is None:
        raise ProbeParamError("dtype must be one of %s" % ", ".join(sorted(DTYPES)))

    probe.stage = "imports"
    torch = transformers = None
    r["missing_packages"] = []
    try:
        import torch  # noqa: F811
        r["torch"] = str(torch.__version__)
    except Exception as exc:
        r["torch"] = None
        r["torch_error"] = "%s: %s" % (type(exc).__name__, exc)
        r["missing_packages"].append("torch")
    try:
        import transformers  # noqa: F811
        r["transformers"] = str(transformers.__version__)
    except Exception as exc:
        r["transformers"] = None
        r["transformers_error"] = "%s: %s" % (type(exc).__name__, exc)
        r["missing_packages"].append("transformers")

    path = p["model_path"]
    r["model_path"] = path
    r["model_path_exists"] = os.path.isdir(path)
    r["files"], r["files_bytes"] = _list_files(path) if r["model_path_exists"] else ([], 0)
    r["required_config_attrs"] = required
    r["missing_config_attrs"] = []
    r["config_attrs_checked"] = False
    r["config_skew_hint"] = None
    for key in ("config", "tokenizer", "model", "forward"):
        r[key] = None
    r["ok"] = False

    if not r["model_path_exists"]:
        why = "model_path missing"
        r["error"] = "model_path %s does not exist" % path if not os.path.exists(path) else "model_path %s is not a directory" % path
        r["config"] = not_attempted(why)
        r["config_attrs_checked"] = False
        r["tokenizer"] = not_attempted(why) if p["tokenizer"] else None
        r["model"] = not_attempted(why)
        r["forward"] = not_attempted(why) if p["forward"] else None
        return
    if r["missing_packages"]:
        r["error"] = "not installed in this image: %s" % ", ".join(r["missing_packages"])

    # --- config -------------------------------------------------------------------------------
    probe.stage = "config"
    raw = None
    try:
        with open(os.path.join(path, "config.json")) as fh:
            raw = json.load(fh)
    except Exception as exc:
        r["config_json_error"] = "%s: %s" % (type(exc).__name__, exc)
    config = None
    common_kw = {"trust_remote_code": p["trust_remote_code"], "local_files_only": p["local_files_only"]}
    if transformers is None:
        r["config"] = not_attempted("transformers not installed")
    else:
        t0 = time.monotonic()
        try:
            config = transformers.AutoConfig.from_pretrained(path, **common_kw)
            r["config"] = {"ok": True, "error": None, "class": type(config).__name__,
                           "model_type": getattr(config, "model_type", None),
                           "architectures": getattr(config, "architectures", None),
                           "load_s": round(time.monotonic() - t0, 3)}
        except Exception as exc:
            r["config"] = err_info(exc)
            r["config"]["load_s"] = round(time.monotonic() - t0, 3)
    r["config_attrs_checked"] = config is not None or isinstance(raw, dict)
    r["missing_config_attrs"] = missing_attrs(config, raw, required) if r["config_attrs_checked"] else []
    if r["missing_config_attrs"]:
        r["config_skew_hint"] = skew_hint(r["missing_config_attrs"])

    # --- tokenizer ----------------------------------------------------------------------------
    tok = None
    if p["tokenizer"]:
        probe.stage = "tokenizer"
        if transformers is None:
            r["tokenizer"] = not_attempted("transformers not installed")
        else:
            t0 = time.monotonic()
            try:
                tok = transformers.AutoTokenizer.from_pretrained(p["tokenizer_path"] or path, **common_kw)
                r["tokenizer"] = {"ok": True, "error": None, "class": type(tok).__name__,
                                  "vocab_size": getattr(tok, "vocab_size", None), "len": len(tok),
                                  "load_s": round(time.monotonic() - t0, 3)}
            except Exception as exc:
                r["tokenizer"] = err_info(exc)
                r["tokenizer"]["load_s"] = round(time.monotonic() - t0, 3)

    # --- model ----------------------------------------------------------------------------------
    probe.stage = "model"
    model = None
    device = p["device"]
    if transformers is None or torch is None:
        r["model"] = not_attempted("%s not installed" % " and ".join(r["missing_packages"]))
    elif device.startswith("cuda") and not torch.cuda.is_available():
        r["model"] = {"ok": False, "error": "CUDA not available", "error_type": None}
        r["error"] = r["error"] or "CUDA not available to torch"
    else:
        info = {"ok": False, "error": None, "auto_class": p["auto_class"], "class": None,
                "dtype": None, "device": device, "load_method": None, "param_count": None,
                "load_s": None, "gpu_memory": None, "hint": None}
        cls = getattr(transformers, p["auto_class"], None)
        if cls is None:
            info["error"] = "transformers %s has no %s" % (r["transformers"], p["auto_class"])
            info["error_type"] = "AttributeError"
        else:
            kw = dict(common_kw)
            dkey = "dtype" if _version_tuple(r["transformers"]) >= (4, 56, 0) else "torch_dtype"
            kw[dkey] = "auto" if dtype_name == "auto" else getattr(torch, dtype_name)
            on_cuda = device.startswith("cuda")
            if on_cuda:
                if torch.device(device).index is not None:
                    torch.cuda.set_device(torch.device(device))
                torch.cuda.reset_peak_memory_stats(torch.device(device))
            t0 = time.monotonic()
            try:
                try:
                    model = cls.from_pretrained(path, device_map={"": device}, **kw)
                    info["load_method"] = "device_map"
                except (ImportError, ValueError) as exc:
                    if "accelerate" not in str(exc).lower():
                        raise
                    model = cls.from_pretrained(path, **kw).to(device)
                    info["load_method"] = "to(device)"
                if on_cuda:
                    torch.cuda.synchronize()
                info["load_s"] = round(time.monotonic() - t0, 3)
                model.eval()
                first = next(iter(model.parameters()), None)
                info.update(ok=True, **{"class": type(model).__name__})
                info["param_count"] = int(sum(t.numel() for t in model.parameters()))
                info["dtype"] = str(first.dtype) if first is not None else None
                info["device"] = str(first.device) if first is not None else device
                if on_cuda:
                    dev = torch.device(device)
                    free, total = torch.cuda.mem_get_info(dev)
                    info["gpu_memory"] = {
                        "allocated_mib": _mib(torch.cuda.memory_allocated(dev)),
                        "reserved_mib": _mib(torch.cuda.memory_reserved(dev)),
                        "peak_allocated_mib": _mib(torch.cuda.max_memory_allocated(dev)),
                        "device_used_mib": _mib(total - free), "device_total_mib": _mib(total)}
            except Exception as exc:
                info.update(err_info(exc))
                info["load_s"] = round(time.monotonic() - t0, 3)
                msg = info["error"] or ""
                named = [a for a in required if a in msg]
                if isinstance(exc, AttributeError) and ("Config" in msg or named):
                    attrs = named or r["missing_config_attrs"] or [msg.split("'")[-2] if msg.count("'") >= 2 else "?"]
                    info["hint"] = skew_hint(attrs)
        r["model"] = info

    # --- forward --------------------------------------------------------------------------------
    if p["forward"]:
        probe.stage = "forward"
        if model is None:
            r["forward"] = not_attempted("model not loaded")
        else:
            fw = {"ok": False, "error": None, "input_tokens": None, "output_shape": None,
                  "logits_finite": None, "duration_s": None}
            t0 = time.monotonic()
            try:
                dev = torch.device(r["model"]["device"])
                if tok is not None:
                    ids = tok(p["forward_text"], return_tensors="pt")["input_ids"][:, : p["max_forward_tokens"]]
                else:
                    vocab = getattr(config, "vocab_size", None) or 100
                    ids = torch.randint(0, int(vocab), (1, min(8, p["max_forward_tokens"])))
                ids = ids.to(dev)
                fw["input_tokens"] = int(ids.shape[-1])
                with torch.inference_mode():
                    out = model(input_ids=ids)
                logits = getattr(out, "logits", None)
                if logits is None:
                    logits = out[0] if isinstance(out, (tuple, list)) else getattr(out, "last_hidden_state", None)
                if dev.type == "cuda":
                    torch.cuda.synchronize(dev)
                fw["duration_s"] = round(time.monotonic() - t0, 3)
                if logits is not None:
                    fw["output_shape"] = list(logits.shape)
                    fw["logits_finite"] = bool(torch.isfinite(logits.float()).all().item())
                fw["ok"] = fw["logits_finite"] is not False
                if fw["logits_finite"] is False:
                    fw["error"] = "output has non-finite values"
            except Exception as exc:
                fw.update(err_info(exc))
                fw["duration_s"] = round(time.monotonic() - t0, 3)
            r["forward"] = fw

    r["ok"] = bool(
        (r["config"] or {}).get("ok")
        and not r["missing_config_attrs"]
        and (not p["tokenizer"] or (r["tokenizer"] or {}).get("ok"))
        and (r["model"] or {}).get("ok")
        and (not p["forward"] or (r["forward"] or {}).get("ok")))
    probe.stage = "done"


if __name__ == "__main__":
    sys.exit(main_wrapper(PROBE, SPEC, body))
