#!/usr/bin/env python
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""CPU seconds of `rlstack-validate local` on a 100-file repository, two collection checkouts compared in one run.

The repository is the seed of issue 31 (tests/local/fixtures/repos/sample-rlinf-on-eks.tar.xz: 100 files, 12
scripts, 22 YAML files, 21 Terraform files in 5 root modules), unpacked to a temporary directory. Each checkout
(--before, --after: a collection root holding rlstack-validate, .collections and .venv) lints it --repeat times,
alternating, and each run's CPU is ru_utime + ru_stime of getrusage(RUSAGE_CHILDREN) around it (ansible-playbook,
its workers, terraform, shellcheck, yamllint: every process it waited for), not wall time: the machine is shared.
The figure of merit is the median CPU of --after divided by that of --before. Usage:

    nice -n 10 python benchmarks/local_mode_cpu/run.py --before /tmp/base --after . [--repeat 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SEED = os.path.join(REPO, "tests", "local", "fixtures", "repos", "sample-rlinf-on-eks.tar.xz")


def _cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(checkout, repo, report_dir):
    """(cpu_s, wall_s, rc, closing lines) of one `rlstack-validate local repo`."""
    env = dict(os.environ, NO_COLOR="1", ANSIBLE_NOCOLOR="1")
    before, start = _cpu(), time.monotonic()
    proc = subprocess.run([os.path.join(checkout, "rlstack-validate"), "local", repo, "--report-dir", report_dir],
                          cwd=checkout, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900,
                          check=False)
    wall, cpu = time.monotonic() - start, _cpu() - before
    text = proc.stdout.decode("utf-8", errors="replace")
    rows = [line for line in text.splitlines() if line.startswith("LOCAL ")]
    return cpu, wall, proc.returncode, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--before", required=True, help="collection checkout to compare against")
    parser.add_argument("--after", default=REPO, help="collection checkout measured (default: this one)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", help="write the JSON result here too")
    args = parser.parse_args()
    top = tempfile.mkdtemp(prefix="rlstack-bench-local-")
    try:
        with tarfile.open(SEED) as archive:
            archive.extractall(top, filter="data")
        repo = os.path.join(top, "sample-rlinf-on-eks")
        files = sum(len(names) for _r, _d, names in os.walk(repo))
        runs = {"before": [], "after": []}
        for index in range(args.repeat):
            for label in ("before", "after"):
                checkout = os.path.abspath(getattr(args, label))
                cpu, wall, rc, rows = run_once(checkout, repo, os.path.join(top, "%s-%d" % (label, index)))
                runs[label].append({"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "rc": rc, "rows": rows})
                print("%s run %d: %.1f s CPU, %.1f s wall, rc %d" % (label, index + 1, cpu, wall, rc), flush=True)
        median = dict((label, statistics.median(r["cpu_s"] for r in items)) for label, items in runs.items())
        result = {
            "what": "CPU seconds (user + sys of every child process) of rlstack-validate local on the seed repository",
            "repository": {"archive": os.path.relpath(SEED, REPO), "files": files},
            "machine": {"host": platform.node(), "cpus": os.cpu_count(), "load_at_start": os.getloadavg()},
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "before": os.path.abspath(args.before), "after": os.path.abspath(args.after),
            "runs": runs, "median_cpu_s": median,
            "ratio_after_over_before": round(median["after"] / median["before"], 3) if median["before"] else None,
        }
        text = json.dumps(result, indent=2)
        print(text)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
