# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The NCCL failure catalog against NCCL's own source (issue 32).

* every ncclResult_t code of the vendored enum lines (tests/unit/fixtures/nccl/from-source/nccl_result_t-*.h,
  NVIDIA/nccl src/nccl.h.in v2.28.9-1 and v2.30.7-1) has a signature that names it;
* every signature cites its source and has a fixture with provenance: a real public log where one was found
  (tests/unit/fixtures/nccl/SOURCES.md), else lines printed with the source's format string
  (from-source/make.py, from-source/SOURCES.md);
* docs/verdicts.md lists each signature with its source and its fixture.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl, _nccl_catalog, _nccl_network

REPO = Path(__file__).resolve().parents[4]
NCCL = REPO / "tests" / "unit" / "fixtures" / "nccl"
FROM_SOURCE = NCCL / "from-source"
HEADERS = ("nccl_result_t-v2.28.9-1.h", "nccl_result_t-v2.30.7-1.h")

# signature id -> (fixture under tests/unit/fixtures/nccl, "real" or "source")
SIGNATURE_FIXTURES = {
    "segfault": ("segfault-ucx-caught-signal-11-nccl-2.22-excerpt.log", "real"),
    "process_aborted": ("pytorch-watchdog-timeout-broadcast-2rank-deepspeed.log", "real"),
    "efa_cm_error": ("efa-cm-req-handle-error-unresponsive-receiver-torch.log", "real"),
    "nccl_warn": ("allreduce-socket-transport-finalizeaccept-warn.log", "real"),
    "unhandled_system_error": ("pytorch-unhandled-system-error-nccl-2.10.log", "real"),
    "unhandled_cuda_error": ("allreduce-h100-1024rank-partial-then-unhandled-cuda-error-mpirun.log", "real"),
    "internal_error": ("allreduce-rtxa6000-internal-error-primary-job-terminated-excerpt.log", "real"),
    "test_failure": ("allreduce-gh200-2node-wrong-nonzero-bounds-failed.log", "real"),
    "wrong_results": ("allreduce-gh200-2node-wrong-nonzero-bounds-failed.log", "real"),
    "watchdog_timeout": ("pytorch-watchdog-timeout-broadcast-2rank-deepspeed.log", "real"),
    "mpi_abnormal_exit": ("allreduce-rtxa6000-internal-error-primary-job-terminated-excerpt.log", "real"),
    "ofi_init_failed": ("ofi-plugin-init-failed-socket-fallback-p4d.log", "real"),
    "ofi_av_error": ("ofi-couldnt-open-av-nccl-message-transfer.log", "real"),
    "ofi_libfabric_too_old": ("from-source/ofi-libfabric-too-old-from-source.log", "source"),
    "ib_fatal": ("ib-async-fatal-qp-alltoall-h100-2node.log", "real"),
    "cuda_device_busy": ("from-source/cuda-device-busy-from-source.log", "source"),
    "reg_mr_error": ("ofi-reg-mr-cannot-allocate-memory-alltoall-excerpt.log", "real"),
    "efa_rx_buf_post": ("efa-rx-buf-post-cannot-allocate-memory-memlock-excerpt.log", "real"),
    "socket_fallback": ("socket-fallback-polaris-a100-2node-ddp.log", "real"),
    "invalid_argument": ("invalid-argument-broadcast-null-pointer-torch.log", "real"),
    "invalid_usage": ("invalid-usage-duplicate-gpu-megatron-torch-excerpt.log", "real"),
    "remote_error": ("efa-cm-req-handle-error-unresponsive-receiver-torch.log", "real"),
    "in_progress": ("from-source/in-progress-nonblocking-comm-from-source.log", "source"),
    "nccl_timeout": ("from-source/nccl-timeout-2.30-from-source.log", "source"),
    "nccl_async_error": ("socket-finalizeaccept-proxy-service-failed-excerpt.log", "real"),
    "comm_aborted": ("pytorch-watchdog-timeout-broadcast-2rank-deepspeed.log", "real"),
    "socket_error": ("socket-closed-by-remote-peer-bootstrap-excerpt.log", "real"),
    "ofi_completion_error": ("efa-cm-req-handle-error-unresponsive-receiver-torch.log", "real"),
    "sharp_error": ("from-source/sharp-collnet-failed-from-source.log", "source"),
}


def enum_codes(name):
    """(code name, value) of the ncclResult_t enum in a vendored header."""
    text = (FROM_SOURCE / name).read_text()
    body = re.search(r"typedef enum \{(.*?)\} ncclResult_t;", text, re.S).group(1)
    return [(m.group(1), int(m.group(2))) for m in re.finditer(r"(nccl\w+)\s*=\s*(\d+)", body)]


def error_strings():
    """ncclGetErrorString's text per code, from the vendored v2.30.7-1 src/init.cc lines."""
    text = (FROM_SOURCE / HEADERS[-1]).read_text()
    return dict(re.findall(r"case (nccl\w+):\s*return \"([^\"]*)\";", text))


