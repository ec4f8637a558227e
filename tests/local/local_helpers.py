# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers of the local mode tests: run playbooks/local.yml (or validate.sh) in a subprocess and read
the report.json that the rlstack.validation.report callback writes; no cluster needed."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BAD_SET = ROOT / "tests" / "local" / "bad_manifests"
FIXTURES = ROOT / "tests" / "local" / "fixtures"
SARIF_SCHEMA = FIXTURES / "sarif" / "sarif-schema-2.1.0.json"
_REAL_REPOS = None
_REPOS = {}
TIMEOUT_S = 600


def ansible_playbook():
    venv = ROOT / ".venv" / "bin" / "ansible-playbook"
    if venv.exists():
        return str(venv)
    found = shutil.which("ansible-playbook")
    if not found:
        pytest.skip("ansible-playbook is not installed (make venv)")
    return found


def base_env(report_dir=None):
    env = dict(os.environ)
    env["ANSIBLE_CONFIG"] = str(ROOT / "ansible.cfg")
    env["ANSIBLE_NOCOLOR"] = "1"
    env["ANSIBLE_FORCE_COLOR"] = "0"
    env.pop("RLSTACK_REPORT_DIR", None)
    if report_dir is not None:
        env["RLSTACK_REPORT_DIR"] = str(report_dir)
    # the venv's tools (shellcheck, yamllint) first, as `make` does
    env["PATH"] = os.pathsep.join([str(ROOT / ".venv" / "bin"), env.get("PATH", "")])
    return env


class LocalRun:
    """The outcome of one local mode run: rc, output and report.json of the (single) cluster."""

    def __init__(self, proc, report_dir):
        self.rc = proc.returncode
        self.output = proc.stdout
        self.report_dir = Path(report_dir)
        path = self.report_dir / "report.json"
        if not path.exists():
            raise AssertionError("no report.json was written (rc %s):\n%s" % (self.rc, self.output[-6000:]))
        self.report = json.loads(path.read_text())
        self.cluster = self.report["clusters"][0]
        self.rows = dict((row["id"], row) for row in self.cluster["levels"])

    def row(self, row_id):
        return self.rows[row_id]

    def checks(self, row_id, name=None, passed=None):
        out = [c for c in self.rows[row_id]["checks"] if name is None or c["name"] == name]
        return [c for c in out if passed is None or bool(c["passed"]) is passed]

    def failed(self, row_id, name=None):
        return self.checks(row_id, name, passed=False)

    def explain(self):
        return "rc %s\n%s" % (self.rc, self.output[-8000:])


def run_local(args, report_dir, cwd=ROOT, command=None):
    """Run local.yml (or `command`) with args; report.json goes to report_dir through RLSTACK_REPORT_DIR."""
    command = command or [ansible_playbook(), str(ROOT / "playbooks" / "local.yml")]
    proc = subprocess.run(command + list(args), cwd=str(cwd), env=base_env(report_dir), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=TIMEOUT_S, check=False)
    return LocalRun(proc, report_dir)


def real_repos():
    """tests/local/fixtures (real repositories; each file stored with a `.fixture` suffix so that no other
    linter, ansible-test sanity included, reads it) copied once per session to a temporary directory
    without the suffixes; the SARIF schema directory stays out (it is not part of a repository)."""
    global _REAL_REPOS
    if _REAL_REPOS is None:
        dest = Path(tempfile.mkdtemp(prefix="rlstack-real-repos-")) / "repo"
        shutil.copytree(str(FIXTURES), str(dest), ignore=shutil.ignore_patterns("sarif", "repos"))
        for path in sorted(dest.rglob("*.fixture")):
            path.rename(path.with_suffix(""))
        atexit.register(shutil.rmtree, str(dest.parent), True)
        _REAL_REPOS = dest
    return _REAL_REPOS


def fixture_repo(name):
    """tests/local/fixtures/repos/<name>.tar.xz (one whole repository, linted as its own root: see SOURCES.md
    there) unpacked once per session to a temporary directory."""
    if name not in _REPOS:
        top = Path(tempfile.mkdtemp(prefix="rlstack-repo-"))
        with tarfile.open(str(FIXTURES / "repos" / (name + ".tar.xz"))) as archive:
            archive.extractall(str(top), filter="data")
        atexit.register(shutil.rmtree, str(top), True)
        _REPOS[name] = top / name
    return _REPOS[name]


def materialize_bad_set(dest):
    """Copy tests/local/bad_manifests to dest without the .bad suffixes (see its README.md)."""
    shutil.copytree(str(BAD_SET), str(dest))
    for path in sorted(Path(dest).rglob("*.bad")):
        path.rename(path.with_suffix(""))
    return Path(dest)


def lint_repository(root, values=None, environ=None, env_file_text=None, validator=None):
    """Lint a repository the way the manifest_lint module does in local mode (its files by name and by content,
    its scripts' and Terraform's heredocs, the .env of each folder), without Ansible: the findings."""
    # imported here: the playbook tests above need no collection on sys.path
    from ansible_collections.rlstack.validation.plugins.module_utils.lint import _shell_env
    from ansible_collections.rlstack.validation.plugins.module_utils.lint._manifest_lint import (
        ManifestLinter, manifest_files)
    from ansible_collections.rlstack.validation.plugins.plugin_utils import _lint_files

    root = str(root)
    files = _lint_files.lint_files([root], (), root, use_git=False)
    linter = ManifestLinter(validator, {}, "skip", base=root)
    file_values, file_unknown = {}, {}
    if env_file_text is not None:
        file_values, file_unknown, _missing = _shell_env.read(env_file_text, {}, "--values")
    linter.set_value_layers(environ or {}, file_values, file_unknown, values or {})
    yaml_files = manifest_files(files["yaml"] + files["manifest_other"])
    linter.read_render_plan(yaml_files, files["shell"] + files["docs"])
    linter.collect_node_groups(yaml_files, files["terraform"])
    for path in yaml_files:
        linter.lint_file(path)
    for path in files["shell"] + files["script_other"] + files["terraform"]:
        linter.lint_heredocs(path, "terraform" if path.endswith(".tf") else "shell")
    return linter.finish()
