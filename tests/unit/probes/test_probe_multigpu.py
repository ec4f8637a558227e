"""L3 probe_multigpu: busbw arithmetic, the nccl-tests table format, launch env handling (no torch)."""
import os
import re

import pytest

from probe_helpers import NCCL_FIXTURES, has_module, load_probe, run_probe

mg = load_probe("multigpu")
GIB = 1 << 30
A3MEGA = os.path.join(NCCL_FIXTURES, "allreduce-h100-a3mega-2node-16rank-ok.log")

# A reader of nccl-tests all_reduce_perf rows as commonly written (size count type redop root + 2x4 cols).
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)"
                 r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s*$")
AVG = re.compile(r"^# Avg bus bandwidth\s*:\s*([\d.eE+-]+)")


def read_fixture_lines():
    if not os.path.exists(A3MEGA):
        pytest.skip("shared nccl fixtures not present")
    return open(A3MEGA).read().split("\n")


@pytest.mark.parametrize("n,factor", [(1, 0.0), (2, 1.0), (4, 1.5), (8, 1.75), (16, 1.875), (72, 2 * 71 / 72.0)])
def test_bus_factor(n, factor):
    assert mg.bus_factor(n) == pytest.approx(factor)


def test_bandwidths_match_recorded_h200x2_run():
    # recorded: 1073741824 B in 3232.0 us on 2 ranks -> algbw 332.22, busbw 332.22
    algbw, busbw = mg.bandwidths(GIB, 3232.0e-6, 2)
    assert round(algbw, 2) == 332.22 and round(busbw, 2) == 332.22
    algbw, busbw = mg.bandwidths(8589934592, 47535e-6, 16)  # a3mega 16-rank row
    assert round(algbw, 2) == 180.71 and round(busbw, 2) == 338.83  # nccl-tests printed 338.82 (float math)
    assert mg.bandwidths(GIB, 0.001, 1) == (pytest.approx(1073.741824), 0.0)
    assert mg.bandwidths(8, 0.0, 8) == (0.0, 0.0)


@pytest.mark.parametrize("usec,text", [(12.3456, "  12.35"), (99.994, "  99.99"), (100.0, "  100.0"),
                                       (135.84, "  135.8"), (9999.94, " 9999.9"), (10000.0, "  10000"),
                                       (47535.2, "  47535"), (1113456.2, "1113456")])
def test_time_column(usec, text):
    assert mg.time_str(usec) == text


def test_rows_are_byte_identical_to_nccl_tests():
    lines = read_fixture_lines()
    want = [l for l in lines if l.startswith("           8 ") or l.startswith("  2147483648 ")]
    assert len(want) == 2
    got_small = mg.format_row(8, 2, "float", [(135.8, 0.0, 0.0, 0), (123.5, 0.0, 0.0, 0)])
    got_big = mg.format_row(2147483648, 536870912, "float", [(12646, 169.81, 318.40, 0), (12641, 169.88, 318.52, 0)])
    assert [got_small, got_big] == want


def test_table_header_is_byte_identical_to_nccl_tests():
    lines = read_fixture_lines()
    i = next(k for k, l in enumerate(lines) if "out-of-place" in l)
    assert mg.table_header_lines()[1:] == lines[i:i + 3]
    assert lines[i - 1] == "#"


def test_header_and_footer():
    head = mg.header_lines(8, 4 * GIB, 2, 5, 20, True,
                           [{"rank": 0, "pid": 4242, "host": "gpu-node", "device_index": 0, "pci_bus_id": 6,
                             "device": "NVIDIA H200"}])
    assert head[1] == ("# nThread 1 nGpus 1 minBytes 8 maxBytes 4294967296 step: 2(factor) warmup iters: 5 "
                       "iters: 20 agg iters: 1 validation: 1 graph: 0")
    assert head[2:4] == ["#", "# Using devices"]
    assert head[4] == "#  Rank  0 Group  0 Pid   4242 on   gpu-node device  0 [0x06] NVIDIA H200"
    assert mg.footer_lines(0, 70.742) == ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 70.742 ", "#"]
    assert mg.footer_lines(2, 0.0)[0] == "# Out of bounds values : 2 FAILED"
    fixture_footer = [l.rstrip() for l in read_fixture_lines() if l.startswith("# Out of") or l.startswith("# Avg")]
    assert fixture_footer == [l.rstrip() for l in mg.footer_lines(0, 70.742)[:2]]


def test_unchecked_rows_print_na():
    row = mg.format_row(1024, 256, "float", [(10.0, 0.1, 0.2, None), (10.0, 0.1, 0.2, None)])
    assert ROW.match(row).group(9) == "N/A"


