"""L4 probe: import a simulation library in a child python, non-interactively, under a timeout.

Usage: python3 probe_sim_import.py '{"module": "libero.libero",
         "env": {"LIBERO_DATASET_DIR": "/fsx/datasets/libero"}, "required_env": ["LIBERO_DATASET_DIR"],
         "benchmark": {"call": "libero.libero.benchmark.get_benchmark", "name": "libero_10", "expect_tasks": 10}}'
Classifies the import as ok / prompts_for_input / missing_env / import_error / timeout / error.
Fields: docs/probes.md (L4).
"""
import json
import os
import platform
import re
import socket
import sys
import time

PROBE = "sim_import"
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

RESULT_MARKER = "__RLSTACK_PROBE_RESULT__ "
INPUT_MARKER = "__RLSTACK_PROBE_INPUT__ "
SPEC = {
    "node": (None, "str?"),
    "module": (None, "str?"),
    "env": ({}, "dict"),
    "required_env": ([], "list"),
    "timeout_s": (120, "num"),
    "stdin": ("devnull", "str"),
    "python_path": ([], "any"),
    "python": (None, "str?"),
    "benchmark": (None, "dict?"),
}
HINTS = {
    "prompts_for_input": "set the config/dataset variables the library reads (LIBERO: LIBERO_CONFIG_PATH with a "
                         "config.yaml) in the pod env and redirect stdin (</dev/null, or sys.stdin = "
                         "open('/dev/null') before the import)",
    "import_error": "install the package in the image or fix PYTHONPATH (python_path)",
    "timeout": "raise timeout_s or look at stdout_tail/stderr_tail for what the import waits on",
}

