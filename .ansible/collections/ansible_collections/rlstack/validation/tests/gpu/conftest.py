"""GPU tests of the probes: marked `gpu`, skipped where torch sees no CUDA GPU.

Run on a GPU machine with `pytest -m gpu tests/gpu`. The marker is registered here as well (for runs
that include this folder); the project's pytest configuration should also declare it:
    markers = gpu: needs an NVIDIA GPU with torch (skipped without one)
"""
import os
import subprocess
import sys

import pytest

from gpu_helpers import HERE

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
