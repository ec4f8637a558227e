#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The runner's own time per level on the warm simulated cluster, against a bare create-pod/wait/read-log loop.

    .venv/bin/python benchmarks/runner_overhead/run.py --out benchmarks/runner_overhead/results-<date>.json

Runs playbooks/validate.yml -i inventories/sim once (the sim must be up: `make sim-up`), with
  * a benchmark-only callback (callback_plugins/task_clock.py) stamping every task start: a level's window runs
    from its first task to the first task after its last one, and its task count is the tasks started in it;
  * a watch on every pod the run creates: a pod's time is from its creation being seen to its terminal phase, or its
    deletion (an MPIJob's workers never end by themselves), being seen; one seen neither counts to the level's end;
    the runner's own time of a level = its window minus the union of its pods' times.
Then, in the same run, the bare loop: for each level, the same pods (their specs as the run made them, without
owner) created with the Kubernetes Python client in a namespace of its own, waited for with a watch, their logs
read, then deleted; `ratio` = level time / bare loop time. Read the ratios, not the seconds: the machine is shared.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MANAGED = "app.kubernetes.io/managed-by=rlstack.validation"
LEVEL_LABEL = "rlstack.io/level"
TERMINAL = ("Succeeded", "Failed")

sys.path.insert(0, str(ROOT / "plugins" / "module_utils"))
import _levels  # noqa: E402  pylint: disable=wrong-import-position


def core_api(kubeconfig):
    from kubernetes import client, config
    return client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig)))


class PodClock(threading.Thread):
    """Watches the run's pods: when each was first seen, when its terminal phase was first seen, its spec."""

    def __init__(self, kubeconfig):
        super().__init__(daemon=True)
        self.core = core_api(kubeconfig)
        self.pods = {}
        self.stop = threading.Event()

    def run(self):
        from kubernetes import watch
        while not self.stop.is_set():
            try:
                for event in watch.Watch().stream(self.core.list_pod_for_all_namespaces, label_selector=MANAGED,
                                                  timeout_seconds=5, _request_timeout=15):
                    now = time.time()
                    pod = event["object"]
                    rec = self.pods.setdefault(pod.metadata.uid, {
                        "name": pod.metadata.name, "namespace": pod.metadata.namespace, "seen": now,
                        "level": (pod.metadata.labels or {}).get(LEVEL_LABEL, ""), "done": None,
                        "body": self.core.api_client.sanitize_for_serialization(pod)})
                    # a pod deleted while it runs (an MPIJob's workers, deleted with it) ends when it is gone
                    if rec["done"] is None and (event["type"] == "DELETED"
                                                or pod.status and pod.status.phase in TERMINAL):
                        rec["done"] = now
                    if self.stop.is_set():
                        break
            except Exception as exc:  # a watch may expire; keep watching
                print("pod watch: %s" % exc, file=sys.stderr)
                time.sleep(0.5)


def union_s(intervals):
    total, end = 0.0, None
    for start, stop in sorted(intervals):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


def level_windows(records, ids):
    """{level id: (start, end, tasks)} from the task clock's records."""
    tasks = [r for r in records if r["event"] == "task"]
    end_time = next((r["t"] for r in records if r["event"] == "end"), tasks[-1]["t"] if tasks else 0)
    out = {}
    for level_id in ids:
        idx = [i for i, r in enumerate(tasks) if level_id in r["roles"]]
        if not idx:
            continue
        # the level's own entry: its longest run of consecutive tasks (the plan includes a level's preflight)
        runs, start = [], idx[0]
        for prev, cur in zip(idx, idx[1:] + [None]):
            if cur != prev + 1:
                runs.append((start, prev))
                start = cur
        first, last = max(runs, key=lambda r: r[1] - r[0])
        stop = tasks[last + 1]["t"] if last + 1 < len(tasks) else end_time
        out[level_id] = (tasks[first]["t"], stop, last - first + 1)
    return out


def bare_body(body, index):
    meta = body["metadata"]
    spec = dict(body["spec"])
    for key in ("nodeName",):  # let the scheduler place it, as it placed the run's pod
        spec.pop(key, None)
    labels = dict(meta.get("labels") or {})
    labels.pop("app.kubernetes.io/managed-by", None)  # not the run's: its cleanup and our watch ignore it
    labels["rlstack.io/bench"] = "bare"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": ("bare-%d-%s" % (index, meta["name"]))[:63].rstrip("-"), "labels": labels,
                         "namespace": meta["namespace"], "annotations": meta.get("annotations") or {}},
            "spec": spec}


