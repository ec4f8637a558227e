"""The probe contract (docs/probes.md "Common rules"), checked on every probe by running it."""
import ast
import json
import os
import re
import socket
import sys

import pytest

from probe_helpers import PROBES, load_probe, run_probe

# Parameters that make each probe finish fast on a machine without GPUs (and still on one with them).
FAST = {
    "node": lambda tmp: {"nvidia_smi": "/nonexistent/nvidia-smi", "infiniband_dir": str(tmp / "ib")},
    "runtime": lambda tmp: {"imports": ["json"]},
    "model": lambda tmp: {"model_path": str(tmp / "no-model")},
    "multigpu": lambda tmp: {"backend": "gloo", "fsdp": False, "sweep": False, "allreduce_check": False},
    "sim_import": lambda tmp: {"module": "json"},
}
ENVELOPE = {"probe": str, "schema": int, "node": str, "duration_s": float, "started_at": str,
            "params": dict, "warnings": list, "timed_out": bool}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_last_line_is_the_json_envelope(name, tmp_path):
    run = run_probe(name, FAST[name](tmp_path))
    assert run.rc == 0, run
    assert run.json is not None and isinstance(run.json, dict), run
    for key, typ in ENVELOPE.items():
        assert isinstance(run.json[key], typ), (key, run.json.get(key))
    assert run.json["probe"] == name
    assert run.json["schema"] == 1
    assert run.json["duration_s"] >= 0
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", run.json["started_at"])
    assert "error" in run.json and (run.json["error"] is None or isinstance(run.json["error"], str))
    assert run.json["timed_out"] is False
    assert "crashed" not in run.json
    # effective params: given values and filled-in defaults
    for key, value in FAST[name](tmp_path).items():
        assert run.json["params"][key] == value
    assert run.json["params"]["timeout_s"] > 0


@pytest.mark.parametrize("name", sorted(PROBES))
def test_node_from_param_then_env_then_hostname(name, tmp_path):
    params = FAST[name](tmp_path)
    assert run_probe(name, dict(params, node="from-param"), env={"NODE_NAME": "from-env"}).json["node"] == "from-param"
    assert run_probe(name, params, env={"NODE_NAME": "from-env"}).json["node"] == "from-env"
    assert run_probe(name, params).json["node"] == socket.gethostname()


@pytest.mark.parametrize("name", sorted(PROBES))
@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", '"text"'])
def test_bad_params_exit_2_with_json(name, raw):
    run = run_probe(name, raw_arg=raw)
    assert run.rc == 2, run
    assert run.json["probe"] == name
    assert run.json["error"].startswith("bad params:")


@pytest.mark.parametrize("name", sorted(PROBES))
def test_wrong_type_is_exit_2(name):
    run = run_probe(name, {"timeout_s": "soon"})
    assert run.rc == 2, run
    assert "timeout_s" in run.json["error"]


@pytest.mark.parametrize("name", sorted(PROBES))
def test_unknown_param_is_a_warning(name, tmp_path):
    run = run_probe(name, dict(FAST[name](tmp_path), colour="blue"))
    assert run.rc == 0, run
    assert "unknown param 'colour' ignored" in run.json["warnings"]


def test_params_from_file(tmp_path):
    pfile = tmp_path / "params.json"
    pfile.write_text(json.dumps({"module": "json", "node": "n1"}))
    run = run_probe("sim_import", raw_arg="@" + str(pfile))
    assert run.rc == 0, run
    assert run.json["node"] == "n1" and run.json["status"] == "ok"
    missing = run_probe("sim_import", raw_arg="@" + str(tmp_path / "nope.json"))
    assert missing.rc == 2 and "cannot read params file" in missing.json["error"]


def test_no_argv_means_defaults():
    run = run_probe("node", None)
    assert run.rc == 0, run
    assert run.json["params"]["infiniband_dir"] == "/sys/class/infiniband"
    assert run.json["storage"] is None


@pytest.mark.parametrize("name,missing", [("model", "model_path"), ("sim_import", "module")])
def test_required_params(name, missing):
    run = run_probe(name, {})
    assert run.rc == 2, run
    assert missing in run.json["error"]


def _common_block(path):
    text = open(path).read()
    start = text.index("# --- common (keep identical in every probe) ---")
    end = text.index("# --- end common ---")
    return text[start:end]


