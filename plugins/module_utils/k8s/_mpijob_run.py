# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An nccl-tests MPIJob from start to outcome in one module run per step of the wait (rlstack.validation.mpijob_run;
standard library only: the module passes in the client packages).

Why: L3's and Phase 0's MPIJob took eight module runs (lease, the scripts' ConfigMap, the MPIJob, the operator's
first sync, the launcher, the MPIJob's outcome, the launcher's log, each an interpreter and a kubernetes client
import): most of their own time on a warm cluster (benchmarks/runner_overhead/). One call now extends the lease and
creates the objects (unless an earlier attempt of the same task did), follows the MPIJob's pods with a watch for at
most `step_s`, judging each look with the MPIJob itself (_k8s_status.mpijob_state: its conditions, its launcher's
outcome, an operator that never acted on it within the grace, pods that cannot run), and once that is settled, or
the deadline has come, reads the MPIJob again (giving the operator a few seconds to record the outcome) and the
launcher's log; with `delete_after` it then deletes what it created and the pods (as job_run: the level's cleanup
has nothing left to do).

The first object created marks the start: an attempt that finds it existing only waits.
"""

from __future__ import annotations

import json
import time

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _job_run
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._k8s_status import mpijob_state, pods_summary
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._pod_wait import follow, pod_calls, strip
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _pod_batch

MPIJOB_PATH = "/apis/kubeflow.org/v2beta1/namespaces/%s/mpijobs/%s"
NO_LAUNCHER_LOG = "the launcher pod never started, so there is no log"


class Cluster:
    """The MPIJob the wait and the end read, by namespace and name."""

    def __init__(self, core, namespace, name):
        self.core, self.namespace, self.name = core, namespace, name

    def mpijob(self):
        """The MPIJob as the API has it, {} when it is gone (deleted by someone else)."""
        try:
            response = self.core.api_client.call_api(
                MPIJOB_PATH % (self.namespace, self.name), "GET", auth_settings=["BearerToken"],
                header_params={"Accept": "application/json"}, _preload_content=False, _return_http_data_only=True)
        except Exception as exc:  # pylint: disable=broad-except
            if getattr(exc, "status", None) == 404:
                return {}
            raise
        return json.loads(response.data or b"{}")


def mpijob_name(objects):
    """The name of the MPIJob among the objects to create (there is exactly one)."""
    names = [(o.get("metadata") or {}).get("name") for o in objects if o.get("kind") == "MPIJob"]
    if len(names) != 1:
        raise ValueError("mpijob_run: objects must hold exactly one MPIJob, found %d" % len(names))
    return names[0]


def judge_with_mpijob(cluster, params, every_s, clock=time.monotonic):
    """follow()'s judge: the MPIJob read again at most every `every_s`, and the pods, through mpijob_state; settled
    when its state is (complete, failed, an operator that did not act, a pod that cannot run) or the launcher finished."""
    held = {"at": None, "mpijob": {}}

    def judge(pods):
        if held["at"] is None or clock() - held["at"] >= every_s:
            held["at"], held["mpijob"] = clock(), cluster.mpijob()
        state = mpijob_state(held["mpijob"], pods, grace_s=params["grace_s"], workloads=params["workloads"])
        launcher = pods_summary(pods, None, params["grace_s"], "launcher")
        return {"settled": bool(state["settled"] or launcher["settled"])}

    return judge


def read_outcome(cluster, list_pods, pods, params, clock=time.monotonic, sleep=time.sleep):
    """The MPIJob, its pods and its state. The operator records Succeeded/Failed a few seconds after the launcher pod
    ended: read again, up to record_wait_s, while a failure comes from the launcher pod (source 'launcher pod': the
    record says why); a launcher that succeeded is the outcome already. `pods` are the wait's last, list_pods() the
    wait's list (pod_calls)."""
    t0 = clock()
    while True:
        mpijob = cluster.mpijob()
        state = mpijob_state(mpijob, pods, grace_s=params["grace_s"], workloads=params["workloads"])
        recorded = state.get("source") == "MPIJob status" or state.get("complete")
        if recorded or clock() - t0 >= params["record_wait_s"]:
            return mpijob, pods, state
        sleep(_job_run.REREAD_S)
        pods = [strip(p) for p in list_pods()[0]]


def finish(kubernetes, core, cluster, list_pods, params, selector, pods):
    """What the level judges, read once the wait ended: {mpijob, resources, state, log, log_error, seen_at}."""
    mpijob, pods, state = read_outcome(cluster, list_pods, pods, params)
    seen_at = time.time()
    launchers = [s for s in state["pods"] if s.get("role") == "launcher"]
    logs = _job_run.read_last_logs(kubernetes, core, params, selector, [{"pods": launchers}] if launchers else [])
    entry = logs[-1] if logs else {}
    log = entry.get("log") or ""
    error = "" if log else (entry.get("error") or (NO_LAUNCHER_LOG if not launchers else
                                                   "the launcher's log was empty"))
    out = {"mpijob": mpijob, "resources": pods, "state": state, "log": log, "log_error": error, "seen_at": seen_at,
           "left_nothing": False}
    if params["delete_after"]:
        out.update(_job_run.delete_created(kubernetes, core, params["namespace"], selector, params["objects"]))
    return out


def run(kubernetes, urllib3, core, params, orphaned=lambda: False, now=time.time):
    """One attempt: start (first attempt), wait up to step_s, finish once settled or at deadline_at (epoch s).
    Returns the module's result (see plugins/modules/mpijob_run.py RETURN)."""
    t0 = time.monotonic()
    name = mpijob_name(params["objects"])
    selector = _pod_batch.selector_of(params["label_selectors"])
    started = _job_run.start_objects(kubernetes, core, params["namespace"], params["lease"], params["objects"])
    out = {"started": started, "changed": started, "name": name, "step_s": params["step_s"], "finished": False,
           "settled": False, "timed_out": False, "resources": []}
    if params["wait"]:
        cluster = Cluster(core, params["namespace"], name)
        list_pods, watch_pods = pod_calls(kubernetes, urllib3, core, params["namespace"], selector,
                                          params["request_timeout_s"])
        left_s = max(0.0, params["deadline_at"] - now())
        seen = follow(list_pods, watch_pods, judge_with_mpijob(cluster, params, params["poll_s"]),
                      min(params["step_s"], left_s), orphaned=orphaned)
        settled = bool(seen["summary"].get("settled"))
        out.update(settled=settled, timed_out=not settled and now() >= params["deadline_at"], resources=seen["pods"])
        out["finished"] = settled or out["timed_out"]
        if out["finished"] and not orphaned():
            out.update(finish(kubernetes, core, cluster, list_pods, params, selector, seen["pods"]))
    out["attempt_s"] = round(time.monotonic() - t0, 3)
    return out
