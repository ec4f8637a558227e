# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/filter/local_checks.py: every filter is documented (plugins/filter/<name>.yml) and turns the
controller's inputs into what plugin_utils returns."""

from __future__ import annotations

import os
import sys

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.rlstack.validation.plugins.filter import local_checks as f

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))


@pytest.mark.parametrize("name", sorted(f.FilterModule().filters()))
def test_every_filter_is_documented(name):
    path = os.path.join(ROOT, "plugins", "filter", name + ".yml")
    with open(path) as handle:
        doc = yaml.safe_load(handle)
    assert doc["DOCUMENTATION"]["name"] == name
    assert "_input" in doc["DOCUMENTATION"]["options"]
    assert "rlstack.validation." + name in doc["EXAMPLES"]
    assert doc["RETURN"]["_value"]["type"]


def test_wrappers(tmp_path):
    (tmp_path / "a.sh").write_text("echo\n")
    (tmp_path / "m.tf").write_text("")
    files = f.local_lint_files([str(tmp_path)], [], str(tmp_path))
    assert files["shell"] == [str(tmp_path / "a.sh")] and files["terraform"] == [str(tmp_path / "m.tf")]
    assert f.terraform_root_modules(files["terraform"], str(tmp_path)) == [str(tmp_path)]
    assert f.local_display_path(str(tmp_path / "a.sh"), str(tmp_path)) == "a.sh"
    assert f.local_which(sys.executable) == sys.executable and f.local_which("") == ""
    with pytest.raises(AnsibleFilterError, match="does not exist"):
        f.local_lint_files([str(tmp_path / "nope")])
    with pytest.raises(AnsibleFilterError, match="no JSON"):
        f.shellcheck_checks("", [])
    assert f.local_summary([]).endswith("none")
    assert f.local_sarif([])["runs"][0]["results"] == []
    assert f.local_nodes(1, "p5.48xlarge", {"gpu_count": 8})[0]["gpus"] == 8
