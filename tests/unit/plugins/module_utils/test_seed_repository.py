# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 31 on the seed repository, aws-samples/sample-rlinf-on-eks at c8b5e3a (tests/local/fixtures/repos, see
SOURCES.md there), linted as local mode lints it: per-file rendering the way the repository renders it
(_render_plan), the shell's own variables never reported as missing, node groups from a NodePool written in
HCL, every ${NAMESPACE} use located, the label error folded into the unset variable, the simulator rule on
LIBERO configs. With no values given, as a new user runs it."""

from __future__ import annotations

import json
import os
import sys

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.lint import _render_plan as rp
from ansible_collections.rlstack.validation.plugins.module_utils.lint._manifest_lint import ManifestLinter, manifest_files
from ansible_collections.rlstack.validation.plugins.plugin_utils import _lint_files, _sarif

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "local"))
from local_helpers import SARIF_SCHEMA, fixture_repo  # noqa: E402 pylint: disable=wrong-import-position

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


# ------------------------------------------------------------------------------------------ _render_plan


def test_calls_of_scripts_docs_and_comments():
    text = ("for cmd in kubectl aws envsubst; do\n"
            "envsubst '${ECR_URI} ${NAMESPACE}' \\\n  < examples/x/job.yaml | kubectl apply -f -\n"
            "rendered=$(envsubst < \"$MANIFEST\")\n"
            "  envsubst < \"${REPO_ROOT}/tests/manifests/step.yaml\" | kubectl apply -n rlinf -f -\n"
            "**Requirements**: `kubectl`, `envsubst`\n"
            "# Render with: envsubst '${NAMESPACE}' | kubectl apply -f -\n")
    assert rp.calls(text) == [(2, ["ECR_URI", "NAMESPACE"], "examples/x/job.yaml"), (4, None, "$MANIFEST"),
                              (5, None, "${REPO_ROOT}/tests/manifests/step.yaml"), (7, ["NAMESPACE"], "")]


def test_plan_maps_each_call_to_its_file():
    manifests = {"examples/x/job.yaml": "# envsubst '${NAMESPACE}' < examples/x/job.yaml | kubectl apply -f -\n",
                 "tests/manifests/step.yaml": "", "infra/manifests/ss.yaml": "#   envsubst < manifests/ss.yaml\n"}
    others = {"README.md": "envsubst < examples/x/job.yaml | kubectl apply -f -\n",
              "tests/lib/c.sh": "envsubst < \"${REPO_ROOT}/tests/manifests/step.yaml\" | kubectl apply -f -\n"
                                "envsubst < \"$MANIFEST\"\n"}
    plan = rp.plan(manifests, others)
    assert plan["examples/x/job.yaml"] == [{"file": "examples/x/job.yaml", "line": 1, "names": ["NAMESPACE"]},
                                           {"file": "README.md", "line": 1, "names": None}]
    assert plan["tests/manifests/step.yaml"] == [{"file": "tests/lib/c.sh", "line": 1, "names": None}]
    assert plan["infra/manifests/ss.yaml"] == [{"file": "infra/manifests/ss.yaml", "line": 1, "names": None}]
    assert rp.render_of(plan["examples/x/job.yaml"]) == (["NAMESPACE"], [{"file": "README.md", "line": 1,
                                                                          "names": None}])
    assert rp.render_of([]) == (None, [])


def test_shell_names_are_the_scripts_and_the_envs_own():
    docs = [{"kind": "Job", "spec": {"template": {"spec": {"containers": [{
        "command": ["bash", "-c", "# export NAMESPACE=rlinf (a usage comment)\nORDINAL=${HOSTNAME##*-}\n"
                    "download() {\n  local model_id=$1\n}\nfor f in a b; do echo $f; done\nread -r answer\n"],
        "env": [{"name": "NUM_NODES", "value": "2"}, {"name": "IMAGE", "value": "${ECR_URI}"},
                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]}]}}}}]
    assert rp.shell_names(docs) == {"ORDINAL", "model_id", "f", "answer", "NUM_NODES", "POD_NAMESPACE"}


# ------------------------------------------------------------------------------------------ the seed repository


@pytest.fixture(scope="module")
def seed():
    return str(fixture_repo("sample-rlinf-on-eks"))


def lint_seed(seed, values=None):
    files = _lint_files.lint_files([seed], (), seed, use_git=False)
    linter = ManifestLinter(None, {}, "skip", values=values or {}, base=seed)
    yaml_files = manifest_files(files["yaml"])
    linter.read_render_plan(yaml_files, files["shell"] + files["docs"])
    linter.collect_node_groups(yaml_files, files["terraform"])
    for path in yaml_files:
        linter.lint_file(path)
    return linter.finish()


def by_rule(findings, rule):
    return [f for f in findings if f["rule"] == rule]


def test_seed_no_node_selector_false_alarm(seed):
    """The GPU NodePool is HCL (workloads/main.tf): node-role=gpu-training and p5en.48xlarge are its; the five
    manifests selecting role=gpu-training select a label no node group sets (a true finding: they stay Pending)."""
    selectors = by_rule(lint_seed(seed), "node_selector")
    assert sorted(f["file"] for f in selectors) == [
        "infrastructure/manifests/nccl-tests-mpijob.yaml", "infrastructure/manifests/smoke-test.yaml",
        "infrastructure/manifests/topology-labeler.yaml", "infrastructure/manifests/training-statefulset.yaml",
        "tests/manifests/training-step-test.yaml"]
    assert all("selects role=gpu-training" in f["message"] for f in selectors)


def test_seed_shell_variables_are_never_missing(seed):
    findings = lint_seed(seed)
    unset = sorted(f["path"] for f in by_rule(findings, "unset_variable"))
    # what the repository's own calls leave to envsubst and nobody gave a value
    assert unset == ["CKPT_PATH", "ECR_URI", "LORA_PATH", "NAMESPACE", "S3_BUCKET"]
    # what tests/lib/cluster.sh sets itself before its own envsubst calls (from terraform outputs, a default, its
    # loop over the example configs): the script's values, unknown here, never "give it a value"; ECR_URI is both:
    # the README's calls (the user's) need it, the test script computes it for the files it renders
    unknown = dict((f["path"], f) for f in by_rule(findings, "unknown_value"))
    assert sorted(unknown) == ["CONFIG_NAME", "ECR_URI", "EXAMPLE_NAME", "MODEL_PATH", "NCCL_TEST_IMAGE", "VENV_NAME"]
    assert "tests/lib/cluster.sh:485" in unknown["EXAMPLE_NAME"]["message"]
    assert all(f["severity"] == "info" for f in unknown.values())
    for shell in ("ORDINAL", "HEAD_ADDR", "model_id", "target_dir", "repo_id", "DREAMZERO_PATH", "PYTHONPATH"):
        assert shell not in unset
    clobbers = dict((f["file"], f) for f in by_rule(findings, "envsubst_clobbers"))
    # the StatefulSet is rendered with plain envsubst by its own comment and tests/lib/cluster.sh:564: the Ray
    # head election's ${ORDINAL} and ${HEAD_ADDR} are emptied; the fix is the restricted call, not a value
    statefulset = clobbers["infrastructure/manifests/training-statefulset.yaml"]
    assert "tests/lib/cluster.sh:564" in statefulset["message"] and "${ORDINAL} (line 93)" in statefulset["message"]
    assert "envsubst '${A} ${B}'" in statefulset["fix"]
    # the LIBERO download Job's own usage line (unrestricted) contradicts the READMEs' envsubst '${NAMESPACE}'
    libero = clobbers["examples/libero-pi0-ppo/manifests/model-download.yaml"]
    assert (libero["line"], libero["path"]) == (15, "model_id,target_dir")
    assert "examples/libero-pi0-ppo/README.md:100" in libero["message"]
    assert sorted(clobbers) == [
        "examples/dreamzero/manifests/model-download.yaml", "examples/libero-pi0-ppo/manifests/model-download.yaml",
        "examples/maniskill-openvlaoft-ppo/manifests/model-download.yaml",
        "infrastructure/manifests/training-statefulset.yaml", "tests/manifests/training-step-test.yaml"]


def test_seed_every_namespace_use_is_located(seed):
    findings = lint_seed(seed)
    namespace = [f for f in by_rule(findings, "unset_variable") if f["path"] == "NAMESPACE"][0]
    assert len(namespace["uses"]) == 13 and "more)" not in namespace["message"]
    files = set(use["file"] for use in namespace["uses"])
    assert len(files) == 13  # one use per file (issue 31: "the other 12 files show nothing")
    result = [r for r in _sarif.sarif(findings, seed)["runs"][0]["results"]
              if r["ruleId"] == "unset_variable" and "${NAMESPACE}" in r["message"]["text"]][0]
    located = [result["locations"][0]["physicalLocation"]] + [r["physicalLocation"] for r in result["relatedLocations"]]
    assert sorted(loc["artifactLocation"]["uri"] for loc in located) == sorted(files)
    jsonschema = pytest.importorskip("jsonschema")
    with open(str(SARIF_SCHEMA)) as handle:
        schema = json.load(handle)
    log = _sarif.sarif(findings, seed, "1.0.0")
    assert [e.message for e in jsonschema.Draft4Validator(schema).iter_errors(log)] == []  # relatedLocations valid


def test_seed_label_error_is_folded_into_the_unset_variable(seed):
    pytest.importorskip("kubernetes_validate")
    from ansible_collections.rlstack.validation.plugins.module_utils.lint._k8s_schema import SchemaValidator
    files = _lint_files.lint_files([seed], (), seed, use_git=False)
    linter = ManifestLinter(SchemaValidator("1.34", True, {}), {}, "skip", base=seed)
    yaml_files = manifest_files(files["yaml"])
    linter.read_render_plan(yaml_files, files["shell"] + files["docs"])
    for path in yaml_files:
        linter.lint_file(path)
    findings = linter.finish()
    assert [f for f in findings if f["rule"] == "schema"] == []  # every ${EXAMPLE_NAME}/${NAMESPACE} error folded


def test_seed_simulator_rule_on_libero_configs(seed):
    notes = dict((f["file"], f) for f in by_rule(lint_seed(seed), "simulator_config"))
    eval_job = notes["examples/dreamzero/manifests/dreamzero-eval.yaml"]
    assert "CONFIG_NAME=libero_spatial_eval_dreamzero_14b" in eval_job["message"]
    # a config name alone: a note to check the image (RLinf's installer may write the config at build time)
    assert eval_job["severity"] == "info"
    assert "tests/manifests/training-step-test.yaml" not in notes  # ${CONFIG_NAME} unrendered: unknown
    rendered = by_rule(lint_seed(seed, {"CONFIG_NAME": "libero_spatial_ppo_openpi_quickstart"}), "simulator_config")
    assert "tests/manifests/training-step-test.yaml" in [f["file"] for f in rendered]


def test_seed_job_retries_on_the_gpu_jobs_without_a_deadline(seed):
    """Every GPU Job of the seed sets backoffLimit; the six training and evaluation Jobs below set no
    activeDeadlineSeconds (true: a hung NCCL or simulator run holds 8 GPUs until deleted); the smoke, container and
    training-step tests set both, and the model downloads request no GPU: no finding."""
    hits = by_rule(lint_seed(seed), "job_retries")
    assert sorted((f["file"], f["line"]) for f in hits) == [
        ("examples/dreamzero/manifests/dreamzero-eval.yaml", 52),
        ("examples/libero-pi0-ppo/manifests/eval-video.yaml", 41),
        ("examples/libero-pi0-ppo/manifests/libero-pi0-ppo.yaml", 30),
        ("examples/maniskill-openvlaoft-ppo/manifests/eval-video.yaml", 51),
        ("examples/maniskill-openvlaoft-ppo/manifests/maniskill-openvlaoft-ppo.yaml", 30),
        ("examples/wan-openvlaoft-grpo/manifests/wan-openvlaoft-grpo.yaml", 12)]
    assert all(f["actual"] == ["activeDeadlineSeconds"] and f["severity"] == "warning" for f in hits)


def test_seed_inline_scripts_all_pass_bash_n(seed):
    """Every `bash -c` script of the seed (rendered as the repository renders it) is valid bash: no false alarm."""
    assert by_rule(lint_seed(seed), "shell_syntax") == []
