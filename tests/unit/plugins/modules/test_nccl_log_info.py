# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rlstack.validation.nccl_log_info run through main(), with the 2.19 patch_module_args context manager."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ansible.module_utils.testing import patch_module_args

from ansible_collections.rlstack.validation.plugins.modules import nccl_log_info

NCCL = Path(__file__).resolve().parents[2] / "fixtures" / "nccl"
GOOD = NCCL / "allreduce-h100-a3mega-2node-16rank-ok.log"
FALLBACK = NCCL / "ofi-plugin-init-failed-socket-fallback-p4d.log"

TOP_LEVEL_KEYS = {
    "tables", "tables_omitted", "peak_busbw", "busbw_at_largest_size", "largest_size", "avg_busbw_reported",
    "wrong_total", "complete", "network", "ofi_provider", "nccl_version", "nccl_tests_version", "nranks",
    "nnodes", "hosts", "signatures", "signature_counts", "signature_ids", "lines", "bytes", "summary",
}


def run(args, capsys):
    """Run the module; return (exit code, result dict printed on stdout)."""
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exc:
            nccl_log_info.main()
    out = capsys.readouterr().out
    return exc.value.code, json.loads(out)


def test_path(capsys):
    code, result = run({"path": str(GOOD)}, capsys)
    assert code == 0
    assert result["changed"] is False and not result.get("failed")
    assert TOP_LEVEL_KEYS <= set(result)
    assert result["peak_busbw"] == 338.82 and result["busbw_at_largest_size"] == 338.82
    assert result["nranks"] == 16 and result["nnodes"] == 2 and result["complete"] is True
    assert result["wrong_total"] == 0 and result["signatures"] == []
    table = result["tables"][0]
    assert table["test"] == "all_reduce_perf" and len(table["rows"]) == 31
    row = table["rows"][-1]
    assert set(row) == {"size", "count", "type", "redop", "root", "out_of_place", "in_place"}
    assert set(row["out_of_place"]) == {"time_us", "algbw", "busbw", "wrong", "error"}
    assert result["summary"].startswith("all_reduce_perf: 16 ranks on 2 nodes")


def test_content_gives_the_same_result_as_path(capsys):
    code, by_path = run({"path": str(FALLBACK)}, capsys)
    assert code == 0
    code, by_content = run({"content": FALLBACK.read_text()}, capsys)
    assert code == 0
    for key in TOP_LEVEL_KEYS:
        assert by_content[key] == by_path[key], key
    assert by_content["network"] == "socket" and by_content["network_raw"] == "Socket"
    assert by_content["signature_ids"] == ["nccl_warn", "ofi_init_failed", "socket_fallback"]
    assert by_content["signatures"][0]["hint"]


def test_raw_log_is_not_returned(capsys):
    code, result = run({"path": str(FALLBACK)}, capsys)
    assert code == 0
    without_invocation = dict(result)
    without_invocation.pop("invocation", None)
    assert len(json.dumps(without_invocation)) < FALLBACK.stat().st_size / 2
    assert all(len(entry["line"]) <= 400 for entry in result["signatures"])


def test_check_mode(capsys):
    code, result = run({"path": str(GOOD), "_ansible_check_mode": True}, capsys)
    assert code == 0 and result["changed"] is False and result["peak_busbw"] == 338.82


@pytest.mark.parametrize("setup,message", [
    (lambda tmp: str(tmp / "missing.log"), "does not exist"),
    (lambda tmp: (tmp / "empty.log").write_bytes(b"") and None or str(tmp / "empty.log"), "is empty"),
    (lambda tmp: (tmp / "core").write_bytes(b"\x7fELF\x00\x00" * 100) and None or str(tmp / "core"), "binary file"),
    (str, "is a directory"),
])
def test_unusable_files_fail_with_one_sentence(tmp_path, capsys, setup, message):
    code, result = run({"path": setup(tmp_path)}, capsys)
    assert code == 1 and result["failed"] is True
    assert message in result["msg"]
    assert result["msg"].endswith(".") and result["msg"].count(". ") == 0
    assert "Traceback" not in json.dumps(result)


