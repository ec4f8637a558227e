# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests of the NCCL log reader (plugins/module_utils/nccl/_nccl*.py) against every fixture log, plus edge cases.

Expected values were read off each log by hand (see tests/unit/fixtures/nccl/SOURCES.md for what
each file is); where SOURCES.md and the log disagree, the log wins and a comment says so.

The two fixtures that contain carriage returns are stored gzip-compressed (byte-exact inside):
ansible-test's line-endings sanity test rejects CR bytes in text files, and tests/sanity's ignore
files stay empty.
"""

from __future__ import annotations

import ast
import gzip
import json
import os
import re
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_catalog
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_network
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_parser
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_results
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_signatures
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_tables

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NCCL = FIXTURES / "nccl"
RECORDED_LOG = FIXTURES / "recorded" / "h200x2" / "torch-allreduce-2xh200-nvlink-nccl-info.log"
PLUGINS = Path(__file__).resolve().parents[4] / "plugins"

AR = "all_reduce_perf"

# One entry per fixture log. Keys:
#   tests: test name per table (inferred ones marked with "~" in front)
#   rows: row count per table
#   peak, largest (busbw at the largest size of the last table, out-of-place), size (that size),
#   avg (Avg bus bandwidth of the last table), wrong (wrong_total), complete, network, version,
#   nranks, nnodes, sigs (signature_counts, exact)
EXPECTED = {
    "allgather-b200-gke-2node-16rank-kubectl-exec.log": dict(
        # SOURCES.md says peak 262.62 (4 GiB); the 2 GiB in-place busbw 268.59 is higher.
        tests=["all_gather_perf"], rows=[24], peak=268.59, largest=260.03, size=8589934592, avg=59.3638,
        wrong=0, complete=True, network=None, version="2.26.6", nranks=16, nnodes=2, sigs={}),
    "allgather-b200-header-only-no-rows-truncated.log": dict(
        tests=["all_gather_perf"], rows=[0], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=False, network=None, version="2.26.6", nranks=4, nnodes=2, sigs={}),
    "allreduce-dgx2h-superpod-error-NA.log": dict(
        tests=["~" + AR], rows=[31], peak=81.57, largest=81.53, size=8589934592, avg=16.2513,
        wrong=0, complete=True, network=None, version=None, nranks=None, nnodes=None, sigs={}),
    "allreduce-dgxa100-2node-k8s-netop-old-error-column.log": dict(
        tests=["~" + AR], rows=[30], peak=188.70, largest=188.53, size=4294967296, avg=53.7098,
        wrong=0, complete=True, network=None, version=None, nranks=None, nnodes=None, sigs={}),
    "allreduce-dgxa100-4node-old-error-column.log": dict(
        tests=["~" + AR], rows=[13], peak=191.56, largest=191.05, size=4294967296, avg=113.289,
        wrong=0, complete=True, network=None, version=None, nranks=None, nnodes=None, sigs={}),
    "allreduce-gb200-20rack-1440rank-ok.log": dict(
        tests=["~" + AR], rows=[6], peak=405.74, largest=405.74, size=17179869184, avg=297.808,
        wrong=0, complete=True, network=None, version=None, nranks=1440, nnodes=None, sigs={}),
    "allreduce-gb200-nvl72-1rack-72rank-ok.log": dict(
        tests=["~" + AR], rows=[5], peak=846.82, largest=834.57, size=8589934592, avg=745.53,
        wrong=0, complete=True, network=None, version=None, nranks=72, nnodes=None, sigs={}),
    "allreduce-gh200-2node-wrong-nonzero-bounds-failed.log": dict(
        tests=[AR], rows=[25], peak=22.87, largest=22.87, size=134217728, avg=4.79995,
        wrong=128, complete=True, network=None, version="2.29.2", nranks=2, nnodes=2,
        sigs={"wrong_results": 2, "test_failure": 2}),
    "allreduce-gh200-alps-2node-8rank-slingshot-ok.log": dict(
        tests=[AR], rows=[25], peak=123.11, largest=122.57, size=134217728, avg=19.7866,
        wrong=0, complete=True, network=None, version=None, nranks=8, nnodes=2, sigs={}),
    "allreduce-gh200-alps-2node-no-cxi-hook-slow.log": dict(
        tests=[AR], rows=[25], peak=6.07, largest=5.43, size=134217728, avg=1.58767,
        wrong=0, complete=True, network=None, version=None, nranks=8, nnodes=2, sigs={}),
    "allreduce-gh200-alps-sarus-ncclversion-header.log": dict(
        tests=[AR], rows=[8], peak=22.88, largest=22.86, size=134217728, avg=14.9966,
        wrong=0, complete=True, network=None, version="2.30.7", nranks=2, nnodes=2, sigs={}),
    "allreduce-h100-1024rank-partial-then-unhandled-cuda-error-mpirun.log": dict(
        # rank list trimmed at rank 99 by the poster: nranks from mpirun -np, nnodes unknown
        tests=[AR], rows=[5], peak=367.44, largest=367.29, size=17179869184, avg=None,
        wrong=0, complete=False, network=None, version=None, nranks=1024, nnodes=None,
        sigs={"unhandled_cuda_error": 39, "test_failure": 77, "mpi_abnormal_exit": 1}),
    "allreduce-h100-a3mega-2node-16rank-ok.log": dict(
        tests=["~" + AR], rows=[31], peak=338.82, largest=338.82, size=8589934592, avg=70.742,
        wrong=0, complete=True, network=None, version=None, nranks=16, nnodes=2, sigs={}),
    "allreduce-h100-coreweave-mpijob-sharp-kubectl.log": dict(
        tests=["~" + AR], rows=[5], peak=386.56, largest=386.56, size=8589934592, avg=373.187,
        wrong=0, complete=True, network=None, version=None, nranks=None, nnodes=None, sigs={}),
    "allreduce-k8s-sriov-roce-old-error-column.log": dict(
        tests=["~" + AR], rows=[29], peak=22.92, largest=22.92, size=2147483648, avg=7.76739,
        wrong=0, complete=True, network=None, version=None, nranks=None, nnodes=None, sigs={}),
    "allreduce-p5-awsbatch-ompi-rankprefix-ok.log": dict(
        # SOURCES.md mentions "Avg bus bandwidth 156.742" but the file ends at the Out of bounds line
        tests=["~" + AR], rows=[32], peak=483.35, largest=483.05, size=17179869184, avg=None,
        wrong=0, complete=True, network=None, version=None, nranks=None, nnodes=None, sigs={}),
    "allreduce-p5-eks-mpijob-launcher-excerpt.log": dict(
        tests=["~" + AR], rows=[7], peak=437.89, largest=437.79, size=2147483648, avg=52.9753,
        wrong=0, complete=True, network=None, version=None, nranks=None, nnodes=None, sigs={}),
    "allreduce-rtxa6000-internal-error-primary-job-terminated-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=4, nnodes=2,
        sigs={"internal_error": 1, "test_failure": 2, "mpi_abnormal_exit": 1}),
    "allreduce-sharp-segfault-ucx-backtrace-excerpt.log": dict(
        tests=[None], rows=[0], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=False, network=None, version=None, nranks=None, nnodes=None,
        sigs={"process_aborted": 1}),
    "allreduce-socket-transport-finalizeaccept-warn.log": dict(
        # socket transport per SOURCES.md, but the excerpt has no "Using network" or NET channel line
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"nccl_warn": 4, "socket_error": 4}),
    "ib-async-fatal-qp-timestamped-warn-h100-k8s.log": dict(
        # NCCL 2.26+ WARN lines: "[%F %T] " before host:pid:tid, behind the kubelet's own timestamp
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"nccl_warn": 3, "ib_fatal": 2}),
    "ib-async-fatal-qp-alltoall-h100-2node.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"nccl_warn": 1, "ib_fatal": 1}),
    "ofi-couldnt-open-av-horovod-ompi-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"nccl_warn": 1, "ofi_av_error": 1}),
    "ofi-couldnt-open-av-nccl-message-transfer.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"ofi_av_error": 2}),
    "ofi-p5en-h200-16nics-selected-provider-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network="efa", version=None, nranks=None, nnodes=None,
        sigs={}),
    "efa-cm-req-handle-error-unresponsive-receiver-torch.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network="ofi", version="2.27.3", nranks=None, nnodes=None,
        sigs={"efa_cm_error": 3, "nccl_warn": 2, "ofi_completion_error": 3, "remote_error": 2}),
    "efa-g6e-l40s-4pod-deepspeed-nccl-info.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network="efa", version="2.27.3", nranks=4, nnodes=4, sigs={}),
    "mpijob-launcher-h200-dranet-openmpi-warnings.log": dict(
        tests=[AR], rows=[24], peak=31.89, largest=31.89, size=8589934592, avg=15.5188,
        wrong=0, complete=True, network=None, version=None, nranks=2, nnodes=2, sigs={}),
    "multi-collective-gtx1080-old-format-5-tables.log": dict(
        tests=[AR, "all_gather_perf", "broadcast_perf", "reduce_perf", "reduce_scatter_perf"],
        rows=[25] * 5, peak=1.53, largest=0.40, size=134217728, avg=0.328477,
        wrong=0, complete=True, network=None, version=None, nranks=2, nnodes=1, sigs={}),
    "multi-collective-h100-10node-80rank-5tests.log": dict(
        tests=[AR, "all_gather_perf", "reduce_scatter_perf", "alltoall_perf", "sendrecv_perf"],
        rows=[10] * 5, peak=364.07, largest=15.22, size=17179869184, avg=15.1671,
        wrong=0, complete=True, network=None, version="2.29.2", nranks=80, nnodes=10, sigs={}),
    "ofi-cxi-provider-polaris-a100-2node-torch.log": dict(
        # not in SOURCES.md: this run ends in a PyTorch watchdog timeout on five ranks
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network="ofi:cxi", version="2.20.5", nranks=8, nnodes=2,
        sigs={"watchdog_timeout": 15, "process_aborted": 6, "mpi_abnormal_exit": 2, "comm_aborted": 20}),
    "ofi-plugin-init-failed-socket-fallback-p4d.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network="socket", version="2.27.7", nranks=4, nnodes=1,
        sigs={"nccl_warn": 12, "ofi_init_failed": 12, "socket_fallback": 8}),
    "p4d-a100-1pod-4rank-nvlink-deepspeed-nccl-info.log": dict(
        # SOURCES.md mentions NCCL 2.27.3 and "Selected provider is efa"; neither line is in the file
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network="ofi", version=None, nranks=4, nnodes=1, sigs={}),
    "pytorch-watchdog-timeout-broadcast-2rank-deepspeed.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"watchdog_timeout": 7, "process_aborted": 2, "comm_aborted": 7}),
    "scatter-p4d-2node-efa-srun-label-debuginfo.log": dict(
        # the srun command line is not in the file; scatter and gather print the same columns
        tests=[None], rows=[29], peak=81.09, largest=80.59, size=2147483648, avg=20.2635,
        wrong=0, complete=True, network="efa", version="2.18.3", nranks=16, nnodes=2, sigs={}),
    "socket-fallback-polaris-a100-2node-ddp.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network="socket", version="2.20.5", nranks=8, nnodes=2,
        sigs={"socket_fallback": 8}),
    "srun-label-prefix-fsdp-efa-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network="efa", version=None, nranks=32, nnodes=None, sigs={}),
    # issue 32: real public logs for the signatures derived from NCCL's source (SOURCES.md)
    "invalid-argument-argcheck-invalid-root-sendrecv-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version="2.14.3", nranks=None, nnodes=None,
        sigs={"invalid_argument": 5, "nccl_warn": 5}),
    "invalid-argument-broadcast-null-pointer-torch.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version="2.21.5", nranks=None, nnodes=None,
        sigs={"invalid_argument": 3}),
    "invalid-usage-duplicate-gpu-horovod-ompi-warn-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"invalid_usage": 3, "nccl_warn": 3}),
    "invalid-usage-duplicate-gpu-megatron-torch-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version="2.19.3", nranks=None, nnodes=None,
        sigs={"invalid_usage": 6}),
    "socket-closed-by-remote-peer-bootstrap-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"nccl_warn": 1, "socket_error": 1}),
    "socket-finalizeaccept-proxy-service-failed-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"nccl_async_error": 1, "nccl_warn": 2, "socket_error": 1}),
    "segfault-ucx-caught-signal-11-nccl-2.22-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"segfault": 1}),
    "ofi-reg-mr-cannot-allocate-memory-alltoall-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"nccl_warn": 1, "reg_mr_error": 1}),
    "socket-start-connect-failed-system-error-excerpt.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"nccl_warn": 1, "socket_error": 1}),
    "pytorch-unhandled-system-error-nccl-2.10.log": dict(
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version="2.10.3", nranks=None, nnodes=None,
        sigs={"unhandled_system_error": 1}),
}

EXPECTED_RECORDED = dict(
    # torch loop output ("algbw ... busbw ... GB/s ok=na") is not an nccl-tests table; single node,
    # IB tried and not found, Socket chosen: not a socket_fallback (no inter-node traffic)
    tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
    wrong=None, complete=None, network="socket", version="2.28.9", nranks=2, nnodes=1, sigs={})


def fixture(name):
    """Path of a fixture log, stored as NAME or NAME.gz."""
    path = NCCL / name
    return path if path.exists() else NCCL / (name + ".gz")


def fixture_bytes(path):
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


ALL_CASES = [(name, fixture(name), expected) for name, expected in sorted(EXPECTED.items())]
ALL_CASES.append(("recorded/" + RECORDED_LOG.name, RECORDED_LOG, EXPECTED_RECORDED))

_CACHE = {}


def parsed(path):
    """Parse result of a fixture path (cached); .gz fixtures are parsed from their content."""
    if not isinstance(path, Path):
        path = fixture(path)
    elif not path.exists():
        path = fixture(path.name)
    key = str(path)
    if key not in _CACHE:
        if path.suffix == ".gz":
            _CACHE[key] = _nccl.parse_bytes(fixture_bytes(path))
        else:
            _CACHE[key] = _nccl.parse_file(key)
    return _CACHE[key]


def test_every_fixture_has_expectations():
    logs = sorted(p.name[:-3] if p.suffix == ".gz" else p.name for p in NCCL.glob("*.log*"))
    assert logs == sorted(EXPECTED), "add the new fixture to EXPECTED"
    assert not any(b"\r" in fixture_bytes(p) for p in NCCL.glob("*.log")), "store logs with CR bytes gzipped"
    assert (NCCL / "SOURCES.md").is_file()
    assert RECORDED_LOG.is_file() and (FIXTURES / "recorded" / "README.md").is_file()


@pytest.mark.parametrize("name,path,expected", ALL_CASES, ids=[case[0] for case in ALL_CASES])
def test_fixture_values(name, path, expected):
    result = parsed(path)
    tests = [("~" if t["test_inferred"] else "") + t["test"] if t["test"] else None for t in result["tables"]]
    assert tests == expected["tests"]
    assert [len(t["rows"]) for t in result["tables"]] == expected["rows"]
    assert result["peak_busbw"] == expected["peak"]
    assert result["busbw_at_largest_size"] == expected["largest"]
    assert result["largest_size"] == expected["size"]
    assert result["avg_busbw_reported"] == expected["avg"]
    assert result["wrong_total"] == expected["wrong"]
    assert result["complete"] is expected["complete"]
    assert result["network"] == expected["network"]
    assert result["nccl_version"] == expected["version"]
    assert result["nranks"] == expected["nranks"]
    assert result["nnodes"] == expected["nnodes"]
    assert result["signature_counts"] == expected["sigs"]
    assert result["signature_ids"] == [i for i in _nccl_catalog.SIGNATURE_IDS if i in expected["sigs"]]
    data = fixture_bytes(path)
    assert result["lines"] == data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    assert result["bytes"] == len(data)
    json.dumps(result, allow_nan=False)


@pytest.mark.parametrize("name,path,expected", ALL_CASES, ids=[case[0] for case in ALL_CASES])
def test_fixture_signature_entries(name, path, expected):
    result = parsed(path)
    lines = fixture_bytes(path).decode("utf-8", "replace").split("\n")
    by_id = {}
    for entry in result["signatures"]:
        assert set(entry) == {"id", "line_no", "line", "hint", "time", "source"}
        assert entry["hint"] == _nccl_catalog.HINTS[entry["id"]]
        # the entry points at the line it quotes
        assert entry["line"] and entry["line"][:60] in lines[entry["line_no"] - 1].replace("\r", " ")
        by_id[entry["id"]] = by_id.get(entry["id"], 0) + 1
    assert by_id == {k: min(v, _nccl_signatures.MAX_SIGNATURES_PER_ID) for k, v in expected["sigs"].items()}
    assert [e["line_no"] for e in result["signatures"]] == sorted(e["line_no"] for e in result["signatures"])


@pytest.mark.parametrize("name,line_no,sig_id", [
    ("allreduce-gh200-2node-wrong-nonzero-bounds-failed.log", 29, "wrong_results"),   # row with #wrong 96/32
    ("allreduce-gh200-2node-wrong-nonzero-bounds-failed.log", 37, "wrong_results"),   # "4 FAILED" footer
    ("socket-fallback-polaris-a100-2node-ddp.log", 21, "socket_fallback"),
    ("ofi-plugin-init-failed-socket-fallback-p4d.log", 96, "socket_fallback"),
    ("ofi-plugin-init-failed-socket-fallback-p4d.log", 69, "ofi_init_failed"),
    ("ofi-plugin-init-failed-socket-fallback-p4d.log", 69, "nccl_warn"),
    ("efa-cm-req-handle-error-unresponsive-receiver-torch.log", 7, "efa_cm_error"),
    ("allreduce-sharp-segfault-ucx-backtrace-excerpt.log", 4, "process_aborted"),
    ("allreduce-rtxa6000-internal-error-primary-job-terminated-excerpt.log", 8, "internal_error"),
    ("allreduce-rtxa6000-internal-error-primary-job-terminated-excerpt.log", 11, "mpi_abnormal_exit"),
    ("allreduce-h100-1024rank-partial-then-unhandled-cuda-error-mpirun.log", 196, "mpi_abnormal_exit"),
    ("pytorch-watchdog-timeout-broadcast-2rank-deepspeed.log", 22, "watchdog_timeout"),
    ("ofi-cxi-provider-polaris-a100-2node-torch.log", 565, "process_aborted"),
    ("ofi-cxi-provider-polaris-a100-2node-torch.log", 566, "mpi_abnormal_exit"),
])
def test_signature_positions(name, line_no, sig_id):
    result = parsed(NCCL / name)
    assert (sig_id, line_no) in [(e["id"], e["line_no"]) for e in result["signatures"]]


def test_signature_entries_are_capped_but_counted():
    result = parsed(NCCL / "allreduce-h100-1024rank-partial-then-unhandled-cuda-error-mpirun.log")
    entries = [e for e in result["signatures"] if e["id"] == "test_failure"]
    assert len(entries) == _nccl_signatures.MAX_SIGNATURES_PER_ID == 20
    assert result["signature_counts"]["test_failure"] == 77
    assert entries[0]["line_no"] == 118          # the first ones are kept


# ---------------------------------------------------------------------------------------- rows


def test_row_shape_current_format():
    table = parsed(NCCL / "allreduce-h100-a3mega-2node-16rank-ok.log")["tables"][0]
    assert table["rows"][0] == {
        "size": 8, "count": 2, "type": "float", "redop": "sum", "root": -1,
        "out_of_place": {"time_us": 135.8, "algbw": 0.0, "busbw": 0.0, "wrong": 0, "error": None},
        "in_place": {"time_us": 123.5, "algbw": 0.0, "busbw": 0.0, "wrong": 0, "error": None},
    }
    assert table["rows"][-1]["out_of_place"] == {
        "time_us": 47535.0, "algbw": 180.71, "busbw": 338.82, "wrong": 0, "error": None}
    assert table["oob_values"] == 0 and table["oob_status"] == "OK" and table["complete"] is True
    assert table["line_no"] == 22


def test_row_shape_old_error_column_and_crlf():
    table = parsed(NCCL / "allreduce-dgxa100-2node-k8s-netop-old-error-column.log")["tables"][0]
    first = table["rows"][0]
    assert (first["redop"], first["root"]) == ("sum", None)
    assert first["out_of_place"] == {"time_us": 38.63, "algbw": 0.0, "busbw": 0.0, "wrong": None, "error": 2e-07}
    assert first["in_place"]["error"] == 1e-07
    assert table["avg_busbw"] == 53.7098          # the CRLF line endings do not leak into values


def test_na_values():
    rows = parsed(NCCL / "allreduce-dgx2h-superpod-error-NA.log")["tables"][0]["rows"]
    assert all(r["out_of_place"]["error"] is None and r["out_of_place"]["wrong"] is None for r in rows)
    alltoall = parsed(NCCL / "multi-collective-h100-10node-80rank-5tests.log")["tables"][3]
    assert alltoall["test"] == "alltoall_perf"
    assert all(r["in_place"]["wrong"] is None and r["out_of_place"]["wrong"] == 0 for r in alltoall["rows"])
    assert alltoall["rows"][0]["redop"] == "none" and alltoall["rows"][0]["type"] == "double"


def test_wrong_counts_and_failed_footer():
    result = parsed(NCCL / "allreduce-gh200-2node-wrong-nonzero-bounds-failed.log")
    row = [r for r in result["tables"][0]["rows"] if r["size"] == 1048576][0]
    assert (row["out_of_place"]["wrong"], row["in_place"]["wrong"]) == (96, 32)
    assert result["tables"][0]["oob_values"] == 4 and result["tables"][0]["oob_status"] == "FAILED"
    assert result["nccl_tests_version"] == "2.17.8"


def test_old_format_columns_per_collective():
    tables = parsed(NCCL / "multi-collective-gtx1080-old-format-5-tables.log")["tables"]
    gather, bcast, reduce = tables[1]["rows"][0], tables[2]["rows"][0], tables[3]["rows"][0]
    assert (gather["redop"], gather["root"]) == (None, None)
    assert (bcast["redop"], bcast["root"]) == (None, 0)
    assert (reduce["redop"], reduce["root"]) == ("sum", 0)
    assert [t["avg_busbw"] for t in tables] == [0.414483, 0.347488, 0.698235, 0.716373, 0.328477]


def test_zero_size_rows_and_prefixes():
    eks = parsed(NCCL / "allreduce-p5-eks-mpijob-launcher-excerpt.log")["tables"][0]
    assert eks["rows"][0]["size"] == 0 and eks["rows"][0]["count"] == 0
    scatter = parsed(NCCL / "scatter-p4d-2node-efa-srun-label-debuginfo.log")
    rows = scatter["tables"][0]["rows"]
    assert [r["size"] for r in rows[:4]] == [0, 0, 0, 64]
    assert {(r["redop"], r["root"]) for r in rows} == {("none", 0)}
    assert scatter["hosts"] == ["compute-gpu-st-distributed-ml-1", "compute-gpu-st-distributed-ml-2"]


def test_hosts():
    assert parsed(NCCL / "allreduce-h100-a3mega-2node-16rank-ok.log")["hosts"] == ["ztan-mig-235z", "ztan-mig-gq73"]
    assert parsed(RECORDED_LOG)["hosts"] == ["vm"]
    assert len(parsed(NCCL / "multi-collective-h100-10node-80rank-5tests.log")["hosts"]) == 10
    assert parsed(NCCL / "ofi-cxi-provider-polaris-a100-2node-torch.log")["ofi_provider"] == "cxi"


# ------------------------------------------------------------------------------ busbw_at_size


def test_busbw_at_size_rule():
    result = parsed(NCCL / "allreduce-h100-a3mega-2node-16rank-ok.log")
    assert _nccl_results.busbw_at_size(result, 8 << 30) == 338.82
    assert _nccl_results.busbw_at_size(result, int(4.4 * (1 << 30))) == 330.58   # 4 GiB row: <= 4.4 GiB and >= 90% of it
    assert _nccl_results.busbw_at_size(result, 5 * 10 ** 9) is None           # 4 GiB is 86% of 5e9: no answer
    assert _nccl_results.busbw_at_size(result, 1 << 40) is None               # the sweep stopped at 8 GiB
    assert _nccl_results.largest_size(result) == 8 << 30
    assert _nccl_results.busbw_at_size(result, 4) is None                    # every row is larger
    assert _nccl_results.busbw_at_size(result, None) is None
    assert _nccl_results.row_at_size(result, 8 << 30)["in_place"]["busbw"] == 337.35


def test_busbw_at_size_rounded_sizes_and_test_filter():
    result = parsed(NCCL / "multi-collective-h100-10node-80rank-5tests.log")
    assert _nccl_results.busbw_at_size(result, 16 << 30) == 15.22                          # last table: sendrecv
    assert _nccl_results.busbw_at_size(result, 16 << 30, test="all_gather_perf") == 324.29  # 17179868160 B row
    assert _nccl_results.busbw_at_size(result, 16 << 30, test="broadcast_perf") is None
    truncated = parsed(NCCL / "allgather-b200-header-only-no-rows-truncated.log")
    assert _nccl_results.busbw_at_size(truncated, 1 << 30) is None


def test_summary():
    assert parsed(NCCL / "allreduce-h100-a3mega-2node-16rank-ok.log")["summary"] == (
        "all_reduce_perf: 16 ranks on 2 nodes, peak busbw 338.82 GB/s, busbw at 8 GiB 338.82 GB/s, "
        "#wrong 0, complete")
    assert parsed(NCCL / "ofi-plugin-init-failed-socket-fallback-p4d.log")["summary"] == (
        "no nccl-tests results table: 4 ranks on 1 node over socket, NCCL 2.27.7, "
        "signatures: nccl_warn, ofi_init_failed, socket_fallback")
    assert parsed(NCCL / "scatter-p4d-2node-efa-srun-label-debuginfo.log")["summary"] == (
        "nccl-tests: 16 ranks on 2 nodes over efa, peak busbw 81.09 GB/s, busbw at 2 GiB 80.59 GB/s, "
        "#wrong 0, complete")
    assert _nccl_results.human_size(17179868160) == "16.00 GiB" and _nccl_results.human_size(8) == "8 B"


# ------------------------------------------------------------------------------ synthetic logs

HEADER = (
    "#                                                              out-of-place                       in-place\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
)


def row(size, busbw, wrong=0):
    algbw = busbw / 1.875
    return "%12d  %12d  %8s  %6s  %6d  %7.1f  %6.2f  %6.2f  %5d  %7.1f  %6.2f  %6.2f  %5d\n" % (
        size, size // 4, "float", "sum", -1, 100.0, algbw, busbw, wrong, 101.0, algbw, busbw - 0.01, wrong)


FOOTER = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 12.5 \n#\n"


def parse(text):
    return _nccl.parse_text(text)


def test_nccl1_format_milliseconds():
    log = (
        "$ ./build/test/single/all_reduce_test 10000000\n"
        "# Using devices\n"
        "#   Device  0 ->  0 [0x0a] GeForce GTX TITAN X\n"
        "#                                                 out-of-place                    in-place\n"
        "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n"
        "    10000000      10000000    char     sum    1.628   6.14   9.21    0e+00    1.932   5.18   7.77    0e+00\n"
        "    10000000      10000000    char    prod    1.629   6.14   9.21    0e+00    1.643   6.09   9.13    0e+00\n"
        "    10000000       2500000     int     sum    1.611   6.21   9.31    0e+00    1.626   6.15   9.23    0e+00\n"
    )
    result = parse(log)
    table = result["tables"][0]
    assert table["test"] == AR and not table["test_inferred"]
    assert len(table["rows"]) == 3 and table["complete"] is False
    assert table["rows"][0]["out_of_place"] == {"time_us": 1628.0, "algbw": 6.14, "busbw": 9.21, "wrong": None,
                                                "error": 0.0}
    assert table["rows"][1]["redop"] == "prod" and table["rows"][2]["type"] == "int"
    assert result["peak_busbw"] == 9.31 and result["complete"] is False


def test_nccl1_reduce_with_root_and_no_hash():
    log = (
        "      bytes             N    type      op  root    time  algbw  busbw      res     time  algbw  busbw      res\n"
        "    67108864      67108864    char     sum    0   11.534   5.82   5.82    0e+00   11.570   5.80   5.80    0e+00\n"
        "    67108864      67108864    char     sum    1   11.569   5.80   5.80    0e+00   11.617   5.78   5.78    0e+00\n"
    )
    rows = parse(log)["tables"][0]["rows"]
    assert [(r["root"], r["redop"]) for r in rows] == [(0, "sum"), (1, "sum")]


def test_g_numbers_overflowing_columns_and_na():
    log = HEADER + (
        " 17179869184   4294967296     float     sum      -1  1.2e+06  14.32  1234.56      0  1.1e+06  15.62  12345.67    N/A\n"
        "123456789012  30864197253  bfloat16  premulsum      -1   9.9e+07  1.2e+03  2.25e+03      0   9.8e+07  1200.5  2250.9      0\n"
    ) + FOOTER
    result = parse(log)
    first, second = result["tables"][0]["rows"]
    assert first["out_of_place"]["time_us"] == 1.2e6 and first["out_of_place"]["busbw"] == 1234.56
    assert first["in_place"] == {"time_us": 1.1e6, "algbw": 15.62, "busbw": 12345.67, "wrong": None, "error": None}
    assert second["type"] == "bfloat16" and second["redop"] == "premulsum" and second["out_of_place"]["algbw"] == 1200.0
    assert result["peak_busbw"] == 12345.67


def test_non_finite_values_are_null():
    log = HEADER + row(1024, 1.0).replace("  1.00  ", "   nan  ", 1) + FOOTER
    result = parse(log)
    assert result["tables"][0]["rows"][0]["out_of_place"]["busbw"] is None
    json.dumps(result, allow_nan=False)


def test_interleaved_processes_with_labels():
    lines = []
    for label in ("[1,0]<stdout>:", "[1,1]<stdout>:"):
        lines.extend((label, h) for h in HEADER.splitlines(True))
    for size, bw in ((1024, 1.0), (2048, 2.0), (4096, 4.0)):
        lines.append(("[1,1]<stdout>:", row(size, bw * 10)))
        lines.append(("[1,0]<stdout>:", row(size, bw)))
        lines.append(("", "host-a:12:13 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n"))
    for label in ("[1,0]<stdout>:", "[1,1]<stdout>:"):
        lines.extend((label, f) for f in FOOTER.splitlines(True))
    result = parse("".join(label + line for label, line in lines))
    assert len(result["tables"]) == 2
    first, second = result["tables"]
    assert [r["out_of_place"]["busbw"] for r in first["rows"]] == [1.0, 2.0, 4.0]
    assert [r["out_of_place"]["busbw"] for r in second["rows"]] == [10.0, 20.0, 40.0]
    assert first["complete"] and second["complete"] and result["complete"] is True


def test_interleaved_processes_without_labels():
    # two processes printing the same header and rows into one stream: one table, rows twice
    log = HEADER + HEADER + row(1024, 1.0) + row(1024, 1.5) + row(2048, 2.0) + row(2048, 2.5) + FOOTER + FOOTER
    result = parse(log)
    assert len(result["tables"]) == 1
    assert [r["size"] for r in result["tables"][0]["rows"]] == [1024, 1024, 2048, 2048]
    assert result["complete"] is True and result["avg_busbw_reported"] == 12.5
    assert _nccl_results.busbw_at_size(result, 2048) == 2.5          # duplicated size: the row printed last


def test_truncated_table_then_new_table():
    log = "# Collective test starting: all_gather_perf\n" + HEADER + row(8, 0.1) + (
        "# Collective test starting: broadcast_perf\n") + HEADER + row(8, 0.2) + FOOTER
    result = parse(log)
    assert [(t["test"], t["complete"], len(t["rows"])) for t in result["tables"]] == [
        ("all_gather_perf", False, 1), ("broadcast_perf", True, 1)]
    assert result["complete"] is False


def test_rows_after_footer_are_ignored_and_info_lines_inside_table():
    log = HEADER + row(8, 0.1) + "host:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2\n" + (
        row(16, 0.2)) + FOOTER + row(32, 0.3)
    result = parse(log)
    assert [r["size"] for r in result["tables"][0]["rows"]] == [8, 16]
    assert result["nranks"] == 2 and result["nnodes"] == 1


def test_timestamp_prefixes_give_the_same_table():
    path = fixture("allreduce-h100-a3mega-2node-16rank-ok.log")
    text = fixture_bytes(path).decode()
    stamped = "".join("2026-11-30T02:15:%02d.123456789Z %s" % (i % 60, line)
                      for i, line in enumerate(text.splitlines(True)))
    assert parse(stamped)["tables"] == parsed(path)["tables"]


def test_table_and_row_caps(monkeypatch):
    monkeypatch.setattr(_nccl_tables, "MAX_TABLES", 3)
    monkeypatch.setattr(_nccl_tables, "MAX_ROWS_PER_TABLE", 2)
    one = HEADER + row(8, 0.1, wrong=1) + row(16, 0.2) + row(32, 0.3) + FOOTER
    result = parse(one * 5)
    assert len(result["tables"]) == 3 and result["tables_omitted"] == 2
    assert all(len(t["rows"]) == 2 and t["rows_omitted"] == 1 for t in result["tables"])
    assert result["wrong_total"] == 10             # 1 out-of-place + 1 in-place per table; omitted ones count
    assert result["signature_counts"] == {"wrong_results": 5}


def test_total_row_budget_drops_oldest_tables(monkeypatch):
    monkeypatch.setattr(_nccl_tables, "MAX_ROWS_TOTAL", 7)
    one = HEADER + row(8, 0.1) + row(16, 0.2) + row(32, 0.3) + FOOTER
    result = parse(one * 4 + HEADER + row(8, 9.0) + row(16, 9.5, wrong=2))
    assert [len(t["rows"]) for t in result["tables"]] == [3, 2] and result["tables_omitted"] == 3
    assert result["peak_busbw"] == 9.5 and result["wrong_total"] == 4 and result["complete"] is False


def test_overlong_line_is_cut_and_parsing_goes_on(monkeypatch):
    monkeypatch.setattr(_nccl_parser, "MAX_LINE_BYTES", 1000)
    data = b"x" * 5000 + b" NCCL WARN tail\n" + (HEADER + row(8, 0.5) + FOOTER).encode()
    parser = _nccl_parser.NcclLogParser()
    for offset in range(0, len(data), 333):
        parser.feed(data[offset:offset + 333])
    result = parser.close()
    assert result["lines"] == 1 + 3 + 1 + 3
    assert result["signature_counts"] == {}            # the WARN was beyond the cut
    assert result["tables"][0]["rows"][0]["out_of_place"]["busbw"] == 0.5
    assert result["tables"][0]["line_no"] == 3


def test_undecodable_bytes_are_replaced():
    data = b"host:1:2 [0] NCCL WARN bad \xff\xfe bytes\n"
    result = _nccl.parse_bytes(data)
    assert result["signatures"][0]["line"] == "host:1:2 [0] NCCL WARN bad \ufffd\ufffd bytes"


def test_merged_info_lines():
    # two writers' output in one physical line: both messages count, a WARN in it counts once
    log = ("h1:1:2 [0] NCCL INFO comm 0x1 rank 1 nRanks 2 nNodes 2 localRanks 1h2:3:4 [1] NCCL INFO NCCL version 2.1.1\n"
           "h1:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1h2:3:4 [1] NCCL WARN NET/IB : oops\n"
           # a merged line with a message the parser does not need is skipped as a whole
           "h1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] via P2P/CUMEMh2:3:4 [1] NCCL INFO Using network IB\n")
    result = parse(log)
    assert result["nranks"] == 2 and result["nnodes"] == 2 and result["nccl_version"] == "2.1.1"
    assert result["network"] is None
    assert result["signature_counts"] == {"nccl_warn": 1}
    # a merged line cannot stretch a network name
    assert parse("h1:1:2 [0] NCCL INFO Using network IBh2:3:4 [1] NCCL INFO NCCL version 2.1.1\n")["network_raw"] == "IBh2"
    assert parse("h1:1:2 [0] NCCL INFO Using network AWS Libfabric\n")["network"] == "ofi"


def test_last_line_without_newline():
    result = parse("x\n" + "host:1:2 [0] NCCL WARN no newline")
    assert result["lines"] == 2 and result["signatures"][0]["line_no"] == 2


@pytest.mark.parametrize("name", ["scatter-p4d-2node-efa-srun-label-debuginfo.log",
                                  "multi-collective-gtx1080-old-format-5-tables.log",
                                  "efa-cm-req-handle-error-unresponsive-receiver-torch.log"])
def test_chunking_does_not_change_the_result(name):
    data = fixture_bytes(fixture(name))
    reference = _nccl.parse_bytes(data)
    for size in (1, 7, 4096):
        parser = _nccl_parser.NcclLogParser()
        for offset in range(0, len(data), size):
            parser.feed(data[offset:offset + size])
        assert parser.close() == reference


# ------------------------------------------------------------------------------ network rules


def info(msg, host="h1", rank=0):
    return "%s:10%d:20%d [%d] NCCL INFO %s\n" % (host, rank, rank, rank, msg)


@pytest.mark.parametrize("lines,network,fallback", [
    # OFI plugin selected a provider: the provider is the network
    ([info("NET/OFI Selected Provider is efa (found 4 nics)"), info("Using network AWS Libfabric")], "efa", False),
    # plugin loaded, init failed, sockets used: fallback even on one node
    ([info("NET/Plugin: Loaded net plugin Libfabric (v10)"), info("Using network Socket"),
      info("comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2")], "socket", True),
    # only NCCL's own IB probe failed, one node: sockets are harmless
    ([info("NET/IB : No device found."), info("Using network Socket"),
      info("comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2")], "socket", False),
    # same on two nodes: inter-node traffic over TCP
    ([info("NET/IB : No device found."), info("Using network Socket"),
      info("comm 0x1 rank 0 nRanks 2 nNodes 2 localRanks 1")], "socket", True),
    # two hosts seen, node count not printed
    ([info("NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file"), info("Using network Socket"),
      info("comm 0x1 rank 0 nranks 2 - Init COMPLETE", host="h1"),
      info("comm 0x2 rank 1 nranks 2 - Init COMPLETE", host="h2", rank=1)], "socket", True),
    # sockets asked for explicitly
    ([info("NCCL_NET set by environment to Socket"), info("NET/Plugin: Loaded net plugin Libfabric (v10)"),
      info("Using network Socket")], "socket", False),
    # no "Using network": the first NET channel line tells
    ([info("Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA")], "ib", False),
    ([info("Using network IB")], "ib", False),
    ([], None, False),
])
def test_network_and_socket_fallback(lines, network, fallback):
    result = parse("".join(lines))
    assert result["network"] == network
    assert ("socket_fallback" in result["signature_ids"]) is fallback


def test_nranks_from_launcher_times_gpus_per_process():
    log = ("mpirun -np 2 -pernode ./build/all_reduce_perf -b 8 -e 128M -g 2 -n 20\n"
           "# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20\n")
    assert parse(log)["nranks"] == 4


# ------------------------------------------------------------------------------ catalog

EXAMPLES = {
    "segfault": "[node-1:1234:0:1234] Caught signal 11 (Segmentation fault: address not mapped to object)",
    "process_aborted": "terminate called after throwing an instance of 'c10::DistBackendError'",
    "efa_cm_error": "h:1:2 [0] int cm_req_handle_error_entry(...):46 NCCL WARN NET/OFI Request completed with error",
    "nccl_warn": "h:1:2 [0] misc/socket.cc:502 NCCL WARN socketFinalizeAccept: wrong type 4 != 3",
    "unhandled_system_error": "RuntimeError: NCCL error in: init.cc:1270, unhandled system error (run with NCCL_DEBUG=INFO)",
    "unhandled_cuda_error": "h: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO)'",
    "internal_error": "ncclInternalError: Internal check failed.",
    "test_failure": " .. gpu-1-1 pid 662195: Test failure common.cu:1189",
    "wrong_results": "# Out of bounds values : 4 FAILED",
    "watchdog_timeout": "[rank0]:[E1218] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)",
    "mpi_abnormal_exit": "mpirun noticed that process rank 3 with PID 0 on node n1 exited on signal 9 (Killed).",
    "ofi_init_failed": "h:1:2 [0] get_ofi_provider:312 NCCL WARN NET/OFI Couldn't find any optimal provider",
    "ib_fatal": "h:1:2 [0] NCCL WARN NET/IB : Got async event : local catastrophic error",
    "cuda_device_busy": "Cuda failure 'all CUDA-capable devices are busy or unavailable'",
    "reg_mr_error": "h:1:2 [5] register_mr_buffers:465 NCCL WARN NET/OFI Unable to register memory (type = 1). RC: -22",
    "ofi_av_error": "h:1:2 [7] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid "
                    "argument",
    # no public log shows it: the text of aws-ofi-nccl src/nccl_ofi_net.cpp:651 (v1.21.x), NCCL_OFI_WARN's
    # "NET/OFI " prefix, NCCL's "host:pid:tid [dev] func:line NCCL WARN " frame
    "ofi_libfabric_too_old": "h:1:2 [0] int nccl_net_ofi_query_provider_capabilities(const fi_info*, unsigned int):651 "
                             "NCCL WARN NET/OFI EFA provider requires at least libfabric version 1.22.0.",
}


def test_catalog_ids_are_exactly_the_documented_ones():
    assert _nccl_catalog.SIGNATURE_IDS == (
        "segfault", "process_aborted", "efa_cm_error", "nccl_warn", "unhandled_system_error",
        "unhandled_cuda_error", "internal_error", "test_failure", "wrong_results", "watchdog_timeout",
        "mpi_abnormal_exit", "ofi_init_failed", "ofi_av_error", "ofi_libfabric_too_old", "ib_fatal",
        "cuda_device_busy", "reg_mr_error", "socket_fallback",
        # issue 32: the rest of ncclResult_t, async errors and aborts, transports and plugins
        "invalid_argument", "invalid_usage", "remote_error", "in_progress", "nccl_timeout", "nccl_async_error",
        "comm_aborted", "socket_error", "ofi_completion_error", "sharp_error")
    for entry in _nccl_catalog.CATALOG:
        assert entry["meaning"] and entry["hint"] and entry["hint"] == _nccl_catalog.HINTS[entry["id"]]
        for pattern in entry["patterns"]:
            re.compile(pattern)


@pytest.mark.parametrize("sig_id", sorted(EXAMPLES))
def test_catalog_examples(sig_id):
    ids = parse(EXAMPLES[sig_id] + "\n")["signature_ids"]
    assert sig_id in ids


def test_command_lines_and_env_dumps_are_not_signatures():
    log = (
        "+ mpirun --allow-run-as-root -np 2 -x NCCL_DEBUG=INFO -x FI_EFA_USE_DEVICE_RDMA=1 -mca btl ^openib "
        "/opt/nccl-tests/build/all_reduce_perf -b 8 -e 1G\n"
        "h:1:2 [0] NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin_v6 symbol.\n"
        "h:1:2 [0] NCCL INFO NET/OFI Libfabric provider associates MRs with endpoints\n"
        "  warnings.warn(  # warn only once\n"
        "Error(s) in loading state_dict: none\n"
    )
    assert parse(log)["signature_ids"] == []


def test_catalog_is_documented():
    doc = (PLUGINS.parent / "docs" / "nccl-parser.md").read_text()
    for entry in _nccl_catalog.CATALOG:
        row = "| `%s` | %s | %s |" % (entry["id"], entry["meaning"].replace("|", "\\|"), entry["hint"].replace("|", "\\|"))
        assert row in doc, entry["id"]


# ------------------------------------------------------------------------------ files


def test_file_errors(tmp_path):
    with pytest.raises(_nccl.NcclLogError, match="does not exist"):
        _nccl.parse_file(str(tmp_path / "missing.log"))
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    with pytest.raises(_nccl.NcclLogError, match="is empty"):
        _nccl.parse_file(str(empty))
    binary = tmp_path / "core"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    with pytest.raises(_nccl.NcclLogError, match="binary file"):
        _nccl.parse_file(str(binary))
    with pytest.raises(_nccl.NcclLogError, match="is a directory"):
        _nccl.parse_file(str(tmp_path))


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path):
    path = tmp_path / "secret.log"
    path.write_text("x\n")
    path.chmod(0)
    with pytest.raises(_nccl.NcclLogError, match="cannot be read"):
        _nccl.parse_file(str(path))


def test_check_content():
    with pytest.raises(_nccl.NcclLogError, match="empty"):
        _nccl.check_content("")
    with pytest.raises(_nccl.NcclLogError, match="binary"):
        _nccl.check_content("a\x00b")
    _nccl.check_content("ok")


# ------------------------------------------------------------------------------ hygiene


NCCL_MODULES = sorted(path.name for path in (PLUGINS / "module_utils" / "nccl").glob("_nccl*.py"))


def test_the_nccl_reader_is_all_the_modules_it_is_split_into():
    assert NCCL_MODULES == ["_nccl.py", "_nccl_base.py", "_nccl_catalog.py", "_nccl_facts.py", "_nccl_json.py",
                            "_nccl_json_files.py", "_nccl_network.py", "_nccl_parser.py", "_nccl_results.py",
                            "_nccl_signatures.py", "_nccl_tables.py"]


@pytest.mark.parametrize("name", NCCL_MODULES)
def test_module_utils_use_only_the_standard_library_and_python38_syntax(name):
    source = (PLUGINS / "module_utils" / "nccl" / name).read_text()
    tree = ast.parse(source, feature_version=(3, 8))
    allowed_stdlib = {"__future__", "json", "math", "os", "re", "stat"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert {alias.name.split(".")[0] for alias in node.names} <= allowed_stdlib
        elif isinstance(node, ast.ImportFrom):
            assert node.module in allowed_stdlib or node.module in (
                "ansible_collections.rlstack.validation.plugins.module_utils.nccl." + other[:-3] for other in NCCL_MODULES)
        assert not isinstance(node, ast.Assert)
    assert "from __future__ import annotations" in source


# ------------------------------------------------------------------------------ current NCCL / aws-ofi-nccl lines


def test_warn_time_and_source_of_current_nccl():
    # NCCL 2.26+ (src/debug.cc, NCCL_DEBUG_TIMESTAMP_LEVELS defaults to WARN): "[%F %T] host:pid:tid [dev] file:line"
    entries = parsed(NCCL / "ib-async-fatal-qp-timestamped-warn-h100-k8s.log")["signatures"]
    fatal = [e for e in entries if e["id"] == "ib_fatal"]
    assert [(e["line_no"], e["time"], e["source"]) for e in fatal] == [
        (2, "2025-11-09 07:39:30", "transport/net_ib.cc:180"), (3, "2025-11-09 07:39:30", "transport/net_ib.cc:2451")]
    assert parsed(NCCL / "ib-async-fatal-qp-timestamped-warn-h100-k8s.log")["hosts"] == ["h100-28"]
    # aws-ofi-nccl's WARNs name the function (__PRETTY_FUNCTION__) before the line
    ofi = parsed(NCCL / "ofi-plugin-init-failed-socket-fallback-p4d.log")["signatures"][0]
    assert ofi["time"] == "2026-01-02 10:24:27"
    assert ofi["source"] == "int nccl_net_ofi_create_plugin(nccl_net_ofi_plugin_t**):208"
    # an older WARN line has no time
    old = parsed(NCCL / "ib-async-fatal-qp-alltoall-h100-2node.log")["signatures"]
    assert [(e["id"], e["time"], e["source"]) for e in old] == [
        ("nccl_warn", None, "transport/net_ib.cc:154"), ("ib_fatal", None, "transport/net_ib.cc:154")]


def test_warn_source_with_function_of_nccl_2_30_7():
    # no public log yet: NCCL v2.30.7-1 src/debug.cc formats WARN lines "[%d] %s:%d (%s) NCCL WARN %s"
    line = "[2026-07-01 10:00:00] h1:10:20 [3] %s:%d (%s) NCCL WARN %s\n" % (
        "transport/net_ib/common.cc", 140, "ncclIbAsyncThreadMain",
        "NET/IB : mlx5_0:1 async fatal event on QP (0x1) qpn=7 handle=1 send_cq=2 recv_cq=3 state=6 sq_psn=0 : "
        "local access violation work queue error")
    entry = [e for e in parse(line)["signatures"] if e["id"] == "ib_fatal"][0]
    assert entry["time"] == "2026-07-01 10:00:00"
    assert entry["source"] == "transport/net_ib/common.cc:140 (ncclIbAsyncThreadMain)"


def test_ofi_transport_facts_of_real_logs():
    g6e = parsed(NCCL / "efa-g6e-l40s-4pod-deepspeed-nccl-info.log")        # aws-ofi-nccl 1.16.2
    assert (g6e["ofi_provider"], g6e["ofi_fabric"], g6e["ofi_nics"]) == ("efa", "efa", 4)
    assert g6e["ofi_nics_by_host"] == {"llama-3-8b-node-0-0": 4}
    assert (g6e["ofi_protocol"], g6e["ofi_protocol_source"]) == ("SENDRECV", None)
    assert g6e["gdrdma"] is False and g6e["hosts_without_gdrdma"] == ["llama-3-8b-node-0-0"]
    p5en = parsed(NCCL / "ofi-p5en-h200-16nics-selected-provider-excerpt.log")  # older "Selected Provider is"
    assert (p5en["ofi_provider"], p5en["ofi_fabric"], p5en["ofi_nics_by_host"]) == ("efa", None, {"8h200-3": 16})
    assert p5en["network"] == "efa" and p5en["network_raw"] == "Libfabric"
    fallback = parsed(NCCL / "ofi-plugin-init-failed-socket-fallback-p4d.log")
    assert (fallback["ofi_protocol"], fallback["ofi_protocol_source"]) == ("SENDRECV", "platform")
    assert fallback["ofi_provider"] is None and fallback["gdrdma"] is None
    p4d = parsed(NCCL / "scatter-p4d-2node-efa-srun-label-debuginfo.log")  # "via NET/AWS Libfabric/1(2)/GDRDMA"
    assert p4d["gdrdma"] is True and p4d["hosts_without_gdrdma"] == []


def test_sim_launcher_log_with_one_efa_nic_missing():
    healthy = _nccl.parse_file(str(PLUGINS.parent / "sim" / "replay" / "logs" / "l3-efa-healthy.log"))
    missing = _nccl.parse_file(str(PLUGINS.parent / "sim" / "replay" / "logs" / "l3-efa-nic-missing.log"))
    assert healthy["ofi_nics_by_host"] == {"compute-gpu-st-distributed-ml-1": 32, "compute-gpu-st-distributed-ml-2": 32}
    assert missing["ofi_nics_by_host"] == {"compute-gpu-st-distributed-ml-1": 32, "compute-gpu-st-distributed-ml-2": 31}
    assert missing["ofi_nics"] == 31 and missing["gdrdma"] is True
    assert missing["tables"] == healthy["tables"]


def test_ofi_lines_of_aws_ofi_nccl_1_14_and_later():
    # no public log shows these forms; the lines are aws-ofi-nccl's format strings (src/nccl_ofi_net.cpp
    # v1.14.0..v1.21.x: "Selected provider is %s, fabric is %s (found %d nics)", "Using transport protocol %s
    # (platform set)"; src/nccl_ofi_rdma.cpp: "No eligible providers were found") in NCCL's INFO frame
    log = "".join("h%d:1:2 [0] NCCL INFO NET/OFI %s\n" % (host, msg) for host, msg in (
        (1, "Selected provider is efa, fabric is efa-direct (found 16 nics)"),
        (1, "Using transport protocol RDMA (platform set)"),
        (2, "No eligible providers were found"),
        (2, "Selected provider is efa, fabric is efa-direct (found 15 nics)"),
    ))
    result = parse(log + "h1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Libfabric/0/GDRDMA\n"
                   "h2:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [send] via NET/Libfabric/0\n")
    assert (result["ofi_provider"], result["ofi_fabric"], result["ofi_nics"]) == ("efa", "efa-direct", 15)
    assert result["ofi_nics_by_host"] == {"h1": 16, "h2": 15}
    assert (result["ofi_protocol"], result["ofi_protocol_source"]) == ("RDMA", "platform")
    assert result["ofi_no_eligible_providers"] == 1
    assert result["signature_ids"] == []           # an INFO line, not a failure by itself (the plugin tries SENDRECV next)
    assert result["gdrdma"] is False and result["hosts_without_gdrdma"] == ["h2"]


@pytest.mark.parametrize("raw,provider,network", [
    ("Socket", None, "socket"), ("IB", None, "ib"), ("IBext_v8", None, "ib"), ("IBext", None, "ib"),
    ("AWS Libfabric", "efa", "efa"), ("Libfabric", "cxi", "ofi:cxi"), ("Libfabric", None, "ofi"),
    (None, "efa", "efa"), (None, "tcp", "ofi:tcp"), (None, None, None), ("efa", None, "efa"),
    ("ofi:cxi", None, "ofi:cxi"), ("GPUDirectTCPX", None, "gpudirecttcpx"), ("ofi", None, "ofi"),
])
def test_normalize_network(raw, provider, network):
    assert _nccl_network.normalize_network(raw, provider) == network
    if network:
        assert _nccl_network.normalize_network(network) == network        # stable: applied twice, same word
