#!/usr/bin/env python
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One run's slowest tasks (the task_clock callback's file) and, with pod_timeline.py's JSON of the same run, how long
the probe task ran before its first pod was created and after its last pod was deleted (device_fleet.sh prints it).

    clock_summary.py CLOCK.jsonl [TIMELINE.json]
"""
import json
import sys

PROBE_TASK = "Run one probe pod"


def slowest(rows, count=6):
    """[(seconds, task name)] of the `count` longest steps between consecutive task starts."""
    steps = [(b["t"] - a["t"], a.get("name", "")) for a, b in zip(rows, rows[1:])]
    return sorted(steps, reverse=True)[:count]


def probe_task_margins(rows, timeline):
    """(start -> first pod created, last pod deleted -> task end) in seconds, or None without the probe task."""
    index = next((i for i, row in enumerate(rows) if PROBE_TASK in row.get("name", "")), None)
    if index is None or index + 1 >= len(rows):
        return None
    last_deleted = max(pod.get("deleted") or 0 for pod in timeline["pods"])
    return (timeline["t0_epoch"] - rows[index]["t"],
            rows[index + 1]["t"] - timeline["t0_epoch"] - last_deleted)


def main(argv):
    try:
        with open(argv[1]) as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
    except OSError as exc:  # the run ended before its playbook started (its log says why)
        print("   (no task clock: %s)" % exc)
        return 0
    for seconds, name in slowest(rows):
        print("   %.2f s %s" % (seconds, name[:90]))
    if len(argv) > 2:
        try:
            with open(argv[2]) as handle:
                margins = probe_task_margins(rows, json.load(handle))
        except (OSError, ValueError, KeyError) as exc:
            print("   (no timeline: %s)" % exc)
            return 0
        if margins:
            print("   probe task start -> first pod created %.2f s; last pod deleted -> task end %.2f s" % margins)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
