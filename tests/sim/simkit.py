"""Helpers for the smoke tests of the simulated cluster (sim/): paths, bounded waits, pod builders, exec.

Imported by tests/sim/conftest.py and the test modules (pytest puts tests/sim on sys.path).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "sim"
SIMCTL = SIM / "simctl.py"
# The same rule as simctl.py: SIM_STATE moves the state directory (and with it the kubeconfig).
STATE = Path(os.environ.get("SIM_STATE", ROOT / ".sim"))
KUBECONFIG = STATE / "kubeconfig"

MANAGED = {"app.kubernetes.io/managed-by": "rlstack.validation"}
LEVEL_LABEL = "rlstack.io/level"
RUN_FOR = "sim.rlstack.io/run-for"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
IMAGE = "sim.local/rlstack-smoke:unused"  # never pulled: kwok only writes pod status
P5 = "p5.48xlarge"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"


def versions() -> dict:
    out = {}
    for line in (SIM / "versions.env").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
    return out


# The L0 GPU health scenarios (sim/scenarios.yaml) -> (every check that fails, all on the scenario's node; a word
# the first one's hint must contain). tests/sim/test_sim_l0_health.py runs each alone, test_sim_fleet.py all at once.
HEALTH_SCENARIOS = {
    "row-remap-pending": (["remapped_rows_pending"], "reset"),
    "nvlink-down": (["nvlink_links"], "replace"),
    "pcie-degraded": (["pcie_width"], "replace"),
    "ecc-uncorrectable": (["ecc_uncorrectable_volatile"], "reset"),
    "driver-mismatch": (["driver_consistent"], "AMI"),
    "gpu-condition": (["accelerated_hardware_ready", "gpu_operator_labels"], "repair"),
}


def scenario_table() -> dict:
    import yaml
    return yaml.safe_load((SIM / "scenarios.yaml").read_text())


def current_scenario() -> str:
    path = STATE / "scenario"
    return path.read_text().strip() if path.exists() else ""


def simctl_at(state: Path, *args: str, timeout: float = 300, env: dict | None = None) -> None:
    """sim/simctl.py against a simulated cluster of its own (SIM_STATE=state), with `env` added to this process's
    environment (exec mode's SIM_EXEC_PATH, SIM_EXEC_GPUS); fails the test on an error."""
    env = dict(os.environ, SIM_STATE=str(state), **(env or {}))
    proc = subprocess.run([sys.executable, str(SIMCTL), *args], cwd=str(ROOT), env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"simctl {' '.join(args)}: {proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"


def validate_at(state: Path, scenario: str, tags: str, report_dir: Path, timeout: float = 900):
    """validate.yml --tags `tags` against a simulated cluster of its own (SIM_STATE=state) under `scenario`.
    Returns (the finished process, the report's cluster entry)."""
    import json
    simctl_at(state, "scenario", scenario)
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(report_dir),
               SIM_STATE=str(state), PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
           "--tags", tags, "-e", f"validation_kubeconfig={state / 'kubeconfig'}"]
    proc = subprocess.run(cmd, cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=timeout, check=False)
    return proc, json.loads((report_dir / "report.json").read_text())["clusters"][0]


def simctl(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    """Run sim/simctl.py with this interpreter (the venv's); output captured, bounded in time."""
    proc = subprocess.run([sys.executable, str(SIMCTL), *args], cwd=str(ROOT), capture_output=True, text=True,
                          timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"simctl.py {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc


class WaitTimeout(AssertionError):
    pass


def wait_until(fn, timeout: float, what: str = "", interval: float = 0.25):
    """Call fn until it returns something truthy; return that. Fail after `timeout` seconds.

    Exceptions from fn count as "not yet" (an object may not exist yet); the last value and the last
    exception are in the failure message.
    """
    deadline = time.monotonic() + timeout
    last, error = None, None
    while True:
        try:
            last = fn()
            error = None
            if last:
                return last
        except Exception as exc:  # noqa: BLE001 - reported below if it never succeeds
            error = exc
        if time.monotonic() >= deadline:
            break
        time.sleep(interval)
    detail = f"; last value: {last!r}" + (f"; last error: {type(error).__name__}: {error}" if error else "")
    raise WaitTimeout(f"timed out after {timeout:.0f}s waiting for {what or fn}{detail}")


def holds_for(fn, seconds: float, interval: float = 0.25) -> bool:
    """True if fn() stays truthy for `seconds` (checks a negative such as "stays Pending")."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not fn():
            return False
        time.sleep(interval)
    return bool(fn())


# --------------------------------------------------------------------------- objects

def pod_body(name: str, *, labels: dict | None = None, annotations: dict | None = None, gpus: int = 0,
             efa: int = 0, tolerate_gpu: bool = False, node_selector: dict | None = None,
             command: list | None = None) -> dict:
    container = {"name": "main", "image": IMAGE, "command": command or ["sleep", "infinity"]}
    limits = {}
    if gpus:
        limits["nvidia.com/gpu"] = str(gpus)
    if efa:
        limits["vpc.amazonaws.com/efa"] = str(efa)
    if limits:
        container["resources"] = {"limits": limits}
    spec = {"containers": [container], "restartPolicy": "Never", "terminationGracePeriodSeconds": 0}
    if tolerate_gpu:
        spec["tolerations"] = [dict(GPU_TOLERATION)]
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    meta = {"name": name, "labels": dict(labels or {})}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def gpu_pod_body(name: str, node_selector: dict | None = None, **kw) -> dict:
    """An 8-GPU / 32-EFA pod for a p5.48xlarge, tolerating the GPU taint."""
    return pod_body(name, gpus=8, efa=32, tolerate_gpu=True,
                    node_selector=node_selector or {INSTANCE_TYPE: P5}, **kw)


def job_body(name: str, level: str, annotations: dict | None = None) -> dict:
    """A batch/v1 Job as the collection creates them: managed-by label, level label, no retries."""
    template = pod_body("", labels={**MANAGED, LEVEL_LABEL: level}, annotations=annotations,
                        command=["python3", "train.py"])
    del template["metadata"]["name"]
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "labels": {**MANAGED, LEVEL_LABEL: level}},
            "spec": {"backoffLimit": 0, "ttlSecondsAfterFinished": 300,
                     "template": {"metadata": template["metadata"], "spec": template["spec"]}}}


def condition(conditions, ctype: str):
    for cond in conditions or []:
        if (cond.type if hasattr(cond, "type") else cond.get("type")) == ctype:
            return cond
    return None


def condition_true(conditions, ctype: str) -> bool:
    cond = condition(conditions, ctype)
    status = None if cond is None else (cond.status if hasattr(cond, "status") else cond.get("status"))
    return status == "True"


def job_pods(core, namespace: str, job: str) -> list:
    return core.list_namespaced_pod(namespace, label_selector=f"job-name={job}").items


def events_for(core, namespace: str, name: str) -> list:
    return core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}").items


# --------------------------------------------------------------------------- exec

_RC = re.compile(r"^__rc=(\d+)\s*$", re.M)


def exec_raw(core, namespace: str, pod: str, command: list, timeout: float = 20) -> str:
    from kubernetes.stream import stream
    return stream(core.connect_get_namespaced_pod_exec, pod, namespace, command=command,
                  stdin=False, stdout=True, stderr=True, tty=False, _request_timeout=timeout)


def exec_sh(core, namespace: str, pod: str, script: str, timeout: float = 20) -> tuple[str, int]:
    """Run `script` under sh in the pod; return (output without the marker, exit code).

    kwok's exec loses non-zero exit codes (sim-cluster.md section 4.3), so the script ends with
    `echo __rc=$?` and the code is read back from the output. The script runs in a subshell, so that an
    `exit N` in it still reaches the echo.
    """
    out = exec_raw(core, namespace, pod, ["sh", "-c", f"(\n{script}\n)\necho __rc=$?"], timeout)
    found = _RC.findall(out)
    if not found:
        raise AssertionError(f"no __rc= marker in exec output: {out!r}")
    return _RC.sub("", out).rstrip("\n"), int(found[-1])


def watch_pod_until(core, namespace: str, name: str, predicate, timeout: float, what: str = "",
                    resource_version: str | None = None):
    """Follow a pod's updates with a watch until predicate(pod) is truthy; return that value. Fails after
    `timeout` seconds. Pass the resourceVersion the create call returned to see every update from the
    creation on (a transient state is easily missed by polling or by a watch started later)."""
    from kubernetes import watch
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        w = watch.Watch()
        left = max(1, int(deadline - time.monotonic()))
        kw = {"resource_version": resource_version} if resource_version else {}
        for event in w.stream(core.list_namespaced_pod, namespace, field_selector=f"metadata.name={name}",
                              timeout_seconds=left, _request_timeout=left + 5, **kw):
            pod = event["object"]
            resource_version = pod.metadata.resource_version
            seen.append(pod.status.phase)
            value = predicate(pod)
            if value:
                w.stop()
                return value
    raise WaitTimeout(f"timed out after {timeout:.0f}s watching pod {namespace}/{name} for {what}; "
                      f"phases seen: {seen}")
