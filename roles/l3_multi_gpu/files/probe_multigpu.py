"""L3 probe: NCCL process group, FSDP wrap + forward/backward, exact all-reduce check, busbw sweep.

Usage:  python3 probe_multigpu.py '{"max_bytes": 4294967296}'                 (world 1)
        torchrun --nproc-per-node=8 probe_multigpu.py '{"model_path": "/fsx/models/tiny"}'
Rank 0 prints an nccl-tests all_reduce_perf table, then the JSON (last stdout line). Ranks other
than 0 write all their stdout to stderr. Fields and timing method: docs/probes.md (L3).
"""
import datetime
import json
import math
import os
import socket
import sys
import time

PROBE = "multigpu"
# The helpers every probe shares are in probe_common.py, shipped next to the probe; in the repository it
# lives in roles/runner/files (search order: probe_common.py's docstring).
_PROBE_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _PROBE_DIR)
if not os.path.isfile(os.path.join(_PROBE_DIR, "probe_common.py")):
    sys.path.insert(1, os.path.join(_PROBE_DIR, "..", "..", "runner", "files"))
try:
    from probe_common import ProbeParamError, _flush_c_stdio, err_info, main_wrapper, not_attempted
except Exception as exc:  # without it: still the contract's one JSON line (docs/probes.md), exit 1
    _why = "is missing next to" if isinstance(exc, ModuleNotFoundError) and exc.name == "probe_common" else "cannot be imported next to"
    print("\n" + json.dumps({
        "probe": PROBE, "schema": 1, "node": os.environ.get("NODE_NAME") or socket.gethostname(), "duration_s": 0.0,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "params": {}, "warnings": [],
        "timed_out": False, "crashed": True,
        "error": "probe_common.py %s %s: %s: %s" % (_why, os.path.abspath(__file__), type(exc).__name__, exc)}), flush=True)
    sys.exit(1)

SPEC = {
    "node": (None, "str?"),
    "backend": ("nccl", "str"),
    "model_path": (None, "str?"),
    "dtype": ("bf16", "str"),
    "fsdp": (True, "bool"),
    "fsdp_steps": (2, "int"),
    "allreduce_check": (True, "bool"),
    "sweep": (True, "bool"),
    "min_bytes": (8, "int"),
    "max_bytes": (4294967296, "int"),
    "step_factor": (2, "int"),
    "warmup_iters": (5, "int"),
    "iters": (20, "int"),
    "sweep_dtype": ("float", "str"),
    "check": (True, "bool"),
    "nccl_debug": (None, "str?"),
    "pg_timeout_s": (1800, "num"),
    "master_addr": (None, "str?"),
    "master_port": (None, "int?"),
    "timeout_s": (900, "num"),
}
PARAM_DTYPES = {"bf16": "bfloat16", "bfloat16": "bfloat16", "fp16": "float16", "float16": "float16",
                "fp32": "float32", "float32": "float32"}
# nccl-tests type name -> (torch dtype name, bytes per element)
SWEEP_TYPES = {"float": ("float32", 4), "half": ("float16", 2), "bfloat16": ("bfloat16", 2),
               "double": ("float64", 8)}
