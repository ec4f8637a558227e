# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/plugin_utils/_lint_files.py: which files are linted, and the real tools' output as findings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils._lint_base import LintError
from ansible_collections.rlstack.validation.plugins.module_utils._manifest_lint import display_path
from ansible_collections.rlstack.validation.plugins.plugin_utils import _lint_files as p


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
                   "terraform": [], "kustomization": []}
    explicit = p.lint_files([str(tmp_path / "skip" / "me.sh")], ["skip"], str(tmp_path), use_git=False)
    assert explicit["shell"] == [str(tmp_path / "skip" / "me.sh")]
    with pytest.raises(LintError):
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
