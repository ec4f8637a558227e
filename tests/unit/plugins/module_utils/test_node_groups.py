# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/lint/_node_groups.py on the node groups of real repositories.

Fixtures: tests/local/fixtures/adt-terraform-eks (aws-samples/awsome-distributed-training, branch adding-tf-eks:
Terraform EKS managed node groups with labels and taints, Karpenter NodePools in kubectl_manifest heredocs) and the
eksctl ClusterConfigs of tests/local/fixtures/awsome-distributed-training; SOURCES.md there has commits and licences.
"""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.lint import _node_groups as ng
from ansible_collections.rlstack.validation.plugins.module_utils.lint import _node_groups_tf as ngtf
from ansible_collections.rlstack.validation.plugins.module_utils.lint._yaml_marks import load_all

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "local"))
from local_helpers import fixture_repo, real_repos  # noqa: E402 pylint: disable=wrong-import-position

FIXTURES = str(real_repos())
TF_EKS = os.path.join(FIXTURES, "adt-terraform-eks", "1.architectures", "4.amazon-eks", "terraform")
EKSCTL = os.path.join(FIXTURES, "awsome-distributed-training", "1.architectures", "4.amazon-eks")


def tf_groups(*relative):
    files = {}
    for rel in relative:
        with open(os.path.join(TF_EKS, rel)) as handle:
            files[rel] = handle.read()
    return ngtf.from_terraform(files)


def yaml_groups(path):
    with open(path) as handle:
        text = handle.read()
    out = []
    for doc, marks, first in load_all(text, path):
        out.extend(ng.from_yaml_document(doc, os.path.basename(path), marks, first))
    return out


def test_karpenter_nodepool_written_in_hcl_kubernetes_manifest():
    """aws-samples/sample-rlinf-on-eks infrastructure/workloads/main.tf: the GPU NodePool is a
    resource "kubernetes_manifest" in HCL (issue 31: only the system group was found, six false alarms)."""
    seed = str(fixture_repo("sample-rlinf-on-eks"))
    files = {}
    for rel in ("infrastructure/workloads/main.tf", "infrastructure/cluster/main.tf"):
        with open(os.path.join(seed, rel)) as handle:
            files[rel] = handle.read()
    groups = by_name(ngtf.from_terraform(files))
    assert sorted(groups) == [("Karpenter", "gpu-training"), ("Terraform", "system")]
    pool = groups[("Karpenter", "gpu-training")]
    assert (pool["file"], pool["line"]) == ("infrastructure/workloads/main.tf", 15)
    assert pool["labels"]["node-role"] == ["gpu-training"]
    assert [(t["key"], t["effect"]) for t in pool["taints"]] == [("nvidia.com/gpu", "NoSchedule")]
    # the instance types come from var.gpu_instance_types (concat(...) of requirements): any type may be allowed
    assert ng.fits(pool, {"node-role": "gpu-training", "node.kubernetes.io/instance-type": "p5en.48xlarge"}, [])
    # the selector of five of its manifests, role=gpu-training, is set by no node group: a true finding
    assert not any(ng.fits(g, {"role": "gpu-training"}, []) for g in groups.values())


def by_name(groups):
    return dict(((g["kind"].split()[0], g["name"]), g) for g in groups)


ALL_TF = ("main.tf", "modules/eks/main.tf", "modules/addons/main.tf")


def test_terraform_managed_node_groups_of_both_branches_of_a_conditional():
    groups = by_name(tf_groups(*ALL_TF))
    # main.tf: eks_managed_node_groups = var.enable_karpenter ? { karpenter = ... } : { default = ..., gpu = ... }
    karpenter, default, gpu = (groups[("Terraform", n)] for n in ("karpenter", "default", "gpu"))
    assert karpenter["instance_types"] == ["m5.large"] and karpenter["line"] == 147
    assert karpenter["taints"] == [{"key": "CriticalAddonsOnly", "value": "true", "effect": "NoSchedule"}]
    assert gpu["labels"]["nvidia.com/gpu"] == ["true"] and gpu["labels"]["NodeGroup"] == ["gpu"]
    assert gpu["labels"]["Environment"] is None  # var.environment: any value
    assert gpu["instance_types"] is None  # var.gpu_instance_types
    assert gpu["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert default["taints"] == [] and not karpenter["name_known"]  # name = "${local.name}-karpenter"


def test_karpenter_node_pools_in_terraform_heredocs():
    groups = by_name(tf_groups(*ALL_TF))
    pool = groups[("Karpenter", "gpu")]
    assert pool["file"] == "modules/addons/main.tf" and pool["line"] == 207  # apiVersion line of the heredoc
    assert pool["labels"]["node-type"] == ["gpu"] and pool["labels"]["karpenter.sh/nodepool"] == ["gpu"]
    assert pool["labels"]["kubernetes.io/arch"] == ["amd64"]  # requirement In: a label with that value
    assert pool["instance_types"] is None  # values: ${jsonencode(var.karpenter_gpu_instance_types)}
    assert "karpenter.k8s.aws/instance-gpu-count" in pool["any_value_keys"]  # operator Gt
    assert pool["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    assert groups[("Karpenter", "default")]["taints"] == []


def test_a_pass_through_is_no_declaration_but_a_root_reference_is_an_unknown_group():
    # modules/eks/main.tf: eks_managed_node_groups = var.eks_managed_node_groups, called by main.tf
    assert not [g for g in tf_groups(*ALL_TF) if g["file"] == "modules/eks/main.tf"]
    alone = tf_groups("modules/eks/main.tf")  # nobody calls it: the groups come from a variable
    assert len(alone) == 1 and ng.is_unknown(alone[0]["labels"]) and ng.is_unknown(alone[0]["taints"])
    assert ng.fits(alone[0], {"anything": "at-all"}, [])


def test_eksctl_managed_node_groups():
    groups = yaml_groups(os.path.join(EKSCTL, "eks-g4dn.yaml"))
    assert [(g["name"], g["instance_types"], g["managed"]) for g in groups] == [
        ("sys", ["c5.2xlarge"], True), ("g4dn", ["g4dn.8xlarge"], True)]
    p5 = yaml_groups(os.path.join(EKSCTL, "eks-p5-odcr-vpc.yaml"))
    assert [(g["name"], g["instance_types"], g["line"]) for g in p5] == [("p5-ocdr", ["p5.48xlarge"], 30)]


@pytest.mark.parametrize("key, value, expected", [
    ("node.kubernetes.io/instance-type", "p5.48xlarge", True),  # the cloud provider's label, the group's type
    ("node.kubernetes.io/instance-type", "g5.48xlarge", False),
    ("kubernetes.io/os", "linux", True),  # the kubelet's
    ("topology.kubernetes.io/zone", "us-west-2a", True),
    ("eks.amazonaws.com/nodegroup", "p5-ocdr", True),  # EKS on managed node groups: the group's name
    ("eks.amazonaws.com/nodegroup", "other", False),
    ("eks.amazonaws.com/capacityType", "ON_DEMAND", True),
    ("karpenter.sh/capacity-type", "spot", False),  # not a Karpenter node
    ("sagemaker.amazonaws.com/node-health-status", "Schedulable", True),
    ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3", True),  # GPU Feature Discovery
    ("nvidia.com/gpu", "true", False),  # a label someone must set
    ("node-type", "gpu", False),
])
def test_labels_the_system_sets_and_labels_someone_must_set(key, value, expected):
    group = yaml_groups(os.path.join(EKSCTL, "eks-p5-odcr-vpc.yaml"))[0]
    assert ng.label_state(group, key, value) is expected


def test_karpenter_labels_only_on_karpenter_nodes():
    pool = by_name(tf_groups(*ALL_TF))[("Karpenter", "gpu")]
    assert ng.label_state(pool, "karpenter.sh/capacity-type", "spot")
    assert ng.label_state(pool, "karpenter.sh/nodepool", "gpu") and not ng.label_state(pool, "karpenter.sh/nodepool", "x")
    assert not ng.label_state(pool, "kubernetes.io/arch", "arm64")  # the requirement pins amd64
    assert ng.label_state(pool, "example.com/team", "a", extra_prefixes=["example.com/"])


@pytest.mark.parametrize("toleration, expected", [
    ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}, True),
    ({"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}, True),  # Equal is the default
    ({"key": "nvidia.com/gpu", "value": "false", "effect": "NoSchedule"}, False),
    ({"key": "nvidia.com/gpu", "operator": "Exists"}, True),  # no effect: every effect
    ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, False),
    ({"operator": "Exists"}, True),  # no key with Exists: every taint
    ({"key": "karpenter.sh/provisioner-name", "operator": "Exists", "effect": "NoSchedule"}, False),
])
def test_tolerates_as_kubernetes_does(toleration, expected):
    taint = {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}
    assert ng.tolerates([toleration], taint) is expected


def test_required_node_affinity_terms():
    group = yaml_groups(os.path.join(EKSCTL, "eks-p5-odcr-vpc.yaml"))[0]
    spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                               "values": ["p4d.24xlarge", "p5.48xlarge"]}]}]}}}}
    selector, terms = ng.pod_selectors(spec)
    assert ng.fits(group, selector, terms)
    terms[0][0] = ("node.kubernetes.io/instance-type", "In", ["p4d.24xlarge"])
    assert not ng.fits(group, selector, terms)
    assert ng.targets_hyperpod({"node.kubernetes.io/instance-type": "ml.p5.48xlarge"}, [])


def test_describe_names_where_labels_and_taints():
    text = ng.describe(by_name(tf_groups(*ALL_TF))[("Terraform", "gpu")])
    assert text.startswith("gpu (Terraform eks_managed_node_groups, main.tf:218; any instance type;")
    assert "NodeGroup=gpu" in text and "nvidia.com/gpu=true:NoSchedule" in text


def test_hcl_reader_keeps_going_over_what_it_does_not_model():
    for rel in ("main.tf", "modules/addons/main.tf", "modules/vpc/main.tf", "variables.tf"):
        with open(os.path.join(TF_EKS, rel)) as handle:
            body, _heredocs = ng.parse_hcl(handle.read(), rel)
        assert body["blocks"], rel
