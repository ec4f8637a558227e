# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests of plugins/module_utils/_pitfalls.py (local mode: pitfalls, schemas, references, tool output)."""

from __future__ import annotations

import copy
import json
import os
import subprocess

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils import _pitfalls as p
from ansible_collections.rlstack.validation.plugins.module_utils import _verdict

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


# ------------------------------------------------------------------------------------------ helpers


@pytest.mark.parametrize("image, tag, digest, placeholder", [
    ("busybox", None, None, False),
    ("busybox:1.36", "1.36", None, False),
    ("registry:5000/team/img", None, None, False),
    ("registry:5000/team/img:v2", "v2", None, False),
    ("nvcr.io/nvidia/pytorch:latest", "latest", None, False),
    ("img@sha256:abc", None, "sha256:abc", False),
    ("img:1.0@sha256:abc", "1.0", "sha256:abc", False),
    ("${NCCL_TEST_IMAGE}", None, None, True),
    ("<ECR_URI>:latest", "latest", None, True),
    ("{{ image }}", None, None, True),
    ("", None, None, True),
])
def test_parse_image(image, tag, digest, placeholder):
    assert p.parse_image(image) == {"tag": tag, "digest": digest, "placeholder": placeholder}


@pytest.mark.parametrize("argv, expected", [
    (["bash", "-c", "echo hi"], ("bash", "echo hi")),
    (["/bin/bash", "-lc", "x"], ("bash", "x")),
    (["sh", "-ec", "x"], ("sh", "x")),
    (["bash", "-o", "pipefail", "-c", "x"], ("bash", "x")),
    (["/usr/bin/env", "bash", "-euxc", "x"], ("bash", "x")),
    (["bash", "script.sh", "-c"], None),
    (["bash", "-c"], None),
    (["python", "-c", "print(1)"], None),
    ([], None),
])
def test_shell_script(argv, expected):
    assert p.shell_script(argv, p.DEFAULT_OPTIONS["shells"]) == expected


def test_script_lines_and_tokens_ignore_comments():
    script = "# setup; {things} && more\n\n  echo a  # trailing; comment\necho 'b;c'\n"
    assert p.script_lines(script) == ["  echo a  # trailing; comment", "echo 'b;c'"]
    assert p.script_tokens(script, [";", "&&", "{"]) == [";"]  # the ';' inside quotes counts, comments do not
    assert p.script_tokens("echo a\necho b\n", [";"]) == []


def test_pod_specs_finds_every_template():
    specs = p.pod_specs(mpijob())
    assert [p.fmt_path(path) for path, _spec in specs] == [
        "spec.mpiReplicaSpecs.Launcher.template.spec", "spec.mpiReplicaSpecs.Worker.template.spec"]
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "a"}]}}}}}}
    assert [p.fmt_path(path) for path, _s in p.pod_specs(cron)] == ["spec.jobTemplate.spec.template.spec"]


def test_object_label_and_fmt_path():
    assert p.object_label(job()) == "Job/train"
    assert p.object_label({"kind": "Pod", "metadata": {"generateName": "x-"}}) == "Pod/x-"
    assert p.fmt_path(("spec", "containers", 0, "image")) == "spec.containers[0].image"


# ------------------------------------------------------------------------------------------ pitfalls


def test_clean_job_has_no_findings():
    assert p.lint_document(job()) == []


def test_not_a_kubernetes_object_is_ignored():
    assert p.lint_document({"hosts": "all", "tasks": []}) == []


def test_deadline_under_600s():
    doc = job()
    doc["spec"]["activeDeadlineSeconds"] = 300
    found = p.lint_document(doc)
    assert rules(found) == ["deadline"]
    assert found[0]["path"] == "spec.activeDeadlineSeconds"
    assert found[0]["actual"] == 300 and found[0]["expected"] == 600 and found[0]["op"] == "ge"
    assert "300 s, under 600 s" in found[0]["message"]
    doc["spec"]["activeDeadlineSeconds"] = 600
    assert p.lint_document(doc) == []


