#!/usr/bin/env python
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Throughput and memory of the NCCL log parser (plugins/module_utils/nccl/_nccl*.py, through _nccl.parse_file) next to grep.

Generates an NCCL_DEBUG=INFO log shaped like a 256-rank run (32 nodes x 8 GPUs, every line tagged
by Open MPI as "[1,<rank>]<stdout>:", thousands of channel/ring/tree/proxy INFO lines per rank,
then an nccl-tests all_reduce_perf table), repeated run after run until the file reaches the
requested size, in a temporary directory. Then, on the same file and in the same run:

* the parser, in a child process (this script with --child): wall time of parse_file() and the
  child's peak RSS (resource.getrusage(RUSAGE_SELF).ru_maxrss read by the child at the end, so the
  whole interpreter is included);
* LC_ALL=C grep -cE with a pattern that selects the same kinds of lines the parser looks at.

Each is run --repeat times, alternating, with the page cache warm. Medians are reported twice: from
wall-clock time and from CPU time (parser: time.process_time() in the child around parse_file();
grep: ru_utime + ru_stime of getrusage(RUSAGE_CHILDREN) before and after), because on a shared
machine wall-clock time also measures the neighbours. The figure of merit is parser MB/s divided by
grep MB/s. MB = 10^6 bytes. Usage:

    python benchmarks/parse_throughput/run.py [--size-mib 1024] [--repeat 5] [--keep DIR] [--log FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
COLLECTIONS = os.path.join(REPO, ".collections")

NODES = 32
GPUS = 8
RANKS = NODES * GPUS

# Lines the parser has to look at; grep is asked for the same kinds of lines.
GREP_PATTERN = (
    r"NCCL (WARN|INFO (NCCL version|Using network|NET/|comm 0x|ncclCommInit))"
    r"|busbw|Out of bounds|Avg bus bandwidth|NCCL version|# +Rank +[0-9]+"
    r"|[0-9]+ +[0-9]+ +(float|double|half|bfloat16|int8|uint8|int32|int64) "
)


def _run_text(run, rng):
    """Lines of one 256-rank all_reduce_perf run (as bytes)."""
    hosts = ["ip-10-1-%d-%d" % (node // 16, 10 + node) for node in range(NODES)]
    pids = [20000 + run * 1000 + rank for rank in range(RANKS)]
    out = []

    def tag(rank):
        return "[1,%d]<stdout>:" % rank

    def info(rank, msg, tid_off=400):
        host = hosts[rank // GPUS]
        pid = pids[rank]
        return "%s%s:%d:%d [%d] NCCL INFO %s\n" % (tag(rank), host, pid, pid + tid_off, rank % GPUS, msg)

    out.append(tag(0) + "# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) warmup iters: 5 "
               "iters: 20 agg iters: 1 validation: 1 graph: 0\n")
    out.append(tag(0) + "#\n" + tag(0) + "# Using devices\n")
    for rank in range(RANKS):
        out.append("%s#  Rank %3d Group  0 Pid %6d on %s device  %d [0x%02x] NVIDIA H100 80GB HBM3\n"
                   % (tag(0), rank, pids[rank], hosts[rank // GPUS], rank % GPUS, 16 * (rank % GPUS)))
    per_rank = []
    for rank in range(RANKS):
        lines = [
            info(rank, "Bootstrap : Using eth0:10.1.%d.%d<0>" % (rank // 256, rank % 256), 0),
            info(rank, "cudaDriverVersion 12040", 0),
            info(rank, "NET/Plugin: Loaded net plugin AWS Libfabric (v8)"),
            info(rank, "NET/OFI Initializing aws-ofi-nccl 1.9.1-aws"),
            info(rank, "NET/OFI Using Libfabric version 1.21"),
            info(rank, "NET/OFI Selected Provider is efa (found 32 nics)"),
            info(rank, "Using network AWS Libfabric"),
            info(rank, "comm 0x55%08x rank %d nranks %d cudaDev %d nvmlDev %d busId %x0 commId 0x5b1e - Init START"
                 % (rank, rank, RANKS, rank % GPUS, rank % GPUS, 0x101c + rank % GPUS)),
            info(rank, "comm 0x55%08x rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0"
                 % (rank, rank, RANKS, NODES, GPUS, rank % GPUS)),
        ]
        if rank == 0:
            lines.insert(2, tag(0) + "NCCL version 2.21.5+cuda12.4\n")
        for channel in range(32):
            lines.append(info(rank, "Channel %02d/32 :    0   8  16  24  32  40  48  56  64  72  80  88  96 104 112"
                                    % channel))
        for ring in range(32):
            lines.append(info(rank, "Ring %02d : %d -> %d -> %d" % (ring, (rank - 1) % RANKS, rank, (rank + 1) % RANKS)))
        lines.append(info(rank, "Trees [0] %d/-1/-1->%d->%d [1] %d/-1/-1->%d->%d [2] %d/-1/-1->%d->%d"
                          % ((rank + 1) % RANKS, rank, rank - 1, (rank + 1) % RANKS, rank, rank - 1,
                             (rank + 8) % RANKS, rank, rank - 8)))
        for channel in range(32):
            peer = (rank + GPUS) % RANKS
            lines.append(info(rank, "Channel %02d/0 : %d[%d] -> %d[%d] [send] via NET/AWS Libfabric/%d/GDRDMA"
                              % (channel, rank, rank % GPUS, peer, peer % GPUS, (rank % GPUS) // 2)))
            lines.append(info(rank, "Channel %02d/0 : %d[%d] -> %d[%d] [receive] via NET/AWS Libfabric/%d/GDRDMA"
                              % (channel, peer, peer % GPUS, rank, rank % GPUS, (rank % GPUS) // 2)))
            lines.append(info(rank, "Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read"
                              % (channel, rank, rank % GPUS, rank - rank % GPUS + (rank + 1) % GPUS,
                                 (rank + 1) % GPUS)))
        for conn in range(16):
            lines.append(info(rank, "Connected to proxy localRank %d -> connection 0x7f%010x"
                              % (rank % GPUS, rng.getrandbits(40)), 420))
            lines.append(info(rank, "New proxy send connection %d from local rank %d, transport 2"
                              % (conn, rank % GPUS), 430))
        lines.append(info(rank, "Connected all rings, use ring PXN 1 GDR 1"))
        lines.append(info(rank, "Connected all trees"))
        lines.append(info(rank, "threadThresholds 8/8/64 | 2048/8/64 | 512 | 512"))
        lines.append(info(rank, "32 coll channels, 32 collnet channels, 0 nvls channels, 32 p2p channels"))
        lines.append(info(rank, "comm 0x55%08x rank %d nranks %d cudaDev %d nvmlDev %d busId %x0 commId 0x5b1e - "
                                "Init COMPLETE" % (rank, rank, RANKS, rank % GPUS, rank % GPUS, 0x101c + rank % GPUS)))
        per_rank.append(lines)
    # interleave the ranks the way concurrent writers do
    cursors = [0] * RANKS
    live = list(range(RANKS))
    while live:
        index = rng.randrange(len(live))
        rank = live[index]
        burst = rng.randint(1, 6)
        lines = per_rank[rank]
        out.extend(lines[cursors[rank]:cursors[rank] + burst])
        cursors[rank] += burst
        if cursors[rank] >= len(lines):
            live[index] = live[-1]
            live.pop()
    out.append(tag(0) + "#\n")
    out.append(tag(0) + "#                                                              out-of-place"
                        "                       in-place          \n")
    out.append(tag(0) + "#       size         count      type   redop    root     time   algbw   busbw #wrong"
                        "     time   algbw   busbw #wrong\n")
    out.append(tag(0) + "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
                        "            (us)  (GB/s)  (GB/s)       \n")
    factor = 2.0 * (RANKS - 1) / RANKS
    size = 8
    while size <= 17179869184:
        peak = 480.0 * size / (size + 2.0e8)
        busbw = max(peak * rng.uniform(0.97, 1.0), 0.0)
        algbw = busbw / factor
        time_us = size / (algbw * 1e3) if algbw > 0 else 40.0
        time_us = max(time_us, 40.0 + rng.random())
        out.append("%s%12d  %12d  %8s  %6s  %6d  %7.1f  %6.2f  %6.2f  %5d  %7.1f  %6.2f  %6.2f  %5d\n"
                   % (tag(0), size, size // 4, "float", "sum", -1, time_us, algbw, busbw, 0,
                      time_us, algbw, busbw * 0.999, 0))
        if rng.random() < 0.3:    # INFO lines from other ranks inside the table
            rank = rng.randrange(1, RANKS)
            msg = "Channel %02d/1 : %d[%d] -> %d[%d] via P2P/CUMEM/read" % (
                rng.randrange(32), rank, rank % GPUS, rank, rank % GPUS)
            out.append(info(rank, msg))
        size *= 2
    out.append(tag(0) + "# Out of bounds values : 0 OK\n")
    out.append(tag(0) + "# Avg bus bandwidth    : %.4f \n" % (100.0 + run % 7))
    out.append(tag(0) + "#\n")
    return "".join(out).encode()


def generate(path, size_mib, seed=7):
    """Write the synthetic log; returns (bytes written, number of runs)."""
    rng = random.Random(seed)
    target = size_mib * 1024 * 1024
    header = ("+ mpirun --allow-run-as-root -np %d -N %d --hostfile /etc/mpi/hostfile -x NCCL_DEBUG=INFO "
              "-x FI_PROVIDER=efa /opt/nccl-tests/build/all_reduce_perf -b 8 -e 16G -f 2 -g 1\n" % (RANKS, GPUS))
    templates = [_run_text(run, rng) for run in range(3)]
    written = 0
    runs = 0
    with open(path, "wb") as out:
        out.write(header.encode())
        written += len(header)
        while written < target:
            block = templates[runs % len(templates)]
            out.write(block)
            written += len(block)
            runs += 1
    return written, runs


def _vm_hwm_kib():
    """Peak resident set size of this process (VmHWM), KiB.

    VmHWM belongs to the process image and starts afresh at exec. getrusage's ru_maxrss does not:
    on Linux it keeps the high-water mark of the image before exec, i.e. of the forked copy of the
    parent (which holds the log generator), so it would report the parent's size. ru_maxrss is the
    fallback where /proc is missing.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(path):
    """Runs in the child process: parse, then print one JSON line."""
    sys.path.insert(0, COLLECTIONS)
    from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl  # noqa: E402

    before_kib = _vm_hwm_kib()
    start = time.perf_counter()
    cpu_start = time.process_time()
    result = _nccl.parse_file(path)
    cpu = time.process_time() - cpu_start
    elapsed = time.perf_counter() - start
    print(json.dumps({
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "peak_rss_kib": _vm_hwm_kib(),
        "rss_before_parse_kib": before_kib,
        "ru_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "tables": len(result["tables"]),
        "lines": result["lines"],
        "summary": result["summary"],
    }))


def _warm(path):
    with open(path, "rb") as stream:
        while stream.read(1 << 24):
            pass


def measure(path, repeat):
    size = os.path.getsize(path)
    parser_runs = []
    grep_runs = []
    grep = shutil.which("grep")
    env = dict(os.environ, LC_ALL="C")
    _warm(path)
    last = None
    for _attempt in range(repeat):
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", path],
                              check=True, stdout=subprocess.PIPE, universal_newlines=True)
        last = json.loads(proc.stdout.strip().splitlines()[-1])
        parser_runs.append(last)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        out = subprocess.run([grep, "-cE", GREP_PATTERN, path], check=False, stdout=subprocess.PIPE,
                             env=env, universal_newlines=True)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (usage.ru_utime + usage.ru_stime)
        grep_runs.append({"seconds": elapsed, "cpu_seconds": cpu, "count": int(out.stdout.strip() or 0)})

    def rate(runs, key):
        return size / statistics.median(run[key] for run in runs) / 1e6

    parser_mbs, grep_mbs = rate(parser_runs, "seconds"), rate(grep_runs, "seconds")
    parser_cpu_mbs, grep_cpu_mbs = rate(parser_runs, "cpu_seconds"), rate(grep_runs, "cpu_seconds")
    return {
        "file_bytes": size,
        "file_mib": round(size / 1048576.0, 1),
        "lines": last["lines"],
        "repeat": repeat,
        "parser_seconds": [round(run["seconds"], 3) for run in parser_runs],
        "parser_cpu_seconds": [round(run["cpu_seconds"], 3) for run in parser_runs],
        "grep_seconds": [round(run["seconds"], 3) for run in grep_runs],
        "grep_cpu_seconds": [round(run["cpu_seconds"], 3) for run in grep_runs],
        "parser_mb_s": round(parser_mbs, 1),
        "grep_mb_s": round(grep_mbs, 1),
        "ratio_parser_to_grep": round(parser_mbs / grep_mbs, 3),
        "parser_cpu_mb_s": round(parser_cpu_mbs, 1),
        "grep_cpu_mb_s": round(grep_cpu_mbs, 1),
        "ratio_parser_to_grep_cpu": round(parser_cpu_mbs / grep_cpu_mbs, 3),
        "peak_rss_mib": round(max(run["peak_rss_kib"] for run in parser_runs) / 1024.0, 1),
        "rss_before_parse_mib": round(max(run["rss_before_parse_kib"] for run in parser_runs) / 1024.0, 1),
        "child_ru_maxrss_mib": round(max(run["ru_maxrss_kib"] for run in parser_runs) / 1024.0, 1),
        "grep_matching_lines": grep_runs[-1]["count"],
        "parser_tables": last["tables"],
        "parser_summary": last["summary"],
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "grep_pattern": GREP_PATTERN,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024, help="size of the generated log (default 1024)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of parser and grep each (median reported)")
    parser.add_argument("--keep", metavar="DIR", help="write the log into DIR and keep it")
    parser.add_argument("--log", metavar="FILE", help="measure an existing log instead of generating one")
    parser.add_argument("--child", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    workdir = None
    if args.log:
        path = args.log
    else:
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            path = os.path.join(args.keep, "nccl-256rank-info.log")
        else:
            workdir = tempfile.mkdtemp(prefix="nccl-bench-")
            path = os.path.join(workdir, "nccl-256rank-info.log")
        start = time.perf_counter()
        written, runs = generate(path, args.size_mib)
        sys.stderr.write("generated %s: %.1f MiB, %d runs, %.1f s\n"
                         % (path, written / 1048576.0, runs, time.perf_counter() - start))
    try:
        report = measure(path, args.repeat)
    finally:
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(report, indent=2))
    sys.stderr.write(
        "wall: parser %.1f MB/s, grep %.1f MB/s, ratio %.2f; cpu: parser %.1f MB/s, grep %.1f MB/s, ratio %.2f; "
        "parser peak RSS %.1f MiB; file %.1f MiB\n"
        % (report["parser_mb_s"], report["grep_mb_s"], report["ratio_parser_to_grep"],
           report["parser_cpu_mb_s"], report["grep_cpu_mb_s"], report["ratio_parser_to_grep_cpu"],
           report["peak_rss_mib"], report["file_mib"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
