# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 31, item 7: three public repositories local mode was not tuned on (tests/local/fixtures/repos, see
SOURCES.md there), linted as a new user lints them (no values, nothing exported). What a careful reviewer flags
was written down by reading before the first run (docs/local-mode.md, "Tested on three repositories it was not
tuned on"); each test pins the warnings and errors, one per line, with the reviewer's verdict. Also the .env of
aws-samples/aws-do-ray read as the shell reads it (item 2)."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.lint import _k8s_schema, _shell_env
from ansible_collections.rlstack.validation.plugins.module_utils.lint._manifest_sources import interpolations

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "local"))
from local_helpers import fixture_repo, lint_repository  # noqa: E402 pylint: disable=wrong-import-position

RAY = "Container-Root/ray/"
K8S = "workloads/examples/k8s/"
BIONEMO = "infra/bionemo/examples/"


@pytest.fixture(scope="module")
def validator():
    return _k8s_schema.SchemaValidator("1.34", True, {})


def pinned(findings):
    """(rule, file, line) of every warning and error, and of the unknown_value / not_checked notes."""
    return sorted((f["rule"], f["file"], f["line"]) for f in findings
                  if f["severity"] != "info" or f["rule"] in ("unknown_value", "not_checked"))


def names(findings, rule):
    return sorted(f["path"] for f in findings if f["rule"] == rule)


def test_aws_do_ray(validator):
    findings = lint_repository(fixture_repo("aws-do-ray"), validator=validator)
    assert pinned(findings) == [
        # true: the Ray GPU workers have no memory-backed /dev/shm (Ray's object store and NCCL use it)
        ("dev_shm", RAY + "raycluster/efa-ray/raycluster-template-efa.yaml", 135),
        ("dev_shm", RAY + "raycluster/raycluster-template-autoscaler.yaml", 144),
        ("dev_shm", RAY + "raycluster/raycluster-template.yaml", 92),
        ("dev_shm", RAY + "rayservice/stable_diffusion_gpu/rayservice.stable_diffusion_gpu.yaml", 84),
        # true: ${REGISTRY}aws-ray-custom:latest / ray-efa-nccl:latest, head and worker of the three clusters
        ("image_tag", RAY + "raycluster/efa-ray/raycluster-template-efa.yaml", 26),
        ("image_tag", RAY + "raycluster/efa-ray/raycluster-template-efa.yaml", 117),
        ("image_tag", RAY + "raycluster/raycluster-template-autoscaler.yaml", 60),
        ("image_tag", RAY + "raycluster/raycluster-template-autoscaler.yaml", 139),
        ("image_tag", RAY + "raycluster/raycluster-template.yaml", 26),
        ("image_tag", RAY + "raycluster/raycluster-template.yaml", 86),
        # dynamic-create.sh computes SUBNET_ID and SECURITYGROUP_ID (aws ec2/eks calls) before its envsubst:
        # unknown, not missing; the root .env computes REGISTRY inside an `if` from `aws sts`
        ("unknown_value", RAY + "deploy/fsx/dynamic-storageclass.yaml", 7),
        ("unknown_value", RAY + "deploy/fsx/dynamic-storageclass.yaml", 8),
        ("unknown_value", RAY + "raycluster/efa-ray/raycluster-template-efa.yaml", 26),
        # true: static-create.sh sets none of them ("Replace with your FSx file system ID"); HF_TOKEN is set nowhere
        ("unset_variable", RAY + "deploy/fsx/static-pv.yaml", 15),
        ("unset_variable", RAY + "deploy/fsx/static-pv.yaml", 17),
        ("unset_variable", RAY + "deploy/fsx/static-pv.yaml", 18),
        ("unset_variable", RAY + "deploy/fsx/static-storageclass.yaml", 8),
        ("unset_variable", RAY + "deploy/fsx/static-storageclass.yaml", 9),
        ("unset_variable", RAY + "raycluster/efa-ray/raycluster-template-efa.yaml", 45),
    ]
    assert names(findings, "unset_variable") == ["FILESYSTEM_ID", "FSX_DNS_NAME", "FSX_MOUNT_NAME", "HF_TOKEN",
                                                 "SECURITYGROUP_ID", "SUBNET_ID"]
    registry = [f for f in findings if f["rule"] == "unknown_value" and f["path"] == "REGISTRY"][0]
    assert len(registry["uses"]) == 6 and ".env:72" in registry["message"]
    # no node group is declared: the EFA head's ml.m5.2xlarge selector and FI_PROVIDER=efa without GPU are silent
    assert not [f for f in findings if f["rule"] in ("node_selector", "gpu_efa_request", "schema")]


