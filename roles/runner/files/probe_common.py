"""What every probe shares (roles/*/files/probe_*.py): parameters, the JSON envelope, the watchdog, child processes.

Contract: docs/probes.md. Parameters = one JSON object in argv[1] (or "@file"); the last stdout line is
one JSON object; exit 0 whatever was found, 1 when the probe itself crashed, 2 on bad parameters.

Standard library only, Python >= 3.8. Not a script: each probe imports the names it uses from here,
explicitly. The runner ships this file next to the probe (roles/runner/tasks/probe_kubernetes.yml: both
in one ConfigMap, mounted at /opt/rlstack; probe_host.yml: both copied into one work directory).

Where a probe finds this module (the few lines at the top of each probe, before this import):
  1. the probe's own directory (os.path.dirname(os.path.abspath(__file__))), put first on sys.path:
     how the runner ships them;
  2. only when probe_common.py is not there: <probe dir>/../../runner/files, the repository layout
     (roles/<level>/files/probe_X.py next to roles/runner/files/probe_common.py), so a probe also runs
     straight from a checkout (tests, tests/gpu/run_all_probes.sh).
If neither has it, the probe still prints its one-line JSON envelope with "crashed": true and an error
saying probe_common.py is missing next to it, and exits 1.
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