CHILD = r'''
import importlib, inspect, json, os, sys, time, traceback
RM, IM = "__RLSTACK_PROBE_RESULT__ ", "__RLSTACK_PROBE_INPUT__ "
def _hook(event, args):
    if event == "builtins.input":
        try:
            os.write(2, ("\n" + IM + json.dumps(str(args[0]) if args else "") + "\n").encode("utf-8", "replace"))
        except Exception:
            pass
sys.addaudithook(_hook)
cfg = json.loads(sys.argv[1])
r = {"ok": False}
def fail(e):
    traceback.print_exc()
    tb = traceback.format_exc()
    msg = repr(e.args[0]) if isinstance(e, KeyError) and len(e.args) == 1 else str(e)
    return {"error_type": type(e).__name__, "error": msg[:2000], "traceback": tb[-6000:],
            "missing_module": getattr(e, "name", None) if isinstance(e, ImportError) else None,
            "key": e.args[0] if isinstance(e, KeyError) and e.args and isinstance(e.args[0], str) else None}
def resolve(call, br):
    # The longest importable prefix, then getattr for the rest. Only "this very name is no module" makes a
    # shorter prefix worth a try: any other ImportError (LIBERO 0.1.1's libero/libero/benchmark/__init__.py:5
    # imports torch) is the cause, which a getattr on the parent would hide behind an AttributeError.
    parts, last = call.split("."), None
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        try:
            obj = importlib.import_module(name)
        except ImportError as e:
            gone = e.name if isinstance(e, ModuleNotFoundError) else None
            if gone and (name == gone or name.startswith(gone + ".")):
                last = e
                continue
            # the module that failed: the first prefix the import left out of sys.modules
            failed = next((".".join(parts[:j]) for j in range(1, i + 1)
                           if ".".join(parts[:j]) not in sys.modules), name)
            br["module"], br["missing_module"] = failed, gone
            if gone:
                br["hint"] = ("install %s in the image (%s imports it), or run L4 with the image that has it"
                              % (gone.split(".")[0], failed))
            else:
                br["hint"] = "fix the import of %s in the image (its traceback is in the probe's stderr_tail)" % failed
            raise
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise last or ImportError("no prefix of %r can be imported" % call)
t0 = time.time()
try:
    m = importlib.import_module(cfg["module"])
    r["ok"] = True
    r["module_file"] = getattr(m, "__file__", None)
    v = getattr(m, "__version__", None)
    r["module_version"] = str(v) if v is not None else None
except BaseException as e:
    r.update(fail(e))
r["import_s"] = round(time.time() - t0, 3)
b = cfg.get("benchmark")
if r["ok"] and b:
    br = {"ok": False, "error": None, "error_type": None, "call": b.get("call"), "name": b.get("name"),
          "result_type": None, "n_tasks": None, "count_via": None, "expect_tasks": b.get("expect_tasks"),
          "task_names": None}
    t1 = time.time()
    try:
        obj = resolve(b["call"], br)
        args = b.get("args")
        if args is None:
            args = [b["name"]] if b.get("name") is not None else []
        res = obj(*args, **(b.get("kwargs") or {}))
        if inspect.isclass(res) and b.get("instantiate", True):
            res = res()
        br["result_type"] = type(res).__name__ if not inspect.isclass(res) else res.__name__
        for via, get in (("n_tasks", lambda o: o.n_tasks), ("get_num_tasks()", lambda o: o.get_num_tasks()),
                         ("num_tasks", lambda o: o.num_tasks), ("len()", len), ("len(.tasks)", lambda o: len(o.tasks))):
            try:
                n = get(res)
                n = n() if callable(n) else n
                if isinstance(n, int) and not isinstance(n, bool):
                    br["n_tasks"], br["count_via"] = n, via
                    break
            except Exception:
                pass
        try:
            names = res.get_task_names()
            br["task_names"] = [str(x) for x in list(names)[:50]]
        except Exception:
            pass
        if br["n_tasks"] is None:
            br["error"] = "could not count tasks of %s (no n_tasks, get_num_tasks(), num_tasks, len())" % br["result_type"]
        elif br["expect_tasks"] is not None and br["n_tasks"] != br["expect_tasks"]:
            br["error"] = "%d tasks, expected %d" % (br["n_tasks"], br["expect_tasks"])
        else:
            br["ok"] = True
    except BaseException as e:
        f = fail(e)
        br["error"], br["error_type"] = "%s: %s" % (f["error_type"], f["error"]), f["error_type"]
        if br.get("module"):
            br["error"] = "%s (for %s) cannot be imported: %s" % (br["module"], br["call"], br["error"])
    br["duration_s"] = round(time.time() - t1, 3)
    r["benchmark"] = br
sys.stdout.flush()
sys.stderr.flush()
os.write(1, ("\n" + RM + json.dumps(r, default=str) + "\n").encode("utf-8", "replace"))
'''

ENV_NAME = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")
PROMPTISH = re.compile(r"(\?|:|\(y/n\)|\[y/n\]|>)\s*$", re.I)


def stdin_wait_state(pid):
    """True if the process is blocked in read(0, ...) (Linux /proc), False if not, None if unknown."""
    try:
        with open("/proc/%d/syscall" % pid) as fh:
            fields = fh.read().split()
    except OSError:
        return None
    if not fields or fields[0] in ("running", "-1"):
        return False
    read_nr = {"x86_64": "0", "aarch64": "63", "arm64": "63"}.get(platform.machine())
    if read_nr is None or len(fields) < 2:
        return None
    return fields[0] == read_nr and int(fields[1], 16) == 0


def _marker_re(marker):
    return re.compile(r"\n" + re.escape(marker) + r"([^\n]*)\n?")


def split_markers(stdout, stderr):
    """(child result or None, input() prompts, stdout and stderr without the probe's marker lines)."""
    result, prompts = None, []
    rre, ire = _marker_re(RESULT_MARKER), _marker_re(INPUT_MARKER)
    for m in rre.finditer(stdout):
        try:
            result = json.loads(m.group(1))
        except ValueError:
            pass
    for m in ire.finditer(stderr):
        try:
            prompts.append(json.loads(m.group(1)))
        except ValueError:
            prompts.append(m.group(1))
    return result, prompts, rre.sub("", stdout), ire.sub("", stderr)