def parse(text):
    return _nccl.parse_text(text)


def test_the_vendored_headers_keep_nccls_notice_and_provenance():
    bsd, apache = [(FROM_SOURCE / name).read_text() for name in HEADERS]
    assert "Redistributions of source code must retain the above copyright" in bsd
    assert "dbc86fd06e8b0c4517b95d8958a09ccacf9520c9" in bsd and "src/nccl.h.in" in bsd
    assert "SPDX-License-Identifier: Apache-2.0" in apache and "73cf112295c33aee2b895f329f592f2a9b4b0f97" in apache
    assert enum_codes(HEADERS[0])[-1][0] == "ncclNumResults"
    assert ("ncclTimeout", 8) in enum_codes(HEADERS[1])


@pytest.mark.parametrize("header", HEADERS)
def test_every_nccl_result_code_has_a_signature(header):
    codes = enum_codes(header)
    assert len(codes) >= 9 and codes[0] == ("ncclSuccess", 0)
    strings = error_strings()
    for code, _value in codes:
        if code in ("ncclSuccess", "ncclNumResults"):
            continue
        assert code in _nccl_catalog.RESULT_CODES, "ncclResult_t %s has no signature" % code
        sig_id, text = _nccl_catalog.RESULT_CODES[code]
        assert sig_id in _nccl_catalog.SIGNATURE_IDS, code
        assert strings[code] == text, code
        # NCCL's own text, as PyTorch (NCCL error in: ..., %s, NCCL version) and nccl-tests print it
        torch_line = "torch.distributed.DistBackendError: NCCL error in: x/NCCLUtils.hpp:1, %s, NCCL version 2.30.7" % text
        tests_line = "node-a: Test NCCL failure common.cu:1010 '%s / '" % text
        for line in (torch_line, tests_line, "%s: detail" % code):
            assert sig_id in parse(line + "\n")["signature_ids"], (code, line)
    assert _nccl_catalog.RESULT_CODES["ncclSuccess"][0] is None


def test_every_signature_cites_a_source_file_line_and_version():
    for entry in _nccl_catalog.CATALOG:
        assert entry["sources"], entry["id"]
        for source in entry["sources"]:
            assert re.search(r"[\w./-]+\.(?:cc|cpp|c|h|in|cu|log)\b", source) or "Open MPI" in source, (entry["id"], source)
        joined = " ".join(entry["sources"])
        assert re.search(r"\bv\d+\.\d+|commit|torch 2\.\d|real log", joined), entry["id"]


def test_every_signature_has_a_fixture_with_provenance():
    assert sorted(SIGNATURE_FIXTURES) == sorted(_nccl_catalog.SIGNATURE_IDS)
    real_sources = (NCCL / "SOURCES.md").read_text()
    built_sources = (FROM_SOURCE / "SOURCES.md").read_text()
    for sig_id, (name, kind) in sorted(SIGNATURE_FIXTURES.items()):
        path = NCCL / name
        if not path.exists():
            path = NCCL / (name + ".gz")
        assert path.is_file(), name
        rows = [line for line in (real_sources if kind == "real" else built_sources).splitlines()
                if line.startswith("| `%s" % path.name.replace(".gz", "")) or ("`%s`" % Path(name).name) in line]
        assert rows, "%s: %s is not in its SOURCES.md" % (sig_id, name)
        if kind == "real":
            assert re.search(r"github\.com/|https://", rows[0]), name
        else:
            assert Path(name).parent.name == "from-source"
        assert sig_id in _nccl.parse_file(str(path))["signature_ids"] if path.suffix != ".gz" else True, sig_id


