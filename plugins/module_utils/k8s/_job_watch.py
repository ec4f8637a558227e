# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The wait on the L5/L6 Jobs (rlstack.validation.job_watch), in bounded steps as the probe wait
(_pod_wait.follow) is: the runner repeats a step of `step_s` seconds in an `until` loop, so the progress line
(plugins/plugin_utils/_progress.py describe(): `resources` are the Jobs' pods, `step_s` the step) says how many
pods run, and an interrupted run's module ends within a round.

On each round: list the Jobs' pods, read the log of each running or finished head pod (completion index 0 or
none) of a Job whose framework prints a step counter, and delete at once a Running Job whose log shows that its
override did not take effect (_frameworks.overrun: its GPUs are freed); name a Job of the run that disappeared
without this watch deleting it (someone else did) at once; stop when every Job's pod finished or cannot run
(_k8s_status.pods_summary, "finished"), at the end of the step, or at `timeout_s` from the first step.

What the steps share (when the watch began, the Jobs it stopped, the Jobs it found gone) lives in a small JSON
file on the controller (`state_file`), removed when the watch ends; without it one call is the whole watch.
Standard library only: the module passes in the calls that reach the API server.
"""

from __future__ import annotations

import json
import os
import time

from ansible_collections.rlstack.validation.plugins.module_utils import _frameworks
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._pod_wait import strip

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


def new_state(now):
    return {"started": now, "stopped": {}, "gone": {}}


def load_state(path, now):
    """The state the earlier steps of this watch left in `path`, or a new one (no file, or not a state)."""
    if not path:
        return new_state(now)
    try:
        with open(path) as handle:
            state = json.load(handle)
    except (OSError, ValueError):
        return new_state(now)
    if not isinstance(state, dict) or not isinstance(state.get("started"), (int, float)):
        return new_state(now)
    return dict(new_state(now), **{k: state[k] for k in ("started", "stopped", "gone") if k in state})


def save_state(path, state, ended):
    """Keep the state for the next step, or remove the file when the watch ended (nothing of a run outlives it)."""
    if not path:
        return
    if ended:
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(state, handle)
    os.replace(tmp, path)


def _labels(pod):
    return (pod.get("metadata") or {}).get("labels") or {}


def head_pods_to_read(pods, watched, stopped):
    """The pods whose log is read this round: the head pod (index 0, or a Job without indexes) of a watched Job
    not yet stopped, once it runs or has ended."""
    out = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        job = _labels(pod).get(JOB_NAME_LABEL) or ""
        phase = (pod.get("status") or {}).get("phase")
        index = (meta.get("annotations") or {}).get(COMPLETION_INDEX)
        if job in watched and job not in stopped and phase in ("Running", "Succeeded", "Failed") \
                and index in (None, "0"):
            out.append((job, meta.get("name"), phase))
    return out


def watch(cluster, jobs, timeout_s, grace_s, poll_s, step_s=0, state=None, clock=time.time, sleep=time.sleep,
          orphaned=lambda: False):
    """One step of the watch (the whole watch when step_s is 0).

    cluster: list_pods() -> [pod dict], read_log(pod name) -> str or None (unreadable), delete_job(name),
    job_names() -> the names of the run's Jobs that exist now. jobs: [{name, framework, mode, launched}].
    Returns {settled, timed_out, stopped, gone, resources (the Jobs' pods, managedFields left out), elapsed_s
    (since the first step), step_s, state}. Raises ValueError for an unknown framework."""
    contracts = {j["name"]: _frameworks.contract(j["framework"]) for j in jobs}
    state = state or new_state(clock())
    stopped, gone, started = state["stopped"], state["gone"], state["started"]
    watched = {j["name"]: j for j in jobs if contracts[j["name"]].get("step_patterns")}
    names = [j["name"] for j in jobs]
    step_start = clock()
    settled = timed_out = False
    pods = []
    while True:
        pods = [strip(p) for p in cluster.list_pods()]
        for job, pod_name, phase in head_pods_to_read(pods, watched, stopped):
            log = cluster.read_log(pod_name)
            if log is None:
                continue
            spec = watched[job]
            found = _frameworks.overrun(log, contracts[job], spec.get("mode") or "train", spec.get("launched") or {})
            if found and phase == "Running":
                cluster.delete_job(job)
                stopped[job] = dict(found, log=log, seen_after_s=round(clock() - started, 1))
        # A Job of this run that is gone and that this watch did not delete was deleted by someone else (a
        # cleanup script, another run's cleanup): its pods go with it, so without this the wait ran to its bound.
        for name in _k8s_status.jobs_gone(names, cluster.job_names(), stopped, gone):
            gone[name] = {"seen_after_s": round(clock() - started, 1)}
        ended = set(stopped) | set(gone)
        left = [p for p in pods if _labels(p).get(JOB_NAME_LABEL) not in ended]
        expected = len(jobs) - len(ended)
        settled = expected == 0 or _k8s_status.pods_summary(left, expected, grace_s, "finished")["settled"]
        now = clock()
        timed_out = not settled and now - started >= timeout_s
        if settled or timed_out or (step_s and now - step_start >= step_s) or orphaned():
            break
        sleep(max(0.0, min(poll_s, timeout_s - (now - started))))
    return {"settled": settled, "timed_out": timed_out, "stopped": stopped, "gone": gone,
            "resources": sorted(pods, key=lambda p: (p.get("metadata") or {}).get("name") or ""),
            "elapsed_s": round(clock() - started, 1), "step_s": step_s or timeout_s, "state": state}