# NVLink multicast must stay off on shared machines (a job using it can take the host's GPUs down).
SAFETY_ENV = (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1"))
REPORTED_ENV = ("NCCL_NVLS_ENABLE", "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_SOCKET_IFNAME", "NCCL_IB_DISABLE",
                "NCCL_NET", "NCCL_P2P_DISABLE", "FI_PROVIDER", "FI_EFA_USE_DEVICE_RDMA",
                "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS", "MASTER_ADDR", "MASTER_PORT",
                "CUDA_VISIBLE_DEVICES")
ONE_GIB = 1 << 30
ONE_RANK_NOTE = ("busbw is 0 by definition with one rank (2(n-1)/n = 0) and an in-place all-reduce on one rank "
                 "moves no data (time = launch overhead, algbw meaningless): not measurable on one GPU")


# --- pure helpers (unit-tested without torch) ---------------------------------------------------

def bus_factor(nranks):
    """nccl-tests all_reduce: busbw = algbw * 2(n-1)/n."""
    return 2.0 * (nranks - 1) / nranks if nranks > 0 else 0.0


def bandwidths(nbytes, seconds, nranks):
    """(algbw, busbw) in GB/s (1e9 bytes/s), as nccl-tests computes them."""
    algbw = nbytes / 1.0e9 / seconds if seconds > 0 else 0.0
    return algbw, algbw * bus_factor(nranks)


def time_str(usec):
    """nccl-tests' time column: %7.0f from 10 ms, %7.1f from 100 us, else %7.2f."""
    if usec >= 10000.0:
        return "%7.0f" % usec
    if usec >= 100.0:
        return "%7.1f" % usec
    return "%7.2f" % usec


def sweep_sizes(min_bytes, max_bytes, factor):
    if min_bytes <= 0 or factor < 2:
        raise ValueError("min_bytes must be > 0 and step_factor >= 2")
    sizes, size = [], min_bytes
    while size <= max_bytes:
        sizes.append(size)
        size *= factor
    return sizes


def header_lines(min_bytes, max_bytes, factor, warmup, iters, check, rank_lines):
    lines = [
        "# probe_multigpu: torch.distributed all_reduce sweep (both column groups are in-place), "
        "nccl-tests all_reduce_perf format",
        "# nThread 1 nGpus 1 minBytes %d maxBytes %d step: %d(factor) warmup iters: %d iters: %d "
        "agg iters: 1 validation: %d graph: 0" % (min_bytes, max_bytes, factor, warmup, iters, 1 if check else 0),
        "#",
        "# Using devices",
    ]
    for info in rank_lines:
        lines.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s"
                     % (info["rank"], 0, info["pid"], info["host"], info["device_index"],
                        info["pci_bus_id"], info["device"]))
    return lines


def table_header_lines():
    return [
        "#",
        "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
        % ("", "", "", "", ""),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s"
        % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
           "#wrong"),
        "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s"
        % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""),
    ]


def format_row(nbytes, count, type_name, results, redop="sum", root=-1):
    """results: [(time_us, algbw, busbw, wrong or None), ...] for out-of-place then in-place."""
    line = "%12d  %12d  %8s  %6s  %6d" % (nbytes, count, type_name, redop, root)
    for usec, algbw, busbw, wrong in results:
        wrong_s = "%5d" % wrong if wrong is not None else "%5s" % "N/A"
        line += "  %7s  %6.2f  %6.2f  %s" % (time_str(usec), algbw, busbw, wrong_s)
    return line


def footer_lines(out_of_bounds, avg_busbw):
    return [
        "# Out of bounds values : %d %s" % (out_of_bounds, "FAILED" if out_of_bounds else "OK"),
        "# Avg bus bandwidth    : %g " % avg_busbw,
        "#",
    ]


def summarize(rows, nranks):
    """Sweep summary from rows [{"size","busbw","busbw_ip","algbw","wrong","wrong_ip",...}]."""
    out = {"out_of_bounds": 0, "avg_busbw": None, "busbw_1gib": None, "algbw_1gib": None,
           "largest_size": None, "busbw_largest": None, "algbw_largest": None, "peak_busbw": None,
           "note": ONE_RANK_NOTE if nranks == 1 else None}
    if not rows:
        return out
    buses = [r["busbw"] for r in rows] + [r["busbw_ip"] for r in rows]
    out["avg_busbw"] = sum(buses) / len(buses)
    out["peak_busbw"] = max(buses)
    out["out_of_bounds"] = sum(1 for r in rows for k in ("wrong", "wrong_ip") if (r.get(k) or 0) > 0)
    for r in rows:
        if r["size"] == ONE_GIB:
            out["busbw_1gib"], out["algbw_1gib"] = r["busbw"], r["algbw"]
    last = rows[-1]
    out["largest_size"], out["busbw_largest"], out["algbw_largest"] = last["size"], last["busbw"], last["algbw"]
    return out


def apply_safety_env(environ):
    defaulted = []
    for key, value in SAFETY_ENV:
        if key not in environ:
            environ[key] = value
            defaulted.append(key)
    return defaulted


