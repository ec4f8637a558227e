# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Local mode end to end (no cluster): on this collection with the sim inventory it must pass (its own
manifests rendered); on the deliberately bad set (tests/local/bad_manifests) and on the real repositories
of tests/local/fixtures, linted as another repository would be (--repo), it must report every finding by
name with file:line, and no false alarm. Each run writes report.json (the rlstack.validation.report
callback), findings.json and local.sarif; the tests read them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from local_helpers import ROOT, real_repos, run_local

INVENTORY = Path(os.environ.get("RLSTACK_LOCAL_TEST_INVENTORY") or ROOT / "inventories" / "sim")
ROWS = ["local_manifests", "local_pitfalls", "local_shell", "local_yaml", "local_terraform", "local_references",
        "local_rendered"]


def inventory_examples():
    """validation_examples of the inventory's group_vars (what L5/L6 would run)."""
    examples = []
    for path in sorted((INVENTORY / "group_vars").rglob("*.yml")):
        data = yaml.safe_load(path.read_text()) or {}
        examples = data.get("validation_examples", examples)
    return examples


# ------------------------------------------------------------------------------------------ the collection


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    report = tmp_path_factory.mktemp("project-report")
    return run_local(["-i", str(INVENTORY)], report)  # report dir through RLSTACK_REPORT_DIR


def findings_of(run):
    return json.loads((run.report_dir / "findings.json").read_text())["findings"]


def test_project_plan_has_every_local_row(project):
    rows = project.cluster["levels"]
    assert [r["id"] for r in rows] == ROWS
    assert {r["level"] for r in rows} == {"LOCAL"}
    orders = [r["order"] for r in rows]
    assert orders == sorted(orders) and orders[0] == -1.0 and orders[-1] < 0
    assert "VALIDATION RESULTS" in project.output and "Findings per rule (error / warning / info):" in project.output


def test_project_rendered_manifests_validate(project):
    row = project.row("local_rendered")
    assert row["status"] == "PASS", project.explain()
    nodes = [c["node"] for c in row["checks"] if c["name"] == "schema"]
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
    assert any(c["node"] == "inventory" and c["name"] == "simulator_config" for c in row["checks"])


def test_project_own_files(project):
    for row in ("local_manifests", "local_pitfalls", "local_references", "local_shell", "local_yaml"):
        assert project.row(row)["status"] in ("PASS", "SKIPPED"), [c["message"] for c in project.failed(row)]
    nodes = [c["node"] for c in project.row("local_references")["checks"]]
    assert os.path.join("roles", "runner", "tasks", "probe_level.yml") in nodes
    assert "validate.sh" in [c["node"] for c in project.row("local_shell")["checks"]]
    yaml_nodes = [c["node"] for c in project.row("local_yaml")["checks"]]
    assert "playbooks/local.yml" in yaml_nodes
    assert not any(n.startswith(("tests/local/bad_manifests", "tests/local/fixtures")) for n in yaml_nodes)
    assert project.row("local_terraform")["reason"] == "no Terraform configuration (*.tf) found"


def test_project_passes_and_writes_sarif(project):
    assert project.rc == 0, project.explain()
    assert project.report["status"] == "PASS"
    sarif = json.loads((project.report_dir / "local.sarif").read_text())
    assert sarif["version"] == "2.1.0"


# ------------------------------------------------------------------------------------------ the bad set


@pytest.fixture(scope="module")
def bad(bad_set, tmp_path_factory):
    """The bad set as another repository through validate.sh --repo (a real run, not --dry-run), from
    inside it. The seed's 600 s deadline floor is pinned; every pitfall is raised to error so that each
    fails a check by name."""
    report = tmp_path_factory.mktemp("bad-report")
    severity = json.dumps({"local_checks_pitfall_severity": dict(
        (rule, "error") for rule in ("image_pull_policy", "image_tag", "dev_shm", "inline_script", "simulator_config"))})
    command = ["bash", str(ROOT / "validate.sh"), "--mode", "local", "--repo", ".", "--report-dir", str(report),
               "--", "-e", "local_checks_min_deadline_s=600", "-e", severity, "-e", "local_checks_unknown_kinds=fail"]
    return run_local([], report, cwd=bad_set, command=command)


def by_node(checks):
    out = {}
    for check in checks:
        out.setdefault(check["node"], []).append(check)
    return out


def test_bad_set_fails_every_row(bad):
    assert bad.rc != 0
    assert bad.report["status"] == "FAIL"
    assert {row: bad.row(row)["status"] for row in ROWS[:-1]} == dict((row, "FAIL") for row in ROWS[:-1]), bad.explain()
    assert bad.row("local_rendered")["status"] == "SKIPPED"
    assert bad.row("local_rendered")["reason"].startswith("opt-in when another repository is linted")