def test_sweep_sizes():
    sizes = mg.sweep_sizes(8, 4 * GIB, 2)
    assert len(sizes) == 30 and sizes[0] == 8 and sizes[-1] == 4 * GIB and GIB in sizes
    assert mg.sweep_sizes(8, 8, 2) == [8]
    assert mg.sweep_sizes(1024, 1 << 20, 4) == [1024, 4096, 16384, 65536, 262144, 1048576]
    with pytest.raises(ValueError):
        mg.sweep_sizes(0, 8, 2)
    with pytest.raises(ValueError):
        mg.sweep_sizes(8, 64, 1)


def _rows(nranks, sizes, wrong_at=None):
    rows = []
    for s in sizes:
        sec = 5e-6 + s / 300e9
        alg, bus = mg.bandwidths(s, sec, nranks)
        rows.append({"size": s, "count": s // 4, "time_us": sec * 1e6, "algbw": alg, "busbw": bus,
                     "wrong": 3 if s == wrong_at else 0, "time_us_ip": sec * 1e6, "algbw_ip": alg,
                     "busbw_ip": bus, "wrong_ip": 0})
    return rows


def test_summary_world_8():
    sizes = mg.sweep_sizes(8, 4 * GIB, 2)
    s = mg.summarize(_rows(8, sizes, wrong_at=1024), 8)
    assert s["busbw_1gib"] == pytest.approx(GIB / 1e9 / (5e-6 + GIB / 300e9) * 1.75)
    assert s["largest_size"] == 4 * GIB and s["busbw_largest"] > s["busbw_1gib"]
    assert s["peak_busbw"] == s["busbw_largest"]
    assert s["out_of_bounds"] == 1
    assert s["note"] is None
    assert s["avg_busbw"] == pytest.approx(sum(r["busbw"] for r in _rows(8, sizes)) / len(sizes))


def test_summary_world_1_says_busbw_is_not_measurable():
    s = mg.summarize(_rows(1, mg.sweep_sizes(8, 2 * GIB, 2)), 1)
    assert s["busbw_1gib"] == 0.0 and s["busbw_largest"] == 0.0 and s["avg_busbw"] == 0.0
    assert s["algbw_1gib"] > 0
    assert s["note"].startswith("busbw is 0 by definition with one rank (2(n-1)/n = 0)")
    assert s["note"].endswith("not measurable on one GPU")
    empty = mg.summarize([], 1)
    assert empty["busbw_1gib"] is None and empty["largest_size"] is None


def test_whole_table_reads_like_nccl_tests_output():
    """Header + rows + footer as rank 0 prints them, read with the same regexes as a real nccl-tests log."""
    sizes = mg.sweep_sizes(8, 4 * GIB, 2)
    rows = _rows(2, sizes)
    text = mg.header_lines(8, 4 * GIB, 2, 5, 20, True, []) + mg.table_header_lines()
    text += [mg.format_row(r["size"], r["count"], "float",
                           [(r["time_us"], r["algbw"], r["busbw"], r["wrong"]),
                            (r["time_us_ip"], r["algbw_ip"], r["busbw_ip"], r["wrong_ip"])]) for r in rows]
    s = mg.summarize(rows, 2)
    text += mg.footer_lines(s["out_of_bounds"], s["avg_busbw"])
    parsed = [ROW.match(l) for l in text if ROW.match(l)]
    assert [int(m.group(1)) for m in parsed] == sizes
    assert all(m.group(3) == "float" and m.group(4) == "sum" and m.group(5) == "-1" for m in parsed)
    avg = [float(AVG.match(l).group(1)) for l in text if AVG.match(l)]
    assert avg and avg[0] == pytest.approx(s["avg_busbw"], rel=1e-5)
    # and the same regexes read the real nccl-tests fixture
    real = [ROW.match(l) for l in read_fixture_lines() if ROW.match(l)]
    assert len(real) == 31


