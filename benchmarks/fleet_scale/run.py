#!/usr/bin/env python
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""L0 level time against the number of GPU nodes, on the simulated cluster, in one run.

For each node count (default 2, 16, 64, 256) this starts the simulated cluster with that many
p5.48xlarge nodes (`sim/simctl.py up --nodes N`, in scenario `--scenario`, default healthy), runs
`playbooks/validate.yml --tags l0` against it `--repeat` times, reads L0's level time (`duration_s` of its row
in report.json: from the level's start to its verdict, which level_assert gives) and the wall time of the
playbook, and stops the cluster. It prints one line per count and the ratio of each median to the smallest
count's, the figure of merit (issue 13: L0 at 256 nodes <= 1.5 x its 2-node time). A failing scenario
(image-pull-error, unschedulable) measures the level when the whole fleet fails. Usage:

    python benchmarks/fleet_scale/run.py [--nodes 2,16,64,256] [--repeat 2] [--scenario NAME] [--json OUT]

Results go to docs/performance.md by hand, with the machine they ran on.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = ROOT / ".venv" / "bin" / "python"
PLAYBOOK = ROOT / ".venv" / "bin" / "ansible-playbook"
# A simulated cluster of its own (sim/simctl.py SIM_STATE), so a cluster the user has up is not touched.
STATE = Path(os.environ.get("SIM_STATE") or tempfile.mkdtemp(prefix="rlsv-bench-sim-"))


def sim(*args: str) -> None:
    subprocess.run([str(PY), str(ROOT / "sim" / "simctl.py"), *args], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, SIM_STATE=str(STATE)))


def l0_row(report: dict) -> dict:
    """L0's row of a report.json (schema rlstack.validation report: clusters[].levels[])."""
    return next(level for cluster in report["clusters"] for level in cluster["levels"]
                if level.get("id") == "l0_infrastructure")


def sim_cpu_s() -> dict:
    """CPU seconds the simulated cluster's processes used so far, by process name (theirs and their reaped
    children's: the probe replays count to the node runtime, `simctl.py runtime`), read from /proc: every process
    whose command line or environment names its state dir, outside this benchmark's process group
    (ansible-playbook and its modules name the kubeconfig too)."""
    tick, mine = os.sysconf("SC_CLK_TCK"), os.getpgrp()
    total = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            named = cmdline + (proc / "environ").read_bytes()
            if str(STATE).encode() not in named:
                continue
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == mine:
            continue
        argv = [a.decode(errors="replace") for a in cmdline.split(b"\0") if a]
        # a Python process by what it runs (simctl.py runtime, relay, ...), a binary by its name
        name = Path(argv[0]).name if argv else proc.name
        if any("multiprocessing" in a for a in argv):  # the node runtime's probe shards (sim/node_runtime.py)
            name = "simctl.py runtime"
        elif name.startswith("python") and len(argv) > 2:
            name = "%s %s" % (Path(argv[1]).name, argv[2])
        total[name] = total.get(name, 0.0) + sum(int(f) for f in fields[11:15]) / tick  # utime, stime, cutime, cstime
    return total


def profile_lines(stdout: str, limit: int) -> list:
    """The slowest tasks of ansible.posix.profile_tasks's recap (its last `limit` lines of `name --- 1.23s`)."""
    lines = [line.strip() for line in stdout.splitlines() if re.search(r" -{3,} +[0-9.]+s$", line.strip())]
    return lines[-limit:]