def test_common_block_is_identical_in_every_probe():
    blocks = {name: _common_block(path) for name, path in PROBES.items()}
    first = blocks["node"]
    for name, block in blocks.items():
        assert block == first, "common block of probe_%s differs from probe_node's" % name


@pytest.mark.parametrize("name", sorted(PROBES))
def test_python38_syntax_and_stdlib_only_imports(name):
    src = open(PROBES[name]).read()
    tree = ast.parse(src, feature_version=(3, 8))
    top_level = set()
    for node in tree.body:  # module-level imports only: torch/transformers must be imported lazily
        if isinstance(node, ast.Import):
            top_level.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            top_level.add(node.module.split(".")[0])
    assert not top_level & {"torch", "transformers", "tokenizers", "numpy", "yaml"}
    # Always started as `python3 probe_X.py` (or by torchrun): no shebang and no execute bit, which is
    # also what ansible-test sanity's shebang test accepts for files outside plugins/modules.
    assert not os.access(PROBES[name], os.X_OK)
    assert not src.startswith("#!")


def test_crash_is_exit_1_with_json(capsys):
    mod = load_probe("node")

    def boom(probe, params):
        probe.stage = "exploding"
        raise RuntimeError("kaboom")

    old = sys.argv
    sys.argv = ["probe_node.py", "{}"]
    try:
        rc = mod.main_wrapper("node", {"timeout_s": (0, "num")}, boom)
    finally:
        sys.argv = old
    out = capsys.readouterr().out.rstrip("\n").split("\n")[-1]
    data = json.loads(out)
    assert rc == 1
    assert data["crashed"] is True
    assert "exploding" in data["error"] and "kaboom" in data["error"]


def test_non_finite_floats_become_null():
    mod = load_probe("node")
    assert mod._finite({"a": float("nan"), "b": [float("inf"), 1.5], "c": (1, "x", None, True)}) == \
        {"a": None, "b": [None, 1.5], "c": [1, "x", None, True]}


def test_watchdog_prints_partial_json_names_the_stage_and_kills_children(tmp_path):
    fake = tmp_path / "nvidia-smi"
    marker = "61.%d" % os.getpid()
    fake.write_text("#!/bin/sh\nsleep %s\n" % marker)
    fake.chmod(0o755)
    run = run_probe("node", {"nvidia_smi": str(fake), "nvidia_smi_timeout_s": 60, "timeout_s": 1})
    assert run.rc == 0, run
    assert run.json["timed_out"] is True
    assert "during stage 'nvidia-smi'" in run.json["error"]
    assert run.json["duration_s"] < 10
    leftovers = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = open("/proc/%s/cmdline" % pid, "rb").read().decode(errors="replace")
            except OSError:
                continue
            if "sleep\x00" + marker in cmdline:
                leftovers.append(pid)
    assert not leftovers, "the watchdog left the child running"


def test_run_cmd_captures_output_and_kills_the_group_on_timeout(tmp_path):
    mod = load_probe("node")
    res = mod.run_cmd([sys.executable, "-c", "import sys; print('out'); sys.stderr.write('err'); sys.exit(3)"], 30)
    assert (res["rc"], res["stdout"].strip(), res["stderr"], res["timed_out"]) == (3, "out", "err", False)
    res = mod.run_cmd(["sh", "-c", "echo started; sleep 30 & wait"], 0.5)
    assert res["timed_out"] and res["stdout"].strip() == "started" and res["duration_s"] < 15
    res = mod.run_cmd(["/nonexistent/binary"], 5)
    assert res["not_found"] and res["rc"] is None and "No such file" in res["error"]
    # stdin "pipe": the child sees an open stdin that never answers
    res = mod.run_cmd([sys.executable, "-c", "import sys; sys.stdin.readline()"], 0.5, stdin="pipe")
    assert res["timed_out"]
    res = mod.run_cmd([sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"], 5)
    assert res["stdout"].strip() == "''"


def test_emit_prints_once(capsys):
    mod = load_probe("node")
    probe = mod.Probe("node")
    assert probe.emit() is True
    assert probe.emit() is False
    out = capsys.readouterr().out
    assert out.count('"probe": "node"') == 1
    assert out.startswith("\n")
