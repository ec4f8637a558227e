# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_envsubst, _yaml_marks and _manifest_lint: rendering with the user's values, line marks, anchors, and
linting the real manifests of tests/local/fixtures with file:line for every finding."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.lint import _envsubst as e
from ansible_collections.rlstack.validation.plugins.module_utils.lint import _shell_env
from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import LintError
from ansible_collections.rlstack.validation.plugins.module_utils.lint._manifest_lint import (
    ManifestLinter, is_envsubst_template, manifest_files)
from ansible_collections.rlstack.validation.plugins.module_utils.lint._yaml_marks import line_of, load_all

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "local"))
from local_helpers import real_repos  # noqa: E402 pylint: disable=wrong-import-position

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
FIXTURES = str(real_repos())
FSDP_DIR = os.path.join(FIXTURES, "awsome-distributed-training", "3.test_cases", "pytorch", "FSDP", "kubernetes")


# ------------------------------------------------------------------------------------------ envsubst


def test_unrestricted_defaults_and_unset():
    text = "a: $A\nb: ${B}\nc: ${C:-dflt}\nd: ${D-dflt}\ne: ${E:+alt}\nf: $NOPE and ${NOPE}\n"
    out, unset = e.substitute(text, {"A": "1", "B": "2", "D": "", "E": "x"})
    assert out == "a: 1\nb: 2\nc: dflt\nd: \ne: alt\nf: $NOPE and ${NOPE}\n"
    assert unset == {"NOPE": [6]}


def test_restricted_form_leaves_the_rest_alone():
    only = e.shell_format_names("'${IMAGE_URI} ${NUM_NODES}'")
    assert only == ["IMAGE_URI", "NUM_NODES"]
    out, unset = e.substitute("image: ${IMAGE_URI}\nargs: [\"$HOSTNAME\"]\nn: $NUM_NODES\n", {"IMAGE_URI": "img:1"}, only)
    assert out == "image: img:1\nargs: [\"$HOSTNAME\"]\nn: $NUM_NODES\n"
    assert unset == {"NUM_NODES": [3]}
    assert e.shell_format_names(["A", "$B"]) == ["A", "B"] and e.shell_format_names("") is None
    with pytest.raises(LintError):
        e.shell_format_names(["1A"])


def test_comment_lines_are_not_reported():
    _out, unset = e.substitute("#  value: $FI_PROVIDER\nx: $Y\n", {})
    assert unset == {"Y": [2]}


def test_env_file():
    values, unknown, missing = _shell_env.read(
        "# comment\nexport IMAGE_URI='1234.dkr.ecr.us-east-1.amazonaws.com/fsdp:pytorch2.5'\n"
        "NUM_NODES=2 # two p5\n\nHF_TOKEN=\"hf_x\"\nthis is a command, not run\n")
    assert values == {"IMAGE_URI": "1234.dkr.ecr.us-east-1.amazonaws.com/fsdp:pytorch2.5", "NUM_NODES": "2",
                      "HF_TOKEN": "hf_x"}
    assert unknown == {} and missing == {}


def test_exported_variables_render_and_values_win():
    """export ECR_URI=... as the seed's READMEs say is honoured (issue 28 item 6); --values, then --set win."""
    values = e.merged_values({"ECR_URI": "env/img", "NAMESPACE": "env-ns", "TAG": "env"},
                             {"NAMESPACE": "file-ns", "TAG": "file"}, {"TAG": "set"})
    assert values == {"ECR_URI": "env/img", "NAMESPACE": "file-ns", "TAG": "set"}
    out, unset = e.substitute("image: ${ECR_URI}:${TAG}\nnamespace: ${NAMESPACE}\n", values)
    assert out == "image: env/img:set\nnamespace: file-ns\n" and unset == {}
    assert e.merged_values(None, None, None) == {}


def test_which_files_are_templates():
    with open(os.path.join(FSDP_DIR, "llama3_1_8b-fsdp.yaml")) as handle:
        assert is_envsubst_template(handle.read(), "auto")  # ${IMAGE_URI} image, $NUM_NODES replicas
    nccl = os.path.join(FIXTURES, "awsome-distributed-training", "micro-benchmarks", "nccl-tests", "kubernetes",
                        "nccl-tests.yaml")
    with open(nccl) as handle:
        text = handle.read()
    assert not is_envsubst_template(text, "auto")  # $PATH only in env values; applied with kubectl apply -f
    assert is_envsubst_template(text, "all") and not is_envsubst_template(text, "off")


# ------------------------------------------------------------------------------------------ marks


def test_marks_and_anchors():
    text = "base: &b\n  image: x:latest\n  env: [1]\njob:\n  <<: *b\n  name: j\nalias: *b\n"
    [(doc, marks, first)] = load_all(text)
    assert doc["job"]["image"] == "x:latest" and doc["alias"]["env"] == [1]
    assert marks[("base", "image")] == (2, 3)
    assert line_of(marks, ("job", "image")) == (2, 3)  # merged from the anchor: where it is written
    assert line_of(marks, ("job", "name")) == (6, 3)
    assert line_of(marks, ("nothing", "here"), first) == (1, 0)
    with pytest.raises(LintError, match="not valid YAML"):
        load_all("a: [b\n", "x.yaml")


