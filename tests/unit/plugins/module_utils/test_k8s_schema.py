# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/lint/_k8s_schema.py: API server and MPI operator rules, strict CRD schemas, the validator."""

from __future__ import annotations

import copy
import json
import os

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.lint import _k8s_schema as p
from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import LintError, fmt_path
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
MPIJOB_SCHEMA = os.path.join(ROOT, "roles", "local_checks", "files", "mpijob-v2beta1-schema.json")


def job(**spec):
    """A Job that passes every rule; keyword arguments replace parts of its container."""
    container = {
        "name": "main", "image": "registry.example.com/rl/train:2026.11.1", "imagePullPolicy": "IfNotPresent",
        "command": ["python", "train.py"],
        "resources": {"limits": {"nvidia.com/gpu": 8}},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    container.update(spec)
    return {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "labels": {"app": "rl"}},
        "spec": {"activeDeadlineSeconds": 3600, "backoffLimit": 0, "template": {"spec": {
            "restartPolicy": "Never", "containers": [container],
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}]}}},
    }


def rules(findings):
    return sorted(f["rule"] for f in findings if not f["warning"])


def mpijob(name="nccl", workers=2):
    pod = {"containers": [{"name": "w", "image": "public.ecr.aws/hpc-cloud/nccl-tests:v2.16.9"}]}
    return {
        "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": name},
        "spec": {"slotsPerWorker": 1, "runPolicy": {"cleanPodPolicy": "Running"}, "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": {"spec": copy.deepcopy(pod)}},
            "Worker": {"replicas": workers, "template": {"spec": copy.deepcopy(pod)}}}},
    }


def texts(errors):
    """(path, message) errors as the 'path: message' lines people read."""
    return ["%s: %s" % (fmt_path(path) or "(object)", message) for path, message in errors]

# ------------------------------------------------------------------------------------------ API rules


def test_api_rules_names_and_labels():
    assert p.api_rule_errors(job()) == []
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "Bad_Name", "labels": {"a/b/c": "x y"}}}
    errors = p.api_rule_errors(svc)
    assert any(e.startswith("metadata.name: 'Bad_Name' is not a DNS-1123 label") for e in errors)
    assert any("label key 'a/b/c'" in e for e in errors)
    assert any("value 'x y' is not a valid label value" in e for e in errors)
    long_job = job()
    long_job["metadata"]["name"] = "j" * 64
    assert any("more than 63" in e for e in p.api_rule_errors(long_job))
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c" * 53}, "spec": {}}
    assert any("more than 52" in e for e in p.api_rule_errors(cron))
    assert p.api_rule_errors({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}) == ["metadata.name: required"]


def test_api_rules_containers_volumes_template_labels():
    doc = job(name="Main")
    doc["spec"]["template"]["metadata"] = {"labels": {"ok": "-bad-"}}
    errors = p.api_rule_errors(doc)
    assert any(e.startswith("spec.template.spec.containers[0].name: 'Main'") for e in errors)
    assert any(e.startswith("spec.template.metadata.labels: label 'ok'") for e in errors)


def test_extended_resources_need_equal_limits():
    # kubernetes pkg/apis/core/validation/validation.go ValidateResourceRequirements
    assert p.resource_errors({"limits": {"nvidia.com/gpu": 8}}, ("r",)) == []
    assert p.resource_errors({"requests": {"nvidia.com/gpu": "$GPU_PER_NODE"},
                              "limits": {"nvidia.com/gpu": "$GPU_PER_NODE"}}, ("r",)) == []  # unrendered
    assert p.resource_errors({"requests": {"cpu": 1, "memory": "1Gi"}}, ("r",)) == []  # may overcommit
    assert p.resource_errors({"requests": {"vpc.amazonaws.com/efa": 32}}, ("r",)) == [
        "r.limits: Limit must be set for non overcommitable resources (vpc.amazonaws.com/efa is requested without a limit)"]
    assert p.resource_errors({"requests": {"nvidia.com/gpu": 4}, "limits": {"nvidia.com/gpu": 8}}, ("r",)) == [
        "r.requests.nvidia.com/gpu: 4 must be equal to nvidia.com/gpu limit of 8"]
    assert p.resource_errors({"limits": {"nvidia.com/gpu": 0.5}}, ("r",)) == ["r.limits.nvidia.com/gpu: 0.5 must be an integer"]
    assert p.resource_errors({"limits": {"hugepages-2Mi": "5120Mi"}}, ("r",)) == ["r: HugePages require cpu or memory"]
    assert p.resource_errors({"limits": {"hugepages-2Mi": "5120Mi", "memory": "8Gi"}}, ("r",)) == []
    doc = job()
    doc["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"nvidia.com/gpu": 8}}
    assert any("Limit must be set" in e for e in p.api_rule_errors(doc))


def test_configmap_size_limit():
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"a": "x" * (1 << 20)}}
    assert any("more than the 1048576" in e for e in p.api_rule_errors(cm))


