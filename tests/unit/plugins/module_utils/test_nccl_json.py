# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""nccl-tests JSON (-J) next to the text log of the same run, -I/-S tables, and the environment's redaction.

The fixtures in tests/unit/fixtures/nccl/nccl-tests-writer/ are the output of nccl-tests' own printing code
(src/util.cu of v2.19.6) for one run each: stdout (.log) and the -J file (.json); see SOURCES.md there. No
public recorded JSON output of nccl-tests was found.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_json
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_results

REPO = Path(__file__).resolve().parents[4]
WRITER = REPO / "tests" / "unit" / "fixtures" / "nccl" / "nccl-tests-writer"
RUNS = ("plain", "periter", "timestamps")
SECRETS = ("fixture-not-a-real-secret", "AKIAFIXTURENOTAKEY00", "hf_fixture_not_a_token", "fixture-not-a-key",
           "fixture-password")


def files(run):
    base = "allreduce-8gpu-nccl-tests-2.19.6-%s" % run
    return (WRITER / (base + ".log")).read_bytes(), (WRITER / (base + ".json")).read_text()


def launcher_log(run, tag="[1,0]<stdout>:"):
    """What the MPIJob launcher prints: nccl-tests' stdout, then the JSON on one line after the marker
    (roles/runner/files/nccl_tests_json.sh), every line tagged by Open MPI's --tag-output."""
    text, doc = files(run)
    lines = text.decode().splitlines() + ["# " + _nccl_json.JSON_MARKER + doc.replace("\n", "")]
    return "".join(tag + line + "\n" for line in lines).encode()


@pytest.mark.parametrize("run", RUNS)
def test_json_and_text_of_the_same_run_agree(run):
    text_only = _nccl.parse_bytes(files(run)[0])
    both = _nccl.parse_bytes(launcher_log(run))
    assert text_only["results_source"] == "text" and both["results_source"] == "json"
    assert both["json_text_mismatch"] == []
    json_rows, text_rows = both["tables"][0]["rows"], text_only["tables"][0]["rows"]
    assert [r["size"] for r in json_rows] == [r["size"] for r in text_rows] and len(json_rows) == 31
    for a, b in zip(json_rows, text_rows):
        for side in ("out_of_place", "in_place"):
            assert abs(a[side]["busbw"] - b[side]["busbw"]) <= 0.005
            assert a[side]["wrong"] == b[side]["wrong"] == 0
    for key in ("peak_busbw", "busbw_at_largest_size", "largest_size", "wrong_total", "complete"):
        assert both[key] == text_only[key], key
    assert both["tables"][0]["test"] == "all_reduce_perf"
    assert both["avg_busbw_reported"] == pytest.approx(text_only["avg_busbw_reported"], abs=1e-4)
    assert _nccl_results.busbw_at_size(both, 8 << 30) == _nccl_results.busbw_at_size(text_only, 8 << 30) == 338.82


def test_per_iteration_and_timestamp_columns_are_found_by_name():
    plain = _nccl.parse_bytes(files("plain")[0])["tables"][0]["rows"]
    for run in ("periter", "timestamps"):
        rows = _nccl.parse_bytes(files(run)[0])["tables"][0]["rows"]
        assert rows == plain, run


def test_json_facts_and_redacted_environment():
    result = _nccl.parse_bytes(launcher_log("plain"))
    facts = result["nccl_tests_json"]
    assert facts["version"] == 3 and facts["nccl_version"] == "2.27.3"
    assert facts["devices"] == [{"rank": 0, "hostname": "ztan-mig-235z", "device": 0,
                                 "device_info": "NVIDIA H100 80GB HBM3"}]
    assert facts["config"]["per_iter_timing"] is False and facts["config"]["ngpus"] == 8
    assert facts["args"][:3] == ["/opt/nccl-tests/build/all_reduce_perf", "-b", "8"]
    env = dict(entry.split("=", 1) for entry in facts["env"])
    assert env["NCCL_DEBUG"] == "INFO" and env["FI_PROVIDER"] == "efa"
    for name in ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "HF_TOKEN", "WANDB_API_KEY"):
        assert env[name] == "<redacted>", name
    assert env["HTTPS_PROXY"] == "http://user:<redacted>@proxy.example:3128"
    dumped = json.dumps(result)
    for secret in SECRETS:
        assert secret not in dumped, secret
    assert "ztan-mig-235z" in result["hosts"]


