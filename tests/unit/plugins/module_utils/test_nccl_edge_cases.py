# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests of the NCCL log reader (plugins/module_utils/nccl/_nccl*.py) on synthetic logs and its edge cases:
table formats, the network rules, the signature catalog, file reading and the modules' hygiene. The fixture logs'
expected values: test_nccl.py."""

from __future__ import annotations

import ast
import json
import os
import re

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_catalog
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_network
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_parser
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_results
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl_tables

from nccl_kit import AR, NCCL, PLUGINS, fixture, fixture_bytes, parsed


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
        "cuda_device_busy", "reg_mr_error", "efa_rx_buf_post", "socket_fallback",
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
