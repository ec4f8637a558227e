# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Local mode end to end (no cluster): playbooks/local.yml on the project and the sim inventory must
pass, and on the deliberately bad set (tests/local/bad_manifests) it must report every finding by name.
Each run writes report.json through the rlstack.validation.report callback; the tests read it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from local_helpers import ROOT, run_local

INVENTORY = Path(os.environ.get("RLSTACK_LOCAL_TEST_INVENTORY") or ROOT / "inventories" / "sim")
ROWS = ["local_manifests", "local_pitfalls", "local_shell", "local_yaml", "local_terraform", "local_references"]


def inventory_examples():
    """validation_examples of the inventory's group_vars (what L5/L6 would run)."""
    examples = []
    for path in sorted((INVENTORY / "group_vars").rglob("*.yml")):
        data = yaml.safe_load(path.read_text()) or {}
        examples = data.get("validation_examples", examples)
    return examples


# ------------------------------------------------------------------------------------------ the project


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    report = tmp_path_factory.mktemp("project-report")
    return run_local(["-i", str(INVENTORY)], report)  # report dir through RLSTACK_REPORT_DIR


def test_project_plan_has_every_local_row(project):
    rows = project.cluster["levels"]
    assert [r["id"] for r in rows] == ROWS
    assert {r["level"] for r in rows} == {"LOCAL"}
    orders = [r["order"] for r in rows]
    assert orders == sorted(orders) and orders[0] == -1.0 and orders[-1] < 0
    assert "VALIDATION RESULTS" in project.output


def test_project_manifests_render_and_validate(project):
    row = project.row("local_manifests")
    assert row["status"] == "PASS", project.explain()
    nodes = [c["node"] for c in row["checks"]]
    for expected in ("Namespace", "anchor Job", "L0 probe ConfigMap", "L1 probe ConfigMap", "L2 probe ConfigMap",
                     "L3 probe ConfigMap", "L4 probe ConfigMap", "L3 nccl-tests MPIJob", "L3.5 nccl-tests MPIJob"):
        assert expected in nodes
    for level in ("L0", "L1", "L2", "L3", "L4"):
        assert any(n.startswith(level + " probe Pod on ") for n in nodes), level
    # the representative cluster has as many nodes as the largest example needs: every example renders
    for example in inventory_examples():
        assert "L5 train %s Job" % example["name"] in nodes
        if example.get("evaluation"):
            assert "L6 eval %s Job" % example["name"] in nodes
        if int(example.get("nodes", 1)) > 1:
            assert "L5 train %s headless Service" % example["name"] in nodes
    assert all(c["name"] == "schema" and c["passed"] for c in row["checks"])


def test_project_manifests_free_of_pitfalls(project):
    row = project.row("local_pitfalls")
    assert row["status"] == "PASS", [c["message"] for c in project.failed("local_pitfalls")]
    assert any(c["node"] == "inventory" and c["name"] == "simulator_env" for c in row["checks"])


def test_project_references_resolve(project):
    row = project.row("local_references")
    assert row["status"] == "PASS", [c["message"] for c in project.failed("local_references")]
    nodes = [c["node"] for c in row["checks"]]
    assert os.path.join("roles", "runner", "tasks", "probe_level.yml") in nodes
    assert os.path.join("roles", "local_checks", "tasks", "render.yml") in nodes


def test_project_shell_and_yaml_lint_clean(project):
    shell = project.row("local_shell")
    assert shell["status"] == "PASS", [c["message"] for c in project.failed("local_shell")]
    assert "validate.sh" in [c["node"] for c in shell["checks"]]
    yaml_row = project.row("local_yaml")
    assert yaml_row["status"] == "PASS", [c["message"] for c in project.failed("local_yaml")]
    yaml_nodes = [c["node"] for c in yaml_row["checks"]]
    assert "playbooks/local.yml" in yaml_nodes
    assert not any(n.startswith("tests/local/bad_manifests") for n in yaml_nodes)


