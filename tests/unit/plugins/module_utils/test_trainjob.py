# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/workloads/_trainjob.py: the runtime check, the TrainJob, its state (Kubeflow Trainer v2.3.0)."""

from __future__ import annotations

import copy
import os

import yaml

from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _trainjob

from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "unit", "fixtures", "trainer")
P5_NODES = [{"node": "p5-node-0", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32},
            {"node": "p5-node-1", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32}]
NOW = 1_000_000.0


def load(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


SHIPPED = load(os.path.join(ROOT, "trainer", "nccl-tests-runtime.yml"))
DEEPSPEED = load(os.path.join(FIXTURES, "deepspeed_distributed.yaml"))
TORCH = load(os.path.join(FIXTURES, "torch_distributed.yaml"))


def test_trainers_own_mpi_runtime_and_the_shipped_one_fit():
    assert _trainjob.runtime_problem(True, DEEPSPEED, "deepspeed-distributed") is None
    assert _trainjob.runtime_problem(True, SHIPPED, "rlstack-nccl-tests") is None
    assert _trainjob.runtime_node_image(SHIPPED).startswith("public.ecr.aws/hpc-cloud/nccl-tests:")


def test_each_misfit_is_one_sentence():
    missing_crd = _trainjob.runtime_problem(False, {}, "rlstack-nccl-tests")
    assert "CRD trainjobs.trainer.kubeflow.org not found" in missing_crd and "l3_multi_gpu_launcher: mpijob" in missing_crd
    assert "does not exist" in _trainjob.runtime_problem(True, {}, "x")
    assert "no mlPolicy.mpi" in _trainjob.runtime_problem(True, TORCH, "torch-distributed")
    intel = copy.deepcopy(SHIPPED)
    intel["spec"]["mlPolicy"]["mpi"]["mpiImplementation"] = "Intel"
    assert "mpiImplementation Intel" in _trainjob.runtime_problem(True, intel, "x")
    separate = copy.deepcopy(SHIPPED)
    separate["spec"]["mlPolicy"]["mpi"]["runLauncherAsNode"] = False
    assert "runLauncherAsNode false" in _trainjob.runtime_problem(True, separate, "x")
    unlabelled = copy.deepcopy(SHIPPED)
    unlabelled["spec"]["template"]["spec"]["replicatedJobs"][1]["template"]["metadata"]["labels"] = {}
    assert "trainjob-ancestor-step=trainer" in _trainjob.runtime_problem(True, unlabelled, "x")
    dra = _trainjob.runtime_problem(True, SHIPPED, "x", "dra", 32)
    assert "runtimePatches have no resourceClaims" in dra
    for sentence in (missing_crd, dra):
        assert sentence.count(". ") == 0 and sentence.endswith(".")


def definition(queue=""):
    job = _workloads.nccl_mpijob(P5_NODES, "l3", "nccl:1", None, None, 0.0)["mpijob"]
    launcher = _workloads.nccl_launcher(job)
    return _trainjob.definition(job, "rlsv-run1-l3-nccl", "ns", "rlstack-nccl-tests", {"rlstack.io/run": "run1"},
                                launcher["args"], launcher["env"], "rlsv-run1-l3-nccl",
                                [{"key": "nvidia.com/gpu", "operator": "Exists"}], "64Gi", queue=queue,
                                owner_references=[{"kind": "Job", "name": "anchor"}])


def test_the_trainjob_carries_the_mpijobs_launcher_and_every_gpu():
    obj = definition()
    assert (obj["apiVersion"], obj["kind"]) == ("trainer.kubeflow.org/v1alpha1", "TrainJob")
    spec = obj["spec"]
    assert spec["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime",
                                  "name": "rlstack-nccl-tests"}
    trainer = spec["trainer"]
    assert (trainer["numNodes"], trainer["numProcPerNode"]) == (2, 8)
    assert trainer["resourcesPerNode"] == {"limits": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}}
    assert trainer["command"] == ["mpirun"] and trainer["args"][:4] == ["--allow-run-as-root", "--tag-output", "-np", "16"]
    assert "/opt/rlstack/nccl_tests_json.sh" in trainer["args"] and "-e" in trainer["args"]
    assert {"name": "FI_EFA_USE_DEVICE_RDMA", "value": "1"} in trainer["env"]
    patches = spec["runtimePatches"][0]
    assert patches["manager"] == "rlstack.io/validation"
    jobs = patches["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert [j["name"] for j in jobs] == ["launcher", "node"]
    pod = jobs[1]["template"]["spec"]["template"]
    assert pod["metadata"]["labels"] == {"rlstack.io/run": "run1"}
    assert pod["spec"]["nodeSelector"] == {"node.kubernetes.io/instance-type": "p5.48xlarge"}
    assert {"name": "scripts", "configMap": {"name": "rlsv-run1-l3-nccl"}} in pod["spec"]["volumes"]
    assert pod["spec"]["containers"][0]["name"] == "node"
    # EFA ranks add no capability (docs/security.md): the runtime's default set stays for sshd, nothing more.
    assert pod["spec"]["containers"][0]["securityContext"] == {"allowPrivilegeEscalation": False}
    assert "suspend" not in spec and obj["metadata"]["ownerReferences"] == [{"kind": "Job", "name": "anchor"}]
    queued = definition("team-a")
    assert queued["spec"]["suspend"] is True
    assert queued["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"


def pod(name, role, phase="Running", exit_code=None):
    status = {"phase": phase}
    if exit_code is not None:
        status["containerStatuses"] = [{"name": "node", "state": {"terminated": {"exitCode": exit_code}}}]
    return {"metadata": {"name": name, "creationTimestamp": "1970-01-12T13:46:40Z",
                         "labels": {"jobset.sigs.k8s.io/replicatedjob-name": role}},
            "spec": {"nodeName": "p5-node-0"}, "status": status}


def trainjob(conditions=(), created="1970-01-12T13:46:30Z", **status):
    return {"kind": "TrainJob", "metadata": {"name": "tj", "creationTimestamp": created},
            "spec": {}, "status": dict(status, conditions=list(conditions))}


def test_state_from_trainers_conditions():
    done = {"type": "Complete", "status": "True", "reason": "AllJobsCompleted", "message": "jobset completed successfully"}
    state = _trainjob.trainjob_state(trainjob([done]), [pod("tj-launcher-0-0-a", "launcher", "Succeeded", 0)], now=NOW)
    assert state["complete"] and state["settled"] and state["source"] == "TrainJob status"
    failed = {"type": "Failed", "status": "True", "reason": "FailedJobs",
              "message": "jobset failed due to one or more job failures"}
    state = _trainjob.trainjob_state(trainjob([failed]), [], now=NOW)
    assert state["failed"] and state["reason"] == "FailedJobs"


def test_state_from_the_finished_launcher_pod_while_the_status_lags():
    pods = [pod("tj-launcher-0-0-a", "launcher", "Failed", 139), pod("tj-node-0-0-b", "node")]
    state = _trainjob.trainjob_state(trainjob(jobsStatus=[{"name": "launcher"}]), pods, now=NOW)
    assert state["failed"] and state["source"] == "launcher pod" and "exit code 139" in state["message"]
    running = _trainjob.trainjob_state(trainjob(jobsStatus=[{"name": "launcher"}]), [pod("l", "launcher")], now=NOW)
    assert not running["settled"] and running["pods"][0]["role"] == "launcher"


def test_a_trainjob_nobody_acts_on_is_named_after_the_grace():
    young = _trainjob.trainjob_state(trainjob(created="1970-01-12T13:46:35Z"), [], now=NOW, grace_s=10)
    assert not young["settled"]
    state = _trainjob.trainjob_state(trainjob(), [], now=NOW, grace_s=5)
    assert state["failed"] and state["reason"] == "TrainerNotActing" and "trainer-controller-manager" in state["hint"]


def test_a_trainjob_is_taken_on_once_the_trainer_copied_the_jobsets_status_or_set_a_condition():
    assert not _trainjob.trainjob_state(trainjob(), [], now=NOW)["taken"]
    zeros = {"name": "node", "ready": 0, "succeeded": 0, "failed": 0, "active": 0, "suspended": 0}
    assert _trainjob.trainjob_state(trainjob(jobsStatus=[zeros]), [], now=NOW)["taken"]
    suspended = {"type": "Suspended", "status": "True", "reason": "Suspended", "message": "TrainJob is suspended"}
    assert _trainjob.trainjob_state(trainjob([suspended]), [], now=NOW)["taken"]
    # nothing read yet (the TrainJob not found): not taken
    assert not _trainjob.trainjob_state({}, [], now=NOW)["taken"]


def test_a_suspended_trainjob_is_not_admitted():
    obj = trainjob()
    obj["spec"]["suspend"] = True
    obj["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
    state = _trainjob.trainjob_state(obj, [], now=NOW, grace_s=5, workloads=[])
    assert state["settled"] and state["problems"][0]["problem"]["kind"] == "not_admitted"
    assert "queue team-a" in state["problems"][0]["problem"]["message"]


def test_the_launcher_command_has_one_home():
    job = _workloads.nccl_mpijob(P5_NODES, "l3", "nccl:1", None, None, 0.0)["mpijob"]
    launcher = _workloads.nccl_launcher(job)
    assert launcher["np"] == 16
    assert launcher["args"] == [
        "--allow-run-as-root", "--tag-output", "-np", "16", "-bind-to", "none", "-map-by", "slot",
        "-x", "NCCL_DEBUG", "-x", "FI_PROVIDER", "-x", "FI_EFA_FORK_SAFE", "-x", "NCCL_NVLS_ENABLE",
        "-x", "FI_EFA_USE_DEVICE_RDMA", "/bin/sh", "/opt/rlstack/nccl_tests_json.sh",
        "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "16G", "-f", "2", "-g", "1", "-c", "1", "-n", "20"]
    with open(os.path.join(ROOT, "roles", "runner", "templates", "mpijob.yml.j2")) as handle:
        assert "rlstack.validation.nccl_launcher" in handle.read()
