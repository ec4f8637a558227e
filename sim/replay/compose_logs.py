"""Compose the launcher and Job logs that the simulated cluster serves, from real public logs.

No public log shows a whole 2 x p5.48xlarge nccl-tests MPIJob with NCCL_DEBUG=INFO, so each replayed
launcher log joins the NCCL_DEBUG=INFO lines of one real EFA run with the result table of another real
run; every line comes verbatim from the files in sources/ (their origins: sources/SOURCES.md), except
the lines listed as "written" in logs/SOURCES.md. The L5/L6 Job logs are copied from the
recorded and framework-printed logs in tests/unit/fixtures/frameworks/ (provenance: its SOURCES.md).
Run it again after changing sources/ or those fixtures: it rewrites logs/.
"""
import gzip
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "sources"
OUT = HERE / "logs"
FRAMEWORK_LOGS = HERE.parents[1] / "tests" / "unit" / "fixtures" / "frameworks"
# What the simulated L5/L6 Jobs print (the sim inventory's examples are RLinf ones), from those fixtures.
JOB_LOGS = {
    "l5-train-step.log": "rlinf/rlinf-train-one-step.log",
    "l5-train-override-ignored.log": "rlinf/rlinf-train-override-ignored.log",
    "l5-train-fails.log": "trl/trl-train-crash.log.gz",
    "l5-train-raises.log": "python/raise-in-step.log",
    "l6-eval.log": "rlinf/rlinf-eval.log",
    "l6-eval-low.log": "rlinf/rlinf-eval-low.log",
    # The 2-node example's head: RLinf's cluster lines (2 nodes; or 1 node, a worker that never joined a
    # run configured for one node), then the same one-step table.
    "l5-train-step-2node.log": ("rlinf/rlinf-cluster-2node.log", "rlinf/rlinf-train-one-step.log"),
    "l5-train-2node-on-one-node.log": ("rlinf/rlinf-cluster-1node.log", "rlinf/rlinf-train-one-step.log"),
}


def lines(name):
    return (SRC / name).read_text(encoding="utf-8", errors="replace").splitlines()


def info_lines(name):
    return [l for l in lines(name) if "NCCL INFO" in l or "NCCL WARN" in l or "NCCL version" in l]


def write(name, body):
    (OUT / name).write_text("\n".join(body) + "\n", encoding="utf-8")


# The EFA run of the INFO lines is a p4d.24xlarge (4 EFA devices: "found 4 nics"); the simulated L3
# nodes are p5.48xlarge with 32. The only edit of a real line: the NIC count in aws-ofi-nccl's
# "Selected Provider is efa (found N nics)" line (logs/SOURCES.md lists it as written).
P4D_NICS = "(found 4 nics)"
SECOND_HOST = "compute-gpu-st-distributed-ml-2"


def p5_nics(lines_in, missing_on=None):
    """The lines with 32 NICs found (31 on the host missing_on: one EFA device down)."""
    out = []
    for line in lines_in:
        if P4D_NICS in line:
            line = line.replace(P4D_NICS, "(found 31 nics)" if missing_on and missing_on in line else "(found 32 nics)")
        out.append(line)
    return out


# The baseline regression scenario (docs/baselines.md): the healthy table with every bandwidth times this factor
# and every time divided by it (busbw = algbw x 2(n-1)/n, so both scale alike); 437.8 -> 372.1 GB/s at 2 GiB,
# above the sim inventory's floor (400 GB/s less its 10% tolerance).
REGRESSED = 0.85
_ROW = re.compile(r"^(\s*\[\d+,\d+\]<stdout>:)(\s+\d+\s+\d+\s+\w+\s+\w+\s+-?\d+)(.*)$")


def _scaled(token, factor):
    number = float(token)
    decimals = len(token.split(".")[1]) if "." in token else 0
    return ("%.*f" % (decimals, number * factor)).rjust(len(token))


def scaled_table(table, factor):
    """The table with algbw and busbw times factor and times divided by it, in the columns' own widths."""
    out = []
    for line in table:
        match = _ROW.match(line)
        if match:
            # time algbw busbw #wrong, out of place then in place
            fields = re.findall(r"\s+\S+", match.group(3))
            for i, field in enumerate(fields):
                token = field.strip()
                if i % 4 == 3:
                    continue
                new = _scaled(token, 1 / factor if i % 4 == 0 else factor)
                fields[i] = field[:len(field) - len(token)] + new if len(new) <= len(token) else " " + new
            line = match.group(1) + match.group(2) + "".join(fields)
        elif "Avg bus bandwidth" in line:
            head, _colon, value = line.rpartition(":")
            line = "%s: %s" % (head, _scaled(value.strip(), factor))
        out.append(line)
    return out


def main():
    OUT.mkdir(exist_ok=True)
    p5_table = lines("allreduce-p5-eks-mpijob-launcher-excerpt.log")
    p4d_info = info_lines("scatter-p4d-2node-efa-srun-label-debuginfo.log")
    efa_info = p5_nics(p4d_info)
    write("l3-efa-healthy.log", efa_info + p5_table)
    write("l3-efa-nic-missing.log", p5_nics(p4d_info, missing_on=SECOND_HOST) + p5_table)
    write("l3-efa-busbw-regressed.log", efa_info + scaled_table(p5_table, REGRESSED))

    socket_info = info_lines("ofi-plugin-init-failed-socket-fallback-p4d.log")
    slow_table = [l for l in lines("allreduce-gh200-alps-2node-no-cxi-hook-slow.log") if not l.lstrip().startswith("$")]
    write("l3-socket-fallback.log", socket_info + slow_table)

    crash_at = next(i for i, l in enumerate(p5_table) if "67108864" in l)
    backtrace = [l for l in lines("allreduce-sharp-segfault-ucx-backtrace-excerpt.log") if not l.startswith("#")]
    signal_line = ("[compute-gpu-st-distributed-ml-1:77184:0:77195] Caught signal 11 "
                   "(Segmentation fault: address not mapped to object at address 0x8)")
    write("l3-nccl-crash.log", efa_info + p5_table[:crash_at] + [signal_line] + backtrace)

    g6e = info_lines("efa-g6e-l40s-4pod-deepspeed-nccl-info.log")
    g6e_facts = [l for l in g6e if "NCCL version" in l or "Selected provider" in l or "Using network" in l][:3]
    dranet = lines("mpijob-launcher-h200-dranet-openmpi-warnings.log")[1:]  # drop the kubectl command line
    write("phase0-g6-efa.log", g6e_facts + dranet)

    for name, fixtures in JOB_LOGS.items():
        (OUT / name).write_bytes(b"".join(job_log(f) for f in ([fixtures] if isinstance(fixtures, str) else fixtures)))


def job_log(fixture):
    data = (FRAMEWORK_LOGS / fixture).read_bytes()
    if fixture.endswith(".gz"):
        # tqdm's carriage returns become newlines: the simulated runtime splits lines on both, so
        # the served lines are the same (and the repository keeps plain-text line endings).
        data = gzip.decompress(data).replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


if __name__ == "__main__":
    main()
