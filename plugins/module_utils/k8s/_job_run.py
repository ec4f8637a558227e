# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""L5/L6's Jobs from start to outcome in one module run per step of the wait (rlstack.validation.job_run; standard
library only: the module passes in the client packages).

Why: the Jobs of a level took a dozen module runs around them (lease, Services, Jobs, the wait, the pods, the
scheduler's events, the Jobs' outcome with retries, the logs with retries), each an interpreter and a kubernetes
client import: most of L5's own time on a warm cluster (benchmarks/runner_overhead/). One call now starts them
(unless an earlier attempt of the same task did), follows their pods with a watch for at most `step_s` (judging
each look with _job_watch.Rounds: a Job whose log shows its override did not take effect is deleted at once), and
once the wait is settled, or its deadline has come, reads what the level judges: the Jobs (giving their
controller a few seconds to record the outcome), where multi-node pods were scheduled, each Job's last pod's log;
with `delete_after` it then deletes the Jobs, their Services and pods, so the level's cleanup has nothing left to do
(the runner leaves them to the cleanup with validation_keep_failed, which keeps a failed level's).

The first object created marks the start: an attempt that finds it existing only waits (a repeat of the task by
`until` must not create the Jobs again, nor bring back a Job that was deleted during the wait).
"""

from __future__ import annotations

import json
import time

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _job_watch, _pod_batch
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._k8s_status import job_results, jobs_summary
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._module_end import StartFailed
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_absent import (
    KindNotServed, api_caller, collection_path, delete_options)
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._pod_wait import follow, pod_calls, strip

# Each log request's connect and read bound (all of them together are bounded by read_deadline_s).
LOG_REQUEST_TIMEOUT_S = 30
# A log can lag behind its pod's end (the node agent flushes it): an empty one is read again for up to this long.
EMPTY_LOG_WAIT_S = 3.0
# How often the end reads again what is not there yet (an empty log, the Job controller's record).
REREAD_S = 0.25
# The scheduler's record of where each pod ran: multi-node Jobs' workers may be gone by the end (successPolicy).
SCHEDULED_EVENTS = "reason=Scheduled,involvedObject.kind=Pod"


def workload_options():
    """The argument spec of the options job_run and mpijob_run share (their docs: doc_fragments/_workload_run.py)."""
    return dict(
        lease=dict(type="dict", options=dict(job=dict(type="str", required=True),
                                             active_deadline_s=dict(type="int", required=True))),
        wait=dict(type="bool", default=True),
        deadline_at=dict(type="float", default=0),
        step_s=dict(type="int", default=30),
        poll_s=dict(type="float", default=2.0),
        grace_s=dict(type="float", default=45.0),
        workloads=dict(type="list", elements="dict"),
        record_wait_s=dict(type="int", default=10),
        request_timeout_s=dict(type="int", default=5),
        concurrency=dict(type="int", default=16),
        read_deadline_s=dict(type="int", default=120),
        limit_bytes=dict(type="int", default=4194304),
        delete_after=dict(type="bool", default=False),
    )


class Cluster:
    """The calls _job_watch.Rounds makes, and the reads of the end, on one namespace and label selector."""

    def __init__(self, kubernetes, core, namespace, selector):
        self.kubernetes, self.core, self.namespace, self.selector = kubernetes, core, namespace, selector
        self.batch = kubernetes.client.BatchV1Api(core.api_client)  # the same configuration and pool

    def read_log(self, pod):
        try:
            return self.core.read_namespaced_pod_log(pod, self.namespace)
        except self.kubernetes.client.exceptions.ApiException:
            return None

    def delete_job(self, name):
        _pod_batch.drain(self.batch.delete_namespaced_job(name, self.namespace, body=delete_options(),
                                                          _preload_content=False))

    def jobs(self):
        response = self.batch.list_namespaced_job(self.namespace, label_selector=self.selector, _preload_content=False)
        return json.loads(response.data).get("items") or []

    def job_names(self):
        return set((j.get("metadata") or {}).get("name") for j in self.jobs())

    def scheduled_events(self):
        response = self.core.list_namespaced_event(self.namespace, field_selector=SCHEDULED_EVENTS,
                                                   _preload_content=False)
        return json.loads(response.data).get("items") or []


def objects_of(jobs):
    """What the start creates, in order: each multi-node Job's headless Service first (its workers find the head
    by it), each EFA claim template (its pods claim through it), then the Jobs. The first is the start marker."""
    return ([j["service"] for j in jobs if j.get("service")] + [j["claim"] for j in jobs if j.get("claim")]
            + [j["definition"] for j in jobs])


def create_objects(kubernetes, api_client, namespace, definitions):
    """POST each definition to its collection, in order. False when the first exists (an earlier attempt started
    them all); a later one that exists is left as it is."""
    for index, definition in enumerate(definitions):
        meta = definition.get("metadata") or {}
        path = collection_path(definition["apiVersion"], definition["kind"], meta.get("namespace") or namespace)
        try:
            _pod_batch.drain(api_client.call_api(
                path, "POST", body=definition, auth_settings=["BearerToken"], _preload_content=False,
                header_params={"Accept": "application/json", "Content-Type": "application/json"},
                _return_http_data_only=True))
        except kubernetes.client.exceptions.ApiException as exc:
            if exc.status != 409:
                raise
            if index == 0:
                return False
    return True


def delete_created(kubernetes, core, namespace, selector, created):
    """Delete what the start created (`created`, in the start's order: deleted in reverse, owners first; one gone
    already is not an error), then the pods `selector` picks, and wait until none is listed: {deleted, left,
    delete_errors, left_nothing}. The GPUs are free for the next level then. job_run and mpijob_run end this way."""
    call, errors, deleted = api_caller(kubernetes, core.api_client), [], []
    for definition in reversed(created):
        meta = definition.get("metadata") or {}
        path = collection_path(definition["apiVersion"], definition["kind"], meta.get("namespace") or namespace)
        try:
            call("DELETE", "%s/%s" % (path, meta["name"]), body=delete_options())
            deleted.append(meta["name"])
        except KindNotServed:
            pass  # gone already
        except RuntimeError as exc:  # the API server's sentence
            errors.append({"name": meta["name"], "error": str(exc)})
    gone = _pod_batch.delete_selected(core, namespace, selector)
    errors += gone["failed"]
    return {"deleted": deleted + gone["deleted"], "left": gone["left"], "delete_errors": errors,
            "left_nothing": not gone["left"] and not errors}


def start_objects(kubernetes, core, namespace, lease, objects):
    """Create `objects` in order under the run's lease: the first one (the start marker) first, then the lease moved
    over the wait, then the rest. False when the first exists (an earlier attempt started them: no call but that
    one). Raises StartFailed with the client's exception as its cause. job_run and mpijob_run start this way."""
    try:
        if not objects or not create_objects(kubernetes, core.api_client, namespace, objects[:1]):
            return False
        _pod_batch.extend_lease(kubernetes, core, namespace, lease)
        create_objects(kubernetes, core.api_client, namespace, objects[1:])
        return True
    except Exception as exc:  # pylint: disable=broad-except
        raise StartFailed(str(exc)) from exc


