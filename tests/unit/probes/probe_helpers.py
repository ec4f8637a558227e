"""Helpers (not a conftest: module names must stay unique across test folders) for the CPU unit tests of the probes (roles/*/files/probe_*.py).

The probes are scripts that import their shared helpers from roles/runner/files/probe_common.py (next to
the probe when shipped, the repository layout otherwise): tests load them as modules by path (for their
pure functions) and run them as real subprocesses (for the JSON contract). Nothing here needs torch or a GPU.
"""
import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PROBES = {
    "node": os.path.join(ROOT, "roles", "l0_infrastructure", "files", "probe_node.py"),
    "runtime": os.path.join(ROOT, "roles", "l1_runtime", "files", "probe_runtime.py"),
    "model": os.path.join(ROOT, "roles", "l2_single_gpu", "files", "probe_model.py"),
    "multigpu": os.path.join(ROOT, "roles", "l3_multi_gpu", "files", "probe_multigpu.py"),
    "sim_import": os.path.join(ROOT, "roles", "l4_rollout", "files", "probe_sim_import.py"),
}
COMMON = os.path.join(ROOT, "roles", "runner", "files", "probe_common.py")
FAKE_SIMS = os.path.join(ROOT, "tests", "gpu", "fake_sims")


def _fixture_dir(name):
    """tests/unit/fixtures/<name> (in the repo), else the shared/ copy beside the checkout."""
    for base in (os.path.join(ROOT, "tests", "unit", "fixtures"), os.path.join(ROOT, "..", "shared", "fixtures")):
        if os.path.isdir(os.path.join(base, name)):
            return os.path.join(base, name)
    return os.path.join(ROOT, "tests", "unit", "fixtures", name)


SHARED_RECORDED = _fixture_dir("recorded")
NCCL_FIXTURES = _fixture_dir("nccl")


def load_probe(name):
    spec = importlib.util.spec_from_file_location("probe_" + name + "_under_test", PROBES[name])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_common():
    """roles/runner/files/probe_common.py as the module `probe_common`: the very object the probes import."""
    files = os.path.dirname(COMMON)
    if files not in sys.path:
        sys.path.append(files)
    return importlib.import_module("probe_common")


def copy_probe(name, dest, common=True):
    """Copy a probe (with probe_common.py unless common is false) into the directory dest; returns the probe's path."""
    os.makedirs(str(dest), exist_ok=True)
    path = os.path.join(str(dest), os.path.basename(PROBES[name]))
    shutil.copy(PROBES[name], path)
    if common:
        shutil.copy(COMMON, os.path.join(str(dest), "probe_common.py"))
    return path


class ProbeRun(object):
    def __init__(self, rc, stdout, stderr):
        self.rc, self.stdout, self.stderr = rc, stdout, stderr
        lines = stdout.rstrip("\n").split("\n")
        self.last_line = lines[-1] if lines else ""
        try:
            self.json = json.loads(self.last_line)
        except ValueError:
            self.json = None

    def __repr__(self):
        return "ProbeRun(rc=%r, stdout=%r, stderr=%r)" % (self.rc, self.stdout[-2000:], self.stderr[-2000:])


def run_probe(name, params=None, env=None, timeout=120, raw_arg=None, python=None, unset=(), script=None):
    """Run a probe as a subprocess with stdin at /dev/null; params is a dict (or raw_arg a string).

    env adds variables, unset removes inherited ones (NODE_NAME is always removed); script runs that
    file (a copy of the probe, see copy_probe) instead of the probe in the repository.
    """
    cmd = [python or sys.executable, script or PROBES[name]]
    if raw_arg is not None:
        cmd.append(raw_arg)
    elif params is not None:
        cmd.append(json.dumps(params))
    full_env = dict(os.environ)
    for key in ("NODE_NAME",) + tuple(unset):
        full_env.pop(key, None)
    full_env.update(env or {})
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=full_env, timeout=timeout, universal_newlines=True, check=False)
    return ProbeRun(p.returncode, p.stdout, p.stderr)


def has_module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
