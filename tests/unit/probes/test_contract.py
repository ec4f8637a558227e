"""The probe contract (docs/probes.md "Common rules"), checked on every probe by running it."""
import ast
import json
import os
import re
import socket
import sys

import pytest
import yaml

from probe_helpers import COMMON, PROBES, ROOT, copy_probe, load_common, load_probe, run_probe

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


def _defined_names(tree):
    """Functions, classes and assigned names at the top level of a module."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _probe_common_import(tree):
    """(the `from probe_common import ...` inside the top-level try, index of that try in the module body)."""
    for index, node in enumerate(tree.body):
        if isinstance(node, ast.Try):
            for sub in node.body:
                if isinstance(sub, ast.ImportFrom) and sub.module == "probe_common":
                    return sub, index
    return None, None


def test_probe_common_is_the_one_copy_of_the_shared_helpers():
    common = load_common()
    assert os.path.samefile(common.__file__, COMMON)
    assert common.SCHEMA == 1
    for name in ("ProbeParamError", "Probe", "main_wrapper", "parse_params", "err_info", "not_attempted", "run_cmd",
                 "signal_name", "node_name", "_finite", "_tail", "_flush_c_stdio"):
        assert callable(getattr(common, name)), name
    shared = _defined_names(ast.parse(open(COMMON).read())) - {"SCHEMA"}
    for name, path in PROBES.items():
        src = open(path).read()
        assert "# --- common" not in src, "probe_%s still carries a copied common block" % name
        copies = shared & _defined_names(ast.parse(src))
        assert not copies, "probe_%s defines its own %s: import them from probe_common" % (name, sorted(copies))


def _is_sys_path_insert_0(node):
    """Whether a statement is `sys.path.insert(0, ...)`."""
    call = node.value if isinstance(node, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "insert"
            and isinstance(call.func.value, ast.Attribute) and call.func.value.attr == "path"
            and isinstance(call.func.value.value, ast.Name) and call.func.value.value.id == "sys"
            and len(call.args) == 2 and isinstance(call.args[0], ast.Constant) and call.args[0].value == 0)


@pytest.mark.parametrize("name", sorted(PROBES))
def test_every_probe_imports_what_it_needs_from_probe_common(name):
    tree = ast.parse(open(PROBES[name]).read())
    imp, index = _probe_common_import(tree)
    assert imp is not None, "probe_%s does not import probe_common (inside a guarding try)" % name
    names = [a.name for a in imp.names]
    assert "*" not in names, "explicit names, no star import"
    # sys.path.insert(0, <the probe's directory>) comes before the import
    assert any(_is_sys_path_insert_0(node) for node in tree.body[:index]), \
        "probe_%s must put its own directory first on sys.path before importing probe_common" % name
    common = load_common()
    mod = load_probe(name)
    for shared in names:
        assert getattr(mod, shared) is getattr(common, shared), shared


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe_shipped_without_probe_common_prints_a_crash_json(name, tmp_path):
    """A probe copied alone (no probe_common.py next to it, nor in ../../runner/files): one JSON line, exit 1."""
    script = copy_probe(name, tmp_path / "roles" / "lx" / "files", common=False)
    run = run_probe(name, {}, script=script, env={"NODE_NAME": "n7"})
    assert run.rc == 1, run
    assert run.json is not None, run
    for key, typ in ENVELOPE.items():
        assert isinstance(run.json[key], typ), (key, run.json.get(key))
    assert (run.json["probe"], run.json["node"], run.json["crashed"]) == (name, "n7", True)
    assert run.json["error"].startswith("probe_common.py is missing next to %s: ModuleNotFoundError" % script), run.json


def test_probe_finds_probe_common_next_to_it_first_then_in_the_repo_layout(tmp_path):
    fast = FAST["node"](tmp_path)
    # shipped: both files in one directory (the ConfigMap at /opt/rlstack, the host's work directory)
    shipped = copy_probe("node", tmp_path / "shipped")
    run = run_probe("node", fast, script=shipped)
    assert run.rc == 0 and run.json["probe"] == "node", run
    # the repository layout: roles/<level>/files/probe_X.py and roles/runner/files/probe_common.py
    repo = tmp_path / "repo"
    script = copy_probe("node", repo / "roles" / "l0_infrastructure" / "files", common=False)
    copy_probe("node", repo / "roles" / "runner" / "files")
    run = run_probe("node", fast, script=script)
    assert run.rc == 0 and run.json["probe"] == "node", run
    # the probe's own directory wins: a stale probe_common.py next to it is used (and reported), not the fallback
    (repo / "roles" / "l0_infrastructure" / "files" / "probe_common.py").write_text("SCHEMA = 1\n")
    run = run_probe("node", fast, script=script)
    assert run.rc == 1 and run.json["crashed"] is True, run
    assert run.json["error"].startswith("probe_common.py cannot be imported next to %s: ImportError: cannot import name" % script)


def _task(path, name_start):
    tasks = yaml.safe_load(open(os.path.join(ROOT, "roles", "runner", "tasks", path)))
    flat = []
    for task in tasks:
        flat.append(task)
        flat.extend(task.get("block", []))
    return next(t for t in flat if t.get("name", "").startswith(name_start))


def test_the_runner_ships_probe_common_with_every_probe():
    assert os.path.isfile(os.path.join(ROOT, "roles", "runner", "files", "probe_common.py"))
    start = _task("probe_kubernetes.yml", "Run one probe pod per target")["rlstack.validation.probe_run"]
    configmap = start["config_maps"][0]["data"]
    assert "'probe_common.py': lookup('ansible.builtin.file', 'probe_common.py')" in configmap
    assert "_runner_probe_file: lookup('ansible.builtin.file', runner_probe.script)" in configmap
    copy = _task("probe_host.yml", "Copy the probe")
    assert copy["ansible.builtin.copy"]["dest"] == "{{ _runner_host_dir.path }}/{{ item | basename }}"
    assert copy["loop"] == ["{{ runner_probe.script }}", "probe_common.py"]


@pytest.mark.parametrize("name", sorted(PROBES) + ["probe_common"])
def test_python38_syntax_and_stdlib_only_imports(name):
    path = COMMON if name == "probe_common" else PROBES[name]
    src = open(path).read()
    tree = ast.parse(src, feature_version=(3, 8))
    top_level = set()
    for node in tree.body:  # module-level imports only: torch/transformers must be imported lazily
        if isinstance(node, ast.Import):
            top_level.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            top_level.add(node.module.split(".")[0])
    assert not top_level & {"torch", "transformers", "tokenizers", "numpy", "yaml"}
    stdlib = getattr(sys, "stdlib_module_names", None)  # Python >= 3.10
    if stdlib:
        assert top_level <= set(stdlib), top_level - set(stdlib)
    # Always started as `python3 probe_X.py` (or by torchrun; probe_common.py is only imported): no
    # shebang and no execute bit, which is also what ansible-test sanity's shebang test accepts for
    # files outside plugins/modules.
    assert not os.access(path, os.X_OK)
    assert not src.startswith("#!")


def test_crash_is_exit_1_with_json(capsys):
    mod = load_common()

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
    mod = load_common()
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
    mod = load_common()
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
    mod = load_common()
    probe = mod.Probe("node")
    assert probe.emit() is True
    assert probe.emit() is False
    out = capsys.readouterr().out
    assert out.count('"probe": "node"') == 1
    assert out.startswith("\n")