def _free_port():
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def resolve_launch(environ, master_addr=None, master_port=None):
    """Fill RANK/WORLD_SIZE/LOCAL_RANK/MASTER_* in environ; returns (launcher, rank, world, local_rank)."""
    if "RANK" in environ and "WORLD_SIZE" in environ:
        launcher = "torchrun" if "TORCHELASTIC_RUN_ID" in environ else "env"
    elif "OMPI_COMM_WORLD_RANK" in environ:
        launcher = "mpirun"
        environ["RANK"] = environ["OMPI_COMM_WORLD_RANK"]
        environ["WORLD_SIZE"] = environ.get("OMPI_COMM_WORLD_SIZE", "1")
        environ.setdefault("LOCAL_RANK", environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "0"))
    elif "PMI_RANK" in environ:
        launcher = "mpirun"
        environ["RANK"] = environ["PMI_RANK"]
        environ["WORLD_SIZE"] = environ.get("PMI_SIZE", "1")
        environ.setdefault("LOCAL_RANK", environ.get("MPI_LOCALRANKID", "0"))
    else:
        launcher = "single"
        environ["RANK"], environ["WORLD_SIZE"] = "0", "1"
    environ.setdefault("LOCAL_RANK", "0")
    if master_addr:
        environ["MASTER_ADDR"] = master_addr
    if master_port:
        environ["MASTER_PORT"] = str(master_port)
    if launcher == "single":
        environ.setdefault("MASTER_ADDR", "127.0.0.1")
        environ.setdefault("MASTER_PORT", str(_free_port()))
    elif "MASTER_ADDR" not in environ:
        raise ProbeParamError("master_addr is required when launched by %s without MASTER_ADDR" % launcher)
    environ.setdefault("MASTER_PORT", "29500")
    return launcher, int(environ["RANK"]), int(environ["WORLD_SIZE"]), int(environ["LOCAL_RANK"])


def decode_version_code(v):
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return ".".join(str(x) for x in v)
    v = int(v)
    if v >= 10000:
        return "%d.%d.%d" % (v // 10000, (v % 10000) // 100, v % 100)
    return "%d.%d.%d" % (v // 1000, (v % 1000) // 100, v % 100)


# --- torch stages -------------------------------------------------------------------------------

def _local(t):
    return t.to_local() if hasattr(t, "to_local") else t


def _fsdp_api():
    try:
        from torch.distributed.fsdp import fully_shard
        return "fully_shard", fully_shard
    except ImportError:
        pass
    try:
        from torch.distributed._composable.fsdp import fully_shard
        return "fully_shard", fully_shard
    except ImportError:
        pass
    from torch.distributed.fsdp import FullyShardedDataParallel
    return "FullyShardedDataParallel", FullyShardedDataParallel


def stage_fsdp(torch, p, device, world, rank):
    info = {"ok": False, "error": None, "api": None, "model": None, "param_count": None, "dtype": None,
            "loss": None, "loss_last": None, "loss_finite": None, "grads_finite": None,
            "steps": max(1, p["fsdp_steps"]), "duration_s": None}
    t0 = time.monotonic()
    try:
        dtype = getattr(torch, PARAM_DTYPES[p["dtype"].lower()])
        torch.manual_seed(1234)  # identical initial weights on every rank
        nn = torch.nn
        if p["model_path"]:
            import transformers
            model = transformers.AutoModelForCausalLM.from_pretrained(
                p["model_path"], local_files_only=True, trust_remote_code=False)
            model = model.to(device=device, dtype=dtype)
            layers = list(getattr(getattr(model, "model", None), "layers", None) or [])
            vocab = int(model.config.vocab_size)
            info["model"] = "hf:%s" % p["model_path"]
        else:
            class Block(nn.Module):
                def __init__(self, d):
                    super(Block, self).__init__()
                    self.norm = nn.LayerNorm(d)
                    self.fc1 = nn.Linear(d, 4 * d)
                    self.fc2 = nn.Linear(4 * d, d)

                def forward(self, x):
                    return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))

            layers = [Block(256) for _block in range(4)]
            model = nn.Sequential(*(layers + [nn.Linear(256, 256)])).to(device=device, dtype=dtype)
            layers = list(model)[:-1]
            vocab = None
            info["model"] = "builtin-mlp"
        info["param_count"] = int(sum(t.numel() for t in model.parameters()))
        info["dtype"] = str(dtype)
        api, wrap = _fsdp_api()
        info["api"] = api
        if api == "fully_shard":
            from torch.distributed.device_mesh import init_device_mesh
            mesh = init_device_mesh(device.type, (world,))
            for layer in layers:
                wrap(layer, mesh=mesh)
            wrap(model, mesh=mesh)
        else:
            model = wrap(model, device_id=device if device.type == "cuda" else None)
        opt = torch.optim.SGD(model.parameters(), lr=1e-2)
        losses, grads_ok = [], True
        gen = torch.Generator(device="cpu")
        gen.manual_seed(100 + rank)  # different data on each rank
        for _step in range(info["steps"]):
            if vocab:
                ids = torch.randint(0, vocab, (2, 16), generator=gen).to(device)
                loss = model(input_ids=ids, labels=ids).loss
            else:
                x = torch.randn(8, 256, generator=gen).to(device=device, dtype=dtype)
                loss = (model(x).float() ** 2).mean()
            opt.zero_grad()
            loss.backward()
            for prm in model.parameters():
                if prm.grad is not None and not bool(torch.isfinite(_local(prm.grad).float()).all().item()):
                    grads_ok = False
            opt.step()
            losses.append(float(loss.detach().float().item()))
        info["loss"], info["loss_last"] = losses[0], losses[-1]
        info["loss_finite"] = all(math.isfinite(v) for v in losses)
        info["grads_finite"] = grads_ok
        info["ok"] = info["loss_finite"] and grads_ok
        if not info["ok"]:
            info["error"] = "non-finite loss or gradients"
        del model, opt
    except Exception as exc:
        info.update(err_info(exc))
    info["duration_s"] = round(time.monotonic() - t0, 3)
    return info


