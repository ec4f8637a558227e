# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The simulated cluster's stand-in for the Kubeflow Trainer v2 controller and the JobSet controller.

The real controllers (kubeflow/trainer v2.3.0, sigs.k8s.io/jobset v0.12.0) are not built here: both need
their webhooks and cert management in-cluster. This loop does, for an MPI runtime, what their sources say
they do, and nothing else (every point checked in those sources, files named in
plugins/module_utils/workloads/_trainjob.py):

* a suspended TrainJob gets Suspended=True (reason Suspended, "TrainJob is suspended") and no Jobs;
* otherwise one batch/v1 Job per replicated job of the referenced ClusterTrainingRuntime, named
  <trainjob>-<replicatedJob>-0 (jobset pkg/util/placement GenJobName), Indexed (jobset_webhook.go default),
  restartPolicy OnFailure where the runtime sets none (same webhook), labelled jobset.sigs.k8s.io/jobset-name,
  replicatedjob-name and job-index, owned by the TrainJob (garbage collection removes them with it);
* the node job runs numNodes-1 pods when runLauncherAsNode (mpi.go EnforceMLPolicy), the launcher one;
  the launcher only once the node job is Ready (dependsOn: node Ready);
* the TrainJob's image, command and args go to the launcher's "node" container, env and resourcesPerNode
  to both (jobset/builder.go Trainer); runtimePatches' pod labels, nodeSelector, tolerations, volumes and the
  "node" container's volumeMounts are merged in (trainjob_types.go PodSpecPatch); the Open MPI variables
  OMPI_MCA_orte_default_hostfile, keep_fqdn_hostnames, set_default_slots and plm_rsh_args (mpi.go);
* status: Complete (AllJobsCompleted, "jobset completed successfully") when the launcher Job completes
  (successPolicy All on the launcher), Failed (FailedJobs, "jobset failed due to one or more job failures")
  when a Job fails; jobsStatus per replicated job (jobset.go Status).

