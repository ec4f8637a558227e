"""The real Kubeflow MPI operator (v2beta1) with kwok pods: workers on the p5 nodes, launcher held 8 s."""
from __future__ import annotations

import time

import pytest

import simkit

pytestmark = pytest.mark.sim

GROUP, VERSION, PLURAL = "kubeflow.org", "v2beta1", "mpijobs"
ROLE = "training.kubeflow.org/job-role"
HEALTHY_ROW = "2147483648     536870912     float     sum      -1   9197.5  233.49  437.79"


def mpijob_body(name: str) -> dict:
    worker = simkit.gpu_pod_body("", command=["/usr/sbin/sshd", "-De"])
    launcher = simkit.pod_body("", labels={**simkit.MANAGED, simkit.LEVEL_LABEL: "l3_multi_gpu"},
                               annotations={simkit.RUN_FOR: "8s"},
                               command=["mpirun", "-np", "16", "all_reduce_perf", "-b", "8", "-e", "2G", "-f", "2"])
    for template in (worker, launcher):
        del template["metadata"]["name"]
        template["spec"].pop("restartPolicy")  # belongs on the replica spec
    return {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "MPIJob",
        "metadata": {"name": name, "labels": dict(simkit.MANAGED)},
        "spec": {
            "slotsPerWorker": 8,
            "launcherCreationPolicy": "WaitForWorkersReady",
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 0},
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "restartPolicy": "Never",
                             "template": {"metadata": launcher["metadata"], "spec": launcher["spec"]}},
                "Worker": {"replicas": 2, "restartPolicy": "Never",
                           "template": {"metadata": worker["metadata"], "spec": worker["spec"]}},
            },
        },
    }


def test_mpijob_created_running_succeeded(core, batch, custom, namespace):
    name = "nccl"
    created = custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, mpijob_body(name))

    # Watch every status update from the creation on; remember when each condition first became True
    # and the sequence of distinct condition sets.
    from kubernetes import watch
    first_true: dict = {}
    sequence: list = []
    running_pods = None  # (workers, launchers) as seen while the MPIJob was Running
    job = created
    t0 = time.monotonic()
    watcher = watch.Watch()
    for event in watcher.stream(custom.list_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL,
                                field_selector=f"metadata.name={name}",
                                resource_version=created["metadata"]["resourceVersion"],
                                timeout_seconds=60, _request_timeout=70):
        job = event["object"]
        now = time.monotonic() - t0
        conditions = (job.get("status") or {}).get("conditions") or []
        true = tuple(c["type"] for c in conditions if c.get("status") == "True")
        if not sequence or sequence[-1] != true:
            sequence.append(true)
        for ctype in true:
            first_true.setdefault(ctype, now)
        if "Running" in true and running_pods is None:
            pods = core.list_namespaced_pod(namespace).items
            workers = [p for p in pods if (p.metadata.labels or {}).get(ROLE) == "worker"]
            launchers = [p for p in pods if (p.metadata.labels or {}).get(ROLE) == "launcher"]
            running_pods = (workers, launchers)
        if "Succeeded" in true or "Failed" in true:
            watcher.stop()
    assert "Failed" not in first_true, job.get("status")
    assert {"Created", "Running", "Succeeded"} <= first_true.keys(), (sequence, job.get("status"))
    # Created alone, then Running, then Succeeded (Running turns False when the launcher finishes).
    assert ("Created",) in sequence, sequence
    assert sequence.index(("Created",)) < sequence.index(("Created", "Running")) < len(sequence) - 1, sequence
    assert "Running" not in sequence[-1] and "Succeeded" in sequence[-1], sequence
    # The launcher was held ~8 s by its run-for annotation.
    assert first_true["Succeeded"] - first_true["Running"] > 4, first_true

    # While Running: 2 workers on the 2 p5 nodes, 8 GPUs each, and the launcher (a Job's pod).
    workers, launchers = running_pods
    assert len(workers) == 2 and len(launchers) == 1, (workers, launchers)
    assert sorted(w.spec.node_name for w in workers) == ["p5-node-0", "p5-node-1"]
    for w in workers:
        limits = w.spec.containers[0].resources.limits
        assert limits == {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}
    launcher = launchers[0]
    # WaitForWorkersReady: the launcher Job came after both workers were Ready.
    ready_at = max(simkit.condition(w.status.conditions, "Ready").last_transition_time for w in workers)
    assert batch.read_namespaced_job(f"{name}-launcher", namespace).metadata.creation_timestamp >= ready_at
    assert launcher.metadata.labels[simkit.LEVEL_LABEL] == "l3_multi_gpu"
    assert any(o.kind == "Job" for o in launcher.metadata.owner_references)

    status = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)["status"]
    assert status["replicaStatuses"]["Launcher"].get("succeeded") == 1

    # The launcher's log is the healthy nccl-tests run over EFA.
    log = simkit.wait_until(lambda: core.read_namespaced_pod_log(launcher.metadata.name, namespace), 20,
                            "the launcher's log")
    assert any(HEALTHY_ROW in line for line in log.splitlines()), "no 2 GiB row at 437.79 GB/s"
    assert "# Avg bus bandwidth    : 52.9753" in log

    # cleanPodPolicy Running: the workers go, the finished launcher stays.
    def workers_gone():
        pods = core.list_namespaced_pod(namespace).items
        return not [p for p in pods if (p.metadata.labels or {}).get(ROLE) == "worker"] and pods
    pods = simkit.wait_until(workers_gone, 30, "the worker pods to be deleted")
    assert [p.metadata.name for p in pods] == [launcher.metadata.name]
    assert pods[0].status.phase == "Succeeded"