def throttled_judge(rounds, every_s, clock=time.monotonic):
    """follow()'s judge: Rounds.look (log reads, the Jobs listed) at most every `every_s`, Rounds.settled between."""
    last = [None]

    def judge(pods):
        if last[0] is None or clock() - last[0] >= every_s:
            last[0] = clock()
            return {"settled": rounds.look(pods)}
        return {"settled": rounds.settled(pods)}

    return judge


def read_last_logs(kubernetes, core, params, selector, states, clock=time.monotonic, sleep=time.sleep):
    """The log of each Job's last pod (pod_logs' entries), an empty one read again for up to EMPTY_LOG_WAIT_S."""
    names = [state["pods"][-1]["pod"] for state in states if state.get("pods")]
    entries, reads = {}, 0
    t0 = clock()
    while True:
        wanted = [n for n in names if n not in entries or not entries[n]["log"] and not entries[n]["error"]]
        if not wanted or reads and clock() - t0 >= EMPTY_LOG_WAIT_S:
            return [entries[n] for n in sorted(entries)]
        if reads:
            sleep(REREAD_S)
        reads += 1
        read = _pod_batch.read_logs(kubernetes, core, params["namespace"], selector, names=wanted,
                                    workers=params["concurrency"], request_timeout_s=LOG_REQUEST_TIMEOUT_S,
                                    deadline_s=params["read_deadline_s"], limit_bytes=params["limit_bytes"])[1]
        entries.update((entry["name"], entry) for entry in read)


