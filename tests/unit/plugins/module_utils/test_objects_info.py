# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_objects_info: several reads in one module run, in the shape of a k8s_info loop, and L0's reads built on it."""
from __future__ import annotations

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_absent import KindNotServed
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_info import read_all, required_failure
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks


def test_each_query_reads_its_path_and_comes_back_in_order():
    seen = []

    def get(method, path, params):
        seen.append((path, params))
        if "persistentvolumeclaims" in path:
            raise KindNotServed(path)
        if "resourceslices" in path:
            raise RuntimeError("(403) forbidden")
        return {"items": [{"metadata": {"name": "ds", "managedFields": [1]}}]}

    out = read_all(get, [
        {"kind": "DaemonSet", "api_version": "apps/v1", "namespace": "kube-system", "label_selectors": ["a=b"],
         "item": {"read": "daemonset"}},
        {"kind": "PersistentVolumeClaim", "namespace": "ns", "name": "fsx"},
        {"kind": "ResourceSlice", "api_version": "resource.k8s.io/v1"}])
    assert seen == [("/apis/apps/v1/namespaces/kube-system/daemonsets", [("labelSelector", "a=b")]),
                    ("/api/v1/namespaces/ns/persistentvolumeclaims/fsx", []),
                    ("/apis/resource.k8s.io/v1/resourceslices", [])]
    assert out[0] == {"item": {"read": "daemonset"}, "resources": [{"metadata": {"name": "ds"}}], "error": ""}
    assert out[1]["resources"] == [] and out[1]["error"].startswith("not found")
    assert out[2] == {"item": {}, "resources": [], "error": "(403) forbidden"}


def test_an_api_server_that_cannot_be_reached_ends_the_reads():
    def get(method, path, params):
        raise ConnectionError("unreachable")

    with pytest.raises(ConnectionError):
        read_all(get, [{"kind": "Node"}], fatal=lambda exc: isinstance(exc, ConnectionError))


def test_l0_reads_and_their_evidence():
    daemonsets = [{"label": "EFA device plugin", "namespace": "kube-system", "name_contains": "efa"}]
    queries = _checks.l0_reads(daemonsets, "gpu-validation", "fsx-claim", all_nodes=True)
    assert [q["item"]["read"] for q in queries] == ["daemonset", "claim", "slices", "all_nodes"]
    assert _checks.l0_reads(daemonsets, "ns")[-1]["kind"] == "ResourceSlice"
    reads = [
        {"item": queries[0]["item"], "resources": [{"metadata": {"name": "aws-efa-k8s-device-plugin"},
                                                    "status": {"desiredNumberScheduled": 2, "numberReady": 2}}]},
        {"item": queries[1]["item"], "resources": [], "error": "not found"},
        {"item": queries[2]["item"], "resources": [{"spec": {"driver": "x"}}]},
        {"item": queries[3]["item"], "resources": [{"metadata": {"labels": {"role": "cpu"}}}]}]
    evidence = _checks.l0_read_evidence(reads)
    assert evidence["daemonsets"][0]["ready"] == 2 and evidence["daemonsets"][0]["found"] is True
    assert evidence["storage_claim"] == {"name": "fsx-claim", "phase": "missing"}
    assert evidence["resource_slices"] == [{"spec": {"driver": "x"}}]
    assert evidence["all_node_labels"] == ["role=cpu"]
    assert _checks.l0_read_evidence([])["storage_claim"] is None


def test_hidden_fields_leave_the_object_read_otherwise_whole():
    node = {"metadata": {"name": "n", "managedFields": [1]}, "status": {"images": [1], "allocatable": {"x": "1"}}}
    out = read_all(lambda method, path, params: {"items": [node]},
                   [{"kind": "Node", "hidden_fields": ["status.images", "spec.absent"]}])
    assert out[0]["resources"] == [{"metadata": {"name": "n"}, "status": {"allocatable": {"x": "1"}}}]
    assert node["status"]["images"] == [1]  # the answer itself is not changed


def test_a_required_read_that_was_refused_is_the_failure():
    def get(method, path, params):
        if "namespaces" in path:
            raise KindNotServed(path)
        raise RuntimeError("(403) nodes is forbidden")

    queries = [{"kind": "Namespace", "name": "ns", "required": True}, {"kind": "DeviceClass"},
               {"kind": "Node", "label_selectors": ["role=gpu"], "required": True}]
    reads = read_all(get, queries)
    # a namespace not there is an answer; a refused DeviceClass read is not required
    assert required_failure(queries[:2], reads[:2]) is None
    assert required_failure(queries, reads) == "reading Node role=gpu: (403) nodes is forbidden"
