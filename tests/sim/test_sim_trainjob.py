"""nccl-tests as a Kubeflow Trainer v2 TrainJob on the simulated cluster: the real Trainer v2.3.0 CRDs and the
shipped MPI runtime (trainer/nccl-tests-runtime.yml) served by the real API server, sim/trainer_sim.py in
place of the Trainer and JobSet controllers, kwok pods, the recorded launcher log.

The API test and the missing-runtime run are in the default run (seconds); the two L3 playbook runs
(healthy passes, nccl-crash fails, as the MPIJob does) are marked sim_extended: `make test-sim-extended`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import simkit
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _trainjob
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads

pytestmark = pytest.mark.sim

GROUP, VERSION, PLURAL = "trainer.kubeflow.org", "v1alpha1", "trainjobs"
HEALTHY_ROW = "2147483648     536870912     float     sum      -1   9197.5  233.49  437.79"
P5_NODES = [{"node": "p5-node-0", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32},
            {"node": "p5-node-1", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32}]
ROLE = "jobset.sigs.k8s.io/replicatedjob-name"


def trainjob_body(name: str, namespace: str) -> dict:
    job = _workloads.nccl_mpijob(P5_NODES, "l3", simkit.IMAGE, None, None, 0.0)["mpijob"]
    launcher = _workloads.nccl_launcher(job)
    labels = {**simkit.MANAGED, simkit.LEVEL_LABEL: "l3_multi_gpu"}
    return _trainjob.definition(job, name, namespace, "rlstack-nccl-tests", labels, launcher["args"], launcher["env"],
                                name, [simkit.GPU_TOLERATION], "1Gi")


def test_trainjob_runs_its_launcher_as_node_0_and_completes(api_client, custom, batch, core, namespace):
    custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, trainjob_body("nccl", namespace))

    def done():
        obj = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "nccl")
        return obj if simkit.condition((obj.get("status") or {}).get("conditions"), "Complete") else None

    obj = simkit.wait_until(done, 60, "the TrainJob's Complete condition")
    complete = simkit.condition(obj["status"]["conditions"], "Complete")
    assert complete["reason"] == "AllJobsCompleted", complete
    jobs = {j.metadata.name: j for j in batch.list_namespaced_job(namespace).items}
    assert set(jobs) == {"nccl-node-0", "nccl-launcher-0"}
    # runLauncherAsNode: the launcher is one of the two nodes, so the node job has one pod
    assert jobs["nccl-node-0"].spec.parallelism == 1
    pods = core.list_namespaced_pod(namespace).items
    launcher = [p for p in pods if (p.metadata.labels or {}).get(ROLE) == "launcher"]
    assert len(launcher) == 1 and launcher[0].metadata.labels["jobset.sigs.k8s.io/jobset-name"] == "nccl"
    assert launcher[0].spec.containers[0].resources.limits["nvidia.com/gpu"] == "8"
    assert {p.spec.node_name for p in pods} == {"p5-node-0", "p5-node-1"}
    log = core.read_namespaced_pod_log(launcher[0].metadata.name, namespace)
    assert HEALTHY_ROW in log
    state = _trainjob.trainjob_state(obj, [api_client.sanitize_for_serialization(p) for p in pods])
    assert state["complete"] and state["source"] == "TrainJob status"


def run_l3(tmp_path: Path, run_id: str, *extra: str, timeout: float = 400) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(tmp_path),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
           "--tags", "l3", "-e", f"validation_kubeconfig={simkit.KUBECONFIG}", "-e", f"validation_run_id={run_id}",
           "-e", "l3_multi_gpu_launcher=trainjob", *extra]
    started = time.monotonic()
    run = subprocess.run(cmd, cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=timeout,
                         check=False)
    return run, time.monotonic() - started


def left_behind(custom, core, run_id: str) -> list:
    selector = f"rlstack.io/run-id={run_id}"
    left = [o["metadata"]["name"] for o in custom.list_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, label_selector=selector).get("items", [])]
    return left + [p.metadata.name for p in core.list_namespaced_pod("default", label_selector=selector).items]


def test_a_runtime_that_is_not_there_is_one_sentence_before_anything_is_created(custom, core, batch, tmp_path):
    run_id = "tj-none-" + uuid.uuid4().hex[:5]
    run, _took = run_l3(tmp_path, run_id, "-e", "l3_multi_gpu_trainjob_runtime=no-such-runtime", timeout=120)
    out = run.stdout[-4000:] + run.stderr[-2000:]
    assert run.returncode != 0, out
    assert "ClusterTrainingRuntime no-such-runtime does not exist" in out, out
    # the plan stopped before the anchor Job: nothing of the run exists
    assert batch.list_namespaced_job("default", label_selector=f"rlstack.io/run-id={run_id}").items == []
    assert left_behind(custom, core, run_id) == []


@pytest.mark.sim_extended
@pytest.mark.parametrize("sim_scenario, verdict", [("healthy", "PASS"), ("nccl-crash", "FAIL")])
def test_l3_as_a_trainjob_judges_like_the_mpijob(custom, core, scenario, tmp_path, sim_scenario, verdict):
    scenario(sim_scenario)
    run_id = "tj-" + uuid.uuid4().hex[:6]
    run, took = run_l3(tmp_path, run_id)
    out = run.stdout[-6000:] + run.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    (l3,) = [lv for lv in report["clusters"][0]["levels"] if lv["id"] == "l3_multi_gpu"]
    assert l3["status"] == verdict, (took, out)
    checks = {c["name"]: c for c in l3["checks"]}
    assert checks["trainjob"]["passed"] is (verdict == "PASS"), checks["trainjob"]
    if verdict == "PASS":
        assert run.returncode == 0, out
        assert "437" in json.dumps(l3)  # the busbw of the recorded healthy run reached the report
    else:
        failed = [c for c in l3["checks"] if not c["passed"]]
        assert any("signal 11" in json.dumps(c).lower() or c["name"] == "signatures" for c in failed), failed
    assert left_behind(custom, core, run_id) == []


def test_a_suspended_trainjob_is_not_admitted(custom, core, namespace):
    body = trainjob_body("queued", namespace)
    body["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "team-a"
    body["spec"]["suspend"] = True
    custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)

    def read():
        obj = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "queued")
        return obj if simkit.condition((obj.get("status") or {}).get("conditions"), "Suspended") else None

    obj = simkit.wait_until(read, 20, "the Suspended condition")
    state = _trainjob.trainjob_state(obj, [], grace_s=0, workloads=[])
    message = state["problems"][0]["problem"]["message"]
    assert state["settled"] and not state["failed"], state
    assert message.startswith("not admitted by Kueue (queue team-a)") and "(Suspended: TrainJob is suspended)" in message
    assert core.list_namespaced_pod(namespace).items == []