def read_outcome(cluster, list_pods, pods, params, settled=True, clock=time.monotonic, sleep=time.sleep):
    """The Jobs, their pods and their states (jobs_summary). The Job controller records Complete/Failed a moment after
    the pods say so (it batches pod updates for a second; seconds after an API server restart; a multi-node Job's
    workers end only once it recorded its head's success): while a failure still comes from the pods (source 'pods':
    the record says why, e.g. BackoffLimitExceeded), or, after a settled wait, a Job is not settled yet, both are read
    again, up to record_wait_s; then the pods are the outcome. A success the pods show needs no record: every pod of
    the Job succeeded. `pods` are the wait's last, list_pods() the wait's list (pod_calls)."""
    t0 = clock()
    while True:
        jobs = cluster.jobs()
        summary = jobs_summary(jobs, pods, params["grace_s"], workloads=params["workloads"])
        waiting = [s for s in summary["states"]
                   if s.get("source") == "pods" and not s.get("complete") or settled and not s.get("settled")]
        if not waiting or clock() - t0 >= params["record_wait_s"]:
            return jobs, pods, summary
        sleep(REREAD_S)
        pods = [strip(p) for p in list_pods()[0]]


def finish(kubernetes, core, cluster, list_pods, params, selector, pods, state, settled):
    """What the level judges, read once the wait ended: {jobs, resources (the pods), states, scheduled, logs,
    examples, seen_at}."""
    jobs, pods, summary = read_outcome(cluster, list_pods, pods, params, settled)
    seen_at = time.time()
    multi_node = any(j.get("service") for j in params["jobs"])
    scheduled = cluster.scheduled_events() if multi_node else []
    logs = read_last_logs(kubernetes, core, params, selector, summary["states"])
    results = job_results(params["jobs"], summary["states"], logs, state["stopped"], state["gone"])
    out = {"jobs": jobs, "resources": pods, "states": summary["states"], "scheduled": scheduled, "logs": logs,
           "examples": results, "seen_at": seen_at, "left_nothing": False}
    if params["delete_after"]:
        out.update(delete_created(kubernetes, core, params["namespace"], selector, objects_of(params["jobs"])))
    return out


def run(kubernetes, urllib3, core, params, orphaned=lambda: False, now=time.time):
    """One attempt: start (first attempt), wait up to step_s, finish once settled or at deadline_at (epoch s).
    Returns the module's result (see plugins/modules/job_run.py RETURN)."""
    t0 = time.monotonic()
    selector = _pod_batch.selector_of(params["label_selectors"])
    # (a start without a wait keeps no state: the wait that follows begins its own)
    state = _job_watch.load_state(params["state_file"] if params["wait"] else None, now())
    # (an attempt after the one that created them creates nothing, not even a Job someone deleted meanwhile)
    started = not state["created"] and start_objects(kubernetes, core, params["namespace"], params["lease"],
                                                     objects_of(params["jobs"]))
    state["created"] = True
    out = dict(started=started, changed=started, step_s=params["step_s"], finished=False, settled=False,
               timed_out=False, resources=[])
    if params["wait"]:
        cluster = Cluster(kubernetes, core, params["namespace"], selector)
        rounds = _job_watch.Rounds(cluster, [j["watch"] for j in params["jobs"]], params["grace_s"], state, clock=now)
        list_pods, watch_pods = pod_calls(kubernetes, urllib3, core, params["namespace"], selector,
                                          params["request_timeout_s"])
        left_s = max(0.0, params["deadline_at"] - now())
        seen = follow(list_pods, watch_pods, throttled_judge(rounds, params["poll_s"]), min(params["step_s"], left_s),
                      orphaned=orphaned)
        settled = bool(seen["summary"].get("settled"))
        out.update(settled=settled, timed_out=not settled and now() >= params["deadline_at"], resources=seen["pods"],
                   stopped=state["stopped"], gone=state["gone"], elapsed_s=round(now() - state["started"], 1))
        out["finished"] = settled or out["timed_out"]
        if state["stopped"]:
            out["changed"] = True
        if out["finished"] and not orphaned():
            out.update(finish(kubernetes, core, cluster, list_pods, params, selector, seen["pods"], state, settled))
        _job_watch.save_state(params["state_file"], state, out["finished"])
    out["attempt_s"] = round(time.monotonic() - t0, 3)
    return out
