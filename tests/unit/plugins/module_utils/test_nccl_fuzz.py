# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Property tests: mutated and random logs never make the parser raise, and results keep their shape.

Mutations of the real fixtures: dropped, duplicated and swapped lines, random bytes, truncation,
byte flips and interleaving with another fixture; plus random bytes and random mixes of table,
INFO and WARN lines under random prefixes. The result must also not depend on how the bytes
are chunked. Example counts stay modest (200 per test) so that the unit test run stays fast.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_catalog
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_parser
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_results
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_signatures

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
LOGS = sorted((FIXTURES / "nccl").glob("*.log*")) + [
    FIXTURES / "recorded" / "h200x2" / "torch-allreduce-2xh200-nvlink-nccl-info.log"]
LINES = [(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()).split(b"\n")
         for path in LOGS]

# NCCL_FUZZ_EXAMPLES=5000 for a longer soak run by hand
FUZZ = settings(max_examples=int(os.environ.get("NCCL_FUZZ_EXAMPLES", "200")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TOP_KEYS = {
    "tables", "tables_omitted", "peak_busbw", "busbw_at_largest_size", "largest_size", "avg_busbw_reported",
    "wrong_total", "complete", "network", "ofi_provider", "nccl_version", "nccl_tests_version", "nranks",
    "nnodes", "hosts", "signatures", "signature_counts", "signature_ids", "lines", "bytes", "summary",
    "network_raw", "ofi_fabric", "ofi_nics", "ofi_nics_by_host", "ofi_protocol", "ofi_protocol_source",
    "ofi_no_eligible_providers", "gdrdma", "hosts_without_gdrdma",
    "results_source", "nccl_tests_json", "nccl_tests_json_error", "json_text_mismatch",
}
TABLE_KEYS = {"test", "test_inferred", "rows", "avg_busbw", "oob_values", "oob_status", "complete", "line_no",
              "rows_omitted"}
ROW_KEYS = {"size", "count", "type", "redop", "root", "out_of_place", "in_place"}
SIDE_KEYS = {"time_us", "algbw", "busbw", "wrong", "error"}


def _number_or_none(value):
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))


def check_shape(result, data):
    assert set(result) == TOP_KEYS
    assert result["bytes"] == len(data)
    assert result["lines"] == data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    assert isinstance(result["summary"], str) and "\n" not in result["summary"]
    assert (result["complete"] is None) == (not result["tables"])
    busbws = []
    for table in result["tables"]:
        assert set(table) == TABLE_KEYS
        assert table["complete"] in (True, False)
        assert table["test"] is None or table["test"].endswith("_perf")
        assert 1 <= table["line_no"] <= result["lines"]
        for row in table["rows"]:
            assert set(row) == ROW_KEYS
            assert isinstance(row["size"], int) and row["size"] >= 0
            assert isinstance(row["count"], int) and isinstance(row["type"], str)
            assert row["root"] is None or isinstance(row["root"], int)
            assert set(row["out_of_place"]) == SIDE_KEYS
            for side in (row["out_of_place"], row["in_place"]):
                if side is None:
                    continue
                assert set(side) == SIDE_KEYS
                assert all(_number_or_none(side[key]) for key in SIDE_KEYS)
                assert side["wrong"] is None or (isinstance(side["wrong"], int) and side["wrong"] >= 0)
                if side["busbw"] is not None:
                    busbws.append(side["busbw"])
    if not result["tables_omitted"]:
        assert result["peak_busbw"] == (max(busbws) if busbws else None)
    for key in ("peak_busbw", "busbw_at_largest_size", "avg_busbw_reported"):
        assert _number_or_none(result[key])
    assert result["wrong_total"] is None or result["wrong_total"] >= 0
    for key in ("nranks", "nnodes"):
        assert result[key] is None or (isinstance(result[key], int) and result[key] >= 0)
    per_id = {}
    for entry in result["signatures"]:
        assert set(entry) == {"id", "line_no", "line", "hint", "time", "source"}
        assert entry["id"] in _nccl_catalog.SIGNATURE_IDS
        assert 1 <= entry["line_no"] <= result["lines"]
        assert len(entry["line"]) <= _nccl_signatures.MAX_LINE_CHARS
        per_id[entry["id"]] = per_id.get(entry["id"], 0) + 1
    for sig_id, count in per_id.items():
        assert count <= _nccl_signatures.MAX_SIGNATURES_PER_ID
        assert result["signature_counts"][sig_id] >= count
    assert result["signature_ids"] == [i for i in _nccl_catalog.SIGNATURE_IDS if i in result["signature_counts"]]
    assert result["hosts"] == sorted(set(result["hosts"]))
    json.dumps(result, allow_nan=False)


def parse_in_chunks(data, size):
    parser = _nccl_parser.NcclLogParser()
    for offset in range(0, len(data), size):
        parser.feed(data[offset:offset + size])
    return parser.close()


