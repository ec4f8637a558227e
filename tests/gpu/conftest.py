"""GPU tests of the probes: marked `gpu`, skipped where torch sees no CUDA GPU.

Run on a GPU machine with `pytest -m gpu tests/gpu`. The marker is registered here as well (for runs
that include this folder); the project's pytest configuration should also declare it:
    markers = gpu: needs an NVIDIA GPU with torch (skipped without one)
"""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PROBES = {
    "node": os.path.join(ROOT, "roles", "l0_infrastructure", "files", "probe_node.py"),
    "runtime": os.path.join(ROOT, "roles", "l1_runtime", "files", "probe_runtime.py"),
    "model": os.path.join(ROOT, "roles", "l2_single_gpu", "files", "probe_model.py"),
    "multigpu": os.path.join(ROOT, "roles", "l3_multi_gpu", "files", "probe_multigpu.py"),
    "sim_import": os.path.join(ROOT, "roles", "l4_rollout", "files", "probe_sim_import.py"),
}
FAKE_SIMS = os.path.join(HERE, "fake_sims")

# Only effective in test modules; kept here as the folder's declaration. The hook below does the work.
pytestmark = pytest.mark.gpu


def _gpu_count():
    try:
        import torch
        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:
        return 0


GPU_COUNT = _gpu_count()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU with torch (skipped without one)")


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="no CUDA GPU visible to torch")
    for item in items:
        if str(item.fspath).startswith(HERE + os.sep):
            item.add_marker(pytest.mark.gpu)
            if GPU_COUNT == 0:
                item.add_marker(skip)


class ProbeRun(object):
    def __init__(self, proc):
        self.rc, self.stdout, self.stderr = proc.returncode, proc.stdout, proc.stderr
        self.last_line = proc.stdout.rstrip("\n").split("\n")[-1]
        try:
            self.json = json.loads(self.last_line)
        except ValueError:
            self.json = None

    def __repr__(self):
        return "ProbeRun(rc=%r, stdout=...%r, stderr=...%r)" % (self.rc, self.stdout[-3000:], self.stderr[-3000:])


def run_probe(name, params, launcher=None, env=None, timeout=600):
    cmd = (launcher or [sys.executable]) + [PROBES[name], json.dumps(params)]
    full_env = dict(os.environ, NCCL_NVLS_ENABLE="0", HF_HUB_OFFLINE="1")
    full_env.update(env or {})
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=full_env, timeout=timeout)
    return ProbeRun(proc)


@pytest.fixture(scope="session")
def gpu_count():
    return GPU_COUNT


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    """{"ok": dir, "skew": dir} built by make_tiny_model.py (or taken from $RLSTACK_TINY_MODEL_DIR)."""
    given = os.environ.get("RLSTACK_TINY_MODEL_DIR")
    if given and os.path.isdir(os.path.join(given, "ok")):
        return {"ok": os.path.join(given, "ok"), "skew": os.path.join(given, "skew")}
    out = str(tmp_path_factory.mktemp("tiny-model"))
    subprocess.run([sys.executable, os.path.join(HERE, "make_tiny_model.py"), out], check=True,
                   stdin=subprocess.DEVNULL, timeout=600)
    return {"ok": os.path.join(out, "ok"), "skew": os.path.join(out, "skew")}