def _input_eof_in(text):
    return "EOF when reading a line" in text and re.search(r"\binput\(", text) is not None


def env_names_in(text, required):
    """Upper-case names in text that look like env vars (required ones first)."""
    found = [n for n in required if n in text]
    if "environ" in text or "environment variable" in text.lower() or "getenv" in text:
        for n in ENV_NAME.findall(text):
            if n not in found and n not in ("EOF", "ERROR", "KEY", "PATH_MAX"):
                found.append(n)
    return found


def classify(obs, required_env, stdin_mode):
    """Pure classification. obs: {"import_timed_out", "returncode", "result", "stdout", "stderr",
    "input_prompts", "blocked_on_stdin", "unset_required"} -> (status, message, hint, evidence, missing_env)."""
    res = obs.get("result") or {}
    tb = (res.get("traceback") or "") + "\n" + (obs.get("stderr") or "")
    etype, emsg = res.get("error_type"), res.get("error") or ""
    evidence = []
    missing = list(obs.get("unset_required") or [])
    prompts = obs.get("input_prompts") or []
    timed_out = bool(obs.get("import_timed_out"))
    eof = etype == "EOFError" or _input_eof_in(tb)

    for pr in prompts:
        evidence.append("input() called at import, prompt: %r" % pr)
    last_out = (obs.get("stdout") or "").rstrip("\n").split("\n")[-1] if obs.get("stdout") else ""
    if eof and _input_eof_in(tb):
        evidence.append("EOFError: EOF when reading a line, raised by input() (stdin at %s)" % stdin_mode)
    if timed_out and obs.get("blocked_on_stdin"):
        evidence.append("timed out while reading stdin (fd 0)")
    elif timed_out and last_out and PROMPTISH.search(last_out) and not (obs.get("stdout") or "").endswith("\n"):
        evidence.append("timed out after printing a prompt: %r" % last_out[-200:])

    # env-var evidence from the error
    env_err = False
    if res and not res.get("ok"):
        if etype == "KeyError" and res.get("key") and ENV_NAME.fullmatch(res["key"] or "") and (
                "environ" in tb or res["key"] in required_env):
            env_err = True
            if res["key"] not in missing:
                missing.append(res["key"])
        names = env_names_in(emsg, required_env) if etype not in ("ModuleNotFoundError", "ImportError") else []
        if names and ("environment variable" in emsg.lower() or any(n in required_env for n in names)):
            env_err = True
            missing.extend(n for n in names if n not in missing)
    if missing:
        evidence.append("environment variable(s) not set: %s" % ", ".join(missing))

    prompted = bool(prompts) or (eof and _input_eof_in(tb)) or (
        timed_out and (obs.get("blocked_on_stdin") or any(e.startswith("timed out after printing") for e in evidence)))
    if prompted:
        status = "prompts_for_input"
        if timed_out:
            message = "import blocked: the library waits for interactive input"
        else:
            message = ("import failed: the library prompts for input at import (input() got EOF, stdin is %s)"
                       % ("/dev/null" if stdin_mode == "devnull" else "closed"))
        hint = HINTS["prompts_for_input"]
    elif env_err or (missing and etype not in ("ModuleNotFoundError", "ImportError")):
        status = "missing_env"
        message = "missing environment variable(s): %s" % ", ".join(missing)
        hint = "set %s in the pod's env block" % ", ".join(missing)
    elif etype in ("ModuleNotFoundError", "ImportError"):
        status = "import_error"
        message = "%s: %s" % (etype, emsg)
        hint = HINTS["import_error"]
    elif timed_out:
        status = "timeout"
        message = "import did not finish within %s s" % obs.get("timeout_s")
        hint = HINTS["timeout"]
        evidence.append("timed out, not waiting on stdin")
    elif res and not res.get("ok"):
        status, message, hint = "error", "%s: %s" % (etype, emsg), None
    elif not res:
        rc = obs.get("returncode")
        sig = signal_name(rc)
        status, hint = "error", None
        message = "the import's python died without a result (exit %s%s)" % (rc, ", " + sig if sig else "")
        if obs.get("launch_error"):
            message = "could not start python: %s" % obs["launch_error"]
    else:
        status, message, hint = "ok", "imported %s in %s s" % (obs.get("module"), res.get("import_s")), None
    return status, message, hint, evidence, missing