def test_deepops(validator):
    findings = lint_repository(fixture_repo("deepops"), validator=validator)
    assert pinned(findings) == [
        ("dev_shm", K8S + "nbody.yml", 22),  # the one false alarm: a single-process CUDA sample benchmark
        ("dev_shm", K8S + "roce/multi_node_roce_jobfile.yaml", 56),
        ("dev_shm", K8S + "tensorflow-job.yml", 14),
        ("dev_shm", K8S + "tensorflow-mpi-job.yml", 50),
        ("dev_shm", K8S + "tensorflow-notebook.yml", 21),
        ("image_tag", K8S + "cpu-test-job.yml", 8),  # tensorflow/tensorflow:latest
        ("image_tag", K8S + "roce/multi_node_roce_jobfile.yaml", 18),  # untagged private image
        ("image_tag", K8S + "roce/multi_node_roce_jobfile.yaml", 51),
        ("job_retries", K8S + "cluster-gpu-test-job.yml", 5),  # GPU Jobs without activeDeadlineSeconds
        ("job_retries", K8S + "pytorch-job.yml", 5),
        ("job_retries", K8S + "tensorflow-job.yml", 5),
        # listed, never skipped in silence: a Jinja template and a Helm chart's templates
        ("not_checked", "roles/netapp-trident/templates/namespace.j2", 0),
        ("not_checked", K8S + "deep-learning-examples/templates/service.yaml", 0),
        ("not_checked", K8S + "deep-learning-examples/templates/statefulset.yaml", 0),
        ("not_checked", K8S + "deep-learning-examples/templates/tests/test-connection.yaml", 0),
    ]
    # the nvidia-smi / sleep test pods and the one-line `python -c` CUDA check need no /dev/shm
    quiet = [f["file"] for f in findings if f["rule"] == "dev_shm"]
    assert K8S + "gpu-test-job.yml" not in quiet and K8S + "pytorch-job.yml" not in quiet
    assert not [f for f in findings if f["rule"] in ("unset_variable", "node_selector", "schema", "yaml")]


def test_ai_on_eks(validator):
    findings = lint_repository(fixture_repo("ai-on-eks"), validator=validator)
    assert pinned(findings) == [
        ("dev_shm", BIONEMO + "esm1nv/esm1nv_pretrain-job.yaml", 40),
        ("dev_shm", BIONEMO + "esm2nv/esm2nv-training-job.yaml", 40),
        ("image_pull_policy", BIONEMO + "esm1nv/esm1nv_pretrain-job.yaml", 53),
        ("image_pull_policy", BIONEMO + "esm2nv/esm2nv-training-job.yaml", 53),
    ]
    # the fsx-for-lustre templates are Terraform templatefile()s: ${filesystem_id} ... are the call's variables;
    # g5.12xlarge is allowed by the karpenter-resources chart's g5 NodePool (addons.tf heredoc)
    assert not [f for f in findings if f["rule"] in ("unset_variable", "node_selector", "toleration", "not_checked")]
    assert sorted(f["file"] for f in findings if f["rule"] == "schema_missing") == [
        BIONEMO + "esm1nv/esm1nv_pretrain-job.yaml", BIONEMO + "esm2nv/esm2nv-training-job.yaml"]


def test_ai_on_eks_node_pools_from_chart_values():
    from ansible_collections.rlstack.validation.plugins.module_utils.lint import _node_groups_tf
    root = fixture_repo("ai-on-eks") / "infra" / "base" / "terraform"
    texts = dict((str(p.name), p.read_text()) for p in root.glob("*.tf"))
    groups = dict((g["name"], g) for g in _node_groups_tf.from_terraform(texts))
    assert sorted(groups) == ["core-node-group", "g5-gpu-karpenter", "g6-gpu-karpenter", "inferentia-inf2",
                              "trainium-trn1", "x86-cpu-karpenter"]
    g5 = groups["g5-gpu-karpenter"]
    assert g5["labels"]["karpenter.k8s.aws/instance-family"] == ["g5"] and g5["labels"]["gpuType"] == "a10g" \
        or g5["labels"]["gpuType"] == ["a10g"]
    assert g5["taints"] == [{"key": "nvidia.com/gpu", "value": "Exists", "effect": "NoSchedule"}]