def test_deadline_in_pod_spec_and_mpijob_run_policy_and_custom_minimum():
    doc = job()
    doc["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 700
    found = p.lint_document(doc, {"min_deadline_s": 900})
    assert [f["path"] for f in found] == ["spec.template.spec.activeDeadlineSeconds"]
    assert p.lint_document(doc) == []
    mpi = mpijob()
    mpi["spec"]["runPolicy"]["activeDeadlineSeconds"] = 120
    found = [f for f in p.lint_document(mpi) if f["rule"] == "deadline"]
    assert [f["path"] for f in found] == ["spec.runPolicy.activeDeadlineSeconds"]


def test_image_pull_policy_always():
    found = p.lint_document(job(imagePullPolicy="Always"))
    assert rules(found) == ["image_pull_policy"]
    assert found[0]["path"].endswith("containers[0].imagePullPolicy")


@pytest.mark.parametrize("image, problem", [
    ("registry.example.com/rl/train:latest", "latest"),
    ("registry.example.com/rl/train", "untagged"),
    ("${ECR_URI}", "placeholder"),
])
def test_image_tag(image, problem):
    found = p.lint_document(job(image=image))
    assert rules(found) == ["image_tag"]
    assert found[0]["actual"] == problem


def test_image_without_policy_mentions_the_implicit_pull():
    found = p.lint_document(job(image="busybox", imagePullPolicy=None))
    assert "pulls it on every start" in found[0]["message"]


def test_pinned_digest_is_fine():
    assert p.lint_document(job(image="registry.example.com/rl/train@sha256:0123")) == []


def test_gpu_container_without_dev_shm():
    doc = job(volumeMounts=[])
    found = p.lint_document(doc)
    assert rules(found) == ["dev_shm"]
    assert "requests 8 GPU(s) but mounts nothing at /dev/shm" in found[0]["message"]


def test_dev_shm_must_be_a_memory_emptydir():
    doc = job()
    doc["spec"]["template"]["spec"]["volumes"] = [{"name": "dshm", "emptyDir": {}}]
    found = p.lint_document(doc)
    assert rules(found) == ["dev_shm"]
    assert "not an emptyDir with medium: Memory" in found[0]["message"]


def test_dev_shm_not_needed_without_gpu_or_with_host_ipc():
    assert p.lint_document(job(volumeMounts=[], resources={"limits": {"cpu": "2"}})) == []
    doc = job(volumeMounts=[])
    doc["spec"]["template"]["spec"]["hostIPC"] = True
    assert p.lint_document(doc) == []
    requests_only = job(volumeMounts=[], resources={"requests": {"nvidia.com/gpu": "1"}})
    assert rules(p.lint_document(requests_only)) == ["dev_shm"]
    other = job(volumeMounts=[], resources={"limits": {"amd.com/gpu": 1}})
    assert rules(p.lint_document(other, {"gpu_resources": ["amd.com/gpu"]})) == ["dev_shm"]


def test_inline_script_with_chains_and_braces():
    script = "cd /w && pip install -e .\nif [ -d x ]; then { echo y; }; fi\n"
    found = p.lint_document(job(command=["bash", "-c", script]))
    assert rules(found) == ["inline_script"]
    assert found[0]["actual"] == [";", "&&", "{", "}"]
    assert "runs `bash -c` with a 2-line inline script" in found[0]["message"]


def test_inline_script_in_args_and_simple_scripts_pass():
    found = p.lint_document(job(command=["/bin/sh"], args=["-c", "a || b\nc"]))
    assert rules(found) == ["inline_script"]
    # one line, however complex, and several lines without the constructs are fine
    assert p.lint_document(job(command=["bash", "-c", "a && b; c || d"])) == []
    assert p.lint_document(job(command=["bash", "-c", "# setup\n# more\nbash run.sh --max-steps 1\n"])) == []
    assert p.lint_document(job(command=["bash", "-c", "echo a\necho b\n"])) == []


def test_simulator_env_missing():
    found = p.lint_document(job(command=["python", "-c", "import libero.libero"]))
    assert rules(found) == ["simulator_env"]
    assert found[0]["actual"] == ["LIBERO_DATASET_DIR"]
    assert "LIBERO workload without LIBERO_DATASET_DIR" in found[0]["message"]


def test_simulator_env_present_or_env_from():
    env = [{"name": "LIBERO_DATASET_DIR", "value": "/fsx/datasets/libero"}]
    assert p.lint_document(job(command=["python", "-m", "libero"], env=env)) == []
    env_from = [{"configMapRef": {"name": "sim-env"}}]
    assert p.lint_document(job(command=["python", "-m", "libero"], envFrom=env_from)) == []


def test_simulator_env_provided_elsewhere_is_a_warning_unless_strict():
    doc = job(command=["bash", "run.sh", "libero_10_ppo_pi0"])
    found = p.lint_document(doc, provided_env=["LIBERO_DATASET_DIR"])
    assert [(f["rule"], f["warning"]) for f in found] == [("simulator_env", True)]
    assert p.pitfall_checks("n", found)[0]["name"] == "pitfalls"
    assert "1 warnings" in p.pitfall_checks("n", found)[0]["unit"]
    strict = p.lint_document(doc, {"simulator_env_strict": True}, provided_env=["LIBERO_DATASET_DIR"])
    assert rules(strict) == ["simulator_env"]


def test_custom_simulator_rule():
    opts = {"simulator_env": [{"name": "ManiSkill", "pattern": "maniskill", "env": ["MS_ASSET_DIR"]}]}
    assert rules(p.lint_document(job(command=["bash", "run.sh", "maniskill_ppo"]), opts)) == ["simulator_env"]
    assert rules(p.lint_document(job(command=["python", "-m", "libero"]), opts)) == []


def test_rule_selection():
    doc = job(imagePullPolicy="Always", image="x:latest")
    assert rules(p.lint_document(doc, {"rules": ["image_tag"]})) == ["image_tag"]


@pytest.mark.parametrize("options, text", [
    ({"nope": 1}, "unknown pitfall option"),
    ({"rules": ["deadline", "typo"]}, "unknown pitfall rule"),
    ({"min_deadline_s": "soon"}, "must be integers"),
    ({"simulator_env": [{"pattern": "("}]}, "needs a pattern and a list env"),
    ({"simulator_env": [{"pattern": "(", "env": ["X"]}]}, "not a regular expression"),
])
def test_bad_options(options, text):
    with pytest.raises(p.LintError, match=text):
        p.options_with_defaults(options)


def test_options_none_means_default():
    assert p.options_with_defaults({"min_deadline_s": None})["min_deadline_s"] == 600


def test_simulator_inventory_findings():
    found = p.simulator_inventory_findings("libero.libero", {"ROBOT_PLATFORM": "LIBERO"})
    assert [f["actual"] for f in found] == [["LIBERO_DATASET_DIR"]]
    assert "validation_simulator_env" in found[0]["message"]
    assert p.simulator_inventory_findings("libero.libero", {"LIBERO_DATASET_DIR": "/fsx"}) == []
    assert p.simulator_inventory_findings("fake_env_sim", {}) == []
    assert p.simulator_inventory_findings("", {}) == []


def test_pitfall_checks_are_judged_by_level_assert():
    doc = job(image="x:latest", volumeMounts=[])
    doc["spec"]["activeDeadlineSeconds"] = 120
    checks = p.pitfall_checks("jobs.yaml#1 Job/train", p.lint_document(doc)) + p.pitfall_checks("ok", [])
    result = _verdict.build_level_result("local_pitfalls", checks=checks)
    assert result["level"] == "LOCAL" and result["status"] == "FAIL"
    failed = dict((c["name"], c) for c in result["checks"] if not c["passed"])
    assert sorted(failed) == ["deadline", "dev_shm", "image_tag"]
    assert failed["deadline"]["message"].startswith("deadline: Job/train spec.activeDeadlineSeconds is 120 s")
    assert "(expected >= 600 s, saw 120 s)" in failed["deadline"]["message"]
    assert failed["image_tag"]["hint"].startswith("tag images with a specific version")
    passed = [c for c in result["checks"] if c["passed"]]
    assert [(c["name"], c["node"]) for c in passed] == [("pitfalls", "ok")]
    assert result["nodes"]["jobs.yaml#1 Job/train"]["failed"] == 3


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
    assert any(e.startswith("spec.backoffLimit: 'zero' is not of type 'integer'") for e in errors)
    assert any("'imagePullPolicyy' was unexpected" in e for e in errors)


def test_schema_unknown_kind(validator):
    with pytest.raises(p.SchemaNotFound, match="no schema for example.com/v1 FooBar"):
        validator.validate({"apiVersion": "example.com/v1", "kind": "FooBar", "metadata": {"name": "x"}})
    checks, note, _used = p.schema_checks("n", {"apiVersion": "example.com/v1", "kind": "FooBar",
                                                "metadata": {"name": "x"}}, validator)
    assert checks[0]["actual"] == 1 and note is None
    checks, note, _used = p.schema_checks("n", {"apiVersion": "example.com/v1", "kind": "FooBar",
                                                "metadata": {"name": "x"}}, validator, "skip")
    assert checks[0]["actual"] == 0 and "not validated" in note


def test_schema_mpijob_from_the_crd(validator):
    used, errors = validator.validate(mpijob("rlsv-x-l3-nccl"))
    assert used == "CRD schema kubeflow.org/v2beta1 MPIJob (strict)"
    assert errors == []
    bad = mpijob()
    bad["spec"]["slotsPerWorkers"] = 1
    bad["spec"]["mpiImplementation"] = "LAM"
    bad["metadata"]["labelz"] = {}
    _used, errors = validator.validate(bad)
    assert any("'slotsPerWorkers' was unexpected" in e for e in errors)
    assert any(e.startswith("spec.mpiImplementation: 'LAM' is not one of") for e in errors)
    assert any(e.startswith("metadata: Additional properties") and "labelz" in e for e in errors)


def test_schema_checks_message(validator):
    doc = job(imagePullPolicyy="x", name="Bad")
    checks, _note, used = p.schema_checks("src", doc, validator)
    assert used.startswith("Kubernetes 1.34")
    assert checks[0]["actual"] == 2
    assert checks[0]["fail_msg"].startswith("Job/train is not valid against the Kubernetes 1.34 (strict): ")


def test_schema_version_fallback():
    pytest.importorskip("kubernetes_validate")
    newest = p.SchemaValidator("1.99", True)
    assert newest.notes and "newest it has" in newest.notes[0]
    assert p.SchemaValidator("v1.34", False).version.startswith("1.34")
    with pytest.raises(p.LintError, match="not a version"):
        p.SchemaValidator("latest", True)
    with pytest.raises(p.LintError, match="or older"):
        p.SchemaValidator("1.0", True)


def test_load_schema_file_reads_a_crd(tmp_path):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "spec": {"versions": [{"name": "v1", "served": True, "schema": {"openAPIV3Schema": {"type": "object"}}}]}}
    path = tmp_path / "crd.yaml"
    path.write_text("# a CRD\n" + json.dumps(crd))
    assert p.load_schema_file(str(path)) == {"type": "object"}
    with pytest.raises(p.LintError, match="cannot read"):
        p.load_schema_file(str(tmp_path / "missing.json"))
    assert p.load_schema_file(MPIJOB_SCHEMA)["$comment"].startswith("openAPIV3Schema of MPIJob kubeflow.org/v2beta1")