def body(probe, p):
    r = probe.result
    module = p["module"]
    if not module:
        raise ProbeParamError("module is required")
    if p["stdin"] not in ("devnull", "pipe"):
        raise ProbeParamError("stdin must be devnull or pipe")
    if not all(isinstance(n, str) for n in p["required_env"]):
        raise ProbeParamError("required_env must be a list of str")
    pp = p["python_path"]
    if isinstance(pp, str):
        pp = [x for x in pp.split(os.pathsep) if x]
    if not isinstance(pp, list):
        raise ProbeParamError("python_path must be a list or a str")
    bench = p["benchmark"]
    if bench is not None and not isinstance(bench.get("call"), str):
        raise ProbeParamError("benchmark.call must be a dotted function name")

    env = dict(os.environ)
    env.update({str(k): str(v) for k, v in p["env"].items()})
    env["PYTHONUNBUFFERED"] = "1"
    if pp:
        env["PYTHONPATH"] = os.pathsep.join(pp + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    unset = [n for n in p["required_env"] if not env.get(n)]
    python = p["python"] or sys.executable
    cfg = {"module": module, "benchmark": bench}

    probe.stage = "import %s" % module
    res = run_cmd([python, "-c", CHILD, json.dumps(cfg)], p["timeout_s"], env=env, stdin=p["stdin"],
                  on_timeout=stdin_wait_state)
    result, prompts, out, err = split_markers(res["stdout"], res["stderr"])
    obs = {"import_timed_out": res["timed_out"], "returncode": res["rc"], "result": result, "stdout": out,
           "stderr": err, "input_prompts": prompts, "blocked_on_stdin": res["on_timeout"] if res["timed_out"] else None,
           "unset_required": unset, "timeout_s": p["timeout_s"], "module": module, "launch_error": res["error"]}
    status, message, hint, evidence, missing = classify(obs, p["required_env"], p["stdin"])
    result = result or {}
    bench_out = None
    if bench is not None:
        bench_out = result.get("benchmark") or not_attempted("import failed" if not result.get("ok") else "no result")
    r.update({
        "module": module, "status": status, "ok": status == "ok" and (bench_out is None or bool(bench_out.get("ok"))),
        "message": message, "hint": hint, "evidence": evidence,
        "stdin": p["stdin"], "timeout_s": p["timeout_s"], "import_timed_out": res["timed_out"],
        "blocked_on_stdin": obs["blocked_on_stdin"], "returncode": res["rc"], "elapsed_s": res["duration_s"],
        "import_s": result.get("import_s"),
        "error_type": result.get("error_type"), "error": result.get("error"),
        "traceback_tail": "\n".join((result.get("traceback") or "").rstrip().splitlines()[-15:]) or None,
        "input_prompts": prompts, "missing_env": missing,
        "env_set": sorted(p["env"]), "required_env": p["required_env"],
        "module_file": result.get("module_file"), "module_version": result.get("module_version"),
        "benchmark": bench_out,
        "stdout_tail": _tail(out), "stderr_tail": _tail(err),
    })
    if res["error"]:
        r["error"] = "could not start %s: %s" % (python, res["error"])
    probe.stage = "done"


if __name__ == "__main__":
    # the watchdog leaves room for the child's own timeout
    sys.exit(main_wrapper(PROBE, SPEC, body, watchdog_s=lambda p: float(p["timeout_s"]) + 60))