def test_interpolations_nested():
    text = 'a: ${var.x}\nb: ${var.s != null ? "snapshotID: ${var.s}" : ""}\nc: $${literal}\n'
    assert [t[2] for t in interpolations(text)] == ["var.x", 'var.s != null ? "snapshotID: ${var.s}" : ""']


# ------------------------------------------------------------------ .env read as the shell reads it (item 2)


def test_aws_do_ray_env_file_as_the_shell_reads_it():
    """aws-samples/aws-do-ray's .env: `source .fun`, `$(aws ...)`, `if` blocks, values built from earlier ones."""
    text = (fixture_repo("aws-do-ray") / ".env").read_text()
    values, unknown, missing = _shell_env.read(text, {"HOME": "/home/me"}, ".env")
    assert values["VERBOSE"] == "true" and values["IMAGE"] == "aws-do-ray" and values["VERSION"] == "v20241125"
    assert values["AWS_DEFAULT_REGION"] == "us-west-2" and values["AWS_EKS_HYPERPOD_CLUSTER"] == ""
    assert values["CONTAINER_NAME"] == "--name aws-do-ray"  # ${CONTAINER} from ${IMAGE}, both read before
    assert values["no_proxy"] == "localhost" and values["http_proxy"] == ""
    # commands are not run: unknown (with where and why), never a value and never "missing"
    assert unknown["ACCOUNT"].startswith(".env:63 assigns it inside a condition")  # $(aws sts ...) in an if
    assert unknown["AWS_REGION"].startswith(".env:51 assigns it inside a condition")  # the last assignment wins
    assert "TAG" in unknown and "VOL_MAP" in unknown  # $(if ...), $(pwd)
    for name in ("AWS_EKS_CLUSTER", "CLUSTER_TYPE", "REGISTRY", "ACCOUNT", "AWS_PROFILE"):
        assert "inside a condition" in unknown[name], name  # assigned in if/else blocks
    # RUN_OPTS uses $AWS_REGION (unknown): unknown too; nothing is "missing"
    assert "RUN_OPTS" in unknown and missing == {}


def test_env_file_forms():
    text = ("# comment\nexport A=1\nB=\"${A}-x\"  # trailing\nC='${A} literal'\nD=${UNSET:-dflt}\nE=${A:+set}\n"
            "F=${NOPE}\nG=1 python train.py\nreadonly H=h; export I=i\ndeclare -x J=\"a b\"\n")
    values, unknown, missing = _shell_env.read(text, {}, "x.env")
    assert values == {"A": "1", "B": "1-x", "C": "${A} literal", "D": "dflt", "E": "set", "H": "h", "I": "i",
                      "J": "a b"}
    assert missing == {"F": "NOPE"} and unknown == {}
    # the caller's environment is where the shell starts: ${X:-default} keeps an exported value
    values, _u, _m = _shell_env.read("NS=${NS:-default}\n", {"NS": "team-a"})
    assert values["NS"] == "team-a"


def test_env_per_folder_and_what_wins(tmp_path):
    """The .env of each folder applies there (over the root's); exported variables, --values and --set win."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / ".env").write_text("export IMAGE=root/img:v1\nexport NS=root-ns\n")
    (tmp_path / "a" / ".env").write_text("export IMAGE=a/img:v2\nexport TAG=$(git rev-parse HEAD)\n")
    job = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ${NS}\nspec:\n  containers:\n"
           "    - name: c\n      image: ${IMAGE}\n      env:\n        - name: T\n          value: x-${TAG}\n")
    (tmp_path / "a" / "pod.yaml").write_text(job.replace("x-${TAG}", "${TAG}").replace("image: ${IMAGE}",
                                                                                       "image: ${IMAGE}${TAG}"))
    (tmp_path / "b" / "pod.yaml").write_text(job.replace("name: p", "name: q").replace("${TAG}", "v"))
    findings = lint_repository(tmp_path)
    assert [(f["rule"], f["path"], f["file"]) for f in findings if f["rule"] in ("unset_variable", "unknown_value")] \
        == [("unknown_value", "TAG", "a/pod.yaml")]
    # exported NS wins over the .env files; --set IMAGE wins over everything
    findings = lint_repository(tmp_path, values={"IMAGE": "set/img:latest", "TAG": ""}, environ={"NS": "env-ns"})
    tags = [f for f in findings if f["rule"] == "image_tag"]
    assert sorted(f["file"] for f in tags) == ["a/pod.yaml", "b/pod.yaml"]  # set/img:latest in both folders
