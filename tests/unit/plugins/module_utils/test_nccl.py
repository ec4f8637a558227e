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

import json

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_catalog
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_results
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_signatures

from nccl_kit import AR, FIXTURES, NCCL, PLUGINS, fixture, fixture_bytes, parsed

RECORDED_LOG = FIXTURES / "recorded" / "h200x2" / "torch-allreduce-2xh200-nvlink-nccl-info.log"


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
    "efa-rx-buf-post-cannot-allocate-memory-memlock-excerpt.log": dict(
        # libfabric's own abort text: no NCCL line, so no network and no nccl_warn
        tests=[], rows=[], peak=None, largest=None, size=None, avg=None,
        wrong=None, complete=None, network=None, version=None, nranks=None, nnodes=None,
        sigs={"efa_rx_buf_post": 1}),
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


ALL_CASES = [(name, fixture(name), expected) for name, expected in sorted(EXPECTED.items())]
ALL_CASES.append(("recorded/" + RECORDED_LOG.name, RECORDED_LOG, EXPECTED_RECORDED))


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


def test_efa_memlock_abort_is_named_and_healthy_efa_logs_are_not():
    # awslabs/awsome-distributed-ai#647: the rank's stderr when RLIMIT_MEMLOCK was 65536
    result = parsed(NCCL / "efa-rx-buf-post-cannot-allocate-memory-memlock-excerpt.log")
    entry, = result["signatures"]
    assert (entry["id"], entry["line_no"]) == ("efa_rx_buf_post", 4)
    assert "L0's efa_memlock check" in entry["hint"] and "unlimited" in entry["hint"]
    healthy = (PLUGINS.parent / "sim" / "replay" / "logs" / "l3-efa-healthy.log",
               NCCL / "efa-g6e-l40s-4pod-deepspeed-nccl-info.log",
               NCCL / "scatter-p4d-2node-efa-srun-label-debuginfo.log")
    for path in healthy:
        assert "efa_rx_buf_post" not in parsed(path)["signature_ids"], path.name
    # aws-ofi-nccl's "Unable to register memory ... Cannot allocate memory" stays reg_mr_error alone
    reg_mr = parsed(NCCL / "ofi-reg-mr-cannot-allocate-memory-alltoall-excerpt.log")["signature_ids"]
    assert "reg_mr_error" in reg_mr and "efa_rx_buf_post" not in reg_mr


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