def stage_allreduce(torch, dist, device, world, rank):
    info = {"ok": False, "error": None, "numel": 1024, "dtype": "float32", "mismatches": None,
            "expected_first": None, "got_first": None}
    try:
        t = torch.arange(1024, dtype=torch.float32, device=device) + 1000.0 * rank
        dist.all_reduce(t)
        expected = torch.arange(1024, dtype=torch.float32, device=device) * world + 1000.0 * world * (world - 1) / 2
        info["mismatches"] = int((t != expected).sum().item())
        info["expected_first"], info["got_first"] = float(expected[0].item()), float(t[0].item())
        info["ok"] = info["mismatches"] == 0
        if not info["ok"]:
            info["error"] = "%d of 1024 elements differ from the exact sum" % info["mismatches"]
    except Exception as exc:
        info.update(err_info(exc))
    return info


def stage_sweep(torch, dist, p, device, world, rank, rank_lines, probe, out):
    """Runs the sweep; rank 0 prints the nccl-tests table through out(line)."""
    tname = p["sweep_dtype"]
    dtype = getattr(torch, SWEEP_TYPES[tname][0])
    esize = SWEEP_TYPES[tname][1]
    cuda = device.type == "cuda"
    info = {"ok": False, "error": None, "dtype": tname, "redop": "sum",
            "timing": "cuda_events" if cuda else "perf_counter",
            "placement": "in-place dist.all_reduce for both column groups",
            "min_bytes": p["min_bytes"], "max_bytes": p["max_bytes"], "max_bytes_requested": p["max_bytes"],
            "step_factor": p["step_factor"], "warmup_iters": p["warmup_iters"], "iters": p["iters"],
            "bus_factor": bus_factor(world), "rows": []}
    try:
        max_b = p["max_bytes"]
        if cuda:
            free, _total = torch.cuda.mem_get_info(device)
            limit = torch.tensor([max(esize, (free - ONE_GIB) // 3)], dtype=torch.int64, device=device)
            dist.all_reduce(limit, op=dist.ReduceOp.MIN)
            limit = int(limit.item()) // esize * esize
            if max_b > limit:
                max_b = limit
        info["max_bytes"] = max_b
        sizes = sweep_sizes(p["min_bytes"], max_b, p["step_factor"])
        sizes = [s for s in sizes if s // esize > 0]
        if not sizes:
            raise ValueError("no size between min_bytes and max_bytes holds one %s element" % tname)
        if rank == 0:
            for line in header_lines(p["min_bytes"], p["max_bytes"], p["step_factor"], p["warmup_iters"],
                                     p["iters"], p["check"], rank_lines):
                out(line)
            if max_b != p["max_bytes"]:
                out("#")
                out("# Reducing maxBytes to %d due to memory limitation" % max_b)
            for line in table_header_lines():
                out(line)
        buf = torch.zeros(max(sizes) // esize, dtype=dtype, device=device)

        def sync():
            if cuda:
                torch.cuda.synchronize(device)

        probe.stage = "sweep warm-up"
        for size in (sizes[-1], sizes[0]):
            view = buf[: size // esize]
            for _iteration in range(p["warmup_iters"]):
                dist.all_reduce(view)
        sync()

        def timed(view):
            view.zero_()
            dist.all_reduce(view)  # untimed, as nccl-tests' per-size "sync" call
            sync()
            dist.barrier()
            sync()
            if cuda:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _iteration in range(p["iters"]):
                    dist.all_reduce(view)
                end.record()
                end.synchronize()
                sec = start.elapsed_time(end) / 1000.0 / p["iters"]
            else:
                t0 = time.perf_counter()
                for _iteration in range(p["iters"]):
                    dist.all_reduce(view)
                sec = (time.perf_counter() - t0) / p["iters"]
            tt = torch.tensor([sec], dtype=torch.float64, device=device)
            dist.all_reduce(tt)
            return float(tt.item()) / world

        exact = tname in ("float", "double")
        fill = float(rank + 1) if exact else 1.0
        expected = world * (world + 1) / 2.0 if exact else float(world)

        def check(view):
            view.fill_(fill)
            dist.all_reduce(view)
            wrong = torch.tensor([int((view != expected).sum().item())], dtype=torch.int64, device=device)
            dist.all_reduce(wrong)
            return int(wrong.item())

        for size in sizes:
            count = size // esize
            nbytes = count * esize
            view = buf[:count]
            probe.stage = "sweep %d" % nbytes
            res = []
            for _placement in (0, 1):
                sec = timed(view)
                algbw, busbw = bandwidths(nbytes, sec, world)
                wrong = check(view) if p["check"] else None
                res.append((sec * 1e6, algbw, busbw, wrong))
            row = {"size": nbytes, "count": count,
                   "time_us": round(res[0][0], 2), "algbw": round(res[0][1], 3), "busbw": round(res[0][2], 3),
                   "wrong": res[0][3],
                   "time_us_ip": round(res[1][0], 2), "algbw_ip": round(res[1][1], 3),
                   "busbw_ip": round(res[1][2], 3), "wrong_ip": res[1][3]}
            info["rows"].append(row)
            if rank == 0:
                out(format_row(nbytes, count, tname, res))
        del buf
        summary = summarize(info["rows"], world)
        # nccl-tests averages unrounded values; recompute avg from the rows' precise numbers is close enough
        if rank == 0:
            for line in footer_lines(summary["out_of_bounds"], summary["avg_busbw"] or 0.0):
                out(line)
        info.update(summary)
        info["ok"] = summary["out_of_bounds"] == 0
        if not info["ok"]:
            info["error"] = "%d sizes had wrong elements" % summary["out_of_bounds"]
    except Exception as exc:
        info.update(err_info(exc))
        info.setdefault("note", ONE_RANK_NOTE if world == 1 else None)
    return info


def body(probe, p):
    r = probe.result
    if p["dtype"].lower() not in PARAM_DTYPES:
        raise ProbeParamError("dtype must be one of %s" % ", ".join(sorted(PARAM_DTYPES)))
    if p["sweep_dtype"] not in SWEEP_TYPES:
        raise ProbeParamError("sweep_dtype must be one of %s" % ", ".join(sorted(SWEEP_TYPES)))
    if p["backend"] not in ("nccl", "gloo"):
        raise ProbeParamError("backend must be nccl or gloo")
    if p["step_factor"] < 2 or p["min_bytes"] <= 0 or p["max_bytes"] < p["min_bytes"] or p["iters"] < 1:
        raise ProbeParamError("need min_bytes > 0, max_bytes >= min_bytes, step_factor >= 2, iters >= 1")

    defaulted = apply_safety_env(os.environ)
    if p["nccl_debug"]:
        os.environ["NCCL_DEBUG"] = p["nccl_debug"]
    launcher, rank, world, local_rank = resolve_launch(os.environ, p["master_addr"], p["master_port"])
    if rank != 0:
        # Only rank 0 owns stdout: everything else (NCCL's C-level lines too) goes to stderr.
        sys.stdout.flush()
        os.dup2(2, 1)
        probe.quiet = True
    else:
        try:
            sys.stdout.reconfigure(line_buffering=True)
        except Exception:
            pass

    def out(line):
        _flush_c_stdio()
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    r.update({"launcher": launcher, "world_size": world, "rank": rank, "local_rank": local_rank,
              "backend": p["backend"], "torch": None, "nccl": None,
              "env": {k: os.environ[k] for k in REPORTED_ENV if k in os.environ},
              "env_defaulted": defaulted,
              "init": None, "fsdp": None, "allreduce": None, "allreduce_ok": False, "sweep": None,
              "ranks": [], "ok": False})

    def skip_all(why):
        r["init"] = r["init"] or not_attempted(why)
        r["fsdp"] = not_attempted(why) if p["fsdp"] else None
        r["allreduce"] = not_attempted(why) if p["allreduce_check"] else None
        r["sweep"] = not_attempted(why) if p["sweep"] else None

    probe.stage = "import torch"
    try:
        import torch
        import torch.distributed as dist
    except Exception as exc:
        r["error"] = "torch is not importable: %s: %s" % (type(exc).__name__, exc)
        skip_all("torch not importable")
        return
    r["torch"] = str(torch.__version__)
    try:
        r["nccl"] = decode_version_code(torch.cuda.nccl.version())
    except Exception:
        pass
    if p["backend"] == "nccl":
        if not torch.cuda.is_available():
            r["error"] = "CUDA not available: the nccl backend needs GPUs"
            skip_all("CUDA not available")
            return
        if local_rank >= torch.cuda.device_count():
            r["error"] = "LOCAL_RANK %d but only %d GPUs visible" % (local_rank, torch.cuda.device_count())
            skip_all("no GPU for this rank")
            return
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")

    probe.stage = "init_process_group"
    t0 = time.monotonic()
    try:
        kw = {"backend": p["backend"], "timeout": datetime.timedelta(seconds=p["pg_timeout_s"])}
        try:
            dist.init_process_group(device_id=device if device.type == "cuda" else None, **kw)
        except TypeError:
            dist.init_process_group(**kw)
        world, rank = dist.get_world_size(), dist.get_rank()
        r["world_size"], r["rank"] = world, rank
        r["init"] = {"ok": True, "error": None, "duration_s": round(time.monotonic() - t0, 3)}
    except Exception as exc:
        r["init"] = err_info(exc)
        r["init"]["duration_s"] = round(time.monotonic() - t0, 3)
        r["error"] = "process group init failed: %s" % r["init"]["error"]
        skip_all("process group init failed")
        return

    try:
        props = torch.cuda.get_device_properties(device) if device.type == "cuda" else None
        me = {"rank": rank, "local_rank": local_rank, "host": socket.gethostname(), "pid": os.getpid(),
              "device": props.name if props else "cpu", "device_index": local_rank,
              "pci_bus_id": int(getattr(props, "pci_bus_id", 0) or 0) if props else 0}

        if p["fsdp"]:
            probe.stage = "fsdp"
            r["fsdp"] = stage_fsdp(torch, p, device, world, rank)
        if p["allreduce_check"]:
            probe.stage = "allreduce check"
            r["allreduce"] = stage_allreduce(torch, dist, device, world, rank)
            r["allreduce_ok"] = bool(r["allreduce"]["ok"])
        probe.stage = "gather rank info"
        rank_lines = [None] * world
        dist.all_gather_object(rank_lines, me)
        if p["sweep"]:
            probe.stage = "sweep"
            r["sweep"] = stage_sweep(torch, dist, p, device, world, rank, rank_lines, probe, out)

        probe.stage = "gather rank results"
        mine = dict(me, init_ok=True,
                    fsdp_ok=(r["fsdp"] or {}).get("ok") if p["fsdp"] else None,
                    allreduce_ok=r["allreduce_ok"] if p["allreduce_check"] else None,
                    sweep_ok=(r["sweep"] or {}).get("ok") if p["sweep"] else None,
                    error=next((s.get("error") for s in (r["fsdp"], r["allreduce"], r["sweep"])
                                if s and s.get("error")), None))
        gathered = [None] * world
        dist.all_gather_object(gathered, mine)
        r["ranks"] = gathered
        probe.stage = "barrier"
        dist.barrier()
    finally:
        probe.stage = "destroy_process_group"
        try:
            dist.destroy_process_group()
        except Exception as exc:
            r["warnings"].append("destroy_process_group failed: %s" % exc)

    ranks_ok = all(x and (x.get("fsdp_ok") is not False) and (x.get("allreduce_ok") is not False)
                   and (x.get("sweep_ok") is not False) for x in r["ranks"])
    r["ok"] = bool(
        r["init"]["ok"]
        and (not p["fsdp"] or r["fsdp"]["ok"])
        and (not p["allreduce_check"] or r["allreduce_ok"])
        and (not p["sweep"] or r["sweep"]["ok"])
        and ranks_ok)
    probe.stage = "done"


if __name__ == "__main__":
    rc = main_wrapper(PROBE, SPEC, body)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)  # no library teardown output after the JSON line