def test_mpijob_operator_rules():
    assert p.api_rule_errors(mpijob("rlsv-20261130-021500-ab12-l3-nccl", 2)) == []
    long_name = mpijob("n" * 56, 12)  # n...-worker-11 is 66 characters
    assert any("worker pod host name" in e for e in p.api_rule_errors(long_name))
    starts_with_digit = mpijob("1nccl")
    assert any("DNS-1035" in e for e in p.api_rule_errors(starts_with_digit))
    bad = mpijob()
    bad["spec"]["mpiReplicaSpecs"]["Launcher"]["replicas"] = 2
    bad["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] = "Always"
    del bad["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    errors = p.api_rule_errors(bad)
    assert "spec.mpiReplicaSpecs.Launcher.replicas: must be 1, not 2" in errors
    assert any("Worker.restartPolicy: 'Always'" in e for e in errors)
    assert any("Worker.template.spec.containers: at least one container" in e for e in errors)


# ------------------------------------------------------------------------------------------ schemas


def test_strict_crd_schema():
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"a": {"type": "string", "nullable": True}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"b": {}}},
        "items": {"type": "array", "items": {"type": "object", "properties": {"c": {"type": "integer"}}}}}}
    strict = p.strict_crd_schema(schema)
    assert strict["additionalProperties"] is False
    assert strict["properties"]["spec"]["additionalProperties"] is False
    assert strict["properties"]["spec"]["properties"]["a"]["type"] == ["string", "null"]
    assert "additionalProperties" not in strict["properties"]["free"]
    assert strict["properties"]["items"]["items"]["additionalProperties"] is False
    assert "additionalProperties" not in schema  # the input is not changed


@pytest.fixture(scope="module")
def validator():
    pytest.importorskip("kubernetes_validate")
    return p.SchemaValidator("1.34", True, {("kubeflow.org/v2beta1", "MPIJob"): p.load_schema_file(MPIJOB_SCHEMA)})


def test_schema_valid_job(validator):
    used, errors = validator.validate(job())
    assert used == "Kubernetes 1.34 (strict)"
    assert errors == []


def test_schema_unknown_field_and_wrong_type(validator):
    doc = job(imagePullPolicyy="IfNotPresent")
    doc["spec"]["backoffLimit"] = "zero"
    _used, errors = validator.validate(doc)
    errors = texts(errors)
    assert any(e.startswith("spec.backoffLimit: 'zero' is not of type 'integer'") for e in errors)
    assert any("'imagePullPolicyy' was unexpected" in e for e in errors)


def test_a_null_field_is_unset_as_the_api_server_reads_it(validator):
    # kubeflow/mpi-operator examples/v2beta1/pi/pi-intel.yaml has `command:` with no value
    doc = job(command=None)
    assert validator.validate(doc)[1] == []
    assert p.without_nulls({"a": None, "b": [{"c": None, "d": 1}]}) == {"b": [{"d": 1}]}


def test_schema_unknown_kind(validator):
    with pytest.raises(p.SchemaNotFound, match="no schema for example.com/v1 FooBar"):
        validator.validate({"apiVersion": "example.com/v1", "kind": "FooBar", "metadata": {"name": "x"}})


def test_split_error_and_parse_path():
    assert p.parse_path("spec.containers[0].name") == ("spec", "containers", 0, "name")
    assert p.split_error("metadata.name: required") == (("metadata", "name"), "required")
    assert p.split_error("no path here") == ((), "no path here")


def test_tool_configuration_is_not_a_cluster_object():
    assert p.is_tool_config({"apiVersion": "eksctl.io/v1alpha5", "kind": "ClusterConfig"})
    assert p.is_tool_config({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"})
    assert not p.is_tool_config({"apiVersion": "batch/v1", "kind": "Job"})


def test_schema_mpijob_from_the_crd(validator):
    used, errors = validator.validate(mpijob("rlsv-x-l3-nccl"))
    assert used == "CRD schema kubeflow.org/v2beta1 MPIJob (strict)"
    assert errors == []
    bad = mpijob()
    bad["spec"]["slotsPerWorkers"] = 1
    bad["spec"]["mpiImplementation"] = "LAM"
    bad["metadata"]["labelz"] = {}
    _used, errors = validator.validate(bad)
    errors = texts(errors)
    assert any("'slotsPerWorkers' was unexpected" in e for e in errors)
    assert any(e.startswith("spec.mpiImplementation: 'LAM' is not one of") for e in errors)
    assert any(e.startswith("metadata: Additional properties") and "labelz" in e for e in errors)


def test_schema_version_fallback():
    pytest.importorskip("kubernetes_validate")
    newest = p.SchemaValidator("1.99", True)
    assert newest.notes and "newest it has" in newest.notes[0]
    assert p.SchemaValidator("v1.34", False).version.startswith("1.34")
    with pytest.raises(LintError, match="not a version"):
        p.SchemaValidator("latest", True)
    with pytest.raises(LintError, match="or older"):
        p.SchemaValidator("1.0", True)


def test_load_schema_file_reads_a_crd(tmp_path):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "spec": {"versions": [{"name": "v1", "served": True, "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
    path = tmp_path / "crd.yaml"
    path.write_text("# a CRD\n" + json.dumps(crd))
    assert p.load_schema_file(str(path)) == {"type": "object"}
    with pytest.raises(LintError, match="cannot read"):
        p.load_schema_file(str(tmp_path / "missing.json"))
    assert p.load_schema_file(MPIJOB_SCHEMA)["$comment"].startswith("openAPIV3Schema of MPIJob kubeflow.org/v2beta1")


# ------------------------------------------------------------------------------------------ files