def test_source_built_fixtures_are_what_make_py_writes(tmp_path):
    """The from-source logs are the output of make.py (the format strings it quotes), nothing edited."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_from_source", str(FROM_SOURCE / "make.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert sorted(module.FIXTURES) == sorted(p.name for p in FROM_SOURCE.glob("*.log"))
    for name, lines in module.FIXTURES.items():
        assert (FROM_SOURCE / name).read_text() == "\n".join(lines) + "\n", name


@pytest.mark.parametrize("line,sig_id", [
    # PyTorch's ProcessGroupNCCL lines with and without the "[rankN]:" prefix torch adds to C++ log lines
    ("[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation "
     "timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST) ran for 600081 milliseconds before timing out.", "watchdog_timeout"),
    ("[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9)",
     "watchdog_timeout"),
    ("[rank3]:[E1218 20:27:21 ProcessGroupNCCL.cpp:681] [Rank 3] Some NCCL operations have failed or timed out. "
     "Due to the asynchronous nature of CUDA kernels", "comm_aborted"),
    ("[E ProcessGroupNCCL.cpp:487] To avoid data inconsistency, we are taking the entire process down.", "comm_aborted"),
    ("[E ProcessGroupNCCL.cpp:852] [Rank 16] NCCL watchdog thread terminated with exception: NCCL error: remote "
     "process exited or there was a network error, NCCL version 2.19.3", "comm_aborted"),
    ("torch.distributed.DistBackendError: NCCL communicator was aborted on rank 2.", "comm_aborted"),
    ("h:1:2 [0] proxy.cc:1698 NCCL WARN [Service thread] Error encountered progressing operation=Connect, res=3, "
     "closing connection", "nccl_async_error"),
    ("h:1:2 [3] init.cc:2348 NCCL WARN commReclaim: cleanup comm 0x55d0 rank 3 failed in destroy/abort, error 6",
     "nccl_async_error"),
    ("h:1:2 [0] transport/net_socket.cc:565 NCCL WARN NET/Socket : peer 10.0.0.2<4242> message truncated : "
     "receiving 1048576 bytes instead of 65536.", "socket_error"),
    ("h:1:2 [0] void nccl_net_ofi_rdma_ep_t::handle_error(...):1463 NCCL WARN NET/OFI Remote write completed with "
     "error. RC: 5. Flags: 0. Error: 5 (Input/output error). Completed length: 0", "ofi_completion_error"),
    ("h:1:2 [0] NCCL WARN NET/OFI Unable to read from fi_cq_readerr. RC: -11. Error: Resource temporarily "
     "unavailable", "ofi_completion_error"),
    ("h:1:2 [0] sharp_plugin.c:281 NCCL WARN SHARP group create failed: Unknown error(-1)", "sharp_error"),
    ("h:1:2 [0] ib_plugin.c:670 NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129",
     "ib_fatal"),
    ("h:1:2 [0] transport/net_ib.cc:2543 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<4242> with "
     "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0)", "ib_fatal"),
    ("h:1:2 [0] misc/argcheck.cc:30 NCCL WARN AllReduce : recvbuff argument is NULL", "invalid_argument"),
    ("h:1:2 [0] init.cc:904 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1b000",
     "invalid_usage"),
    ("h:1:2 [0] misc/ibvwrap.cc:40 NCCL WARN Call to ibv_open_device failed with error Cannot allocate memory",
     "unhandled_system_error"),
    ("h:1:2 [0] init.cc:1527 NCCL WARN Cuda failure 'out of memory'", "unhandled_cuda_error"),
    ("h:1:2 [0] include/cudawrap.h:34 NCCL WARN Cuda failure 2 'out of memory'", "unhandled_cuda_error"),
    # libfabric src/log.c:159 ofi_log's "%s:%d:%ld:%s:%s:%s:%s():%d<%s> %s" frame around EFA_WARN(FI_LOG_EQ,
    # "Writing error to EQ: err: %s (%zd) prov_errno: %s (%zd)\n") of prov/efa/src/efa_base_ep.c:464 (v2.1.0)
    ("libfabric:42:1745020800::efa:eq:efa_base_ep_write_eq_error():464<warn> Writing error to EQ: err: Cannot "
     "allocate memory (-12) prov_errno: Failure to post internal receive buffers (4112)", "efa_rx_buf_post"),
])
def test_source_lines_are_named(line, sig_id):
    assert sig_id in parse(line + "\n")["signature_ids"]


@pytest.mark.parametrize("raw,provider,expected", [
    ("Socket", None, "socket"), ("IB", None, "ib"), ("IBext", None, "ib"), ("IBext_v8", None, "ib"),
    ("UCX", None, "ucx"), ("UCX_RMA", None, "ucx"), ("Libfabric", "efa", "efa"), ("AWS Libfabric", "efa", "efa"),
    ("Libfabric", "cxi", "ofi:cxi"), ("AWS Libfabric", "tcp", "ofi:tcp"), ("Libfabric", None, "ofi"),
    ("ofi:efa", None, "efa"), ("ofi:cxi", None, "ofi:cxi"), ("efa", None, "efa"),
])
def test_every_net_plugin_name_the_sources_print_is_normalised(raw, provider, expected):
    assert _nccl_network.normalize_network(raw, provider) == expected
    assert expected.split(":")[0] in _nccl_network.NETWORKS or expected in _nccl_network.NETWORKS


def test_network_raw_is_kept():
    log = "h:1:2 [0] NCCL INFO Using network UCX\n"
    result = parse(log)
    assert (result["network"], result["network_raw"]) == ("ucx", "UCX")


def test_verdicts_doc_lists_every_signature_with_its_source_and_fixture():
    doc = (REPO / "docs" / "verdicts.md").read_text()
    for sig_id, (name, kind) in SIGNATURE_FIXTURES.items():
        rows = [line for line in doc.splitlines() if line.startswith("| `%s` |" % sig_id)]
        assert len(rows) == 1, sig_id
        assert Path(name).name in rows[0], sig_id
        assert ("real" if kind == "real" else "built from source") in rows[0], sig_id