def bare_loop(core, bodies, timeout=60):
    """Create the pods (in the run's namespace, where its storage claim is; without the run's labels), wait for
    each to end (a watch), read each log, delete them. Returns seconds, or None when one did not end in time."""
    from kubernetes import watch
    from kubernetes.client.exceptions import ApiException
    start = time.time()
    names = []
    namespace = bodies[0]["metadata"]["namespace"]
    for i, body in enumerate(bodies):
        b = bare_body(body, i)
        core.create_namespaced_pod(namespace, b, _request_timeout=30)
        names.append(b["metadata"]["name"])
    left = set(names)
    deadline = time.time() + timeout
    while left and time.time() < deadline:
        for event in watch.Watch().stream(core.list_namespaced_pod, namespace, label_selector="rlstack.io/bench=bare",
                                          timeout_seconds=max(1, int(deadline - time.time())), _request_timeout=timeout):
            pod = event["object"]
            if pod.metadata.name in left and pod.status and pod.status.phase in TERMINAL:
                left.discard(pod.metadata.name)
                if not left:
                    break
    ok = not left
    if ok:
        for name in names:
            core.read_namespaced_pod_log(name, namespace, _request_timeout=30)
    elapsed = time.time() - start
    for name in names:
        try:
            core.delete_namespaced_pod(name, namespace, grace_period_seconds=0, _request_timeout=30)
        except ApiException as exc:
            if exc.status != 404:  # gone already (its namespace may be going away after the run): not an error
                raise
    return elapsed if ok else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--label", default="", help="what this run measures (e.g. before/after a change)")
    parser.add_argument("--repeat", type=int, default=3, help="bare loops per level (the median counts)")
    parser.add_argument("--reuse", action="store_true",
                        help="do not run the playbook: read the task clock and pods that a run with this --out "
                             "recorded (its bare loop had failed), and run the bare loop now")
    args = parser.parse_args()
    kubeconfig = Path(os.environ.get("SIM_STATE", ROOT / ".sim")) / "kubeconfig"
    clock_file = Path(args.out).with_suffix(".tasks.jsonl")
    pods_file = Path(args.out).with_suffix(".pods.json")
    report_dir = Path(args.out).with_suffix(".report")
    if args.reuse:
        pods = json.loads(pods_file.read_text())
        records = [json.loads(line) for line in clock_file.read_text().splitlines() if line.strip()]
        playbook = {"rc": None, "s": round(records[-1]["t"] - records[0]["t"], 1)}
    else:
        pods, records, playbook = run_playbook(kubeconfig, clock_file, pods_file, report_dir)
    return summarize(args, kubeconfig, pods, records, playbook, report_dir)


def run_playbook(kubeconfig, clock_file, pods_file, report_dir):
    clock_file.unlink(missing_ok=True)
    watcher = PodClock(kubeconfig)
    watcher.start()
    time.sleep(1)
    env = dict(os.environ, TASK_CLOCK_FILE=str(clock_file), ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
               ANSIBLE_CALLBACK_PLUGINS=str(HERE / "callback_plugins"),
               ANSIBLE_CALLBACKS_ENABLED="rlstack.validation.report,rlstack.validation.interrupt_cleanup,task_clock")
    started = time.time()
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml",
                           "-i", "inventories/sim", "-e", "validation_report_dir=%s" % report_dir],
                          cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=1800, check=False)
    playbook = {"rc": proc.returncode, "s": round(time.time() - started, 1)}
    if proc.returncode not in (0, 2):
        print(proc.stdout[-3000:], proc.stderr[-3000:], file=sys.stderr)
    time.sleep(2)
    watcher.stop.set()
    pods_file.write_text(json.dumps(watcher.pods))
    records = [json.loads(line) for line in clock_file.read_text().splitlines() if line.strip()]
    return watcher.pods, records, playbook


def summarize(args, kubeconfig, pods_seen, records, playbook, report_dir):
    ids = _levels.ids()
    windows = level_windows(records, ids)
    core = core_api(kubeconfig)
    levels = []
    for level_id in ids:
        if level_id not in windows:
            continue
        start, stop, tasks = windows[level_id]
        pods = [p for p in pods_seen.values() if p["level"] == level_id and start <= p["seen"] <= stop]
        pod_s = union_s([(p["seen"], p["done"] or stop) for p in pods])
        row = {"id": level_id, "level_s": round(stop - start, 2), "tasks": tasks, "pods": len(pods),
               "pod_s": round(pod_s, 2), "runner_s": round(stop - start - pod_s, 2)}
        # the bare loop runs the level's pods that are not Job-controlled (the MPIJob/Job pods need their controller)
        bodies = [p["body"] for p in pods if not any(o.get("kind") in ("Job", "MPIJob", "TrainJob")
                                                     and o.get("controller") for o in
                                                     p["body"]["metadata"].get("ownerReferences") or [])]
        if bodies:
            times = [bare_loop(core, bodies) for _attempt in range(args.repeat)]
            good = [t for t in times if t is not None]
            if good:
                row["bare_s"] = round(statistics.median(good), 2)
                row["ratio"] = round(row["level_s"] / row["bare_s"], 1)
            row["bare_pods"] = len(bodies)
        levels.append(row)
    report = json.loads((report_dir / "report.json").read_text()) if (report_dir / "report.json").exists() else {}
    verdicts = {lvl["id"]: lvl.get("status") for c in report.get("clusters", []) for lvl in c.get("levels", [])}
    ran = [r for r in levels if r["pods"] > 0 or r["id"] in verdicts]
    with open("/proc/loadavg", encoding="utf-8") as f:
        load = f.read().split()[:3]
    result = {
        "label": args.label, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"host": platform.node(), "cpus": os.cpu_count(), "loadavg_at_end": load,
                    "note": "shared machine, several engineers' sims and tests at once: compare ratios within one run"},
        "command": "ansible-playbook playbooks/validate.yml -i inventories/sim (warm sim, healthy scenario)",
        "playbook_rc": playbook["rc"], "playbook_s": playbook["s"],
        "tasks_total": sum(1 for r in records if r["event"] == "task"),
        "level_time_total_s": round(sum(r["level_s"] for r in ran), 1),
        "verdicts": verdicts, "levels": levels,
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
