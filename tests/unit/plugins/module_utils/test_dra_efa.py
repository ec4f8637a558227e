# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""EFA through Dynamic Resource Allocation: L0 counts EFA devices from the ResourceSlices of the EFA DRA
driver when a node does not advertise the vpc.amazonaws.com/efa extended resource.

The slices follow the resource.k8s.io/v1 ResourceSlice type (spec.driver, nodeName, pool {name,
generation, resourceSliceCount}, devices [{name, attributes {name: {string|int|bool|version}}}]) and
the driver's EFA marker that AWS's own DeviceClass selects on (aws/eks-charts stable/aws-dranet
templates/deviceclass.yaml: driver "dra.net", attribute dra.net pciDevice 'Elastic Fabric Adapter
(EFA)'). They are not a recording of a cluster (none was available): the attribute names other than
pciDevice are left out.
"""

from __future__ import annotations

from test_checks import P5_HEALTHY, failing, find, k8s_expect, make_node, outcome

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks as checks
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s

EFA = k8s.EFA_DRA_PCI_DEVICE


def device(i, pci=EFA, qualified=True):
    key = "dra.net/pciDevice" if qualified else "pciDevice"
    return {"name": "pci-0000-%02x-00-0" % i, "attributes": {key: {"string": pci}}}


def slice_(node, devices, generation=1, driver="dra.net", pool=None):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "%s-%s-x" % (node, driver)},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": pool or node, "generation": generation, "resourceSliceCount": 1},
                     "devices": devices}}


def test_counts_efa_devices_per_node():
    slices = [slice_("p5-node-1", [device(i) for i in range(32)] + [device(99, pci="Elastic Network Adapter (ENA)")]),
              slice_("p5-node-2", [device(i, qualified=False) for i in range(31)])]
    assert k8s.dra_efa_counts(slices) == {"p5-node-1": 32, "p5-node-2": 31}


def test_other_drivers_and_old_generations_do_not_count():
    slices = [slice_("p5-node-1", [device(i) for i in range(8)], driver="gpu.nvidia.com"),
              slice_("p5-node-1", [device(i) for i in range(16)], generation=1),
              slice_("p5-node-1", [device(i) for i in range(32)], generation=2)]
    assert k8s.dra_efa_counts(slices) == {"p5-node-1": 32}
    assert k8s.dra_efa_counts(None) == {} and k8s.dra_efa_counts([{"spec": {"driver": "dra.net"}}]) == {}


def test_l0_counts_efa_from_slices_when_the_extended_resource_is_absent():
    nodes = [make_node("p5-node-1", efa=None), make_node("p5-node-2", efa=None)]
    probes = {n: outcome(P5_HEALTHY) for n in ("p5-node-1", "p5-node-2")}
    slices = [slice_("p5-node-1", [device(i) for i in range(32)]), slice_("p5-node-2", [device(i) for i in range(31)])]
    result = checks.l0_checks(nodes, probes, k8s_expect(resource_slices=slices))
    assert failing(result) == [("capacity_efa", "p5-node-2")]
    efa = find(result, "capacity_efa", "p5-node-2")
    assert (efa["actual"], efa["expected"]) == (31, 32)
    assert "EFA DRA driver (dra.net)" in efa["fail_msg"] and efa["hint"] == checks.HINT_EFA_DRA


def test_l0_prefers_the_extended_resource_and_fails_without_either():
    slices = [slice_("p5-node-1", [device(i) for i in range(4)])]
    result = checks.l0_checks([make_node("p5-node-1")], {"p5-node-1": outcome(P5_HEALTHY)},
                              k8s_expect(resource_slices=slices))
    assert find(result, "capacity_efa", "p5-node-1")["actual"] == 32 and failing(result) == []
    result = checks.l0_checks([make_node("p5-node-1", efa=None)], {"p5-node-1": outcome(P5_HEALTHY)},
                              k8s_expect(resource_slices=[]))
    efa = find(result, "capacity_efa", "p5-node-1")
    assert (efa["actual"], efa["hint"]) == (0, checks.HINT_EFA)


DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "efa.networking.k8s.aws"}}


def test_efa_request_prefers_the_extended_resource():
    assert k8s.efa_request([make_node("a", efa=None), make_node("b")], [DEVICE_CLASS])["mode"] == "extended"


def test_efa_request_claims_through_dra_without_the_extended_resource():
    request = k8s.efa_request([make_node("a", efa=None), make_node("b", efa="0")], [DEVICE_CLASS])
    assert request == {"mode": "dra", "device_class": "efa.networking.k8s.aws"}


def test_efa_request_reads_the_gpu_nodes_summary_as_the_node_objects():
    def advertised(node):  # a device plugin's resource is in both capacity and allocatable
        node["status"]["allocatable"] = dict(node["status"]["capacity"])
        return node

    objects = [advertised(make_node("a", efa=None)), advertised(make_node("b"))]
    assert k8s.efa_request(k8s.gpu_nodes(objects), [DEVICE_CLASS]) == k8s.efa_request(objects, [DEVICE_CLASS])
    assert k8s.efa_request(k8s.gpu_nodes(objects), [DEVICE_CLASS])["mode"] == "extended"
    dra_only = [advertised(make_node("a", efa=None)), advertised(make_node("b", efa="0"))]
    assert k8s.efa_request(k8s.gpu_nodes(dra_only), [DEVICE_CLASS])["mode"] == "dra"


def test_efa_request_none_without_either():
    assert k8s.efa_request([make_node("a", efa=None)], [{"metadata": {"name": "gpu.nvidia.com"}}])["mode"] == "none"
    assert k8s.efa_request([], None)["mode"] == "none"
