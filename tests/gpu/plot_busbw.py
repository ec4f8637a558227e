"""Plot an all_reduce bus-bandwidth sweep (nccl-tests table format) against a physical limit.

Usage: python3 tests/gpu/plot_busbw.py LOG PNG [--limit GBPS] [--label TEXT]
Reads the table with the collection's own parser (plugins/module_utils/nccl/_nccl.py, parse_file).
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".collections"))

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("png")
    parser.add_argument("--limit", type=float, default=450.0, help="physical limit in GB/s (NVLink 4, NV18: 450)")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    facts = _nccl.parse_file(args.log)
    rows = [r for r in facts["tables"][-1]["rows"] if r["size"]]
    sizes = [r["size"] for r in rows]
    busbw = [r["out_of_place"]["busbw"] or 0.0 for r in rows]
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(sizes, busbw, marker="o", label="measured busbw (probe_multigpu, %d ranks)" % (facts.get("nranks") or 0))
    ax.axhline(args.limit, color="red", linestyle="--", label="NVLink limit %.0f GB/s" % args.limit)
    ax.axhline(args.limit * 0.75, color="orange", linestyle=":", label="75%% of the limit (%.1f GB/s)" % (args.limit * 0.75))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_title(args.label or "all_reduce bus bandwidth")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print("peak %.1f GB/s, at the largest size %.1f GB/s" % (facts["peak_busbw"] or 0, facts["busbw_at_largest_size"] or 0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
