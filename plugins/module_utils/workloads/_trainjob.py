# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nccl-tests as a Kubeflow Trainer v2 TrainJob with an MPI runtime (l3_multi_gpu_launcher: trainjob).

Every fact about the Trainer API is from kubeflow/trainer v2.3.0 (tag v2.3.0, commit 658725bd):
* pkg/apis/trainer/v1alpha1/trainjob_types.go: TrainJob spec.runtimeRef {name, apiGroup, kind (default
  ClusterTrainingRuntime)}, spec.trainer {image, command, args, env, numNodes, resourcesPerNode,
  numProcPerNode}, spec.suspend, spec.activeDeadlineSeconds, spec.runtimePatches [{manager,
  trainingRuntimeSpec.template.spec.replicatedJobs[{name, template.spec.template{metadata labels/annotations,
  spec {volumes, containers [{name, volumeMounts}], nodeSelector, tolerations, ...}}}]}]; PodSpecPatch has
  no resourceClaims. Status conditions Suspended, Complete, Failed (reasons DeadlineExceeded,
  TrainingRuntimeNotSupported, or the JobSet's).
* pkg/runtime/framework/plugins/jobset/jobset.go (Status): Complete/Failed copy the JobSet's Completed/Failed
  condition (jobset v0.12.0 pkg/constants: AllJobsCompleted "jobset completed successfully", FailedJobs
  "jobset failed due to one or more job failures"); the JobSet has the TrainJob's name.
* pkg/runtime/framework/plugins/jobset/builder.go (Trainer): image, command and args go to the container
  named "node" of the replicated job labelled trainer.kubeflow.org/trainjob-ancestor-step=trainer (the
  launcher in an MPI runtime), env also to the "node" job when mlPolicy.mpi.runLauncherAsNode is true; the
  node job keeps the runtime's image.
* pkg/runtime/framework/plugins/mpi/mpi.go: with runLauncherAsNode the launcher is one of numNodes (node
  count numNodes-1), the hostfile lists the launcher and the nodes with slots=numProcPerNode.
* pkg/constants/constants.go: replicated job names "launcher" and "node", the ancestor label.
* manifests/base/runtimes/deepspeed_distributed.yaml: the shape of an MPI ClusterTrainingRuntime (launcher
  dependsOn node Ready, successPolicy on the launcher, sshd in the nodes).
* sigs.k8s.io/jobset v0.12.0 api/jobset/v1alpha2/jobset_types.go: pod labels
  jobset.sigs.k8s.io/jobset-name, jobset.sigs.k8s.io/replicatedjob-name; pkg/util/placement: child Jobs
  are named <jobset>-<replicatedJob>-<index>.
"""

from __future__ import annotations

import time

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s

TRAINER_VERSION = "v2.3.0"
API_VERSION = "trainer.kubeflow.org/v1alpha1"
CRD_NAME = "trainjobs.trainer.kubeflow.org"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_TRAINER = "trainer"
LAUNCHER = "launcher"
NODE = "node"
REPLICATED_JOB_LABEL = k8s.REPLICATED_JOB_LABEL
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
PATCH_MANAGER = "rlstack.io/validation"
FIX_LAUNCHER = "or set l3_multi_gpu_launcher: mpijob"


def _spec(obj):
    return (obj or {}).get("spec") or {}


def runtime_problem(crd_present, runtime, runtime_name, efa_mode="extended", efa_per_node=0):
    """One sentence when the TrainJob path cannot run here, else None; read before anything is created.

    The collection needs an MPI runtime of the shape of Trainer's own (deepspeed_distributed.yaml): Open MPI,
    runLauncherAsNode true (the launcher is node 0, so every node gets the GPUs), a launcher job labelled
    as the trainer step and a node job, each with a container named "node".
    """
    if not crd_present:
        return ("l3_multi_gpu_launcher is trainjob, but the cluster serves no TrainJob API (CRD %s not found): "
                "install Kubeflow Trainer v2 (%s was verified) %s." % (CRD_NAME, TRAINER_VERSION, FIX_LAUNCHER))
    if not runtime:
        return ("l3_multi_gpu_launcher is trainjob, but ClusterTrainingRuntime %s does not exist: apply "
                "trainer/nccl-tests-runtime.yml (docs/trainjob.md) or name an MPI runtime in "
                "l3_multi_gpu_trainjob_runtime, %s." % (runtime_name, FIX_LAUNCHER))
    spec = _spec(runtime)
    mpi = (spec.get("mlPolicy") or {}).get("mpi")
    if not isinstance(mpi, dict):
        return ("ClusterTrainingRuntime %s has no mlPolicy.mpi, so it is not an MPI runtime: nccl-tests needs one "
                "(trainer/nccl-tests-runtime.yml), %s." % (runtime_name, FIX_LAUNCHER))
    impl = mpi.get("mpiImplementation") or "OpenMPI"
    if impl != "OpenMPI":
        return ("ClusterTrainingRuntime %s uses mpiImplementation %s; the nccl-tests launcher runs Open MPI's "
                "mpirun, %s." % (runtime_name, impl, FIX_LAUNCHER))
    if not mpi.get("runLauncherAsNode"):
        return ("ClusterTrainingRuntime %s has runLauncherAsNode false: the launcher would hold no GPU and the "
                "GPU nodes would get no resourcesPerNode; set it true as trainer/nccl-tests-runtime.yml does, %s."
                % (runtime_name, FIX_LAUNCHER))
    jobs = {(j or {}).get("name"): j for j in ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []}
    if LAUNCHER not in jobs or NODE not in jobs:
        return ("ClusterTrainingRuntime %s has replicated jobs %s; an MPI runtime needs 'launcher' and 'node', %s."
                % (runtime_name, sorted(str(k) for k in jobs), FIX_LAUNCHER))
    labels = ((jobs[LAUNCHER].get("template") or {}).get("metadata") or {}).get("labels") or {}
    if labels.get(ANCESTOR_LABEL) != ANCESTOR_TRAINER:
        return ("ClusterTrainingRuntime %s: its launcher job lacks the label %s=%s, so the TrainJob's image and "
                "command would not reach it, %s." % (runtime_name, ANCESTOR_LABEL, ANCESTOR_TRAINER, FIX_LAUNCHER))
    for name in (LAUNCHER, NODE):
        pod = ((jobs[name].get("template") or {}).get("spec") or {}).get("template") or {}
        if NODE not in [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]:
            return ("ClusterTrainingRuntime %s: its %s job has no container named 'node' (the one Trainer fills "
                    "from the TrainJob), %s." % (runtime_name, name, FIX_LAUNCHER))
    if efa_mode == "dra" and int(efa_per_node or 0) > 0:
        return ("EFA comes through the EFA DRA driver here, and a TrainJob cannot claim it: Trainer %s's "
                "runtimePatches have no resourceClaims (PodSpecPatch); set l3_multi_gpu_launcher: mpijob "
                "(its workers claim EFA through a ResourceClaimTemplate)." % TRAINER_VERSION)
    return None


def runtime_node_image(runtime):
    """The image of the runtime's node job: Trainer does not replace it (builder.go), so it runs the ranks."""
    for job in ((_spec(runtime).get("template") or {}).get("spec") or {}).get("replicatedJobs") or []:
        if job.get("name") == NODE:
            pod = ((job.get("template") or {}).get("spec") or {}).get("template") or {}
            for container in (pod.get("spec") or {}).get("containers") or []:
                if container.get("name") == NODE:
                    return container.get("image") or ""
    return ""


def definition(job, name, namespace, runtime_name, labels, launcher_args, env, scripts_configmap,
               tolerations, shm_size, queue="", queue_label=k8s.KUEUE_QUEUE_LABEL, owner_references=None):
    """The TrainJob of the nccl-tests run `job` (the nccl_mpijob description: workers, gpus_per_worker,
    efa_per_worker, node_selector, image, deadline_s): the launcher (node 0) runs `launcher_args` with
    mpirun; every pod gets the run's labels, the node selector, the tolerations, /dev/shm and the ranks'
    script from `scripts_configmap` through runtimePatches."""
    gpus = int(job.get("gpus_per_worker") or 1)
    efa = int(job.get("efa_per_worker") or 0)
    limits = {"nvidia.com/gpu": gpus}
    if efa > 0:
        limits["vpc.amazonaws.com/efa"] = efa
    # The securityContext of roles/runner/templates/security_context.yml.j2 for an MPIJob worker: every node runs
    # sshd as root (the runtime's default capabilities stay); no IPC_LOCK with EFA, the locked-memory limit the EFA
    # provider needs is the node's (docs/security.md, "What the pods may do"); the runtime mounts no token.
    container_security = {"allowPrivilegeEscalation": False}
    pod_patch = {
        "metadata": {"labels": dict(labels)},
        "spec": {
            "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
            "nodeSelector": dict(job.get("node_selector") or {}),
            "tolerations": list(tolerations or []),
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm_size}},
                        {"name": "scripts", "configMap": {"name": scripts_configmap}}],
            "containers": [{"name": NODE, "securityContext": container_security, "volumeMounts": [
                {"name": "dshm", "mountPath": "/dev/shm"},
                {"name": "scripts", "mountPath": "/opt/rlstack", "readOnly": True}]}],
        },
    }
    meta_labels = dict(labels)
    if queue:
        meta_labels[queue_label] = queue
    meta = {"name": name, "namespace": namespace, "labels": meta_labels}
    if owner_references:
        meta["ownerReferences"] = list(owner_references)
    spec = {
        "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": runtime_name},
        "activeDeadlineSeconds": int(job.get("deadline_s") or 3600),
        "trainer": {
            "image": job["image"],
            "command": ["mpirun"],
            "args": [str(a) for a in launcher_args],
            "env": [{"name": str(k), "value": str(v)} for k, v in sorted((env or {}).items())],
            "numNodes": int(job.get("workers") or 1),
            "numProcPerNode": gpus,
            "resourcesPerNode": {"limits": limits},
        },
        "runtimePatches": [{"manager": PATCH_MANAGER, "trainingRuntimeSpec": {"template": {"spec": {
            "replicatedJobs": [{"name": rjob, "template": {"spec": {"template": pod_patch}}}
                               for rjob in (LAUNCHER, NODE)]}}}}],
    }
    if queue:
        # Kueue resumes the TrainJob when it admits it; Trainer creates no JobSet while it is suspended.
        spec["suspend"] = True
    return {"apiVersion": API_VERSION, "kind": "TrainJob", "metadata": meta, "spec": spec}


