# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 31: manifests found by content whatever the file is called, manifests in heredocs of shell scripts
and Terraform (each finding at the line of the file the user edits), files that cannot be read listed as
not_checked; the seed repository's Terraform local-exec heredoc."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.lint import _k8s_schema
from ansible_collections.rlstack.validation.plugins.module_utils.lint import _manifest_sources as ms

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "local"))
from local_helpers import fixture_repo, lint_repository  # noqa: E402 pylint: disable=wrong-import-position

LAUNCH = """#!/bin/bash
set -euo pipefail
NAMESPACE=${NAMESPACE:-training}
GPUS=8
cat <<EOF | kubectl apply -f -
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ${NAMESPACE}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: ${IMAGE}
          command: ["bash", "-c", "torchrun train.py --rdzv-id \\$HOSTNAME"]
          resources:
            limits:
              nvidia.com/gpu: ${GPUS}
EOF
kubectl apply -f - <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: probe
spec:
  containers:
    - name: c
      image: busybox:latest
      command: ["sh", "-c", "echo $HOSTNAME"]
EOF
cat <<EOF
usage: launch.sh (not a manifest)
EOF
"""

TERRAFORM = """resource "kubectl_manifest" "job" {
  yaml_body = <<-YAML
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: tf-job
    spec:
      backoffLimit: ${var.retries}
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: ${var.image}
              imagePullPolicy: Always
  YAML
}
"""

JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: tmpl
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: nginx
"""


@pytest.fixture(scope="module")
def validator():
    return _k8s_schema.SchemaValidator("1.34", True, {})


def test_looks_like_manifest_and_templates():
    assert ms.looks_like_manifest(JOB)
    assert not ms.looks_like_manifest("kind: of words\napiVersion is a word\n")
    assert ms.template_reason("name: {{ .Values.name }}\n").startswith("a Jinja or Go template")
    assert ms.template_reason("{% if x %}\n")
    assert ms.template_reason("a: %{ if var.x }b%{ endif }\n", terraform=True).startswith("a Terraform template")
    assert ms.template_reason("image: ${IMAGE}\n") == ""


def test_shell_heredocs_quoting_and_lines():
    found = ms.shell_heredocs(LAUNCH)
    assert [(s["line"], s["quoted"]) for s in found] == [(6, False), (24, True), (35, False)]
    assert [s["line"] for s in ms.manifest_segments(LAUNCH, "shell")] == [6, 24]
    # a here-string and a comment open nothing; <<- strips leading tabs
    assert ms.shell_heredocs("read -r a <<< \"$x\"\n# cat <<EOF\n") == []
    [tabbed] = ms.shell_heredocs("kubectl apply -f - <<-EOF\n\tapiVersion: v1\n\tkind: Pod\n\tEOF\n")
    assert tabbed["text"] == "apiVersion: v1\nkind: Pod\n"
    assert ms.envsubst_names("envsubst '${A} ${B}' <<EOF | kubectl apply -f -") == ["A", "B"]
    assert ms.envsubst_names("envsubst <<EOF | kubectl apply -f -") is None
    assert ms.envsubst_names("cat <<EOF | kubectl apply -f -") is False


def test_terraform_heredocs_dedent_and_placeholders():
    [segment] = ms.terraform_heredocs(TERRAFORM)
    assert (segment["line"], segment["column"], segment["origin"]) == (3, 4, "terraform")
    text, names = ms.terraform_placeholders(segment["text"] + "x: $${literal}\n")
    assert names == ["TF_var_retries", "TF_var_image"] and "${literal}" in text


def test_repository_with_heredocs_and_templates(tmp_path, validator):
    (tmp_path / "deploy").mkdir()
    (tmp_path / "infra").mkdir()
    (tmp_path / "deploy" / "launch.sh").write_text(LAUNCH)
    (tmp_path / "infra" / "main.tf").write_text(TERRAFORM)
    (tmp_path / "deploy" / "job.yaml-template").write_text(JOB)
    (tmp_path / "deploy" / "pod.tpl").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.name }}\n")
    (tmp_path / "deploy" / "broken.yaml.in").write_text("apiVersion: v1\nkind: Pod\nmetadata: [\n")
    findings = lint_repository(tmp_path, validator=validator)
    got = sorted((f["file"], f["line"], f["rule"]) for f in findings)
    assert got == [
        ("deploy/broken.yaml.in", 4, "not_checked"),
        ("deploy/job.yaml-template", 11, "image_tag"),
        ("deploy/launch.sh", 11, "job_retries"),        # the Job's spec: at line 11 of the script
        ("deploy/launch.sh", 17, "unset_variable"),     # ${IMAGE}: neither the script nor the user gives it
        ("deploy/launch.sh", 19, "dev_shm"),             # its resources:
        ("deploy/launch.sh", 31, "image_tag"),          # the quoted heredoc's busybox:latest
        ("deploy/pod.tpl", 0, "not_checked"),
        ("infra/main.tf", 15, "image_pull_policy"),     # Terraform's ${var.image} is not a finding
    ]
    by_rule = dict((f["rule"], f) for f in findings)
    # the script's own ${NAMESPACE} (its default) and ${GPUS} are expanded, the quoted heredoc's $HOSTNAME is the
    # container's: only ${IMAGE} is missing; no schema error for ${var.retries} (known at apply time)
    assert by_rule["unset_variable"]["path"] == "IMAGE"
    assert by_rule["image_pull_policy"]["column"] == 15  # the column in main.tf, indentation included
    assert "Jinja or Go template" in [f for f in findings if f["file"] == "deploy/pod.tpl"][0]["message"]
    with_image = lint_repository(tmp_path, values={"IMAGE": "r/x:v1"}, validator=validator)
    assert not [f for f in with_image if f["rule"] == "unset_variable"]


def test_seed_terraform_local_exec_heredoc(validator):
    """aws-samples/sample-rlinf-on-eks infrastructure/addons/main.tf:423: a local-exec command's own
    `kubectl apply -f - <<'EOF'` applies a ServiceMonitor: read at its lines (a kind without a schema here)."""
    findings = lint_repository(fixture_repo("sample-rlinf-on-eks"), validator=validator)
    monitor = [f for f in findings if f["file"] == "infrastructure/addons/main.tf"]
    assert [(f["rule"], f["line"], f["severity"]) for f in monitor] == [("schema_missing", 424, "info")]
    assert "ServiceMonitor/nvidia-dcgm-exporter" in monitor[0]["message"]
    assert not [f for f in findings if f["rule"] in ("not_checked", "schema", "yaml")]