def test_bad_set_pitfalls_with_file_line(bad):
    found = sorted((c["node"], c["name"]) for c in bad.failed("local_pitfalls"))
    job = "manifests/pitfalls.yaml:%s Job/short-deadline"
    train = "manifests/pitfalls.yaml:%s Job/short-deadline container train"
    assert found == sorted([
        (job % "8:3", "deadline"),
        (train % "15:11", "image_pull_policy"),
        (train % "14:11", "image_tag"),
        (train % "16:11", "inline_script"),
        (train % "23:11", "dev_shm"),
        ("manifests/pitfalls.yaml:35:7 Pod/untagged-gpu-pod container probe", "image_tag"),
        ("manifests/pitfalls.yaml:40:7 Pod/untagged-gpu-pod container probe", "dev_shm"),
        ("manifests/pitfalls.yaml:60:11 Job/libero-rollout container rollout", "simulator_config"),
        ("manifests/pitfalls.yaml:80:5 MPIJob/nccl-tests", "deadline"),
        ("manifests/pitfalls.yaml:97:15 MPIJob/nccl-tests container worker", "dev_shm"),
    ]), bad.explain()
    named = dict((c["name"], c) for c in bad.failed("local_pitfalls") if "short-deadline" in c["node"])
    assert named["deadline"]["actual"] == 300 and named["deadline"]["expected"] == 600
    assert "uses the tag latest" in named["image_tag"]["message"] and "imagePullPolicy: Always" in named["image_tag"]["message"]
    assert "control flow (if)" in named["inline_script"]["message"]
    libero = [c for c in bad.failed("local_pitfalls") if c["name"] == "simulator_config"][0]
    assert "imports libero in python -c" in libero["message"] and "/root/.libero/config.yaml" in libero["message"]
    findings = findings_of(bad)
    unset = [f for f in findings if f["rule"] == "unset_variable"]
    assert [(f["path"], f["line"]) for f in unset] == [("NCCL_TEST_IMAGE", 88)]
    assert "used at manifests/pitfalls.yaml:88, manifests/pitfalls.yaml:96" in unset[0]["message"]
    assert [f for f in findings if not f["file"] or not f["line"]] == []


def test_bad_set_schemas(bad):
    failed = by_node(bad.failed("local_manifests"))
    nodes = sorted(failed)
    assert [n for n in nodes if n.startswith("manifests/broken.yaml")] == ["manifests/broken.yaml:6"]
    assert any(n.startswith("manifests/schema.yaml:") and "Job/typo-job" in n for n in nodes)
    assert any("Service/Training-Service" in n for n in nodes)
    assert any("MPIJob/an-mpijob-name-that-is-much-too-long" in n for n in nodes)
    assert any(n.startswith("manifests/unknown-kind.yaml:") and "FooBar" in n for n in nodes)
    messages = " ".join(c["message"] for c in bad.failed("local_manifests"))
    for text in ("spec.backoffLimit: 'zero' is not of type 'integer'", "'imagePullPolicyy' was unexpected",
                 "is not a DNS-1123 label", "'slotsPerWorkers' was unexpected", "worker pod host name",
                 "no schema for example.com/v1 FooBar"):
        assert text in messages, text


def test_bad_set_shellcheck_yamllint_terraform_references(bad):
    shell = sorted(c["node"] for c in bad.failed("local_shell"))
    assert shell[0].startswith("scripts/bad.sh:3:") and len(shell) >= 2
    assert "SC2164" in " ".join(c["unit"] for c in bad.failed("local_shell"))
    yaml_failed = sorted(c["node"] for c in bad.failed("local_yaml"))
    assert "yaml/bad-style.yml:3:1" in yaml_failed  # the duplicated key; trailing spaces are only a warning
    assert any(n.startswith("manifests/broken.yaml:") for n in yaml_failed)
    terraform = dict((c["name"], c) for c in bad.failed("local_terraform"))
    assert sorted(terraform) == ["terraform_fmt", "terraform_validate"], bad.explain()
    assert terraform["terraform_validate"]["node"].startswith("terraform/main.tf:6:")
    refs = sorted(c["node"] for c in bad.failed("local_references"))
    main = os.path.join("roles", "broken", "tasks", "main.yml")
    assert len([n for n in refs if n.startswith(main + ":")]) == 5
    assert any(n.startswith(os.path.join("playbooks", "site.yml") + ":") for n in refs)


