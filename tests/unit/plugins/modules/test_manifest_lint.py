# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rlstack.validation.manifest_lint through main(), as Ansible runs it."""

from __future__ import annotations

import json

import pytest
import yaml
from ansible.module_utils.testing import patch_module_args

from ansible_collections.rlstack.validation.plugins.modules import manifest_lint

GOOD_JOB = {
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "default"},
    "spec": {"backoffLimit": 0, "activeDeadlineSeconds": 3600, "template": {"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "main", "image": "registry.example/rl/trainer:2026.11.1", "imagePullPolicy": "IfNotPresent",
                        "command": ["python3", "train.py"],
                        "resources": {"limits": {"nvidia.com/gpu": 8}},
                        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}]}}},
}


def run_module(capsys, args):
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            manifest_lint.main()
    return exc.value.code, json.loads(capsys.readouterr().out)


def failed(checks):
    return sorted({c["name"] for c in checks if c.get("actual") != c.get("expected") and c.get("op", "eq") == "eq"}
                  | {c["name"] for c in checks if c.get("op") == "ge" and c.get("actual", 0) < c.get("expected", 0)})


def test_a_good_job_has_no_pitfall_and_a_valid_schema(capsys):
    rc, out = run_module(capsys, {"manifests": [{"source": "inline", "definition": GOOD_JOB}]})
    assert rc == 0 and out["changed"] is False
    assert out["kubernetes_version"].startswith("1.34")
    assert failed(out["pitfall_checks"]) == []
    assert [c["actual"] for c in out["schema_checks"]] == [0]


def test_every_seed_pitfall_of_a_bad_job_is_reported(capsys):
    bad = json.loads(json.dumps(GOOD_JOB))
    bad["spec"]["activeDeadlineSeconds"] = 300
    container = bad["spec"]["template"]["spec"]["containers"][0]
    container["image"] = "registry.example/rl/trainer:latest"
    container["imagePullPolicy"] = "Always"
    container["volumeMounts"] = []
    bad["spec"]["template"]["spec"]["volumes"] = []
    rc, out = run_module(capsys, {"schema": False, "manifests": [{"source": "bad", "definition": bad}]})
    assert rc == 0
    severity = dict((f["rule"], f["severity"]) for f in out["findings"])
    assert severity == {"deadline": "error", "image_pull_policy": "warning", "image_tag": "warning",
                        "dev_shm": "warning"}
    # only errors fail a check; warnings are findings (console, report, SARIF)
    assert [c["name"] for c in out["pitfall_checks"]] == ["deadline"]
    deadline = out["pitfall_checks"][0]
    assert deadline["actual"] == 300 and deadline["expected"] == 600


def test_severity_is_configurable(capsys):
    bad = json.loads(json.dumps(GOOD_JOB))
    bad["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "Always"
    rc, out = run_module(capsys, {"schema": False, "pitfalls": {"severity": {"image_pull_policy": "error"}},
                                  "manifests": [{"source": "bad", "definition": bad}]})
    assert rc == 0 and [c["name"] for c in out["pitfall_checks"]] == ["image_pull_policy"]
    rc, out = run_module(capsys, {"schema": False, "pitfalls": {"rules": ["deadline"]},
                                  "manifests": [{"source": "bad", "definition": bad}]})
    assert out["findings"] == []


def test_argument_spec_choices_are_the_rule_registry():
    from ansible_collections.rlstack.validation.plugins.module_utils.lint._pitfall_rules import RULE_NAMES
    spec = manifest_lint.argument_spec()["pitfalls"]["options"]["rules"]
    assert spec["choices"] == list(RULE_NAMES)
    documented = yaml.safe_load(manifest_lint.DOCUMENTATION)["options"]["pitfalls"]["suboptions"]["rules"]["choices"]
    assert documented == list(RULE_NAMES)


def test_a_schema_error_names_the_field(capsys):
    broken = json.loads(json.dumps(GOOD_JOB))
    broken["spec"]["backoffLimit"] = "zero"
    rc, out = run_module(capsys, {"manifests": [{"source": "broken", "definition": broken}]})
    assert rc == 0
    check = out["schema_checks"][0]
    assert check["actual"] >= 1 and "backoffLimit" in json.dumps(check)


def test_check_mode_is_supported(capsys):
    rc, out = run_module(capsys, {"_ansible_check_mode": True, "schema": False,
                                  "manifests": [{"source": "inline", "definition": GOOD_JOB}]})
    assert rc == 0 and out["changed"] is False


def test_heredocs_templates_and_a_shell_env_file(capsys, tmp_path):
    """Issue 31 through main(): heredoc_paths, a file found by content, a --values file that is a shell script
    (export, $(...), if) and the .env of the manifest's folder."""
    (tmp_path / "deploy").mkdir()
    script = tmp_path / "deploy" / "launch.sh"
    script.write_text("#!/bin/bash\ncat <<EOF | kubectl apply -f -\napiVersion: v1\nkind: Pod\nmetadata:\n"
                      "  name: p\nspec:\n  containers:\n    - name: c\n      image: ${IMAGE}\nEOF\n")
    template = tmp_path / "deploy" / "pod.yaml-template"
    template.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ name }}\nspec: {}\n")
    (tmp_path / "deploy" / ".env").write_text("export IMAGE=repo/img:$(git rev-parse HEAD)\n")
    values = tmp_path / "values.env"
    values.write_text("source ./lib.sh\nexport NS=team\nif [ -n \"$X\" ]; then\n  export TAG=v2\nfi\n")
    rc, out = run_module(capsys, {"schema": False, "paths": [str(template)], "heredoc_paths": [str(script)],
                                  "base_dir": str(tmp_path), "env_file": str(values)})
    assert rc == 0, out
    found = sorted((f["rule"], f["file"], f["line"]) for f in out["findings"])
    assert found == [("not_checked", "deploy/pod.yaml-template", 0), ("unknown_value", "deploy/launch.sh", 10)]
    assert out["skipped"][0]["file"] == "deploy/pod.yaml-template"