def one_run(nodes: int, profile: int = 0) -> dict:
    with tempfile.TemporaryDirectory(prefix="rlsv-bench-") as tmp:
        env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), KUBECONFIG=str(STATE / "kubeconfig"))
        if profile:  # the slowest tasks, next to the collection's own callbacks (ansible.cfg)
            env.update(ANSIBLE_CALLBACKS_ENABLED="rlstack.validation.report,rlstack.validation.interrupt_cleanup,"
                                                 "ansible.posix.profile_tasks",
                       PROFILE_TASKS_TASK_OUTPUT_LIMIT=str(profile))
        t0, sim0, own0 = time.monotonic(), sim_cpu_s(), resource.getrusage(resource.RUSAGE_CHILDREN)
        cmd = [str(PLAYBOOK), "playbooks/validate.yml", "-i", "inventories/sim", "--tags", "l0",
               "-e", f"validation_report_dir={tmp}", "-e", f"validation_kubeconfig={STATE / 'kubeconfig'}"]
        # the run's console as it comes (a few lines a level), so a run cut off by a bound shows where it was
        with subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) as proc:
            lines = []
            for line in proc.stdout:
                lines.append(line)
                print("      | " + line.rstrip(), flush=True)
        stdout = "".join(lines)
        wall = time.monotonic() - t0
        own1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        controller_cpu = (own1.ru_utime - own0.ru_utime) + (own1.ru_stime - own0.ru_stime)
        sim1 = sim_cpu_s()
        sim_by_process = {k: round(v - sim0.get(k, 0.0), 1) for k, v in sim1.items() if v - sim0.get(k, 0.0) >= 0.1}
        sim_cpu = sum(sim_by_process.values())
        report = json.loads((Path(tmp) / "report.json").read_text())
    row = l0_row(report)
    return {"nodes": nodes, "rc": proc.returncode, "status": row.get("status"), "level_s": row.get("duration_s"),
            "wall_s": round(wall, 1), "checks": len(row.get("checks") or []),
            # where the 2 cores went: ansible-playbook and its modules, and the sim (API server, kwok, probe replays)
            "controller_cpu_s": round(controller_cpu, 1), "sim_cpu_s": round(sim_cpu, 1),
            "sim_cpu_by_process_s": dict(sorted(sim_by_process.items(), key=lambda kv: -kv[1])),
            "slowest_tasks": profile_lines(stdout, profile) if profile else [],
            # a figure of a failing run is only worth something with the reason next to it
            "failed_checks": failed_checks(row)}


def failed_checks(row: dict, limit: int = 5) -> list:
    """The first `limit` failing checks of a level row: node, check name, message (report.json schema)."""
    failing = [c for c in row.get("checks") or [] if not c.get("passed")]
    return ["%s %s: %s" % (c.get("node", ""), c.get("name", ""), (c.get("message") or c.get("fail_msg") or "")[:300])
            for c in failing[:limit]] + (["... %d more" % (len(failing) - limit)] if len(failing) > limit else [])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="2,16,64,256")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--scenario", default="healthy", help="the simulated cluster's scenario (sim/scenarios.yaml)")
    parser.add_argument("--json", help="write every run's figures to this file")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also record the N slowest tasks of each run (ansible.posix.profile_tasks)")
    args = parser.parse_args()
    counts = [int(n) for n in args.nodes.split(",")]
    runs = []
    for n in counts:
        print(f"==> {n} p5 nodes: starting the simulated cluster", flush=True)
        sim("down")
        sim("up", "--nodes", str(n), "--scenario", args.scenario)
        try:
            for i in range(args.repeat):
                run = one_run(n, args.profile)
                runs.append(run)
                print(f"    run {i + 1}: L0 {run['status']} in {run['level_s']} s of level time "
                      f"({run['wall_s']} s wall, rc {run['rc']}; CPU: controller {run['controller_cpu_s']} s, "
                      f"simulated cluster {run['sim_cpu_s']} s: {run['sim_cpu_by_process_s']})", flush=True)
                for line in run["failed_checks"] + run["slowest_tasks"]:
                    print(f"      {line}", flush=True)
        finally:
            sim("down")
    base = statistics.median(r["level_s"] for r in runs if r["nodes"] == counts[0])
    print("\nnodes  L0 level time (median)  ratio to %d nodes  controller CPU  sim CPU  all PASS" % counts[0])
    summary = []
    for n in counts:
        mine = [r for r in runs if r["nodes"] == n]
        med = statistics.median(r["level_s"] for r in mine)
        own = statistics.median(r["controller_cpu_s"] for r in mine)
        simulated = statistics.median(r["sim_cpu_s"] for r in mine)
        ok = all(r["status"] == "PASS" for r in mine)
        summary.append({"nodes": n, "median_level_s": med, "ratio": round(med / base, 2), "all_pass": ok,
                        "median_controller_cpu_s": own, "median_sim_cpu_s": simulated})
        print(f"{n:5d}  {med:22.1f}  {med / base:17.2f}  {own:14.1f}  {simulated:7.1f}  {ok}")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "summary": summary}, indent=2) + "\n")
    return 0 if all(s["all_pass"] for s in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
