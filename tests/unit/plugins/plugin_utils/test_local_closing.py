# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/plugin_utils/_local_closing.py: local mode's closing summary and exit code (issue 28 item 6)."""

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.plugin_utils import _local_closing

PLAN = [{"id": "local_shell", "name": "Shell (shellcheck)"}, {"id": "local_pitfalls", "name": "Pitfalls"}]


def test_findings_and_a_failed_row_give_exit_2_and_say_where_the_files_are():
    findings = [{"rule": "shellcheck", "severity": "error"}, {"rule": "shellcheck", "severity": "info"},
                {"rule": "image_tag", "severity": "warning"}, {"rule": "image_tag", "severity": "warning"}]
    out = _local_closing.closing(findings, PLAN, ["local_shell"], "/tmp/lint", "/src/repo")
    assert out["exit_code"] == 2
    lines = out["text"].splitlines()
    assert lines[0] == "LOCAL MODE SUMMARY: /src/repo"
    assert lines[1] == "  1 errors, 2 warnings, 1 notes"
    assert lines[3].split() == ["shellcheck", "1", "0", "1"] and lines[4].split() == ["image_tag", "0", "2", "0"]
    assert "  findings.json: /tmp/lint/findings.json" in lines
    assert any(line.startswith("  local.sarif:   /tmp/lint/local.sarif") for line in lines)
    assert lines[-1].startswith("  exit code 2: Shell (shellcheck) failed")


def test_warnings_only_exit_0_and_no_report_dir_is_said():
    out = _local_closing.closing([{"rule": "image_tag", "severity": "warning"}], PLAN, [], "", "")
    assert out["exit_code"] == 0
    assert "give --report-dir DIR" in out["text"]
    assert out["text"].splitlines()[-1] == "  exit code 0: no check failed (the warnings and notes above do not fail a run)"


def test_nothing_found():
    out = _local_closing.closing([], PLAN, [], "/r", "")
    assert out["exit_code"] == 0 and out["text"].splitlines()[1] == "  0 errors, 0 warnings, 0 notes"
    assert out["text"].splitlines()[-1] == "  exit code 0: no check failed"
