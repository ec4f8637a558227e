# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/plugin_utils/_lint_files.py: which files are linted, and the real tools' output as findings."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import LintError
from ansible_collections.rlstack.validation.plugins.plugin_utils import _lint_files as p

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "local"))
from local_helpers import real_repos  # noqa: E402 pylint: disable=wrong-import-position


def test_lint_files_walk_prunes_and_excludes(tmp_path):
    for rel in ("run.sh", "lib.bash", "conf.yml", "x.yaml.j2", "skip/me.sh", ".venv-x/y.sh", ".ansible/z.yml",
                "node_modules/a.yml", ".github/workflows/ci.yml"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    found = p.lint_files([str(tmp_path)], ["skip"], str(tmp_path), use_git=False)
    rel = dict((k, sorted(os.path.relpath(f, str(tmp_path)) for f in v)) for k, v in found.items())
    assert rel == {"shell": ["lib.bash", "run.sh"],
                   "yaml": [os.path.join(".github", "workflows", "ci.yml"), "conf.yml"],
                   "terraform": [], "kustomization": [], "docs": [], "manifest_other": [], "script_other": []}
    explicit = p.lint_files([str(tmp_path / "skip" / "me.sh")], ["skip"], str(tmp_path), use_git=False)
    assert explicit["shell"] == [str(tmp_path / "skip" / "me.sh")]
    with pytest.raises(LintError):
        p.lint_files([str(tmp_path / "nope")])


def test_lint_files_finds_manifests_and_scripts_by_content(tmp_path):
    """Issue 31: a manifest is found by what it holds whatever the file is called; a script by its #! line."""
    job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: x\n"
    files = {"job.yaml-template": job, "pod.tpl": job, "job.yaml.j2": job, "job.yaml.in": job, "Jobfile": job,
             "notes.txt": "kind words, no manifest\n", "run": "#!/usr/bin/env bash\necho hi\n",
             "train.py": '"""\n' + job + '"""\n', "README.md": job, "blob.bin": job}
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    (tmp_path / "binary.tpl").write_bytes(b"apiVersion: v1\nkind: Pod\n\0")
    found = p.lint_files([str(tmp_path)], [], str(tmp_path), use_git=False)
    rel = dict((k, sorted(os.path.basename(f) for f in v)) for k, v in found.items())
    assert rel["manifest_other"] == ["Jobfile", "job.yaml-template", "job.yaml.in", "job.yaml.j2", "pod.tpl"]
    assert rel["script_other"] == ["run"]


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


# ------------------------------------------------------------------------------------------ the real tools

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
TF_FIXTURE = os.path.join(str(real_repos()), "awsome-distributed-training", "1.architectures",
                          "5.sagemaker-hyperpod", "terraform-modules", "hyperpod-slurm-tf")


def tool(name):
    found = os.path.join(os.path.dirname(sys.executable), name)
    return found if os.path.exists(found) else shutil.which(name)


def test_shellcheck_from_the_repository_root(tmp_path):
    shellcheck = tool("shellcheck")
    if not shellcheck:
        pytest.skip("shellcheck is not installed")
    (tmp_path / ".shellcheckrc").write_text("disable=SC2034\n")
    (tmp_path / "lib.sh").write_text("#!/bin/bash\nGREETING=hi\n")
    (tmp_path / "run.sh").write_text("#!/bin/bash\n# shellcheck source=lib.sh\nsource ./lib.sh\nunused=1\n"
                                     "cd /tmp\necho $GREETING\n")
    (tmp_path / "ok.sh").write_text("#!/bin/bash\necho ok\n")
    files = [str(tmp_path / n) for n in ("lib.sh", "ok.sh", "run.sh")]
    proc = subprocess.run([shellcheck, "--format=json1", "--external-sources", "--severity=warning",
                           "lib.sh", "ok.sh", "run.sh"], cwd=str(tmp_path), stdout=subprocess.PIPE,
                          universal_newlines=True, check=False)
    checks, findings = p.shellcheck_findings(proc.stdout, files, str(tmp_path))
    # .shellcheckrc applied (SC2034 unused variable gone), the source directive resolved (no SC1091)
    assert [(f["file"], f["line"], f["path"]) for f in findings] == [("run.sh", 5, "SC2164")]
    # shellcheck's warning SC2164 (cd without a check) is an error of the policy: the script goes on elsewhere
    assert findings[0]["column"] == 1 and findings[0]["severity"] == "error"
    assert [(c["node"], c["actual"]) for c in checks] == [("lib.sh", 0), ("ok.sh", 0), ("run.sh:5:1", 1)]
    with pytest.raises(LintError, match="no JSON"):
        p.shellcheck_findings("oops", files)


def test_shellcheck_severity_policy_sc1090_is_a_note(tmp_path):
    """SC1090 (a source path computed at run time) says shellcheck cannot see the file, not that the script
    is wrong: a note, and the file's check passes (issue 31: four of them failed the seed's Shell row)."""
    shellcheck = tool("shellcheck")
    if not shellcheck:
        pytest.skip("shellcheck is not installed")
    (tmp_path / "run.sh").write_text('#!/bin/bash\nset -e\nsource "${ENV_FILE}"\nunused=1\n')
    proc = subprocess.run([shellcheck, "--format=json1", "--external-sources", "--severity=warning", "run.sh"],
                          cwd=str(tmp_path), stdout=subprocess.PIPE, universal_newlines=True, check=False)
    checks, findings = p.shellcheck_findings(proc.stdout, [str(tmp_path / "run.sh")], str(tmp_path))
    assert [(f["path"], f["severity"]) for f in findings] == [("SC1090", "info"), ("SC2034", "warning")]
    assert [(c["node"], c["actual"], c["unit"]) for c in checks] == [("run.sh", 0, "errors (2 warnings or notes)")]


@pytest.mark.parametrize("code, level, expected", [
    ("SC1090", "warning", "info"), ("SC1091", "info", "info"), ("SC2034", "warning", "warning"),
    ("SC1010", "warning", "error"), ("SC1073", "error", "error"), ("SC2086", "info", "info"),
    ("SC2250", "style", "info")])
def test_shellcheck_severity(code, level, expected):
    assert p.shellcheck_severity(code, level) == expected


def test_yamllint_relaxed_default(tmp_path):
    yamllint = tool("yamllint")
    if not yamllint:
        pytest.skip("yamllint is not installed")
    config = os.path.join(ROOT, "roles", "local_checks", "files", "yamllint-relaxed.yml")
    (tmp_path / "a.yml").write_text("a: 1\na: 2\nlong: %s   \n" % ("x" * 300))
    (tmp_path / "b.yml").write_text("b: 1\n")
    proc = subprocess.run([yamllint, "--format", "parsable", "--config-file", config, "a.yml", "b.yml"],
                          cwd=str(tmp_path), stdout=subprocess.PIPE, universal_newlines=True, check=False)
    checks, findings = p.yamllint_findings(proc.stdout, [str(tmp_path / "a.yml"), str(tmp_path / "b.yml")],
                                           str(tmp_path))
    assert [(f["line"], f["severity"], f["path"]) for f in findings] == [
        (2, "error", "key-duplicates"), (3, "warning", "trailing-spaces")]  # no line-length
    assert [(c["node"], c["actual"]) for c in checks] == [("a.yml:2:1", 1), ("b.yml", 0)]


def test_terraform_root_modules_of_a_real_configuration():
    files = [os.path.join(d, f) for d, _s, names in os.walk(TF_FIXTURE) for f in names if f.endswith(".tf")]
    assert p.terraform_root_modules(files, ROOT) == [TF_FIXTURE]  # modules/* are called by main.tf


def test_terraform_offline_init_is_skipped_not_failed(tmp_path):
    terraform = shutil.which("terraform")
    if not terraform:
        pytest.skip("terraform is not installed")
    work = tmp_path / "tf"
    shutil.copytree(TF_FIXTURE, str(work))
    env = dict(os.environ, CHECKPOINT_DISABLE="1", TF_IN_AUTOMATION="1", TF_INPUT="0")

    def run(*args):
        proc = subprocess.run([terraform, "-chdir=%s" % work] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, env=env, check=False, timeout=300)
        return {"item": str(work), "rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}

    fmt = run("fmt", "-check", "-recursive", "-list=true", "-no-color")
    init = run("init", "-backend=false", "-input=false", "-no-color")
    validate = run("validate", "-json", "-no-color") if init["rc"] == 0 else {"item": str(work), "skipped": True}
    checks, findings, skipped = p.terraform_checks([str(work)], str(tmp_path), [fmt], [init], [validate])
    assert checks[0]["name"] == "terraform_fmt" and checks[0]["node"] == "tf"
    if init["rc"] != 0:  # no registry: the module's validate is SKIPPED with the reason, not FAIL
        assert [c["name"] for c in checks] == ["terraform_fmt"]
        assert skipped and "could not download providers" in skipped[0]["why"]
        assert [f["severity"] for f in findings if f["rule"] == "terraform_validate"] == ["info"]
    else:
        assert "terraform_validate" in [c["name"] for c in checks]


def test_terraform_offline_is_detected_once(tmp_path):
    """Issue 31: with no registry, the first module's init fails once; the other modules are not initialised
    (no failing init each) and their validate is SKIPPED with that one reason. The init output is terraform
    1.x's own error for an unreachable registry (as the real-terraform test above gets on this machine)."""
    roots = []
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        roots.append(str(tmp_path / name))
    (tmp_path / "c" / ".terraform").mkdir()  # already initialised: validated in place
    plan = p.terraform_init_plan(roots)
    assert plan == {"first": 0, "rest": [1], "offline": ""}
    error = ("\nError: Failed to query available provider packages\n\nCould not retrieve the list of available "
             "versions for provider hashicorp/aws: could not connect to registry.terraform.io\n")
    first = [{"item": roots[0], "rc": 1, "stdout": "", "stderr": error}]
    plan = p.terraform_init_plan(roots, first)
    assert plan["first"] == 0 and "Failed to query available provider packages" in plan["offline"]
    assert roots[0] in plan["offline"]
    rest = [{"item": r, "skipped": True} for r in roots]
    validate = [{"item": roots[0], "skipped": True}, {"item": roots[1], "skipped": True},
                {"item": roots[2], "rc": 0, "stdout": '{"valid": true, "diagnostics": []}'}]
    checks, findings, skipped = p.terraform_checks(roots, str(tmp_path), [], rest + first, validate, plan["offline"])
    assert [s["module"] for s in skipped] == ["a", "b"]
    assert "could not download providers" in skipped[0]["why"] and "no other module tried" in skipped[1]["why"]
    assert [(c["name"], c["node"]) for c in checks] == [("terraform_validate", "c")]
    assert [f["severity"] for f in findings] == ["info", "info"]
    assert p.terraform_init_plan(roots, [{"item": roots[0], "rc": 0}])["offline"] == ""