def test_a_json_cut_short_falls_back_to_the_text():
    text, doc = files("plain")
    cut = text + ("# " + _nccl_json.JSON_MARKER + doc[: len(doc) // 2] + "\n").encode()
    result = _nccl.parse_bytes(cut)
    assert result["results_source"] == "text" and result["nccl_tests_json"] is None
    assert "not complete or not valid" in result["nccl_tests_json_error"]
    assert result["tables"][0]["rows"][-1]["out_of_place"]["busbw"] == 338.82
    for secret in SECRETS:
        assert secret not in json.dumps(result)


def test_load_tolerates_the_writers_inf_and_nan():
    # src/util.cu jsonDouble: NaN is written as the string "nan", other doubles with %lf (so "inf")
    doc = _nccl_json.load('{"results":[{"size":8,"count":2,"type":"float","redop":"sum","root":"    -1",'
                          '"out_of_place":{"time":1.5,"alg_bw":inf,"bus_bw":"nan","nwrong":null},'
                          '"in_place":null}]}')
    table, facts = _nccl_json.tables_from_json(doc, 7)
    row = table["rows"][0]
    assert row["root"] == -1 and row["in_place"] is None
    assert row["out_of_place"] == {"time_us": 1.5, "algbw": None, "busbw": None, "wrong": None, "error": None}
    assert table["complete"] is False and facts["line_no"] == 7
    with pytest.raises(_nccl_json.NcclTestsJsonError):
        _nccl_json.load("not json")
    with pytest.raises(_nccl_json.NcclTestsJsonError):
        _nccl_json.load('{"version": 3}')


def test_redaction_rules():
    env, omitted = _nccl_json.redact_env(["GITHUB_TOKEN=x", "DB_PASSWORD=y", "MY_PRIVATE_KEY=z", "KEY=k",
                                          "NCCL_SOCKET_IFNAME=eth0", "URL=https://a:b@host/x", "NOEQUALS"])
    assert env == ["GITHUB_TOKEN=<redacted>", "DB_PASSWORD=<redacted>", "MY_PRIVATE_KEY=<redacted>",
                   "KEY=<redacted>", "NCCL_SOCKET_IFNAME=eth0", "URL=https://a:<redacted>@host/x", "NOEQUALS"]
    assert omitted == 0
    assert _nccl_json.redact_env(["A=1"] * 300)[1] == 300 - _nccl_json.MAX_ENV
    assert _nccl_json.redact_args(["--hf-token=abc", "-b", "8"]) == ["--hf-token=<redacted>", "-b", "8"]


def test_the_rank_script_prints_the_json_after_the_marker(tmp_path):
    script = REPO / "roles" / "runner" / "files" / "nccl_tests_json.sh"
    assert "nccl_tests_json.sh" in (REPO / "roles" / "runner" / "templates" / "mpijob.yml.j2").read_text()
    # the script's plumbing (probe -h, pass -J, print the file after the marker, keep the exit status),
    # with a stand-in that replays the writer's own output of one run
    log, doc = (WRITER / "allreduce-8gpu-nccl-tests-2.19.6-plain.log"), (WRITER / "allreduce-8gpu-nccl-tests-2.19.6-plain.json")
    stand_in = tmp_path / "all_reduce_perf"
    stand_in.write_text(
        "#!/bin/sh\n"
        "for a in \"$@\"; do [ \"$a\" = -h ] && { echo '[-J,--output_file <file>]'; exit 0; }; done\n"
        "cat '%s'\n"
        "prev=; for a in \"$@\"; do [ \"$prev\" = -J ] && cp '%s' \"$a\"; prev=$a; done\n"
        "exit 3\n" % (log, doc))
    stand_in.chmod(0o755)
    run = subprocess.run(["/bin/sh", str(script), str(stand_in), "-b", "8"], capture_output=True, check=False)
    assert run.returncode == 3
    result = _nccl.parse_bytes(run.stdout)
    assert result["results_source"] == "json" and result["json_text_mismatch"] == []
    old = tmp_path / "old_perf"                       # nccl-tests before 2.17.3: no -J
    old.write_text("#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -J ] && exit 9; done\ncat '%s'\n" % log)
    old.chmod(0o755)
    run = subprocess.run(["/bin/sh", str(script), str(old), "-b", "8"], capture_output=True, check=False)
    assert run.returncode == 0 and _nccl.parse_bytes(run.stdout)["results_source"] == "text"


RECORDED = REPO / "tests" / "unit" / "fixtures" / "nccl" / "nccl-tests-h200"
RECORDED_RUNS = ("allreduce-1xh200-nccl-tests-2.19.6-plain", "allreduce-1xh200-nccl-tests-2.19.6-periter",
                 "allreduce-1xh200-nccl-tests-2.19.6-timestamps", "allgather-1xh200-nccl-tests-2.19.6-debuginfo")


@pytest.mark.parametrize("base", RECORDED_RUNS)
def test_recorded_h200_json_and_text_of_the_same_run_agree(base):
    """The real nccl-tests on an H200 (SOURCES.md there): the JSON the launcher ships and the text agree."""
    text, doc = (RECORDED / (base + ".log")).read_bytes(), (RECORDED / (base + ".json")).read_text()
    text_only = _nccl.parse_bytes(text)
    lines = text.decode().splitlines() + ["# " + _nccl_json.JSON_MARKER + doc.replace("\n", "")]
    both = _nccl.parse_bytes("".join("[1,0]<stdout>:" + line + "\n" for line in lines).encode())
    assert text_only["results_source"] == "text" and both["results_source"] == "json"
    assert both["json_text_mismatch"] == []
    json_rows, text_rows = both["tables"][0]["rows"], text_only["tables"][0]["rows"]
    sizes = [r["size"] for r in text_rows]
    # all_gather rounds -b 8 on one rank down to 0 bytes (the real tool's first row)
    assert [r["size"] for r in json_rows] == sizes and sizes[0] == (8 if base.startswith("allreduce") else 0)
    assert sizes[-1] == (1 << 30 if base.startswith("allreduce") else 128 << 20)  # -f 4 from 8 B stops under 256M
    for a, b in zip(json_rows, text_rows):
        for side in ("out_of_place", "in_place"):
            assert a[side]["busbw"] == b[side]["busbw"] == 0.0   # one rank
            assert a[side]["wrong"] == b[side]["wrong"] == 0
            assert a[side]["time_us"] == pytest.approx(b[side]["time_us"], abs=0.006)
    for key in ("peak_busbw", "largest_size", "wrong_total", "complete"):
        assert both[key] == text_only[key], key
    assert both["complete"] is True and both["nccl_tests_json"]["nccl_version"] == "2.28.3"
    assert both["nccl_tests_json"]["devices"][0]["device_info"] == "NVIDIA H200"


def test_recorded_h200_debug_log_names_version_network_and_driver():
    from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _fingerprint
    text = (RECORDED / "allgather-1xh200-nccl-tests-2.19.6-debuginfo.log").read_text()
    result = _nccl.parse_bytes(text.encode())
    assert result["nccl_version"] == "2.28.3"
    assert (result["network"], result["network_raw"]) == ("socket", "Socket")
    assert result["tables"][0]["test"] == "all_gather_perf"
    assert _fingerprint.log_versions(text) == {"cuda_driver": "13.0"}


# ------------------------------------------------------------------ standalone -J files (issue 32)


def _agrees(value, printed, width):
    """The text's number is the JSON double as nccl-tests' getFloatStr (src/util.cu:487-491, v2.19.6) prints
    it: the form it picks for the width, within half a unit of its last digit (the JSON keeps 6 decimals)."""
    for decimals in (2, 1, 0):
        if len("%*.*f" % (width, decimals, value)) <= width:
            return abs(value - printed) <= 0.5 * 10 ** -decimals + 1e-9
    decimals = 1 if width >= 7 else 0
    exponent = int(("%.*e" % (decimals, value)).split("e")[1])
    return abs(value - printed) <= 0.5 * 10 ** (exponent - decimals) * (1 + 1e-9)


WIDTHS = {"time_us": 7, "algbw": 6, "busbw": 6}    # src/util.cu:499,502,505 (v2.19.6)


@pytest.mark.parametrize("base", RECORDED_RUNS)
def test_recorded_h200_standalone_json_file_gives_the_text_twins_tables(base):
    """nccl_log_info path=<file written by -J> on the real H200 recording: the same table as its stdout."""
    from_json = _nccl.parse_file(str(RECORDED / (base + ".json")))
    from_text = _nccl.parse_file(str(RECORDED / (base + ".log")))
    assert from_json["results_source"] == "json" and from_text["results_source"] == "text"
    assert len(from_json["tables"]) == len(from_text["tables"]) == 1
    jt, tt = from_json["tables"][0], from_text["tables"][0]
    assert jt["test"] == tt["test"] and jt["complete"] is tt["complete"] is True
    assert len(jt["rows"]) == len(tt["rows"]) > 10
    for a, b in zip(jt["rows"], tt["rows"]):
        for key in ("size", "count", "type", "redop", "root"):
            assert a[key] == b[key], (key, a, b)
        for side in ("out_of_place", "in_place"):
            for key, width in WIDTHS.items():
                assert _agrees(a[side][key], b[side][key], width), (side, key, a[side], b[side])
            assert a[side]["wrong"] == b[side]["wrong"]
    assert _nccl_json.compare_with_text(jt, tt) == []
    for key in ("peak_busbw", "largest_size", "busbw_at_largest_size", "wrong_total", "complete", "nccl_version",
                "hosts"):
        assert from_json[key] == from_text[key], key
    data = (RECORDED / (base + ".json")).read_bytes()
    assert from_json["bytes"] == len(data) and from_json["lines"] == 1
    assert from_json["nccl_tests_json"]["devices"][0]["device_info"] == "NVIDIA H200"


def test_a_directory_of_json_files_gives_one_table_per_file_in_name_order(tmp_path):
    names = sorted(base + ".json" for base in RECORDED_RUNS)
    for name in names:
        (tmp_path / name).write_bytes((RECORDED / name).read_bytes())
    (tmp_path / "notes.txt").write_text("not read")
    result = _nccl.parse_file(str(tmp_path))
    assert result["json_files"] == names
    singles = [_nccl.parse_file(str(RECORDED / name)) for name in names]
    assert result["tables"] == [single["tables"][0] for single in singles]
    assert [t["test"] for t in result["tables"]] == ["all_gather_perf"] + ["all_reduce_perf"] * 3
    assert result["complete"] is True and result["results_source"] == "json"
    assert result["bytes"] == sum(len((RECORDED / name).read_bytes()) for name in names)
    assert result["summary"].startswith("all_reduce_perf, 4 tables")


def test_a_directory_without_json_files_is_one_sentence(tmp_path):
    (tmp_path / "run.log").write_text("hello\n")
    with pytest.raises(_nccl.NcclLogError, match=r"directory without nccl-tests JSON files \(\*\.json\)\.$"):
        _nccl.parse_file(str(tmp_path))


def test_a_cut_short_standalone_json_file_is_one_sentence(tmp_path):
    doc = (RECORDED / (RECORDED_RUNS[0] + ".json")).read_text()
    cut = tmp_path / "results.json"
    cut.write_text(doc[: len(doc) // 2])
    with pytest.raises(_nccl.NcclLogError, match="looks like an nccl-tests JSON file .* not complete or not valid"):
        _nccl.parse_file(str(cut))
    other = tmp_path / "other.json"
    other.write_text('{"version": 3}\n')
    with pytest.raises(_nccl.NcclLogError, match="has no 'results' list"):
        _nccl.parse_file(str(other))


def test_other_json_is_read_as_a_text_log(tmp_path):
    """A structured log whose first line is JSON is not an nccl-tests file: its lines are read as text."""
    log = tmp_path / "pod.log"
    log.write_text('{"level": "info", "msg": "start"}\nh:1:2 [0] NCCL INFO Using network Socket\n')
    result = _nccl.parse_file(str(log))
    assert result["network"] == "socket" and result["tables"] == [] and result["lines"] == 2


def test_a_source_built_json_file_reads_like_the_marker_form():
    """The 8-GPU files of ../nccl-tests-writer (nccl-tests' own writer code, SOURCES.md there)."""
    for run in RUNS:
        standalone = _nccl.parse_file(str(WRITER / ("allreduce-8gpu-nccl-tests-2.19.6-%s.json" % run)))
        marker = _nccl.parse_bytes(launcher_log(run))
        for secret in SECRETS:
            assert secret not in json.dumps(standalone)
        assert standalone["tables"][0]["rows"] == marker["tables"][0]["rows"]
        assert standalone["peak_busbw"] == marker["peak_busbw"] and standalone["wrong_total"] == marker["wrong_total"]
        assert standalone["nccl_tests_json"]["env"] == marker["nccl_tests_json"]["env"]   # redacted the same way