def trainjob_state(trainjob, pods=None, now=None, grace_s=k8s.PROBLEM_GRACE_S, workloads=None):
    """A TrainJob: its Complete/Failed conditions, plus its pods' problems, in mpijob_state's shape.

    `source` is "launcher pod" when the outcome was read from the finished launcher pod (JobSet role
    launcher) because the controller had not recorded it yet, "TrainJob status" otherwise.
    """
    trainjob = trainjob or {}
    conds = {c.get("type"): c for c in k8s._conditions(trainjob) if c.get("status") == "True"}
    summary = k8s.pods_summary(pods or [], expected=None, grace_s=grace_s, want="running", now=now)
    failed = conds.get("Failed")
    # The controller has taken the TrainJob on: it copied the JobSet's replicatedJobsStatus (every replicated Job,
    # set by the JobSet controller's first reconcile) into jobsStatus, or recorded a condition (Suspended, Failed
    # for an unsupported runtime) (trainer v2.3.0 pkg/controller/trainjob_controller.go Reconcile,
    # pkg/runtime/framework/plugins/jobset/jobset.go Status; jobset v0.12.0 updateReplicatedJobsStatuses).
    taken = bool((trainjob.get("status") or {}).get("jobsStatus")) or bool(k8s._conditions(trainjob))
    state = {"name": k8s._meta(trainjob).get("name", ""), "taken": taken, "complete": "Complete" in conds,
             "failed": bool(failed),
             "reason": (failed or {}).get("reason") or "", "message": (failed or {}).get("message") or "",
             "pods": summary["states"], "problems": summary["problems"], "source": "TrainJob status"}
    k8s.launcher_outcome(state, summary["states"], "TrainJob", role=LAUNCHER)
    admission = k8s.admission_problem(trainjob, workloads, now=now, grace_s=grace_s)
    if admission:
        state["problems"] = [k8s._admission_state(trainjob, admission)] + state["problems"]
    if trainjob and not state["complete"] and not state["failed"] and not admission:
        created = k8s.parse_time(k8s._meta(trainjob).get("creationTimestamp"))
        age = (time.time() if now is None else now) - created if created else 0.0
        if k8s._meta(trainjob).get("deletionTimestamp"):
            state.update(failed=True, reason="Deleted", message="TrainJob %s was deleted while the level waited on it"
                         % state["name"])
        elif not pods and not (trainjob.get("status") or {}).get("jobsStatus") and age >= float(grace_s):
            state.update(failed=True, reason="TrainerNotActing",
                         message="TrainJob %s has no child Jobs and no pods after %.0f s: the Kubeflow Trainer "
                                 "controller is not acting on it" % (state["name"], age),
                         hint="check the trainer-controller-manager Deployment (kubeflow-system) and its log, and "
                              "that JobSet is installed")
    state["settled"] = state["complete"] or state["failed"] or any(
        p["problem"]["kind"] in k8s.SETTLING for p in state["problems"])
    return state
