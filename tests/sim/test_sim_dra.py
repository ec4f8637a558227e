# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""EFA through DRA against the real control plane (resource.k8s.io/v1, Kubernetes 1.36): the EFA DRA
driver's DeviceClass and a ResourceSlice for p5-node-0 as the driver would publish them (no driver runs
in the sim, so the test publishes the slice), L0's count from what the API server returns, and a pod that
claims EFA through a ResourceClaimTemplate of the shape tasks/nccl_tests.yml creates, allocated by the real
kube-scheduler from the slice. ~20 s."""
from __future__ import annotations

import copy

import pytest

import simkit
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s

pytestmark = pytest.mark.sim

GROUP, VERSION = "resource.k8s.io", "v1"
NODE = "p5-node-0"
SLICE = "rlstack-test-p5-node-0-dra-net"


@pytest.fixture()
def dra_objects(custom):
    from kubernetes.client.rest import ApiException
    # aws/eks-charts stable/aws-dranet templates/deviceclass.yaml
    expression = ('device.driver == "dra.net" && '
                  "device.attributes[\"dra.net\"].pciDevice == 'Elastic Fabric Adapter (EFA)'")
    device_class = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "DeviceClass",
                    "metadata": {"name": k8s.EFA_DRA_DEVICE_CLASS},
                    "spec": {"selectors": [{"cel": {"expression": expression}}]}}
    devices = [{"name": "pci-0000-%02x-00-0" % i, "attributes": {"pciDevice": {"string": k8s.EFA_DRA_PCI_DEVICE}}}
               for i in range(32)]
    devices.append({"name": "pci-0000-ff-00-0", "attributes": {"pciDevice": {"string": "Elastic Network Adapter (ENA)"}}})
    resource_slice = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceSlice", "metadata": {"name": SLICE},
                      "spec": {"driver": k8s.EFA_DRA_DRIVER, "nodeName": NODE,
                               "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
                               "devices": devices}}
    custom.create_cluster_custom_object(GROUP, VERSION, "deviceclasses", device_class)
    custom.create_cluster_custom_object(GROUP, VERSION, "resourceslices", resource_slice)
    yield
    for plural, name in (("resourceslices", SLICE), ("deviceclasses", k8s.EFA_DRA_DEVICE_CLASS)):
        try:
            custom.delete_cluster_custom_object(GROUP, VERSION, plural, name)
        except ApiException as exc:
            if exc.status != 404:
                raise


def test_l0_counts_efa_from_resource_slices(api_client, core, custom, dra_objects):
    slices = custom.list_cluster_custom_object(GROUP, VERSION, "resourceslices")["items"]
    assert k8s.dra_efa_counts(slices)[NODE] == 32
    node = api_client.sanitize_for_serialization(core.read_node(NODE))
    # The sim's node advertises the extended resource; a DRA-only node does not.
    dra_only = copy.deepcopy(node)
    del dra_only["status"]["capacity"]["vpc.amazonaws.com/efa"]
    checks = _checks.l0_checks([dra_only], {}, {"transport": "kubernetes", "resource_slices": slices})
    efa = [c for c in checks if c["name"] == "capacity_efa"][0]
    assert (efa["actual"], efa["expected"]) == (32, 32) and "dra.net" in efa["fail_msg"]
    device_classes = custom.list_cluster_custom_object(GROUP, VERSION, "deviceclasses")["items"]
    assert k8s.efa_request([dra_only], device_classes)["mode"] == "dra"
    assert k8s.efa_request([node], device_classes)["mode"] == "extended"


def test_pod_claims_efa_through_the_template(core, custom, namespace, dra_objects):
    template = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "nccl-efa"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "efa", "exactly": {"deviceClassName": k8s.EFA_DRA_DEVICE_CLASS, "count": 32}}]}}}}
    custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "resourceclaimtemplates", template)
    # GPUs from the device plugin, EFA only through the claim (no vpc.amazonaws.com/efa request).
    pod = simkit.pod_body("worker", gpus=8, tolerate_gpu=True, node_selector={"kubernetes.io/hostname": NODE})
    pod["spec"]["resourceClaims"] = [{"name": "efa", "resourceClaimTemplateName": "nccl-efa"}]
    pod["spec"]["containers"][0].setdefault("resources", {})["claims"] = [{"name": "efa"}]
    core.create_namespaced_pod(namespace, pod)

    def allocated():
        claims = custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "resourceclaims")["items"]
        done = [c for c in claims if (c.get("status") or {}).get("allocation")]
        return done[0] if done else None

    claim = simkit.wait_until(allocated, 30, "the scheduler to allocate the EFA claim")
    results = claim["status"]["allocation"]["devices"]["results"]
    assert len(results) == 32 and {r["driver"] for r in results} == {k8s.EFA_DRA_DRIVER}
    assert "pci-0000-ff-00-0" not in {r["device"] for r in results}  # the ENA device is not EFA
    scheduled = simkit.wait_until(lambda: core.read_namespaced_pod("worker", namespace).spec.node_name, 30,
                                  "the pod to be bound")
    assert scheduled == NODE