# ------------------------------------------------------------------------------------------ files


def test_read_manifests(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text("---\nhosts: all\n---\n" + json.dumps(job()) + "\n---\n"
                    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n")
    found, error = p.read_manifests(str(path), "m.yaml")
    assert error is None
    assert [source for source, _obj in found] == ["m.yaml#2 Job/train", "m.yaml#3.items[0] ConfigMap/c"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [b\n")
    found, error = p.read_manifests(str(bad), "bad.yaml")
    assert found == [] and error.startswith("bad.yaml is not valid YAML")


def test_manifest_files(tmp_path):
    (tmp_path / "a.yaml").write_text("{}")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.yml").write_text("{}")
    (tmp_path / "sub" / "c.txt").write_text("")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "d.yaml").write_text("{}")
    names = [os.path.relpath(f, str(tmp_path)) for f in p.manifest_files([str(tmp_path)])]
    assert names == ["a.yaml", os.path.join("sub", "b.yml")]
    with pytest.raises(p.LintError, match="does not exist"):
        p.manifest_files([str(tmp_path / "nope")])


def test_lint_files_walk_prunes_and_excludes(tmp_path):
    for rel in ("run.sh", "lib.bash", "conf.yml", "x.yaml.j2", "skip/me.sh", ".venv-x/y.sh", ".ansible/z.yml",
                "node_modules/a.yml", ".github/workflows/ci.yml"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    found = p.lint_files([str(tmp_path)], ["skip"], str(tmp_path), use_git=False)
    rel = dict((k, sorted(os.path.relpath(f, str(tmp_path)) for f in v)) for k, v in found.items())
    assert rel == {"shell": ["lib.bash", "run.sh"],
                   "yaml": [os.path.join(".github", "workflows", "ci.yml"), "conf.yml"]}
    explicit = p.lint_files([str(tmp_path / "skip" / "me.sh")], ["skip"], str(tmp_path), use_git=False)
    assert explicit["shell"] == [str(tmp_path / "skip" / "me.sh")]
    with pytest.raises(p.LintError):
        p.lint_files([str(tmp_path / "nope")])


def test_lint_files_uses_gitignore(tmp_path):
    git = subprocess.run(["git", "--version"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    if git.returncode != 0:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("out/\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "gen.yml").write_text("")
    (tmp_path / "keep.yml").write_text("")
    found = p.lint_files([str(tmp_path)], [], str(tmp_path))
    assert found["yaml"] == [str(tmp_path / "keep.yml")]


@pytest.mark.parametrize("rel, patterns, expected", [
    ("tests/local/bad_manifests/x.yml", ["tests/local/bad_manifests"], True),
    ("./tests/output/a.yml", ["tests/output/"], True),
    ("tests/outputs/a.yml", ["tests/output"], False),
    ("changelogs/changelog.yaml", ["changelogs/changelog.yaml"], True),
    ("docs/a.generated.yml", ["*.generated.yml"], True),  # fnmatch: * crosses directories
    ("a.generated.yml", ["*.generated.yml"], True),
    ("x.yml", [], False),
])
def test_exclude_match(rel, patterns, expected):
    assert p.exclude_match(rel, patterns) is expected


def test_shellcheck_checks(tmp_path):
    files = [str(tmp_path / "a.sh"), str(tmp_path / "b.sh")]
    output = json.dumps({"comments": [
        {"file": files[0], "line": 5, "column": 1, "level": "warning", "code": 2164, "message": "Use cd || exit"},
        {"file": files[0], "line": 2, "column": 1, "level": "error", "code": 2148, "message": "Add a shebang"}]})
    checks = p.shellcheck_checks(output, files, str(tmp_path))
    assert [(c["node"], c["actual"]) for c in checks] == [("a.sh", 2), ("b.sh", 0)]
    assert checks[0]["fail_msg"].startswith("2 finding(s) at severity warning or above: line 2 SC2148 (error)")
    assert checks[1]["hint"] == ""
    assert p.shellcheck_checks('{"comments": []}', files)[0]["actual"] == 0
    with pytest.raises(p.LintError, match="no JSON"):
        p.shellcheck_checks("oops", files)
    with pytest.raises(p.LintError, match="no output at all"):
        p.shellcheck_checks("", files)


def test_yamllint_checks(tmp_path):
    files = [str(tmp_path / "a.yml"), str(tmp_path / "b.yml")]
    output = "\n".join([
        "%s:3:1: [error] duplication of key \"name\" in mapping (key-duplicates)" % files[0],
        "%s:7:10: [warning] truthy value should be one of [false, true] (truthy)" % files[0],
        "%s:1:1: [warning] missing document start \"---\" (document-start)" % files[1],
    ])
    checks = p.yamllint_checks(output, files, str(tmp_path))
    assert [(c["node"], c["actual"], c["unit"]) for c in checks] == [
        ("a.yml", 1, "errors (1 warnings)"), ("b.yml", 0, "errors (1 warnings)")]
    assert checks[0]["fail_msg"] == ("1 error(s) and 1 warning(s): line 3: duplication of key \"name\" in mapping "
                                     "(key-duplicates)")


def test_display_path():
    assert p.display_path("/a/b/c.yml", "/a") == os.path.join("b", "c.yml")
    assert p.display_path("/x/c.yml", "/a") == "/x/c.yml"


# ------------------------------------------------------------------------------------------ references


def write(base, rel, text):
    path = os.path.join(str(base), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


@pytest.fixture
def collection(tmp_path):
    write(tmp_path, "roles/r/tasks/main.yml", """---
# a comment about {{ role_path }}/files/not_checked.py
- name: Included
  ansible.builtin.include_tasks: other.yml
- name: Dynamic
  ansible.builtin.include_tasks: "{{ some_var }}"
- name: Pattern
  ansible.builtin.include_tasks: "probe_{{ transport }}.yml"
- name: Missing
  include_tasks:
    file: missing.yml
- name: Template
  ansible.builtin.template:
    src: t.j2
    dest: /tmp/t
- name: Missing template
  ansible.builtin.template: {src: gone.j2, dest: /tmp/g}
- name: Remote copy is not checked
  ansible.builtin.copy: {src: /etc/hosts, dest: /tmp/h, remote_src: true}
- name: Files
  ansible.builtin.set_fact:
    a: "{{ lookup('ansible.builtin.file', 'data.txt') }}"
    b: "{{ role_path }}/files/probe.py"
    c: "{{ role_path }}/files/{{ name }}.py"
    d: "{{ lookup('file', some_variable) }}"
- name: Vars
  ansible.builtin.include_vars:
    file: "{{ role_path }}/../{{ item }}/defaults/main.yml"
  loop: [r, s]
- name: Other role
  ansible.builtin.include_role:
    name: ns.coll.s
    tasks_from: go.yml
- name: Missing entry point
  ansible.builtin.import_role:
    name: s
    tasks_from: nowhere
- name: Another collection
  ansible.builtin.include_role:
    name: kubernetes.core.helm
""")
    write(tmp_path, "roles/r/tasks/other.yml", "---\n[]\n")
    write(tmp_path, "roles/r/tasks/probe_host.yml", "---\n[]\n")
    write(tmp_path, "roles/r/templates/t.j2",
          "{# {{ lookup('template', 'commented.j2') }} #}\n{{ lookup('ansible.builtin.template', 'labels.j2') }}\n")
    write(tmp_path, "roles/r/templates/labels.j2", "a: b\n")
    write(tmp_path, "roles/r/files/data.txt", "x\n")
    write(tmp_path, "roles/r/files/probe.py", "x\n")
    write(tmp_path, "roles/r/files/probe_x.py", "x\n")
    write(tmp_path, "roles/r/defaults/main.yml", "---\n{}\n")
    write(tmp_path, "roles/s/defaults/main.yml", "---\n{}\n")
    write(tmp_path, "roles/s/tasks/go.yml", "---\n[]\n")
    write(tmp_path, "roles/s/files/broken.yml", "not: [checked\n")  # files/ is not scanned
    write(tmp_path, "playbooks/site.yml", """---
- name: Other playbook
  ansible.builtin.import_playbook: ns.coll.other
- name: Missing playbook
  ansible.builtin.import_playbook: gone.yml
- name: Play
  hosts: all
  roles:
    - r
    - role: ns.coll.s
    - {role: missing_role}
  tasks: []
""")
    write(tmp_path, "playbooks/other.yml", "---\n[]\n")
    return tmp_path


def test_reference_scanner(collection):
    checks, refs = p.reference_checks(str(collection), "ns.coll")
    by_ref = dict((r["ref"], r) for r in refs)
    assert by_ref["other.yml"]["status"] == "ok"
    assert by_ref["{{ some_var }}"]["status"] == "dynamic"
    assert by_ref["probe_{{ transport }}.yml"]["status"] == "ok"
    assert by_ref["missing.yml"]["status"] == "missing"
    assert by_ref["t.j2"]["status"] == "ok"
    assert by_ref["gone.j2"]["status"] == "missing"
    assert "/etc/hosts" not in by_ref
    assert by_ref["data.txt"]["status"] == "ok"
    assert by_ref["{{ role_path }}/files/probe.py"]["status"] == "ok"
    assert by_ref["{{ role_path }}/files/{{ name }}.py"]["status"] == "ok"
    assert by_ref["{{ role_path }}/../{{ item }}/defaults/main.yml"]["status"] == "ok"
    assert by_ref["go.yml"]["status"] == "ok"
    assert by_ref["nowhere"]["status"] == "missing"
    assert by_ref["kubernetes.core.helm"]["status"] == "external"
    assert by_ref["labels.j2"]["status"] == "ok"
    assert "commented.j2" not in by_ref
    assert not any("not_checked" in r for r in by_ref)
    assert by_ref["ns.coll.other"]["status"] == "ok"
    assert by_ref["gone.yml"]["status"] == "missing"
    assert by_ref["missing_role"]["status"] == "missing"
    assert by_ref["r"]["status"] == "ok"
    assert by_ref["missing.yml"]["line"] == 11
    failed = dict((c["node"], c) for c in checks if c["actual"])
    assert sorted(failed) == [os.path.join("playbooks", "site.yml"), os.path.join("roles", "r", "tasks", "main.yml")]
    message = failed[os.path.join("roles", "r", "tasks", "main.yml")]["fail_msg"]
    assert "3 missing file(s)" in message and "line 11: tasks missing.yml" in message


def test_reference_checks_of_this_collection():
    checks, refs = p.reference_checks(ROOT, "rlstack.validation")
    missing = [r for r in refs if r["status"] == "missing"]
    assert missing == []
    assert len(checks) > 10
    assert any(r["ref"] == "labels.yml.j2" and r["status"] == "ok" for r in refs)