@pytest.mark.parametrize("args,message", [
    ({"content": ""}, "empty"),
    ({"content": "a\x00b"}, "binary"),
    ({"path": str(GOOD), "content": "x"}, "mutually exclusive"),
    ({}, "one of the following is required"),
])
def test_bad_arguments(capsys, args, message):
    code, result = run(args, capsys)
    assert code == 1 and result["failed"] is True
    assert message in result["msg"]


def test_content_with_crlf_line_endings(capsys):
    text = gzip.decompress((NCCL / "allreduce-dgxa100-2node-k8s-netop-old-error-column.log.gz").read_bytes()).decode()
    assert "\r\n" in text
    code, result = run({"content": text}, capsys)
    assert code == 0 and result["peak_busbw"] == 188.70 and result["avg_busbw_reported"] == 53.7098
    assert result["tables"][0]["test"] == "all_reduce_perf" and result["tables"][0]["test_inferred"] is True


def test_compressed_file_is_refused_as_binary(capsys):
    code, result = run({"path": str(NCCL / "ofi-cxi-provider-polaris-a100-2node-torch.log.gz")}, capsys)
    assert code == 1 and "binary file" in result["msg"]


def test_log_without_tables(capsys):
    code, result = run({"content": "hello\nworld\n"}, capsys)
    assert code == 0
    assert result["tables"] == [] and result["complete"] is None and result["peak_busbw"] is None
    assert result["summary"] == "no nccl-tests results table"


H200 = NCCL / "nccl-tests-h200"


def test_path_to_a_json_file_from_dash_j_returns_the_tables_of_its_text_twin(capsys):
    """Issue 32: nccl_log_info path=<file written by all_reduce_perf -J> on the real H200 recording."""
    base = "allreduce-1xh200-nccl-tests-2.19.6-plain"
    code, from_json = run({"path": str(H200 / (base + ".json"))}, capsys)
    assert code == 0 and not from_json.get("failed")
    code, from_text = run({"path": str(H200 / (base + ".log"))}, capsys)
    assert code == 0
    assert from_json["results_source"] == "json" and from_text["results_source"] == "text"
    assert len(from_json["tables"]) == len(from_text["tables"]) == 1
    json_rows, text_rows = from_json["tables"][0]["rows"], from_text["tables"][0]["rows"]
    assert [(r["size"], r["count"], r["type"], r["redop"], r["root"]) for r in json_rows] == \
        [(r["size"], r["count"], r["type"], r["redop"], r["root"]) for r in text_rows]
    assert from_json["tables"][0]["test"] == from_text["tables"][0]["test"] == "all_reduce_perf"
    assert from_json["json_text_mismatch"] is None and from_json["complete"] is True


def test_path_to_a_directory_of_json_files(capsys, tmp_path):
    for name in ("allreduce-1xh200-nccl-tests-2.19.6-plain.json", "allgather-1xh200-nccl-tests-2.19.6-debuginfo.json"):
        (tmp_path / name).write_bytes((H200 / name).read_bytes())
    code, result = run({"path": str(tmp_path)}, capsys)
    assert code == 0
    assert [t["test"] for t in result["tables"]] == ["all_gather_perf", "all_reduce_perf"]
    assert result["json_files"] == sorted(p.name for p in tmp_path.iterdir())


def test_a_broken_json_file_fails_with_one_sentence(capsys, tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"version":3,"results":[')
    code, result = run({"path": str(path)}, capsys)
    assert code == 1 and result["failed"] is True
    assert result["msg"].startswith("The file %s looks like an nccl-tests JSON file (-J)" % path)
    assert "Traceback" not in result["msg"] and result["msg"].count(". ") <= 1
