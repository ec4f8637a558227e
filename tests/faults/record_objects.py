# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Record the objects of each failure that _diagnose.py names, from the simulated cluster's real
kube-apiserver, kube-scheduler and controllers, into tests/unit/fixtures/k8s/<case>.json (with provenance).

    bash tests/with_sim.sh .venv/bin/python tests/faults/record_objects.py

Each case makes the failure happen for real (a cordoned node, too many GPUs, a ResourceQuota, PodSecurity,
a suspended Job, an eviction, a node whose kwok agent stopped) and saves the pod/Job, its events and the
nodes as the API server returned them. Undone afterwards."""
from __future__ import annotations

import datetime
import json
import os
import platform
import signal
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / ".collections"))  # ansible_collections.rlstack.validation
import simkit  # noqa: E402

OUT = simkit.ROOT / "tests" / "unit" / "fixtures" / "k8s"


def main():
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException
    api = config.new_client_from_config(config_file=str(simkit.KUBECONFIG))
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    plain = api.sanitize_for_serialization
    versions = simkit.versions()
    provenance = {"source": "simulated cluster (sim/): kube-apiserver, kube-scheduler, kube-controller-manager "
                            "v%s built from source, kwok %s" % (versions.get("SIM_K8S_VERSION"),
                                                                versions.get("SIM_KWOK_VERSION")),
                  "command": "bash tests/with_sim.sh .venv/bin/python tests/faults/record_objects.py",
                  "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
                  "machine": platform.node()}
    OUT.mkdir(parents=True, exist_ok=True)
    ns = "rec-" + uuid.uuid4().hex[:5]
    core.create_namespace({"metadata": {"name": ns}})
    simkit.wait_until(lambda: core.read_namespaced_service_account("default", ns), 30, "service account")
    p5_nodes = [n.metadata.name for n in core.list_node(label_selector="%s=%s" % (simkit.INSTANCE_TYPE, simkit.P5)).items]

    def events(name):
        return [plain(e) for e in core.list_namespaced_event(ns, field_selector="involvedObject.name=%s" % name).items]

    def nodes():
        return [plain(n) for n in core.list_node().items]

    def save(case, **objs):
        (OUT / ("%s.json" % case)).write_text(json.dumps({"provenance": provenance, **objs}, indent=1, sort_keys=True)
                                              + "\n")
        print("recorded", case)

    wanted = set(sys.argv[1:])

    def want(case):
        return not wanted or case in wanted

    def pending_pod(case, body, wait_for="FailedScheduling"):
        name = body["metadata"]["name"]
        core.create_namespaced_pod(ns, body)
        simkit.wait_until(lambda: any(e["reason"] == wait_for for e in events(name)), 60, "%s of %s" % (wait_for, name))
        save(case, pod=plain(core.read_namespaced_pod(name, ns)), events=events(name), nodes=nodes())
        core.delete_namespaced_pod(name, ns, grace_period_seconds=0)

    def case_insufficient_gpu():
        pending_pod("insufficient_gpu", simkit.pod_body("too-many-gpus", gpus=9, tolerate_gpu=True,
                                                        node_selector={simkit.INSTANCE_TYPE: simkit.P5}))

    def case_insufficient_efa():
        pending_pod("insufficient_efa", simkit.pod_body("too-many-efa", gpus=1, efa=64, tolerate_gpu=True,
                                                        node_selector={simkit.INSTANCE_TYPE: simkit.P5}))

    def case_cordoned():
        for node in p5_nodes:
            core.patch_node(node, {"spec": {"unschedulable": True}})
        try:
            pending_pod("cordoned", simkit.gpu_pod_body("on-cordoned"))
        finally:
            for node in p5_nodes:
                core.patch_node(node, {"spec": {"unschedulable": False}})

    def case_quota():
        core.create_namespaced_resource_quota(ns, {"metadata": {"name": "no-pods"}, "spec": {"hard": {"pods": "0"}}})
        time.sleep(2)  # the quota controller fills in status.used before admission enforces it
        job = simkit.job_body("over-quota", "l5")
        batch.create_namespaced_job(ns, job)
        simkit.wait_until(lambda: any(e["reason"] == "FailedCreate" for e in events("over-quota")), 60, "FailedCreate")
        save("quota", job=plain(batch.read_namespaced_job("over-quota", ns)), events=events("over-quota"),
             pods=[], nodes=nodes())
        batch.delete_namespaced_job("over-quota", ns, propagation_policy="Background")
        core.delete_namespaced_resource_quota("no-pods", ns)

    def case_suspended():
        suspended = simkit.job_body("queued", "l5")
        suspended["spec"]["suspend"] = True
        suspended["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "gpu-queue"
        batch.create_namespaced_job(ns, suspended)
        time.sleep(3)
        save("suspended", job=plain(batch.read_namespaced_job("queued", ns)), events=events("queued"),
             pods=[plain(p) for p in simkit.job_pods(core, ns, "queued")], nodes=nodes())
        batch.delete_namespaced_job("queued", ns, propagation_policy="Background")

    def case_pod_security():
        core.patch_namespace(ns, {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}})
        try:
            core.create_namespaced_pod(ns, simkit.gpu_pod_body("refused-by-pss"))
            raise AssertionError("PodSecurity admitted the pod")
        except ApiException as exc:
            save("pod_security", api_error={"status": exc.status, "body": json.loads(exc.body)})
        core.patch_namespace(ns, {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": None}}})

    def case_admission_policy():
        # An admission policy that refuses GPU pods (ValidatingAdmissionPolicy: built in, no webhook server).
        admission = client.AdmissionregistrationV1Api(api)
        admission.create_validating_admission_policy({
            "metadata": {"name": "no-gpu-" + ns}, "spec": {
                "failurePolicy": "Fail", "matchConstraints": {"resourceRules": [{
                    "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]},
                "validations": [{"expression": "!object.spec.containers.exists(c, has(c.resources.limits) && "
                                               "'nvidia.com/gpu' in c.resources.limits)",
                                 "message": "GPU pods need an approved cost centre label"}]}})
        admission.create_validating_admission_policy_binding({
            "metadata": {"name": "no-gpu-" + ns}, "spec": {
                "policyName": "no-gpu-" + ns, "validationActions": ["Deny"],
                "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}}}})
        try:
            def refused():
                try:
                    core.create_namespaced_pod(ns, simkit.gpu_pod_body("refused-by-policy"))
                except ApiException as exc:
                    return exc
                core.delete_namespaced_pod("refused-by-policy", ns, grace_period_seconds=0)
                return None
            exc = simkit.wait_until(refused, 30, "the admission policy to refuse a pod", interval=1)
            save("admission_policy", api_error={"status": exc.status, "body": json.loads(exc.body)})
        finally:
            admission.delete_validating_admission_policy_binding("no-gpu-" + ns)
            admission.delete_validating_admission_policy("no-gpu-" + ns)

    def case_forbidden():
        # An RBAC denial: a ServiceAccount bound to nothing lists pods and nodes.
        core.create_namespaced_service_account(ns, {"metadata": {"name": "nobody"}})
        token = core.create_namespaced_service_account_token("nobody", ns, {"spec": {}}).status.token
        cfg = client.Configuration()
        cfg.host, cfg.ssl_ca_cert = api.configuration.host, api.configuration.ssl_ca_cert
        cfg.api_key = {"authorization": "Bearer " + token}
        nobody = client.CoreV1Api(client.ApiClient(cfg))
        denials = []
        for call, args in ((nobody.list_namespaced_pod, (ns,)), (nobody.list_node, ())):
            try:
                call(*args)
            except ApiException as exc:
                denials.append({"status": exc.status, "body": json.loads(exc.body)})
        save("forbidden", api_errors=denials)

    def case_evicted():
        core.create_namespaced_pod(ns, simkit.pod_body("to-evict"))
        simkit.wait_until(lambda: core.read_namespaced_pod("to-evict", ns).status.phase == "Running", 60, "Running")
        core.create_namespaced_pod_eviction("to-evict", ns, {"metadata": {"name": "to-evict", "namespace": ns}})

        def disrupted():
            pod = core.read_namespaced_pod("to-evict", ns)
            return pod if any(c.type == "DisruptionTarget" for c in pod.status.conditions or []) else None
        seen = simkit.wait_until(disrupted, 30, "DisruptionTarget")
        save("evicted", pod=plain(seen), events=events("to-evict"), nodes=nodes())

    def case_node_not_ready():
        # A node whose agent stops answering: kwok-controller paused until the node lifecycle controller
        # marks the nodes NotReady/unreachable and taints them.
        kwok_pid = int(sorted((simkit.STATE / "kwok" / "clusters").glob("*/pids/kwok-controller.pid"))[0]
                       .read_text().strip())
        os.kill(kwok_pid, signal.SIGSTOP)
        try:
            def tainted():
                node = core.read_node(p5_nodes[0])
                return node if any(t.key == "node.kubernetes.io/unreachable" for t in node.spec.taints or []) else None
            simkit.wait_until(tainted, 150, "the unreachable taint")
            pending_pod("node_not_ready", simkit.gpu_pod_body("on-not-ready"))
        finally:
            os.kill(kwok_pid, signal.SIGCONT)

    def case_lost_node():
        # A probe pod on a node lost mid-probe: kwok-controller (every simulated node's agent, which also serves
        # their logs) paused once the pod runs. kube-apiserver answers the log read with its own error reaching
        # the kubelet; kube-controller-manager marks the node Unknown after its 50 s grace period and the pod not
        # ready (MarkPodsNotReady: Ready False, ContainersReady still True). Every node is lost at once here, so
        # the node lifecycle controller sees a full zone disruption and puts no NoExecute taint (no eviction);
        # on EKS one lost node is tainted and the probe pod's 30 s toleration ends it.
        from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status
        from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _probe_pods
        body = simkit.gpu_pod_body("on-lost-node", node_selector={"kubernetes.io/hostname": p5_nodes[0]})
        body["spec"]["tolerations"] = _probe_pods.lost_node_tolerations(body["spec"]["tolerations"])
        core.create_namespaced_pod(ns, body)
        simkit.wait_until(lambda: core.read_namespaced_pod("on-lost-node", ns).status.phase == "Running", 60,
                          "Running")
        kwok_pid = int(sorted((simkit.STATE / "kwok" / "clusters").glob("*/pids/kwok-controller.pid"))[0]
                       .read_text().strip())
        os.kill(kwok_pid, signal.SIGSTOP)
        try:
            try:
                core.read_namespaced_pod_log("on-lost-node", ns, _request_timeout=60)
                raise AssertionError("the log of a pod on a paused node was read")
            except ApiException as exc:
                save("kubelet_unreachable_log", api_error={"status": exc.status, "reason": exc.reason,
                                                           "body": json.loads(exc.body)})

            def marked():
                pod = core.read_namespaced_pod("on-lost-node", ns)
                conditions = {c.type: c.status for c in pod.status.conditions or []}
                return pod if conditions.get("Ready") == "False" and conditions.get("ContainersReady") == "True" \
                    else None
            seen = simkit.wait_until(marked, 180, "the pod marked not ready by the node lifecycle controller")
            save("lost_node_pod", pod=plain(seen), events=events("on-lost-node"), nodes=nodes())
        finally:
            os.kill(kwok_pid, signal.SIGCONT)
        core.delete_namespaced_pod("on-lost-node", ns, grace_period_seconds=0)

    try:
        for name, case in [(k[len("case_"):], v) for k, v in locals().items() if k.startswith("case_")]:
            if want(name):
                case()
    finally:
        core.delete_namespace(ns, propagation_policy="Background")
        core.delete_collection_namespaced_pod(ns, grace_period_seconds=0)


if __name__ == "__main__":
    main()