@st.composite
def mutated_logs(draw):
    lines = list(LINES[draw(st.integers(0, len(LINES) - 1))])
    for _step in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["drop", "dup", "swap", "bytes", "interleave", "flip"]))
        if not lines:
            break
        index = draw(st.integers(0, len(lines) - 1))
        if op == "drop":
            del lines[index:index + draw(st.integers(1, 20))]
        elif op == "dup":
            lines[index:index] = lines[index:index + draw(st.integers(1, 20))]
        elif op == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[index], lines[other] = lines[other], lines[index]
        elif op == "bytes":
            lines.insert(index, draw(st.binary(max_size=200)))
        elif op == "interleave":
            other = LINES[draw(st.integers(0, len(LINES) - 1))]
            start = draw(st.integers(0, max(len(other) - 1, 0)))
            chunk = other[start:start + draw(st.integers(1, 60))]
            step = draw(st.integers(1, 4))
            merged = []
            for position, line in enumerate(lines[index:]):
                merged.append(line)
                if chunk and position % step == 0:
                    merged.append(chunk.pop(0))
            lines[index:] = merged + chunk
        elif op == "flip":
            line = bytearray(lines[index])
            if line:
                line[draw(st.integers(0, len(line) - 1))] = draw(st.integers(0, 255))
            lines[index] = bytes(line)
    data = b"\n".join(lines)
    if draw(st.booleans()):
        data = data[:draw(st.integers(0, len(data)))]
    return data


PREFIXES = ["", "[1,0]<stdout>:", "[1,1]<stdout>:", " 0: ", "13: ", "[rank0]:", "   ", "2026-11-30T02:15:01Z "]
VOCABULARY = [
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
    "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
    "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    "  {n}  {m}     float     sum      -1   {f}  {f}  {f}      {w}   {f}  {f}  {f}      {w}",
    "  {n}  {m}     float     sum   {f}  {f}  {f}  {e}   {f}  {f}  {f}  {e}",
    "  {n}  {m}    double    none      -1   {f}  {f}  {f}      0   {f}  {f}  {f}    N/A",
    "# Out of bounds values : {w} OK",
    "# Out of bounds values : {w} FAILED",
    "# Avg bus bandwidth    : {f} ",
    "# Collective test starting: all_reduce_perf",
    "#  Rank {w} Group  0 Pid  {n} on host-{w} device  0 [0x01] NVIDIA H200",
    "host-{w}:{n}:{m} [0] NCCL INFO Using network {net}",
    "host-{w}:{n}:{m} [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)",
    "host-{w}:{n}:{m} [0] NCCL INFO NET/IB : No device found.",
    "host-{w}:{n}:{m} [0] NCCL INFO comm 0x{m} rank {w} nRanks {n} nNodes {w} localRanks 1 localRank 0 MNNVL 0",
    "host-{w}:{n}:{m} [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/{net}/0/GDRDMA",
    "host-{w}:{n}:{m} [0] misc/socket.cc:502 NCCL WARN socketFinalizeAccept: wrong type 4 != 3",
    "NCCL version 2.{w}.{w}+cuda12.4",
    "HCA-{w}: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '",
    "mpirun --allow-run-as-root -np {w} /opt/nccl-tests/build/all_gather_perf -b 8 -e 1G",
    "",
]


@st.composite
def line_soups(draw):
    out = []
    for _line in range(draw(st.integers(0, 80))):
        template = draw(st.sampled_from(VOCABULARY))
        line = template.format(
            n=draw(st.integers(0, 1 << 40)), m=draw(st.integers(0, 1 << 36)),
            f=draw(st.sampled_from(["0.00", "12.5", "1e+06", "N/A", "nan", "-1", "123456.78", "x"])),
            w=draw(st.integers(0, 300)), e=draw(st.sampled_from(["0e+00", "5e-07", "N/A"])),
            net=draw(st.sampled_from(["Socket", "IB", "AWS Libfabric", "Libfabric"])))
        out.append(draw(st.sampled_from(PREFIXES)) + line)
    return "\r\n".join(out).encode() if draw(st.booleans()) else "\n".join(out).encode()


@FUZZ
@given(data=mutated_logs(), chunk=st.sampled_from([1, 5, 333, 4096, 1 << 20]))
def test_mutated_fixtures(data, chunk):
    result = _nccl.parse_bytes(data)
    check_shape(result, data)
    if chunk == 1 and len(data) > 20000:
        chunk = 7
    assert parse_in_chunks(data, chunk) == result


@FUZZ
@given(data=st.binary(max_size=4096), chunk=st.integers(1, 64))
def test_random_bytes(data, chunk):
    result = _nccl.parse_bytes(data)
    check_shape(result, data)
    assert parse_in_chunks(data, chunk) == result


@FUZZ
@given(data=line_soups(), chunk=st.integers(1, 512))
def test_random_line_soups(data, chunk):
    result = _nccl.parse_bytes(data)
    check_shape(result, data)
    assert parse_in_chunks(data, chunk) == result
    # helpers consumers call must cope with whatever came out
    for size in (0, 8, 1 << 30, 1 << 50):
        value = _nccl_results.busbw_at_size(result, size)
        assert value is None or math.isfinite(value)
    assert isinstance(_nccl_results.summarize(result), str)
