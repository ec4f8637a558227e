"""L1 probe_runtime: version decoding and isolated imports (real child pythons)."""

import pytest

from probe_helpers import has_module, load_probe, run_probe

rt = load_probe("runtime")


@pytest.mark.parametrize("raw,text", [
    ((2, 28, 9), "2.28.9"), ([2, 21, 5], "2.21.5"), (22809, "2.28.9"), (21903, "2.19.3"),
    (2708, "2.7.8"), (91900, "9.19.0"), (90100, "9.1.0"), (8902, "8.9.2"), (None, None), ("2.18.1", "2.18.1"),
])
def test_decode_version_code(raw, text):
    assert rt.decode_version_code(raw) == text


def test_last_marker_json():
    out = "noise\n__RLSTACK_PROBE__ {\"a\": 1}\nmore\n\n__RLSTACK_PROBE__ {\"a\": 2}\ntrailing"
    assert rt.last_marker_json(out) == {"a": 2}
    assert rt.last_marker_json("nothing") is None


@pytest.fixture
def modules(tmp_path):
    d = tmp_path / "mods"
    d.mkdir()
    (d / "slow_import_mod.py").write_text("import time\ntime.sleep(30)\n")
    (d / "prompting_mod.py").write_text("x = input('Continue? (Y/N): ')\n")
    (d / "segv_mod.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    (d / "broken_mod.py").write_text("raise RuntimeError('needs a licence key')\n")
    (d / "versioned_mod.py").write_text("__version__ = (1, 2)\n")
    return str(d)


def test_imports_are_isolated(modules):
    names = ["json", "no_such_module_xyz", "slow_import_mod", "prompting_mod", "segv_mod", "broken_mod",
             "versioned_mod", "email.mime"]
    run = run_probe("runtime", {"imports": names, "import_timeout_s": 2, "torch_timeout_s": 120},
                    env={"PYTHONPATH": modules})
    assert run.rc == 0, run
    imp = run.json["imports"]
    assert list(imp) == names
    assert imp["json"]["ok"] and imp["json"]["version"] and imp["json"]["error"] is None
    assert imp["no_such_module_xyz"] == dict(imp["no_such_module_xyz"], ok=False, version=None,
                                             error="ModuleNotFoundError: No module named 'no_such_module_xyz'",
                                             error_type="ModuleNotFoundError", timed_out=False)
    slow = imp["slow_import_mod"]
    assert slow["ok"] is False and slow["timed_out"] is True and slow["error"] == "import timed out after 2 s"
    assert imp["prompting_mod"]["error"] == "EOFError: EOF when reading a line"  # stdin is /dev/null: no hang
    segv = imp["segv_mod"]
    assert segv["ok"] is False and segv["error"].startswith("import crashed (exit -11, SIGSEGV)")
    assert imp["broken_mod"]["error"] == "RuntimeError: needs a licence key"
    assert imp["versioned_mod"] == dict(imp["versioned_mod"], ok=True, version="(1, 2)")
    assert imp["email.mime"]["ok"] is True
    assert run.json["imports_ok"] is False
    assert run.json["duration_s"] < 60


def test_empty_imports_are_ok():
    j = run_probe("runtime", {}).json
    assert j["imports"] == {} and j["imports_ok"] is True


def test_version_from_distribution_metadata():
    if not has_module("pytest"):
        pytest.skip("pytest metadata unavailable")
    j = run_probe("runtime", {"imports": ["_pytest"]}).json
    assert j["imports"]["_pytest"]["ok"] is True


@pytest.mark.skipif(has_module("torch"), reason="torch is installed here")
def test_without_torch_reports_cleanly():
    j = run_probe("runtime", {"imports": []}).json
    assert j["torch"] is None
    assert j["torch_error"] == "ModuleNotFoundError: No module named 'torch'"
    assert j["error"] == "torch is not importable: ModuleNotFoundError: No module named 'torch'"
    assert (j["cuda_available"], j["gpu_count"], j["gpus"], j["nccl"], j["cudnn"]) == (False, 0, [], None, None)
    assert j["cuda_smoke"] == {"ok": False, "error": "not attempted (CUDA not available)"}


def test_torch_query_timeout_and_crash_are_reported(tmp_path, monkeypatch):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(0o755)
    out = rt.query_torch(str(fake), 0.5)
    assert out["torch_error"] == "torch query timed out after 0.5 s" and out["torch"] is None
    fake.write_text("#!/bin/sh\necho 'Illegal instruction' >&2\nexit 132\n")
    out = rt.query_torch(str(fake), 5)
    assert out["torch_error"].startswith("torch query crashed (exit 132: Illegal instruction")
    out = rt.query_torch(str(tmp_path / "missing"), 5)
    assert out["torch_error"].startswith("torch query could not start")


def test_torch_fields_from_a_fake_torch(tmp_path):
    """A stand-in torch module exercises the field mapping without the real library."""
    pkg = tmp_path / "faketorch" / "torch"
    (pkg / "backends").mkdir(parents=True)
    (pkg / "cuda").mkdir()
    (pkg / "__init__.py").write_text(
        "__version__ = '2.11.0+cu130'\n"
        "class version:\n    cuda = '13.0'\n    hip = None\n"
        "from . import backends, cuda\n")
    (pkg / "backends" / "__init__.py").write_text("class cudnn:\n    @staticmethod\n    def version():\n        return 91900\n")
    (pkg / "cuda" / "__init__.py").write_text(
        "class nccl:\n    @staticmethod\n    def version():\n        return (2, 28, 9)\n"
        "def is_available():\n    return False\n"
        "def device_count():\n    return 0\n")
    env = {"PYTHONPATH": str(tmp_path / "faketorch")}
    j = run_probe("runtime", {}, env=env).json
    assert (j["torch"], j["cuda"], j["cudnn"], j["cudnn_version"], j["nccl"]) == \
        ("2.11.0+cu130", "13.0", 91900, "9.19.0", "2.28.9")
    assert j["cuda_available"] is False and j["gpu_count"] == 0
    assert j["error"] == "CUDA not available to torch"
