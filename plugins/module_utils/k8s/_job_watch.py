# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the wait on the L5/L6 Jobs does besides following their pods (rlstack.validation.job_run follows them
with a watch, _pod_wait.follow, and judges each look with Rounds; _job_run.py).

On each look (at most every poll_s): read the log of each running or finished head pod (completion index 0 or none)
of a Job whose framework prints a step counter, and delete at once a Running Job whose log shows that its override
did not take effect (_frameworks.overrun: its GPUs are freed); name a Job of the run that disappeared without this
watch deleting it (someone else did); settled when every Job's pod finished or cannot run
(_k8s_status.pods_summary, "finished").

What the steps of the wait share (when it began, the Jobs it stopped, the Jobs it found gone) lives in a small JSON
file on the controller (`state_file`), removed when the wait ends; without it one call is the whole wait.
Standard library only: the module passes in the calls that reach the API server.
"""

from __future__ import annotations

import json
import os
import time

from ansible_collections.rlstack.validation.plugins.module_utils import _frameworks
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


def new_state(now):
    """started: when the wait began; created: its objects were created (a later attempt creates nothing, also when one
    of them was deleted meanwhile); stopped, gone: the Jobs the wait stopped, the Jobs someone else deleted."""
    return {"started": now, "created": False, "stopped": {}, "gone": {}}


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
    return dict(new_state(now), **{k: state[k] for k in ("started", "created", "stopped", "gone") if k in state})


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


class Rounds:
    """The watch's work on each look at the Jobs' pods: read the log of each running or finished head pod of a Job
    whose framework prints a step counter and delete at once a Running Job whose log shows that its override did
    not take effect; name a Job of the run that disappeared without this watch deleting it (someone else did); say
    whether every Job's pod finished or cannot run. `state` ({started, stopped, gone}) is what the steps share.

    cluster: read_log(pod name) -> str or None (unreadable), delete_job(name), job_names() -> the names of the run's
    Jobs that exist now. jobs: [{name, framework, mode, launched}]. Raises ValueError for an unknown framework."""

    def __init__(self, cluster, jobs, grace_s, state, clock=time.time):
        self.cluster, self.jobs, self.grace_s, self.state, self.clock = cluster, jobs, grace_s, state, clock
        self.contracts = {j["name"]: _frameworks.contract(j["framework"]) for j in jobs}
        self.watched = {j["name"]: j for j in jobs if self.contracts[j["name"]].get("step_patterns")}

    def look(self, pods):
        """One look at the pods (managedFields left out): stop what overran, name what is gone; True when settled."""
        stopped, gone, started = self.state["stopped"], self.state["gone"], self.state["started"]
        for job, pod_name, phase in head_pods_to_read(pods, self.watched, stopped):
            log = self.cluster.read_log(pod_name)
            if log is None:
                continue
            spec = self.watched[job]
            found = _frameworks.overrun(log, self.contracts[job], spec.get("mode") or "train",
                                        spec.get("launched") or {})
            if found and phase == "Running":
                self.cluster.delete_job(job)
                stopped[job] = dict(found, log=log, seen_after_s=round(self.clock() - started, 1))
        # A Job of this run that is gone and that this watch did not delete was deleted by someone else (a
        # cleanup script, another run's cleanup): its pods go with it, so without this the wait ran to its bound.
        names = [j["name"] for j in self.jobs]
        for name in _k8s_status.jobs_gone(names, self.cluster.job_names(), stopped, gone):
            gone[name] = {"seen_after_s": round(self.clock() - started, 1)}
        return self.settled(pods)

    def settled(self, pods):
        """Whether every Job not stopped or gone has a pod that finished or cannot run (pods_summary, "finished").
        A pod waiting for GPUs is not stuck while a pod of the run holds a node, nor for grace_s after the last did
        (state["held_at"]): one of three examples on a 1-GPU machine waited for the GPU of one the watch had just
        stopped, and was judged Unschedulable before the scheduler could place it (2026-12-06)."""
        now = self.clock()
        if any(_k8s_status.holds_node(p) for p in pods):
            self.state["held_at"] = now
        ended = set(self.state["stopped"]) | set(self.state["gone"])
        left = [p for p in pods if _labels(p).get(JOB_NAME_LABEL) not in ended]
        expected = len(self.jobs) - len(ended)
        held_until = self.state.get("held_at", 0.0) + float(self.grace_s)
        return expected == 0 or _k8s_status.pods_summary(left, expected, self.grace_s, "finished", now=now,
                                                         held_until=held_until)["settled"]
