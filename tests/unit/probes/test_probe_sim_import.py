"""L4 probe_sim_import: classification of real child-python imports (no simulator needed)."""
import os
import platform
import time

import pytest

from probe_helpers import FAKE_SIMS, SHARED_RECORDED, load_probe, run_probe

si = load_probe("sim_import")
PROMPT = "Do you want to specify a custom path for the dataset folder? (Y/N): "
HINT = ("set the config/dataset variables the library reads (LIBERO: LIBERO_CONFIG_PATH with a config.yaml) in the "
        "pod env and redirect stdin (</dev/null, or sys.stdin = open('/dev/null') before the import)")


@pytest.fixture
def mods(tmp_path):
    d = tmp_path / "mods"
    d.mkdir()
    files = {
        "reads_stdin_sim.py": "import sys\nprint('config path?', end=' ', flush=True)\nline = sys.stdin.readline()\n",
        "reads_stdin_quiet_sim.py": "import sys\nline = sys.stdin.readline()\nif not line:\n    raise SystemExit(3)\n",
        "msg_env_sim.py": "raise RuntimeError('Please set the environment variable SIM_ASSETS_DIR to the assets folder')\n",
        "dep_missing_sim.py": "import robosuite_not_installed_xyz\n",
        "slow_sim.py": "import time\ntime.sleep(60)\n",
        "value_error_sim.py": "raise ValueError('bad mujoco xml')\n",
        "segv_sim.py": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
        "spawner_sim.py": "import subprocess\nsubprocess.Popen(['sleep', '63.%d'])\ninput('go? ')\n"
                          % os.getpid(),
    }
    for name, text in files.items():
        (d / name).write_text(text)
    return str(d)


def sim(params, **kw):
    run = run_probe("sim_import", params, **kw)
    assert run.rc == 0, run
    return run.json


def test_prompt_with_stdin_devnull_fails_fast_and_is_classified():
    j = sim({"module": "fake_prompt_sim", "python_path": [FAKE_SIMS]})
    assert j["status"] == "prompts_for_input" and j["ok"] is False
    assert j["message"] == ("import failed: the library prompts for input at import "
                            "(input() got EOF, stdin is /dev/null)")
    assert j["hint"] == HINT
    assert j["input_prompts"] == [PROMPT]
    assert j["error_type"] == "EOFError" and j["error"] == "EOF when reading a line"
    assert j["import_timed_out"] is False and j["elapsed_s"] < 10
    assert j["stdout_tail"] == "importing fake_prompt_sim\n" + PROMPT
    assert "EOFError: EOF when reading a line" in j["stderr_tail"]
    assert "__RLSTACK_PROBE" not in j["stderr_tail"] + j["stdout_tail"]
    assert any(e.startswith("EOFError: EOF when reading a line, raised by input()") for e in j["evidence"])
    assert "input(" in j["traceback_tail"]


def test_prompt_with_open_stdin_blocks_until_timeout_and_is_classified():
    t0 = time.time()
    j = sim({"module": "fake_prompt_sim", "python_path": FAKE_SIMS, "stdin": "pipe", "timeout_s": 2})
    assert time.time() - t0 < 20
    assert j["status"] == "prompts_for_input"
    assert j["message"] == "import blocked: the library waits for interactive input"
    assert j["hint"] == HINT
    assert j["import_timed_out"] is True and j["timed_out"] is False
    assert j["returncode"] == -9
    assert j["input_prompts"] == [PROMPT]
    assert j["stdout_tail"].endswith(PROMPT)
    if os.path.exists("/proc/self/syscall") and platform.machine() in ("x86_64", "aarch64"):
        assert j["blocked_on_stdin"] in (True, None)


