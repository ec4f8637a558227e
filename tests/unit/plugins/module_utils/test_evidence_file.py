# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_evidence_file: a record written whole (its directory made, a temporary file renamed over the old one), unchanged
content not written again, check mode writing nothing."""

from __future__ import annotations

import json
import os
import stat

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _evidence_file


def test_a_record_is_written_as_sorted_indented_json_in_a_directory_made_for_it(tmp_path):
    path = tmp_path / "phase0" / "eks-run1.json"
    out = _evidence_file.write(str(path), {"status": "PASS", "fingerprint": {"nccl": "2.27.7"}})
    text = path.read_text()
    assert out == {"changed": True, "path": str(path), "bytes": len(text)}
    assert text == json.dumps({"fingerprint": {"nccl": "2.27.7"}, "status": "PASS"}, indent=4, sort_keys=True) + "\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644 and stat.S_IMODE(os.stat(path.parent).st_mode) & 0o755 == 0o755
    assert os.listdir(path.parent) == ["eks-run1.json"]  # no temporary file left


def test_unchanged_content_is_not_written_again_and_check_mode_writes_nothing(tmp_path):
    path = tmp_path / "baseline" / "eks.json"
    assert _evidence_file.write(str(path), "text as it is\n", check_mode=True)["changed"] is True
    assert not path.parent.exists()
    assert _evidence_file.write(str(path), "text as it is\n", mode=_evidence_file.file_mode("0600"))["changed"] is True
    before = os.stat(path).st_mtime_ns
    assert _evidence_file.write(str(path), "text as it is\n")["changed"] is False
    assert os.stat(path).st_mtime_ns == before and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert _evidence_file.write(str(path), "new\n")["changed"] is True and path.read_text() == "new\n"


def test_a_file_system_refusal_raises_and_leaves_no_temporary_file(tmp_path):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    with pytest.raises(OSError):
        _evidence_file.write(str(blocked / "record.json"), {"a": 1})
    assert _evidence_file.file_mode(0o640) == 0o640 and _evidence_file.file_mode("0640") == 0o640