def test_bad_set_reports(bad):
    junit = (bad.report_dir / "junit.xml").read_text()
    assert 'name="LOCAL Pitfalls"' in junit
    sarif = json.loads((bad.report_dir / "local.sarif").read_text())
    results = sarif["runs"][0]["results"]
    assert len(results) == len(findings_of(bad))
    assert any(r["ruleId"] == "deadline" and r["level"] == "error" for r in results)


# ------------------------------------------------------------------------------------------ real repositories


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """tests/local/fixtures (aws-samples/awsome-distributed-training and kubeflow/mpi-operator subsets) as
    a user's repository, with the one command of docs/local-mode.md."""
    repo = real_repos()
    report = tmp_path_factory.mktemp("real-report")
    command = [str(ROOT / "rlstack-validate"), "local", ".", "--report-dir", str(report)]
    return run_local([], report, cwd=repo, command=command)


def test_real_repositories_no_false_alarm(real):
    findings = findings_of(real)
    errors = [f for f in findings if f["severity"] == "error"]
    # every error is a real problem the repositories have; none is a pitfall false alarm
    assert set(f["rule"] for f in errors) <= {"shellcheck", "terraform_fmt", "yamllint"}, errors
    for rule in ("simulator_config", "deadline", "node_selector", "toleration", "gpu_efa_request"):
        assert [f for f in findings if f["rule"] == rule] == [], rule
    # the one inline script with control flow is real: the `while true` loop of adt-terraform-eks's burst workload
    inline = [(f["file"], f["object"]) for f in findings if f["rule"] == "inline_script"]
    assert inline == [("adt-terraform-eks/1.architectures/4.amazon-eks/terraform/examples/karpenter-workloads.yaml",
                       "Deployment/karpenter-burst-workload")], inline
    assert [f for f in findings if not f["file"] or not f["line"]] == [f for f in findings
                                                                       if f["rule"] == "terraform_validate"]


def test_real_repositories_expected_findings(real):
    findings = findings_of(real)
    rules = dict((f["rule"], 0) for f in findings)
    for f in findings:
        rules[f["rule"]] += 1
    assert rules.get("image_pull_policy", 0) >= 5  # FSDP Always, pi-intel Always
    latest = [f for f in findings if f["rule"] == "image_tag"]
    assert any("tensorflow-benchmarks:latest" in f["message"] and "Always" in f["message"] for f in latest)
    assert any("untagged" in f["message"] and "mpi-horovod-mnist" in f["message"] for f in latest)
    unset = sorted(f["path"] for f in findings if f["rule"] == "unset_variable")
    assert "IMAGE_URI" in unset and "NUM_NODES" in unset and "PATH" not in unset
    shm = sorted(f["file"] for f in findings if f["rule"] == "dev_shm")
    assert any("raycluster.yaml" in s for s in shm) and not any("fsdp.yaml" in s for s in shm)
    hugepages = sorted(f["file"] for f in findings if f["rule"] == "efa_hugepages")
    assert any(h.endswith("nsight/EKS/fsdp.yaml") for h in hugepages)
    assert not any(h.endswith("nccl-tests/kubernetes/nccl-tests.yaml") for h in hugepages)  # hugepages-2Mi: 5120Mi
    assert all(f["severity"] == "info" for f in findings if f["rule"] == "efa_hugepages")
    terraform = real.row("local_terraform")
    assert terraform["status"] in ("PASS", "FAIL", "SKIPPED"), real.explain()
    tf_nodes = [c["node"] for c in terraform["checks"]]
    assert any(n.endswith("hyperpod-slurm-tf") for n in tf_nodes)  # a root module, not its modules/
    assert not any("/modules/" in n for n in tf_nodes)


# ------------------------------------------------------------------------------------------ options


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


def test_kueue_and_efa_claim_manifests_validate(tmp_path):
    """With a Kueue queue and EFA through DRA (as tasks/nccl_tests.yml decides on a DRA-only cluster), the
    MPIJob (runPolicy.suspend, queue label, worker resourceClaims) and the Jobs (spec.suspend) still pass
    the Kubernetes and MPIJob schemas."""
    run = run_local(["-i", str(INVENTORY), "-e", "validation_kueue_queue=team-a", "-e",
                     '{"runner_efa_request": {"mode": "dra", "device_class": "efa.networking.k8s.aws"}}'], tmp_path)
    row = run.row("local_rendered")
    assert row["status"] == "PASS", run.explain()
    nodes = [c["node"] for c in row["checks"]]
    assert "L3 nccl-tests MPIJob" in nodes and any(n.startswith("L5 train ") for n in nodes)