def test_blocked_on_raw_stdin_read_without_input(mods):
    if not os.path.exists("/proc/self/syscall") or platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("needs Linux /proc/<pid>/syscall")
    j = sim({"module": "reads_stdin_quiet_sim", "python_path": [mods], "stdin": "pipe", "timeout_s": 1.5})
    if j["blocked_on_stdin"] is None:
        pytest.skip("/proc/<pid>/syscall not readable here")
    assert j["blocked_on_stdin"] is True and j["status"] == "prompts_for_input"
    assert "timed out while reading stdin (fd 0)" in j["evidence"]


def test_prompt_text_without_newline_counts_when_proc_is_unavailable():
    obs = {"import_timed_out": True, "returncode": -9, "result": None, "stdout": "config path? ", "stderr": "",
           "input_prompts": [], "blocked_on_stdin": None, "unset_required": [], "timeout_s": 5}
    status, message, hint, evidence, missing = si.classify(obs, [], "pipe")
    assert status == "prompts_for_input" and message == "import blocked: the library waits for interactive input"
    obs["stdout"] = "loading assets\n"
    assert si.classify(obs, [], "pipe")[0] == "timeout"


def test_missing_env_from_keyerror():
    j = sim({"module": "fake_env_sim", "python_path": [FAKE_SIMS]})
    assert j["status"] == "missing_env"
    assert j["missing_env"] == ["FAKE_SIM_DATASET_DIR"]
    assert j["message"] == "missing environment variable(s): FAKE_SIM_DATASET_DIR"
    assert j["hint"] == "set FAKE_SIM_DATASET_DIR in the pod's env block"
    assert j["error_type"] == "KeyError" and j["error"] == "'FAKE_SIM_DATASET_DIR'"


def test_missing_env_from_message(mods):
    j = sim({"module": "msg_env_sim", "python_path": [mods]})
    assert j["status"] == "missing_env" and j["missing_env"] == ["SIM_ASSETS_DIR"]


def test_required_env_unset_even_if_import_works():
    j = sim({"module": "json", "required_env": ["LIBERO_DATASET_DIR"], "env": {"OTHER": "1"}})
    assert j["status"] == "missing_env" and j["missing_env"] == ["LIBERO_DATASET_DIR"] and j["ok"] is False
    assert j["env_set"] == ["OTHER"]


def test_env_param_fixes_it_and_benchmark_counts_tasks():
    bench = {"call": "fake_env_sim.get_benchmark", "name": "libero_10", "expect_tasks": 10}
    j = sim({"module": "fake_env_sim", "python_path": [FAKE_SIMS], "env": {"FAKE_SIM_DATASET_DIR": "/data"},
             "required_env": ["FAKE_SIM_DATASET_DIR"], "benchmark": bench})
    assert j["status"] == "ok" and j["ok"] is True and j["missing_env"] == []
    assert j["message"].startswith("imported fake_env_sim in ")
    b = j["benchmark"]
    assert (b["ok"], b["n_tasks"], b["count_via"], b["result_type"], b["expect_tasks"]) == \
        (True, 10, "n_tasks", "LIBERO_10", 10)
    assert b["task_names"][:2] == ["task_0", "task_1"]
    assert j["module_file"].endswith("fake_env_sim.py")


def test_benchmark_mismatch_and_bad_call():
    base = {"module": "fake_env_sim", "python_path": [FAKE_SIMS], "env": {"FAKE_SIM_DATASET_DIR": "/data"}}
    j = sim(dict(base, benchmark={"call": "fake_env_sim.get_benchmark", "name": "libero_10", "expect_tasks": 130}))
    assert j["status"] == "ok" and j["ok"] is False
    assert j["benchmark"]["error"] == "10 tasks, expected 130"
    j = sim(dict(base, benchmark={"call": "fake_env_sim.get_benchmark", "name": "libero_90"}))
    assert j["benchmark"]["ok"] is False and j["benchmark"]["error_type"] == "KeyError"
    j = sim(dict(base, benchmark={"call": "fake_env_sim.no_such_function"}))
    assert j["benchmark"]["error_type"] == "AttributeError"
    j = sim(dict(base, benchmark={"call": "builtins.object", "args": []}))  # generic: any callable
    assert j["benchmark"]["ok"] is False and "could not count tasks" in j["benchmark"]["error"]


