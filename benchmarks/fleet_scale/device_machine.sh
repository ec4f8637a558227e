#!/usr/bin/env bash
# What a lent machine's figures depend on, printed before device_fleet.sh's runs: the Python that runs the
# controller and the modules (the image's python3), its C speedups, its speed on a pure-Python loop and a JSON round
# trip (machines of one kind differed by 2x on it), whether it keeps the bytecode it compiles (the GPU image sets
# PYTHONDONTWRITEBYTECODE=1: docs/fleet-scale.md), the CPU and the disk's synchronous write speed (etcd's).
command -v python3
python3 -VV
python3 - <<'PY'
import json
import sys
import time

import jinja2
import markupsafe
import yaml

try:
    import markupsafe._speedups  # noqa: F401  pylint: disable=unused-import
    speedups = "with speedups"
except ImportError:
    speedups = "without speedups"
print("libyaml", yaml.__with_libyaml__, "PyYAML", yaml.__version__, "Jinja2", jinja2.__version__, "MarkupSafe", speedups)
print("dont_write_bytecode", sys.flags.dont_write_bytecode)
start, total = time.process_time(), 0
for i in range(3_000_000):
    total += i % 7
loop_s = time.process_time() - start
checks = [{"node": "n%d" % i, "name": "c", "status": "PASS", "expected": 1, "actual": 1} for i in range(30000)]
start = time.process_time()
for _ in range(5):
    json.loads(json.dumps(checks))
print("a 3M-step loop %.3f CPU-s, 5 JSON round trips of 30,000 checks %.3f CPU-s" % (loop_s, time.process_time() - start))
PY
env | grep '^PYTHON' || echo "no PYTHON* variables"
nproc
lscpu | grep -i "model name"
dd if=/dev/zero of=/var/tmp/fleet-dd bs=4k count=300 oflag=dsync 2>&1 | tail -1
rm -f /var/tmp/fleet-dd
