# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Exec mode of the simulated cluster (SIM_EXEC=host, sim/exec_runtime.py): pods' commands run for real.

On a cluster of its own (SIM_STATE in a temporary directory, 1 p5 node, no GPU of this machine given to pods):
a pod's ConfigMap volume, env and exit code; a pod asking for a GPU stays Pending; and the collection's own L4
probe (importing the real LIBERO 0.1.1) and an L5 Job (one real gradient step, tests/frameworks/stdlib_train_step.py)
PASS with validation_libero_config mounted from its ConfigMap, and L4 FAILs without it with its own message; with
it and LIBERO's benchmark call asked, L4 FAILs naming torch (the pods' python3 has none); and L0's real probe
reads this machine's locked-memory limit in the p5 node's pod (a second cluster that hands out device indices).
LIBERO's sdist comes from `make sim-exec-deps`."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

CACHE = Path(os.environ.get("SIM_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rlstack-sim")
LIBERO_SRC = CACHE / "exec" / "libero-0.1.1"
STEP = simkit.ROOT / "tests" / "frameworks" / "stdlib_train_step.py"


def _simctl(state: Path, *args: str, gpus: str = "") -> None:
    # The pods' "image": this venv's python3 (it has PyYAML, which LIBERO imports); no GPU of this machine
    # unless `gpus` lists device indices to hand out.
    simkit.simctl_at(state, *args, env={"SIM_EXEC_GPUS": gpus,
                                        "SIM_EXEC_PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"})


@pytest.fixture(scope="module")
def exec_state(tmp_path_factory):
    if not (LIBERO_SRC / "libero" / "libero" / "__init__.py").exists():
        pytest.skip(f"LIBERO 0.1.1's source is not in {LIBERO_SRC}: run `make sim-exec-deps`")
    state = tmp_path_factory.mktemp("sim-exec")
    _simctl(state, "up", "--nodes", "1", "--exec", "host", "--scenario", "healthy")
    yield state
    _simctl(state, "down")


@pytest.fixture()
def core(exec_state):
    from kubernetes import client, config
    api = client.CoreV1Api(config.new_client_from_config(config_file=str(exec_state / "kubeconfig")))
    ns = f"sim-t-exec-{uuid.uuid4().hex[:6]}"
    api.create_namespace({"metadata": {"name": ns}})
    simkit.wait_until(lambda: api.read_namespaced_service_account("default", ns), 30, "the default service account")
    yield api, ns
    api.delete_namespace(ns)


def test_pod_runs_its_command_with_volumes_env_and_exit_code(core):
    api, ns = core
    api.create_namespaced_config_map(ns, {"metadata": {"name": "cfg"}, "data": {"greeting.txt": "hello from a ConfigMap"}})
    script = ('cat /etc/sim-exec-test/greeting.txt; echo; echo "name=$POD $(X)" "node=$NODE"; '
              'echo oops >&2; exit 3')
    body = simkit.pod_body("real", command=["sh", "-c", script])
    container = body["spec"]["containers"][0]
    container["env"] = [{"name": "X", "value": "x-value"}, {"name": "POD", "value": "$(X)-pod"},
                        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    container["args"] = []
    container["volumeMounts"] = [{"name": "cfg", "mountPath": "/etc/sim-exec-test", "readOnly": True}]
    body["spec"]["volumes"] = [{"name": "cfg", "configMap": {"name": "cfg"}}]
    api.create_namespaced_pod(ns, body)

    def ended():
        got = api.read_namespaced_pod("real", ns)
        return got if got.status.phase in ("Succeeded", "Failed") else None
    pod = simkit.wait_until(ended, 60, "the pod to end")
    assert pod.status.phase == "Failed"
    assert pod.status.container_statuses[0].state.terminated.exit_code == 3
    log = api.read_namespaced_pod_log("real", ns)
    assert "hello from a ConfigMap" in log
    assert f"name=x-value-pod x-value node={pod.spec.node_name}" in log and "oops" in log
    assert not Path("/etc/sim-exec-test").exists(), "the mount point made for the pod outlived it"


def test_gpu_pod_stays_pending_without_devices(core):
    api, ns = core
    api.create_namespaced_pod(ns, simkit.pod_body("wants-gpu", gpus=1, tolerate_gpu=True, command=["true"]))
    simkit.wait_until(lambda: any(e.reason == "SimGPUsBusy" for e in simkit.events_for(api, ns, "wants-gpu")), 60,
                      "the SimGPUsBusy event")
    assert simkit.holds_for(lambda: api.read_namespaced_pod("wants-gpu", ns).status.phase == "Pending", 3)
    waiting = api.read_namespaced_pod("wants-gpu", ns).status.container_statuses[0].state.waiting
    assert "needs 1 GPU(s) of this machine, 0 free" in waiting.message


def _validate(state: Path, tmp_path: Path, libero_config: bool, tags: str, benchmark: dict | None = None):
    extra = {
        "validation_simulator_module": "libero.libero", "validation_simulator_env": {},
        "l4_rollout_required_env": [], "l4_rollout_python_path": [str(LIBERO_SRC)],
        "l4_rollout_benchmark": benchmark or {},
        "l4_rollout_gpus": 0,
        "validation_examples": [{
            "name": "stdlib-step", "framework": "custom", "gpus": 0, "efa": 0,
            "command": ["sh", "-c", f"python3 {STEP} && echo TRAINING_STEP_TEST_PASSED"],
            "env": {"PYTHONPATH": str(LIBERO_SRC)}}],
    }
    if libero_config:
        extra["validation_libero_config"] = {"benchmark_root": str(LIBERO_SRC / "libero" / "libero")}
    (tmp_path / "extra.json").write_text(json.dumps(extra))
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(tmp_path / "report"),
               SIM_STATE=str(state), PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
           "--tags", tags, "-e", f"validation_kubeconfig={state / 'kubeconfig'}", "-e", f"@{tmp_path / 'extra.json'}",
           "-e", "validation_continue_on_error=true"]
    proc = subprocess.run(cmd, cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=600, check=False)
    report = json.loads((tmp_path / "report" / "report.json").read_text())["clusters"][0]
    return proc, {lv["id"]: lv for lv in report["levels"]}


def test_l4_and_l5_pass_with_libero_config_mounted(exec_state, tmp_path):
    proc, rows = _validate(exec_state, tmp_path, libero_config=True, tags="l4,l5")
    out = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert rows["l4_rollout"]["status"] == "PASS", out
    (l5,) = [row for key, row in rows.items() if key.startswith("l5_training_step")]
    assert l5["status"] == "PASS", out
    assert proc.returncode == 0, out


def test_l4_with_libero_config_but_no_torch_names_torch(exec_state, tmp_path):
    # The pods' python3 (this venv) has no torch, which libero/libero/benchmark/__init__.py imports (LIBERO 0.1.1):
    # the benchmark call must say so, not "module 'libero.libero' has no attribute 'benchmark'".
    if importlib.util.find_spec("torch") is not None:
        pytest.skip(f"{sys.executable} (the pods' python3) has torch: the case needs a python without it")
    bench = {"call": "libero.libero.benchmark.get_benchmark", "name": "libero_10", "expect_tasks": 10}
    proc, rows = _validate(exec_state, tmp_path, libero_config=True, tags="l4", benchmark=bench)
    out = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert rows["l4_rollout"]["status"] == "FAIL", out
    found = json.dumps(rows["l4_rollout"])
    assert "has no attribute" not in found, out
    assert ("libero.libero.benchmark (for libero.libero.benchmark.get_benchmark) cannot be imported: "
            "ModuleNotFoundError: No module named 'torch'") in found, out
    assert "install torch in the image (libero.libero.benchmark imports it)" in found, out
    assert proc.returncode != 0, out


def test_l4_fails_without_libero_config_with_its_own_message(exec_state, tmp_path):
    proc, rows = _validate(exec_state, tmp_path, libero_config=False, tags="l4")
    out = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert rows["l4_rollout"]["status"] == "FAIL", out
    found = json.dumps(rows["l4_rollout"])
    # the real LIBERO prompt, seen by the collection's own probe in the pod, and L4's hint naming the file
    assert "prompts_for_input" in found and "Do you want to specify a custom path for the dataset folder" in found, out
    assert "config.yaml" in found and "LIBERO_CONFIG_PATH" in found, out
    assert proc.returncode != 0, out


@pytest.fixture()
def exec_state_with_devices(tmp_path_factory):
    """A second exec-mode cluster whose runtime hands out 8 device indices (0-7) that this CPU machine does not
    have: L0's probe pod asks for all 8 GPUs of its p5 node, so it runs here instead of staying Pending (its
    GPU checks then fail: there is no nvidia-smi)."""
    state = tmp_path_factory.mktemp("sim-exec-devices")
    _simctl(state, "up", "--nodes", "1", "--exec", "host", "--scenario", "healthy", gpus="0,1,2,3,4,5,6,7")
    yield state
    _simctl(state, "down")


def test_l0_reads_the_real_locked_memory_limit_on_an_efa_node(exec_state_with_devices, tmp_path):
    """The L0 probe runs for real in the p5 node's pod: its efa_memlock check carries this machine's own
    RLIMIT_MEMLOCK (what any container here starts with), not a recording; unlimited passes, anything else FAILs."""
    import resource
    soft, _hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    seen = "unlimited" if soft == resource.RLIM_INFINITY else "%d KiB" % (soft // 1024)
    _proc, rows = _validate(exec_state_with_devices, tmp_path, libero_config=False, tags="l0")
    memlock = [c for c in rows["l0_infrastructure"]["checks"] if c["name"] == "efa_memlock"]
    assert [(c["node"], c["actual"], c["passed"]) for c in memlock] == [("p5-node-0", seen, seen == "unlimited")], memlock
    assert "RLIMIT_MEMLOCK" in memlock[0]["message"]