def test_safety_env_defaults_but_respects_explicit_values():
    env = {}
    assert mg.apply_safety_env(env) == ["NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"]
    assert env == {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
    env = {"NCCL_NVLS_ENABLE": "0", "NVSHMEM_DISABLE_NVLS": "1", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"}
    assert mg.apply_safety_env(env) == []


def test_resolve_launch_single():
    env = {}
    assert mg.resolve_launch(env) == ("single", 0, 1, 0)
    assert env["MASTER_ADDR"] == "127.0.0.1" and 0 < int(env["MASTER_PORT"]) < 65536


def test_resolve_launch_torchrun():
    env = {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3", "TORCHELASTIC_RUN_ID": "x",
           "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29400"}
    assert mg.resolve_launch(env) == ("torchrun", 3, 8, 3)
    assert env["MASTER_PORT"] == "29400"


def test_resolve_launch_mpirun():
    env = {"OMPI_COMM_WORLD_RANK": "9", "OMPI_COMM_WORLD_SIZE": "16", "OMPI_COMM_WORLD_LOCAL_RANK": "1"}
    with pytest.raises(mg.ProbeParamError):
        mg.resolve_launch(dict(env))
    assert mg.resolve_launch(env, master_addr="launcher-0", master_port=23456) == ("mpirun", 9, 16, 1)
    assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"], env["MASTER_ADDR"], env["MASTER_PORT"]) == \
        ("9", "16", "1", "launcher-0", "23456")
    env = {"PMI_RANK": "2", "PMI_SIZE": "4", "MASTER_ADDR": "h"}
    assert mg.resolve_launch(env) == ("mpirun", 2, 4, 0)


@pytest.mark.parametrize("params,needle", [
    ({"sweep_dtype": "int4"}, "sweep_dtype"), ({"backend": "mpi"}, "backend"), ({"step_factor": 1}, "step_factor"),
    ({"min_bytes": 64, "max_bytes": 8}, "max_bytes"), ({"dtype": "fp8"}, "dtype"),
])
def test_bad_params(params, needle):
    run = run_probe("multigpu", params)
    assert run.rc == 2, run
    assert needle in run.json["error"]


@pytest.mark.skipif(has_module("torch"), reason="torch is installed here")
def test_without_torch_reports_cleanly():
    run = run_probe("multigpu", {}, unset=[k for k, _value in mg.SAFETY_ENV])
    j = run.json
    assert run.rc == 0, run
    assert j["error"] == "torch is not importable: ModuleNotFoundError: No module named 'torch'"
    assert j["init"] == {"ok": False, "error": "not attempted (torch not importable)"}
    assert j["sweep"]["ok"] is False and j["allreduce_ok"] is False and j["ok"] is False
    assert j["env"]["NCCL_NVLS_ENABLE"] == "0" and "NCCL_NVLS_ENABLE" in j["env_defaulted"]
    assert (j["launcher"], j["world_size"], j["rank"]) == ("single", 1, 0)


def test_explicit_nvls_setting_is_kept_and_nccl_debug_param_applies():
    run = run_probe("multigpu", {"nccl_debug": "INFO", "sweep": False, "fsdp": False, "allreduce_check": False,
                                 "backend": "gloo"},
                    env={"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1"},
                    unset=["NVSHMEM_DISABLE_NVLS"])
    j = run.json
    assert j["env"]["NCCL_DEBUG"] == "INFO"
    assert j["env_defaulted"] == ["NVSHMEM_DISABLE_NVLS"]


def _collection_nccl_parser():
    try:
        from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl, _nccl_results
    except ImportError:
        pytest.skip("plugins/module_utils/nccl/_nccl.py not importable here")
    return _nccl, _nccl_results


def test_the_collections_nccl_parser_reads_rank_0_stdout():
    """Round trip: what rank 0 prints (table, then the JSON line) is read by nccl_log_info's parser."""
    _nccl, _nccl_results = _collection_nccl_parser()
    sizes = mg.sweep_sizes(8, 4 * GIB, 2)
    rows = _rows(2, sizes)
    ranks = [{"rank": i, "pid": 100 + i, "host": "gpu-node", "device_index": i, "pci_bus_id": 6 + i,
              "device": "NVIDIA H200"} for i in range(2)]
    lines = ["gpu-node:100:100 [0] NCCL INFO NCCL version 2.28.9+cuda13.0"]
    lines += mg.header_lines(8, 4 * GIB, 2, 5, 20, True, ranks) + mg.table_header_lines()
    lines += [mg.format_row(r["size"], r["count"], "float",
                            [(r["time_us"], r["algbw"], r["busbw"], r["wrong"]),
                             (r["time_us_ip"], r["algbw_ip"], r["busbw_ip"], r["wrong_ip"])]) for r in rows]
    s = mg.summarize(rows, 2)
    lines += mg.footer_lines(s["out_of_bounds"], s["avg_busbw"]) + ["", '{"probe": "multigpu", "schema": 1}']
    result = _nccl.parse_text("\n".join(lines) + "\n")
    table = result["tables"][-1]
    assert table["test"] == "all_reduce_perf" and table["complete"] is True
    assert [r["size"] for r in table["rows"]] == sizes
    assert result["nranks"] == 2 and result["wrong_total"] == 0
    assert _nccl_results.busbw_at_size(result, GIB) == round(s["busbw_1gib"], 2)
    assert result["busbw_at_largest_size"] == round(s["busbw_largest"], 2)
    assert table["avg_busbw"] == pytest.approx(s["avg_busbw"], rel=1e-5)
