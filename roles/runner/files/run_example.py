"""Run one L5/L6 example on the host (host transport) under its deadline, and stop it early when its log
shows that the one-step (or evaluation-only) override did not take effect.

Usage: python3 run_example.py '{"command": [...], "env": {...}, "deadline_s": 600, "mode": "train",
                                "framework": "trl", "launched": {...}, "log_path": "/tmp/x.log"}'
The last stdout line is one JSON object: rc, timed_out, stopped (the finding of
_frameworks.overrun, with stopped_after_s: seconds from that line to the kill), duration_s, log
(its last 1 MiB, redacted on the host: the values of the run's secret-looking environment variables and
common token shapes never leave it, _log_excerpt.py shipped next to this file). The judgement uses the same contract as the Kubernetes transport
(plugins/module_utils/_frameworks.py, shipped next to this file as _frameworks.py).
Standard library only.
"""
import json
import os
import re
import select
import signal
import subprocess
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
if not os.path.isfile(os.path.join(_HERE, "_frameworks.py")):  # run from a checkout
    sys.path.insert(1, os.path.join(_HERE, "..", "..", "..", "plugins", "module_utils"))
    sys.path.insert(2, os.path.join(_HERE, "..", "..", "..", "plugins", "module_utils", "verdicts"))
import _frameworks  # noqa: E402
import _log_excerpt  # noqa: E402

LOG_CAP = 1 << 20
GRACE_S = 5.0


def _stop(proc):
    """SIGTERM the whole process group, SIGKILL after a grace period."""
    for sig, wait_s in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def run(params):
    contract = _frameworks.contract(params.get("framework") or "custom")
    mode = params.get("mode") or "train"
    env = dict(os.environ)
    env.update({str(k): str(v) for k, v in (params.get("env") or {}).items()})
    deadline = time.time() + float(params.get("deadline_s") or 600)
    started = time.time()
    log_file = open(params["log_path"], "wb") if params.get("log_path") else None
    proc = subprocess.Popen([str(a) for a in params["command"]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env=env, cwd=params.get("cwd") or None, start_new_session=True)
    chunks, size, pending, stopped, timed_out = [], 0, "", None, False
    while True:
        left = deadline - time.time()
        if left <= 0:
            timed_out = True
            _stop(proc)
            break
        ready = select.select([proc.stdout], [], [], min(left, 1.0))[0]
        if not ready:
            if proc.poll() is not None:
                break
            continue
        data = os.read(proc.stdout.fileno(), 65536)
        if not data:
            break
        if log_file:
            log_file.write(data)
            log_file.flush()
        text = data.decode("utf-8", "replace")
        chunks.append(text)
        size += len(text)
        while size > LOG_CAP and len(chunks) > 1:
            size -= len(chunks.pop(0))
        # Complete lines only (tqdm ends its updates with \r); the unfinished rest waits for more.
        lines = re.split(r"(\r\n|\r|\n)", pending + text)
        pending = lines.pop() if lines else ""
        found = _frameworks.overrun("".join(lines), contract, mode, params.get("launched"))
        if found:
            seen_at = time.time()
            _stop(proc)
            found["stopped_after_s"] = round(time.time() - seen_at, 3)
            stopped = found
            break
    rc = proc.wait()
    if log_file:
        log_file.close()
    secrets = _log_excerpt.secret_values(env)
    if stopped:
        stopped = dict(stopped, line=_log_excerpt.redact(stopped.get("line"), secrets),
                       message=_log_excerpt.redact(stopped.get("message"), secrets))
    return {"rc": rc, "timed_out": timed_out, "stopped": stopped, "duration_s": round(time.time() - started, 3),
            "log": _log_excerpt.redact("".join(chunks)[-LOG_CAP:], secrets)}


def main(argv):
    arg = argv[1] if len(argv) > 1 else "{}"
    if arg.startswith("@"):
        with open(arg[1:]) as fh:
            arg = fh.read()
    try:
        params = json.loads(arg)
        if not isinstance(params.get("command"), list) or not params["command"]:
            raise ValueError("command must be a non-empty list")
        result = run(params)
    except (ValueError, OSError) as exc:
        result = {"rc": None, "timed_out": False, "stopped": None, "duration_s": 0.0, "log": "",
                  "error": "%s: %s" % (type(exc).__name__, exc)}
    print("\n" + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