def test_project_terraform_skipped_without_a_directory(project):
    row = project.row("local_terraform")
    assert row["status"] == "SKIPPED"
    assert row["reason"] == "no Terraform directory configured (set local_checks_terraform_dir)"


def test_project_passes(project):
    assert project.rc == 0, project.explain()
    assert project.report["status"] == "PASS"


# ------------------------------------------------------------------------------------------ the bad set


@pytest.fixture(scope="module")
def bad(bad_set, tmp_path_factory):
    """The bad set through validate.sh (a real run, not --dry-run), from inside the set: relative paths.
    The seed's 600 s deadline floor is pinned: an inventory may lower it (the simulated cluster does)."""
    report = tmp_path_factory.mktemp("bad-report")
    command = ["bash", str(ROOT / "validate.sh"), "--mode", "local", "--path", "manifests", "--report-dir",
               str(report), "--", "-e", "local_checks_project_dir=.", "-e", "local_checks_lint_project=true",
               "-e", "local_checks_terraform_dir=terraform", "-e", "local_checks_render=false",
               "-e", "local_checks_min_deadline_s=600"]
    return run_local([], report, cwd=bad_set, command=command)


def by_node(checks):
    out = {}
    for check in checks:
        out.setdefault(check["node"], []).append(check)
    return out


def test_bad_set_fails_every_row(bad):
    assert bad.rc != 0
    assert bad.report["status"] == "FAIL"
    assert {row: bad.row(row)["status"] for row in ROWS} == dict((row, "FAIL") for row in ROWS), bad.explain()
    assert "Local checks failed: local_manifests, local_pitfalls, local_shell" in bad.output


def test_bad_set_pitfalls(bad):
    failed = bad.failed("local_pitfalls")
    found = sorted((c["node"], c["name"]) for c in failed)
    job = "manifests/pitfalls.yaml#1 Job/short-deadline"
    pod = "manifests/pitfalls.yaml#2 Pod/untagged-gpu-pod"
    libero = "manifests/pitfalls.yaml#3 Job/libero-rollout"
    mpi = "manifests/pitfalls.yaml#4 MPIJob/nccl-tests"
    assert found == sorted([
        (job, "deadline"), (job, "image_pull_policy"), (job, "image_tag"), (job, "inline_script"), (job, "dev_shm"),
        (pod, "image_tag"), (pod, "dev_shm"),
        (libero, "simulator_env"),
        (mpi, "deadline"), (mpi, "image_tag"), (mpi, "image_tag"), (mpi, "dev_shm"),
    ])
    checks = by_node(failed)
    named = dict((c["name"], c) for c in checks[job])
    assert named["deadline"]["actual"] == 300 and named["deadline"]["expected"] == 600
    assert "spec.activeDeadlineSeconds is 300 s, under 600 s" in named["deadline"]["message"]
    assert "(imagePullPolicy: Always)" in named["image_pull_policy"]["message"]
    assert named["image_tag"]["actual"] == "latest"
    assert named["inline_script"]["actual"] == [";", "&&", "||", "{", "}"]
    assert "runs `bash -c` with a 3-line inline script" in named["inline_script"]["message"]
    assert "requests 8 GPU(s) but mounts nothing at /dev/shm" in named["dev_shm"]["message"]
    named = dict((c["name"], c) for c in checks[pod])
    assert named["image_tag"]["actual"] == "untagged"
    assert "not an emptyDir with medium: Memory" in named["dev_shm"]["message"]
    assert checks[libero][0]["actual"] == ["LIBERO_DATASET_DIR"]
    assert "LIBERO workload without LIBERO_DATASET_DIR" in checks[libero][0]["message"]
    assert checks[libero][0]["hint"].endswith("(seed pitfall 1)")
    mpi_checks = checks[mpi]
    assert [c["actual"] for c in mpi_checks if c["name"] == "image_tag"] == ["placeholder", "placeholder"]
    assert [c["actual"] for c in mpi_checks if c["name"] == "deadline"] == [120]
    assert "spec.runPolicy.activeDeadlineSeconds is 120 s" in [c for c in mpi_checks if c["name"] == "deadline"][0][
        "message"]
    # the schema-only objects have no pitfall
    passed = [c["node"] for c in bad.checks("local_pitfalls", "pitfalls", passed=True)]
    assert "manifests/schema.yaml#1 Job/typo-job" in passed