def _package_whose_subpackage_needs(tmp_path, dependency):
    """A throw-away tree shaped like LIBERO 0.1.1's: simpkg/lib/__init__.py imports nothing of its subpackage,
    simpkg/lib/bench/__init__.py imports a module that is not installed (LIBERO's benchmark package: torch)."""
    root = tmp_path / "tree"
    (root / "simpkg" / "lib" / "bench").mkdir(parents=True)
    (root / "simpkg" / "__init__.py").write_text("")
    (root / "simpkg" / "lib" / "__init__.py").write_text("import os\n")
    (root / "simpkg" / "lib" / "bench" / "__init__.py").write_text(
        "import %s\n\ndef get_benchmark(name):\n    return [name]\n" % dependency)
    return str(root)


def test_benchmark_call_names_the_module_its_subpackage_cannot_import(tmp_path):
    tree = _package_whose_subpackage_needs(tmp_path, "torch_not_installed_xyz")
    j = sim({"module": "simpkg.lib", "python_path": [tree],
             "benchmark": {"call": "simpkg.lib.bench.get_benchmark", "name": "libero_10", "expect_tasks": 1}})
    assert j["status"] == "ok" and j["ok"] is False
    b = j["benchmark"]
    assert (b["ok"], b["error_type"], b["module"], b["missing_module"]) == \
        (False, "ModuleNotFoundError", "simpkg.lib.bench", "torch_not_installed_xyz")
    assert b["error"] == ("simpkg.lib.bench (for simpkg.lib.bench.get_benchmark) cannot be imported: "
                          "ModuleNotFoundError: No module named 'torch_not_installed_xyz'")
    assert "has no attribute" not in b["error"]
    assert b["hint"] == ("install torch_not_installed_xyz in the image (simpkg.lib.bench imports it), "
                         "or run L4 with the image that has it")
    assert "import torch_not_installed_xyz" in j["stderr_tail"]


def test_benchmark_call_other_import_error_and_missing_names(tmp_path):
    tree = _package_whose_subpackage_needs(tmp_path, "os\nfrom os import no_such_name_xyz")
    base = {"module": "simpkg.lib", "python_path": [tree]}
    b = sim(dict(base, benchmark={"call": "simpkg.lib.bench.get_benchmark", "name": "x"}))["benchmark"]
    assert (b["error_type"], b["module"], b["missing_module"]) == ("ImportError", "simpkg.lib.bench", None)
    assert b["error"].startswith("simpkg.lib.bench (for simpkg.lib.bench.get_benchmark) cannot be imported: "
                                 "ImportError: cannot import name 'no_such_name_xyz'")
    assert b["hint"].startswith("fix the import of simpkg.lib.bench in the image")
    # a name that is no module at all is still an attribute lookup on the longest prefix that imports
    b = sim(dict(base, benchmark={"call": "simpkg.lib.nosuch_xyz.get_benchmark"}))["benchmark"]
    assert b["error"] == "AttributeError: module 'simpkg.lib' has no attribute 'nosuch_xyz'"
    assert "module" not in b and "hint" not in b


def test_benchmark_not_attempted_when_import_fails():
    j = sim({"module": "nope_sim_xyz", "benchmark": {"call": "nope_sim_xyz.get_benchmark", "name": "x"}})
    assert j["benchmark"] == {"ok": False, "error": "not attempted (import failed)"}


def test_import_error(mods):
    j = sim({"module": "libero_not_installed_xyz.libero"})
    assert j["status"] == "import_error" and j["error_type"] == "ModuleNotFoundError"
    assert j["message"] == "ModuleNotFoundError: No module named 'libero_not_installed_xyz'"
    assert j["hint"] == "install the package in the image or fix PYTHONPATH (python_path)"
    j = sim({"module": "dep_missing_sim", "python_path": [mods]})
    assert j["status"] == "import_error" and "robosuite_not_installed_xyz" in j["message"]


