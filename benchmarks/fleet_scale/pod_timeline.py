#!/usr/bin/env python
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""When each pod of a run reached each stage, from one watch of the cluster's pods: which stage sets the pace at
scale (created, bound to a node, Running, its probe's log written by the node runtime, ended, deleted).

Run it beside a playbook on the simulated cluster; it stops after --seconds or on SIGINT/SIGTERM and writes JSON
(one record per pod: seconds from the first pod's creation seen) and prints, per stage, when the first and the
last pod reached it. Usage:

    python benchmarks/fleet_scale/pod_timeline.py --kubeconfig .sim/kubeconfig --seconds 120 --json OUT
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

PROBE_DONE = "sim.rlstack.io/probe-done"  # sim/simcommon.py: the node runtime ran the probe and wrote its log
STAGES = ("created", "bound", "running", "probe_done", "ended", "deleted")
SKIP_NAMESPACES = {"kube-system", "kube-public", "kube-node-lease", "gpu-operator", "mpi-operator"}


def stages_of(kind: str, pod: dict) -> list:
    """The stages this event shows the pod in."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    seen = ["created"]
    if spec.get("nodeName"):
        seen.append("bound")
    if status.get("phase") in ("Running", "Succeeded", "Failed"):
        seen.append("running")
    if (meta.get("annotations") or {}).get(PROBE_DONE) == "true":
        seen.append("probe_done")
    if status.get("phase") in ("Succeeded", "Failed"):
        seen.append("ended")
    if kind == "DELETED":
        seen.append("deleted")
    return seen


def summary(pods: dict) -> list:
    """Per stage: how many pods reached it, and when the first and the last did (s from the first creation)."""
    rows = []
    for stage in STAGES:
        times = sorted(p[stage] for p in pods.values() if stage in p)
        if times:
            rows.append({"stage": stage, "pods": len(times), "first_s": round(times[0], 2),
                         "last_s": round(times[-1], 2)})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    if not os.path.isfile(args.kubeconfig):
        print("pod_timeline: no kubeconfig at %s (is the simulated cluster up, and is SIM_STATE the one it uses?)"
              % args.kubeconfig, file=sys.stderr)
        return 2
    from kubernetes import client, config, watch
    core = client.CoreV1Api(config.new_client_from_config(config_file=args.kubeconfig))
    pods, t0, stop, last_error = {}, None, time.monotonic() + args.seconds, None
    t0_epoch = None  # the first pod's creation seen, in epoch seconds (to set beside the task clock's stamps)

    def finish(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, finish)
    try:
        while time.monotonic() < stop:
            try:
                for event in watch.Watch().stream(core.list_pod_for_all_namespaces, deserialize=False,
                                                  timeout_seconds=max(1, int(stop - time.monotonic()))):
                    pod = event.get("object") or {}
                    meta = pod.get("metadata") or {}
                    if (meta.get("namespace") in SKIP_NAMESPACES
                            or event.get("type") not in ("ADDED", "MODIFIED", "DELETED")):
                        continue
                    now = time.monotonic()
                    if t0 is None:
                        t0, t0_epoch = now, time.time()
                    record = pods.setdefault(meta.get("uid"),
                                             {"pod": "%s/%s" % (meta.get("namespace"), meta.get("name"))})
                    for stage in stages_of(event["type"], pod):
                        record.setdefault(stage, now - t0)
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # pylint: disable=broad-except
                # A watch the server ended early ("Response ended prematurely" at 1,024 pods), or an API server not
                # up yet: watch again (a stage keeps the first time it was seen); the bound is --seconds.
                if type(exc).__name__ != last_error:  # once for a run of the same error (a cluster gone)
                    print("pod_timeline: watching again after %s" % type(exc).__name__, file=sys.stderr)
                last_error = type(exc).__name__
                time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    rows = summary(pods)
    with open(args.json, "w", encoding="utf-8") as out:
        json.dump({"summary": rows, "t0_epoch": t0_epoch, "pods": list(pods.values())}, out, indent=1)
    for row in rows:
        print("%-11s %5d pods  first %7.2f s  last %7.2f s" % (row["stage"], row["pods"], row["first_s"], row["last_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