def test_bad_set_schemas(bad):
    failed = by_node(bad.failed("local_manifests"))
    assert sorted(failed) == [
        "manifests/broken.yaml",
        "manifests/schema.yaml#1 Job/typo-job",
        "manifests/schema.yaml#2 Service/Training-Service",
        "manifests/schema.yaml#3 MPIJob/an-mpijob-name-that-is-much-too-long-for-the-worker-host-names-x",
        "manifests/unknown-kind.yaml#1 FooBar/no-schema-for-me",
    ]
    broken = failed["manifests/broken.yaml"][0]
    assert broken["name"] == "yaml" and "is not valid YAML" in broken["message"]
    job = failed["manifests/schema.yaml#1 Job/typo-job"][0]
    assert job["name"] == "schema" and job["actual"] == 2
    assert "not valid against the Kubernetes 1.34 (strict)" in job["message"]
    assert "spec.backoffLimit: 'zero' is not of type 'integer'" in job["message"]
    assert "('imagePullPolicyy' was unexpected)" in job["message"]
    service = failed["manifests/schema.yaml#2 Service/Training-Service"][0]["message"]
    assert "metadata.name: 'Training-Service' is not a DNS-1123 label" in service
    assert "label 'app' value 'training service' is not a valid label value" in service
    mpi = failed["manifests/schema.yaml#3 MPIJob/an-mpijob-name-that-is-much-too-long-for-the-worker-host-names-x"][0]
    assert "CRD schema kubeflow.org/v2beta1 MPIJob (strict)" in mpi["message"]
    assert "('slotsPerWorkers' was unexpected)" in mpi["message"]
    assert "spec.mpiImplementation: 'LAM' is not one of" in mpi["message"]
    assert "worker pod host name" in mpi["message"]
    assert "spec.mpiReplicaSpecs.Launcher.replicas: must be 1, not 2" in mpi["message"]
    unknown = failed["manifests/unknown-kind.yaml#1 FooBar/no-schema-for-me"][0]["message"]
    assert "no schema for example.com/v1 FooBar" in unknown
    # the pitfall objects are valid Kubernetes and MPIJob objects
    passed = [c["node"] for c in bad.checks("local_manifests", "schema", passed=True)]
    assert len([n for n in passed if n.startswith("manifests/pitfalls.yaml#")]) == 4


def test_bad_set_shellcheck(bad):
    failed = bad.failed("local_shell")
    assert [c["node"] for c in failed] == ["scripts/bad.sh"]
    assert failed[0]["actual"] == 2
    assert "SC2164" in failed[0]["message"] and "SC2045" in failed[0]["message"]


def test_bad_set_yamllint(bad):
    failed = by_node(bad.failed("local_yaml"))
    assert sorted(failed) == ["manifests/broken.yaml", "yaml/bad-style.yml"]
    style = failed["yaml/bad-style.yml"][0]["message"]
    assert 'duplication of key "name" in mapping (key-duplicates)' in style
    assert "trailing spaces (trailing-spaces)" in style
    assert "(syntax)" in failed["manifests/broken.yaml"][0]["message"]
    assert "manifests/pitfalls.yaml" in [c["node"] for c in bad.checks("local_yaml", passed=True)]


