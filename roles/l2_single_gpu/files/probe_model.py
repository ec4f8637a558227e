"""L2 probe: load a checkpoint's config, tokenizer and model on one GPU, run one forward pass.

Usage: python3 probe_model.py '{"model_path": "/fsx/models/openvla-7b",
                                "required_config_attrs": ["use_proprio", "num_action_chunks"]}'
Fields: docs/probes.md (L2). torch and transformers are imported lazily; their absence is reported.
"""
import json
import os
import socket
import sys
import time

PROBE = "model"
# The helpers every probe shares are in probe_common.py, shipped next to the probe; in the repository it
# lives in roles/runner/files (search order: probe_common.py's docstring).
_PROBE_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _PROBE_DIR)
if not os.path.isfile(os.path.join(_PROBE_DIR, "probe_common.py")):
    sys.path.insert(1, os.path.join(_PROBE_DIR, "..", "..", "runner", "files"))
try:
    from probe_common import ProbeParamError, err_info, main_wrapper, not_attempted
except Exception as exc:  # without it: still the contract's one JSON line (docs/probes.md), exit 1
    _why = "is missing next to" if isinstance(exc, ModuleNotFoundError) and exc.name == "probe_common" else "cannot be imported next to"
    print("\n" + json.dumps({
        "probe": PROBE, "schema": 1, "node": os.environ.get("NODE_NAME") or socket.gethostname(), "duration_s": 0.0,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "params": {}, "warnings": [],
        "timed_out": False, "crashed": True,
        "error": "probe_common.py %s %s: %s: %s" % (_why, os.path.abspath(__file__), type(exc).__name__, exc)}), flush=True)
    sys.exit(1)

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