# ------------------------------------------------------------------------------------------ the linter on real files


@pytest.fixture(scope="module")
def validator():
    pytest.importorskip("kubernetes_validate")
    from ansible_collections.rlstack.validation.plugins.module_utils.lint._k8s_schema import SchemaValidator, load_schema_file
    schema = load_schema_file(os.path.join(ROOT, "roles", "local_checks", "files", "mpijob-v2beta1-schema.json"))
    return SchemaValidator("1.34", True, {("kubeflow.org/v2beta1", "MPIJob"): schema})


def lint(paths, validator, **kwargs):
    linter = ManifestLinter(validator, {}, kwargs.pop("unknown_kinds", "skip"), base=FIXTURES, **kwargs)
    for path in manifest_files(paths):
        linter.lint_file(path)
    return linter, linter.finish()


def test_every_finding_has_file_and_line(validator):
    linter, findings = lint([FIXTURES], validator)
    assert findings
    assert [f for f in findings if not f["file"] or not f["line"]] == []
    # discovery by content: the eksctl ClusterConfig and the README are not manifests, the terraform dir has none
    assert not [f for f in linter.files if "eks-p5-odcr-vpc" in f or f.endswith(".md")]


def test_unset_variables_are_one_finding_each_with_every_use(validator):
    _linter, findings = lint([FSDP_DIR], validator)
    unset = dict((f["path"], f) for f in findings if f["rule"] == "unset_variable")
    assert sorted(unset) == ["EFA_PER_NODE", "GPU_PER_NODE", "HF_TOKEN", "IMAGE_URI", "INSTANCE_TYPE", "NUM_NODES"]
    assert unset["IMAGE_URI"]["message"].count("llama3_1_8b-fsdp.yaml:38") == 1
    # INSTANCE_TYPE is used in the HyperPod job's affinity, and only on comment lines of the others
    assert "llama3_1_8b-fsdp-hpto.yaml:55" in unset["INSTANCE_TYPE"]["message"]
    assert "llama3_1_8b-fsdp.yaml:35" not in unset["INSTANCE_TYPE"]["message"]
    # schema errors on the unrendered $NUM_NODES / $GPU_PER_NODE are folded into those findings
    assert [f for f in findings if f["rule"] == "schema"] == []


def test_rendering_with_values_changes_what_the_rules_see(validator, tmp_path):
    target = tmp_path / "repo"
    shutil.copytree(FSDP_DIR, str(target))
    values = {"IMAGE_URI": "1234.dkr.ecr.us-east-1.amazonaws.com/fsdp:latest", "NUM_NODES": "2", "GPU_PER_NODE": "8",
              "EFA_PER_NODE": "32", "HF_TOKEN": "hf_x"}
    linter = ManifestLinter(validator, {}, "skip", values=values, base=str(target))
    linter.lint_file(str(target / "llama3_1_8b-fsdp.yaml"))
    findings = linter.finish()
    assert [f for f in findings if f["rule"] == "unset_variable"] == []
    latest = [f for f in findings if f["rule"] == "image_tag"]
    assert latest and latest[0]["line"] == 38 and "tag latest" in latest[0]["message"]
    only = ManifestLinter(validator, {}, "skip", values=values, envsubst_vars="${IMAGE_URI}", base=str(target))
    only.lint_file(str(target / "llama3_1_8b-fsdp.yaml"))
    assert sorted(f["path"] for f in only.finish() if f["rule"] == "unset_variable") == []


def test_schema_errors_have_lines(validator, tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  backoffLimit: zero\n"
                    "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n"
                    "        image: busybox:1.36\n        imagePullPolicyy: IfNotPresent\n")
    linter = ManifestLinter(validator, {}, "fail", base=str(tmp_path))
    linter.lint_file(str(path))
    schema = sorted((f["line"], f["column"]) for f in linter.finish() if f["rule"] == "schema")
    assert schema == [(6, 3), (11, 9)]  # backoffLimit; the container with the unknown field


def test_helm_templates_and_broken_yaml(validator, tmp_path):
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates" / "job.yaml").write_text("apiVersion: batch/v1\nkind: Job\n{{ .Values.x }}\n")
    (tmp_path / "broken.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: [a\n")
    linter = ManifestLinter(validator, {}, "fail", base=str(tmp_path))
    for path in manifest_files([str(tmp_path)]):
        linter.lint_file(path)
    assert linter.skipped == [(os.path.join("chart", "templates", "job.yaml"),
                               "a Helm chart template (render it with helm template first)")]
    helm, broken = sorted(linter.finish(), key=lambda f: f["rule"])
    # listed, never skipped in silence (issue 31): a note, not a failure
    assert (helm["rule"], helm["severity"], helm["file"]) == ("not_checked", "info",
                                                              os.path.join("chart", "templates", "job.yaml"))
    assert broken["rule"] == "yaml" and broken["file"] == "broken.yaml" and broken["line"] == 3