def test_bad_set_terraform(bad):
    failed = dict((c["name"], c) for c in bad.failed("local_terraform"))
    assert sorted(failed) == ["terraform_fmt", "terraform_validate"]
    assert failed["terraform_fmt"]["message"].startswith("terraform_fmt: not formatted: main.tf")
    assert "Reference to undeclared input variable (main.tf line 6)" in failed["terraform_validate"]["message"]
    assert not (Path(bad.row("local_terraform")["checks"][0]["node"]) / ".terraform").exists()


def test_bad_set_references(bad):
    failed = by_node(bad.failed("local_references"))
    main = os.path.join("roles", "broken", "tasks", "main.yml")
    template = os.path.join("roles", "broken", "templates", "present.j2")
    site = os.path.join("playbooks", "site.yml")
    assert sorted(failed) == sorted([main, template, site])
    message = failed[main][0]["message"]
    assert failed[main][0]["actual"] == 5
    for ref in ("tasks missing.yml", "template missing.conf.j2", "file missing.txt",
                "role_path {{ role_path }}/files/missing_probe.py", "tasks_from nowhere.yml"):
        assert ref in message
    assert "template also-missing.j2" in failed[template][0]["message"]
    assert "playbook missing-playbook.yml" in failed[site][0]["message"]
    assert "role not_a_role" in failed[site][0]["message"]
    assert os.path.join("roles", "broken", "tasks", "present.yml") in [
        c["node"] for c in bad.checks("local_references", passed=True)]


def test_bad_set_junit(bad):
    junit = (bad.report_dir / "junit.xml").read_text()
    assert 'name="LOCAL Pitfalls"' in junit
    assert "Validation report written to" in bad.output


# ------------------------------------------------------------------------------------------ options


def test_terraform_missing_is_skipped_and_paths_as_a_string(bad_set, tmp_path):
    """-e key=value gives local_checks_paths as the string "[a,b]"; terraform missing is SKIPPED."""
    run = run_local(["--tags", "local_manifests,local_pitfalls,local_terraform",
                     "-e", "local_checks_paths=[manifests/pitfalls.yaml,manifests/unknown-kind.yaml]",
                     "-e", "local_checks_render=false", "-e", "local_checks_project_dir=.",
                     "-e", "local_checks_terraform=/nonexistent/terraform",
                     "-e", "local_checks_terraform_dir=terraform", "-e", "local_checks_unknown_kinds=skip"],
                    tmp_path, cwd=bad_set)
    terraform = run.row("local_terraform")
    assert terraform["status"] == "SKIPPED"
    assert terraform["reason"].startswith("terraform is not installed (/nonexistent/terraform is not on PATH")
    nodes = [c["node"] for c in run.checks("local_manifests")]
    assert len(nodes) == 5 and all(n.startswith("manifests/pitfalls.yaml#") or "FooBar" in n for n in nodes)
    assert run.row("local_manifests")["status"] == "PASS"  # unknown kinds skipped
    assert "not validated (unknown_kinds=skip)" in run.output
    assert run.row("local_shell")["reason"] == "not selected (--tags)"


def test_check_mode(tmp_path):
    run = run_local(["-i", str(INVENTORY), "--check", "--tags", "local_references"], tmp_path)
    assert run.row("local_references")["status"] == "PASS", run.explain()
    assert run.rc == 0


def test_a_crashing_tool_is_evidence_missing_not_a_pass(tmp_path):
    """A linter that prints nothing and exits 1 is recorded as "could not collect the evidence"."""
    run = run_local(["-i", str(INVENTORY), "--tags", "local_shell,local_yaml",
                     "-e", "local_checks_shellcheck=/bin/false", "-e", "local_checks_yamllint=/bin/false"], tmp_path)
    assert run.rc != 0
    for row in ("local_shell", "local_yaml"):
        checks = run.failed(row)
        assert [c["name"] for c in checks] == ["evidence"], run.explain()
        assert checks[0]["evidence_missing"] is True
        assert "could not collect the evidence" in checks[0]["message"]
        assert "run local mode again" in checks[0]["hint"] and "cluster" not in checks[0]["hint"], checks[0]