def test_timeout_when_not_waiting_on_stdin(mods):
    j = sim({"module": "slow_sim", "python_path": [mods], "timeout_s": 1})
    assert j["status"] == "timeout" and j["import_timed_out"] is True
    assert j["message"] == "import did not finish within 1 s"
    assert j["blocked_on_stdin"] in (False, None)
    assert j["elapsed_s"] < 15


def test_other_errors(mods):
    j = sim({"module": "value_error_sim", "python_path": [mods]})
    assert (j["status"], j["message"], j["hint"]) == ("error", "ValueError: bad mujoco xml", None)
    j = sim({"module": "segv_sim", "python_path": [mods]})
    assert j["status"] == "error" and j["message"] == "the import's python died without a result (exit -11, SIGSEGV)"


def test_whole_process_group_is_killed(mods):
    marker = "63.%d" % os.getpid()
    j = sim({"module": "spawner_sim", "python_path": [mods], "stdin": "pipe", "timeout_s": 1.5})
    assert j["status"] == "prompts_for_input"
    time.sleep(0.3)
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmd = open("/proc/%s/cmdline" % pid, "rb").read().decode(errors="replace")
            except OSError:
                continue
            assert "sleep\x00" + marker not in cmd, "a grandchild of the import survived"


def test_bad_params():
    for params, needle in (({"module": "x", "stdin": "tty"}, "stdin"), ({"module": "x", "required_env": [1]}, "required_env"),
                           ({"module": "x", "benchmark": {"name": "a"}}, "benchmark.call"),
                           ({"module": "x", "python_path": 3}, "python_path")):
        run = run_probe("sim_import", params)
        assert run.rc == 2 and needle in run.json["error"], run


def _recorded(name):
    path = os.path.join(SHARED_RECORDED, "h200x1", name)
    if not os.path.exists(path):
        pytest.skip("shared fixtures not present")
    return open(path).read()


def test_recorded_devnull_form_from_the_h200_is_prompts_for_input():
    """The raw traceback recorded on the H200 (no audit-hook marker) is enough on its own."""
    text = _recorded("l4_stdin_devnull.txt")
    body, rc = text.rsplit("rc=", 1)
    out, err = body.split("Traceback", 1)
    obs = {"import_timed_out": False, "returncode": int(rc), "result": None, "stdout": out,
           "stderr": "Traceback" + err, "input_prompts": [], "blocked_on_stdin": None, "unset_required": [],
           "timeout_s": 5}
    status, message, hint, evidence, _missing = si.classify(obs, [], "devnull")
    assert status == "prompts_for_input"
    assert message.startswith("import failed: the library prompts for input at import")


def test_recorded_open_stdin_form_from_the_h200_is_prompts_for_input():
    text = _recorded("l4_stdin_pipe_open.txt")
    out = text.rsplit("rc=", 1)[0]
    obs = {"import_timed_out": True, "returncode": -9, "result": None, "stdout": out, "stderr": "",
           "input_prompts": [], "blocked_on_stdin": None, "unset_required": [], "timeout_s": 5}
    status, message, _hint, _evidence, _missing = si.classify(obs, [], "pipe")
    assert (status, message) == ("prompts_for_input", "import blocked: the library waits for interactive input")


def test_split_markers_restores_the_child_output():
    out = "importing\nQ? \n__RLSTACK_PROBE_RESULT__ {\"ok\": false}\n"
    err = "\n__RLSTACK_PROBE_INPUT__ \"Q? \"\nTraceback (most recent call last):\n"
    result, prompts, o, e = si.split_markers(out, err)
    assert result == {"ok": False} and prompts == ["Q? "]
    assert o == "importing\nQ? " and e == "Traceback (most recent call last):\n"