The pods themselves are kwok's (stages) and the node runtime's (logs), as for MPIJobs.
"""
from __future__ import annotations

import copy
import datetime
import time

GROUP, VERSION = "trainer.kubeflow.org", "v1alpha1"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
JOB_INDEX = "jobset.sigs.k8s.io/job-index"
OPEN_MPI_ENV = {"OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile", "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
                "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10"}


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _cond(ctype: str, reason: str, message: str) -> dict:
    return {"type": ctype, "status": "True", "reason": reason, "message": message, "lastTransitionTime": _now()}


def _merge_named(base: list, extra: list) -> list:
    out = [dict(x) for x in base or []]
    names = [x.get("name") for x in out]
    for item in extra or []:
        if item.get("name") in names:
            out[names.index(item.get("name"))].update(item)
        else:
            out.append(dict(item))
    return out


def job_for(trainjob: dict, runtime: dict, rjob: dict, count: int) -> dict:
    name = trainjob["metadata"]["name"]
    rname = rjob["name"]
    spec = trainjob.get("spec") or {}
    trainer = spec.get("trainer") or {}
    mpi = ((runtime.get("spec") or {}).get("mlPolicy") or {}).get("mpi") or {}
    template = copy.deepcopy((rjob.get("template") or {}).get("spec") or {})
    pod = template.setdefault("template", {})
    pod_spec = pod.setdefault("spec", {})
    pod_spec.setdefault("restartPolicy", "OnFailure")
    ancestor = ((rjob.get("template") or {}).get("metadata") or {}).get("labels", {}).get(
        "trainer.kubeflow.org/trainjob-ancestor-step")
    labels = {JOBSET_NAME: name, REPLICATED_JOB: rname, JOB_INDEX: "0"}
    for patch in spec.get("runtimePatches") or []:
        for rpatch in ((((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec") or {})
                       .get("replicatedJobs") or []):
            if rpatch.get("name") != rname:
                continue
            ppod = ((rpatch.get("template") or {}).get("spec") or {}).get("template") or {}
            pod.setdefault("metadata", {}).setdefault("labels", {}).update((ppod.get("metadata") or {}).get("labels") or {})
            pspec = ppod.get("spec") or {}
            for key in ("nodeSelector", "tolerations", "serviceAccountName"):
                if key in pspec:
                    pod_spec[key] = copy.deepcopy(pspec[key])
            pod_spec["volumes"] = _merge_named(pod_spec.get("volumes"), pspec.get("volumes"))
            for cpatch in pspec.get("containers") or []:
                for container in pod_spec.get("containers") or []:
                    if container.get("name") == cpatch.get("name"):
                        container["volumeMounts"] = _merge_named(container.get("volumeMounts"), cpatch.get("volumeMounts"))
    pod.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
    env = [{"name": e["name"], "value": e.get("value", "")} for e in trainer.get("env") or []]
    if rname == "launcher":
        env += [{"name": k, "value": v} for k, v in OPEN_MPI_ENV.items()]
        env.append({"name": "OMPI_MCA_orte_set_default_slots", "value": str(trainer.get("numProcPerNode") or 1)})
    for container in pod_spec.get("containers") or []:
        if container.get("name") != "node":
            continue
        if ancestor == "trainer":
            for key in ("image", "command", "args"):
                if trainer.get(key) is not None:
                    container[key] = copy.deepcopy(trainer[key])
        if ancestor == "trainer" or (mpi.get("runLauncherAsNode") and rname == "node"):
            container["env"] = _merge_named(container.get("env"), env)
            if trainer.get("resourcesPerNode"):
                container["resources"] = copy.deepcopy(trainer["resourcesPerNode"])
        container.pop("readinessProbe", None)  # kwok marks pods Ready itself
    template.update({"completionMode": "Indexed", "parallelism": count, "completions": count})
    owner = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "TrainJob", "name": name,
             "uid": trainjob["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": f"{name}-{rname}-0", "namespace": trainjob["metadata"]["namespace"],
                         "labels": dict(labels), "ownerReferences": [owner]},
            "spec": template}


def _job_true(job, ctype: str) -> bool:
    return any(c.type == ctype and c.status == "True" for c in (job.status.conditions or []))


def reconcile(trainjob: dict, client, api, log) -> None:
    custom = client.CustomObjectsApi(api)
    batch = client.BatchV1Api(api)
    meta = trainjob["metadata"]
    ns, name = meta["namespace"], meta["name"]
    status = trainjob.get("status") or {}
    conditions = status.get("conditions") or []
    if meta.get("deletionTimestamp") or any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                                            for c in conditions):
        return
    spec = trainjob.get("spec") or {}
    if spec.get("suspend"):
        if not any(c.get("type") == "Suspended" for c in conditions):
            custom.patch_namespaced_custom_object_status(GROUP, VERSION, ns, "trainjobs", name, {"status": {
                "conditions": conditions + [_cond("Suspended", "Suspended", "TrainJob is suspended")]}})
        return
    ref = spec.get("runtimeRef") or {}
    try:
        runtime = custom.get_cluster_custom_object(GROUP, VERSION, "clustertrainingruntimes", ref.get("name", ""))
    except client.exceptions.ApiException as exc:
        log(f"trainer: {ns}/{name}: runtime {ref.get('name')}: {exc.status}")
        return
    rjobs = {r["name"]: r for r in ((runtime.get("spec") or {}).get("template") or {}).get("spec", {}).get("replicatedJobs") or []}
    mpi = ((runtime.get("spec") or {}).get("mlPolicy") or {}).get("mpi") or {}
    nodes = int((spec.get("trainer") or {}).get("numNodes") or 1)
    counts = {"launcher": 1, "node": max(nodes - 1, 1) if mpi.get("runLauncherAsNode") else nodes}
    existing = {j.metadata.labels.get(REPLICATED_JOB): j for j in
                batch.list_namespaced_job(ns, label_selector=f"{JOBSET_NAME}={name}").items}
    for rname in ("node", "launcher"):
        if rname not in rjobs or rname in existing:
            continue
        if rname == "launcher" and "node" in rjobs:
            node = existing.get("node")  # dependsOn: node Ready (ready + succeeded pods cover the Job)
            if node is None or ((node.status.ready or 0) + (node.status.succeeded or 0)) < counts["node"]:
                continue
        batch.create_namespaced_job(ns, job_for(trainjob, runtime, rjobs[rname], counts[rname]))
        log(f"trainer: {ns}/{name}: created Job {name}-{rname}-0 ({counts[rname]} pods)")
    jobs_status = [{"name": r, "ready": int(bool(j.status.ready)), "succeeded": int(_job_true(j, "Complete")),
                    "failed": int(_job_true(j, "Failed")), "active": int(bool(j.status.active)), "suspended": 0}
                   for r, j in sorted(existing.items())]
    new = None
    if any(_job_true(j, "Failed") for j in existing.values()):
        new = _cond("Failed", "FailedJobs", "jobset failed due to one or more job failures")
    elif "launcher" in existing and _job_true(existing["launcher"], "Complete"):
        new = _cond("Complete", "AllJobsCompleted", "jobset completed successfully")
    if new is not None or jobs_status != status.get("jobsStatus"):
        body = {"jobsStatus": jobs_status}
        if new is not None:
            body["conditions"] = [c for c in conditions if c.get("type") != new["type"]] + [new]
            log(f"trainer: {ns}/{name}: {new['type']} ({new['reason']})")
        custom.patch_namespaced_custom_object_status(GROUP, VERSION, ns, "trainjobs", name, {"status": body})


def run(clients, log, poll_s: float = 1.0) -> None:
    """Reconcile every TrainJob once a second (the sim has a handful at a time)."""
    while True:
        try:
            client, api, _dyn = clients()
            custom = client.CustomObjectsApi(api)
            while True:
                for trainjob in custom.list_cluster_custom_object(GROUP, VERSION, "trainjobs").get("items") or []:
                    try:
                        reconcile(trainjob, client, api, log)
                    except client.exceptions.ApiException as exc:
                        log(f"trainer: {trainjob['metadata'].get('name')}: {exc.status} {exc.reason}")
                time.sleep(poll_s)
        except Exception as exc:  # keep serving: the API server may restart
            log(f"trainer: {type(exc).__name__}: {exc}")
            time.sleep(1)
