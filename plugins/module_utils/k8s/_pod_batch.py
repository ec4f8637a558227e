# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Create many pods at once, and delete them as one collection, with bounds (standard library only).

Why: kubernetes.core.k8s applies a list of definitions one after the other, a GET and a POST each, and
deletes what a label selector finds one DELETE after the other. Here both run at most `workers` at a time.
The calls are the kubernetes client's (plugins/modules/pod_batch.py passes them in); each is bounded by the
API guard (_api_guard.py), all of them by a deadline.
"""

from __future__ import annotations

import concurrent.futures
import json
import time

from ansible_collections.rlstack.validation.plugins.module_utils.k8s._diagnose import api_error_text
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._fanout import CallError, bounded_map


def api_message(exc):
    """The API server's own sentence for a refused request (the message of its Status body, with the HTTP
    status), else the exception's text: never the headers and body dump that ApiException prints."""
    body = getattr(exc, "body", None)
    try:
        status = json.loads(body) if body else None
    except (TypeError, ValueError):
        status = None
    if isinstance(status, dict) and status.get("message"):
        return "(%s) %s" % (getattr(exc, "status", "?"), status["message"])
    text = str(exc).strip().splitlines()
    return "%s: %s" % (type(exc).__name__, text[0]) if text else type(exc).__name__


class Refused(Exception):
    """A create the API server refused; its text is the server's sentence."""


def create_all(create, definitions, workers=16, deadline_s=300.0):
    """Call create(definition) for every definition, at most `workers` at a time, within `deadline_s`.

    A 409 (AlreadyExists) counts as existing, not as a failure: a POST the API guard retried after its first
    attempt landed, or the same task run twice. Returns {created, existing, failed: [{name, error}]}, names
    in the order of `definitions`.
    """
    def one(definition):
        try:
            create(definition)
        except Exception as exc:  # the client's ApiException, a guard's sentence, a timeout
            if getattr(exc, "status", None) == 409:
                return "existing"
            raise Refused(api_message(exc)) from None
        return "created"

    out = {"created": [], "existing": [], "failed": []}
    for entry in bounded_map(one, definitions, workers=workers, deadline_s=deadline_s):
        name = ((entry["item"] or {}).get("metadata") or {}).get("name", "")
        if entry["ok"]:
            out[entry["value"]].append(name)
        else:
            out["failed"].append({"name": name, "error": _error(entry)})
    return out


def _error(entry):
    """A failed bounded_map entry's error: the API server's sentence without the exception's class name."""
    error = entry["error"]
    return error[len("Refused: "):] if error.startswith("Refused: ") else error


def failure_message(namespace, result, total):
    """One sentence for a batch that did not fully land: how many, where, and the first refusal verbatim (a
    quota, a PodSecurity level, a webhook or a missing permission is named by the API server's own words)."""
    failed = result["failed"]
    first = failed[0]
    return "%d of %d pods could not be created in namespace %s; the first, %s: %s" % (
        len(failed), total, namespace, first["name"], first["error"])


def delete_all(delete, names, workers=16, deadline_s=60.0):
    """Call delete(name) for every name, at most `workers` at a time, within `deadline_s`; a 404 (gone already:
    deleted by its owner or someone else) is not a failure. Returns {failed: [{name, error}]}.

    One DELETE per pod, in parallel, rather than one deletecollection request: kube-apiserver deletes a
    collection one item after the other (--delete-collection-workers, default 1), which took 7.3 s for 256
    pods on the simulated cluster against 4.1 s for 16 DELETEs at a time (docs/fleet-scale.md)."""
    def one(name):
        try:
            delete(name)
        except Exception as exc:  # the client's ApiException, a guard's sentence, a timeout
            if getattr(exc, "status", None) != 404:
                raise Refused(api_message(exc)) from None

    return {"failed": [{"name": entry["item"], "error": _error(entry)}
                       for entry in bounded_map(one, names, workers=workers, deadline_s=deadline_s) if not entry["ok"]]}


def wait_gone(list_names, wait_s=60.0, poll_s=1.0, clock=time.monotonic, sleep=time.sleep):
    """List until no pod is left or `wait_s` passed: {left: [names], waited_s}."""
    started = clock()
    left = list_names()
    while left and clock() - started < wait_s:
        sleep(min(poll_s, max(0.0, wait_s - (clock() - started))))
        left = list_names()
    return {"left": sorted(left), "waited_s": round(clock() - started, 3)}


def drain(response):
    """Read a raw response to its end before its connection goes back to the pool (a connection released with
    its body unread breaks the next request sent on it)."""
    try:
        response.data  # pylint: disable=pointless-statement
    finally:
        response.release_conn()


NO_SELECTOR = "%s needs label_selectors: it never deletes every pod of namespace %s"


def selector_of(label_selectors):
    """One label selector from several (C(key=value) each); "" when there is none, which would select every pod of
    the namespace: a delete then refuses with NO_SELECTOR."""
    return ",".join(s for s in label_selectors or [] if s)


def delete_selected(core, namespace, selector, grace_period_s=0, workers=16, deadline_s=60.0, wait_s=60.0,
                    check_mode=False, names=None, clock=time.monotonic):
    """Delete the pods of `namespace` that `selector` (a non-empty label selector) selects, at most `workers` at a
    time, then wait up to `wait_s` until none is listed: {changed, deleted, left, failed, elapsed_s}. `core` is the
    kubernetes client's CoreV1Api; pod_batch (state=absent) and pod_logs (delete_after) share this. `names`: the
    pods the caller listed with the same selector just before (pod_logs), so they are not listed again."""
    t0 = clock()

    def list_names():
        # The names only: the JSON as it came, not V1Pod models (seconds of CPU over 256 pods).
        response = core.list_namespaced_pod(namespace, label_selector=selector, _preload_content=False)
        return [item["metadata"]["name"] for item in json.loads(response.data).get("items") or []]

    before = list(names) if names is not None else list_names()
    if check_mode or not before:
        return {"changed": bool(before), "deleted": before, "left": before if check_mode else [], "failed": [],
                "elapsed_s": round(clock() - t0, 3)}

    def delete(name):
        drain(core.delete_namespaced_pod(name, namespace, grace_period_seconds=grace_period_s,
                                         propagation_policy="Background", _preload_content=False))

    deleted = delete_all(delete, before, workers=workers, deadline_s=deadline_s)
    waited = wait_gone(list_names, wait_s=wait_s)
    return {"changed": True, "deleted": before, "left": waited["left"], "failed": deleted["failed"],
            "elapsed_s": round(clock() - t0, 3)}


def create_config_maps(kubernetes, core, namespace, definitions, patch_existing=True):
    """Create the ConfigMaps the pods mount. One that exists gets the new content by a merge patch (the same task
    run again: C(patch), which the role grants, not C(update)), or with patch_existing false is left as it is.
    Returns the names that existed already. `kubernetes` is the client package (this file needs only the standard
    library)."""
    existed = []
    for definition in definitions:
        target = (definition.get("metadata") or {}).get("namespace") or namespace
        try:
            drain(core.create_namespaced_config_map(target, definition, _preload_content=False))
        except kubernetes.client.exceptions.ApiException as exc:
            if exc.status != 409:
                raise
            existed.append(definition["metadata"]["name"])
            if patch_existing:
                drain(core.patch_namespaced_config_map(definition["metadata"]["name"], target,
                                                       {"data": definition.get("data") or {}}, _preload_content=False))
    return existed


def extend_lease(kubernetes, core, namespace, lease):
    """Patch the run's anchor Job's deadline (its lease, {job, active_deadline_s}) before pods are made, so the wait
    that follows is covered: roles/runner/tasks/lease.yml does the same for the other waits. None: nothing."""
    if not lease:
        return
    batch = kubernetes.client.BatchV1Api(core.api_client)  # the same configuration and pool as the pods' calls
    drain(batch.patch_namespaced_job(lease["job"], namespace, {"spec": {"activeDeadlineSeconds": lease["active_deadline_s"]}},
                                     _preload_content=False))


def create_pods(core, namespace, definitions, workers=16, deadline_s=300.0):
    """create_all over pod definitions (a pod that exists is left as it is): {created, existing, failed}."""
    def create(definition):
        # _preload_content=False: the created pod is not turned into a V1Pod (nothing reads it; at 256 pods that
        # model conversion cost seconds of the controller's CPU).
        drain(core.create_namespaced_pod((definition.get("metadata") or {}).get("namespace") or namespace,
                                         definition, _preload_content=False))

    return create_all(create, definitions, workers=workers, deadline_s=deadline_s)


def _exit_code(pod):
    """The exit code of the pod's first terminated container (a pod as the API's JSON), None while none ended."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        terminated = (status.get("state") or {}).get("terminated")
        if terminated is not None:
            return terminated.get("exitCode")
    return None


def log_reader(kubernetes, core, namespace, container=None, request_timeout_s=30, limit_bytes=4194304):
    """read(name) -> the log of pod `name`, each request bounded by request_timeout_s; a refused read raises
    CallError with the API server's sentence. read_logs and LogPrefetch share it."""
    timeout = (max(request_timeout_s, 1), max(request_timeout_s, 1))

    def read(name):
        kwargs = {"_request_timeout": timeout, "limit_bytes": limit_bytes}
        if container:
            kwargs["container"] = container
        try:
            return core.read_namespaced_pod_log(name, namespace, **kwargs)
        except kubernetes.client.exceptions.ApiException as exc:
            raise CallError(api_error_text(exc.status, exc.reason, exc.body)) from None

    return read


def read_logs(kubernetes, core, namespace, selector, names=(), container=None, workers=16, request_timeout_s=30,
              deadline_s=120.0, limit_bytes=4194304, ready=None):
    """List the pods `selector` selects (those of `names` only, when given) and read each one's log, at most
    `workers` requests in flight, each bounded by request_timeout_s and all by deadline_s. `ready`: {name: log}
    already read (LogPrefetch), not read again.
    Returns (listed pod names, [{name, node, labels, phase, exit_code, log, error}] in name order)."""
    timeout = (max(request_timeout_s, 1), max(request_timeout_s, 1))
    # The JSON as it came, not V1Pod models: the client builds a Configuration for every model object; a list of
    # 256 pods took 0.44 s of CPU as models and 0.005 s as JSON (2026-12-06, 2 cores), and in the profile of a
    # 256-node probe it was the module's largest own cost.
    response = core.list_namespaced_pod(namespace, label_selector=selector, _request_timeout=timeout,
                                        _preload_content=False)
    listed = json.loads(response.data).get("items") or []
    wanted = set(names or ())
    ready = ready or {}

    def name_of(pod):
        return (pod.get("metadata") or {}).get("name") or ""

    pods = sorted((p for p in listed if not wanted or name_of(p) in wanted), key=name_of)
    read = log_reader(kubernetes, core, namespace, container, request_timeout_s, limit_bytes)
    entries = {name_of(e["item"]): e for e in bounded_map(lambda pod: read(name_of(pod)),
                                                          [p for p in pods if name_of(p) not in ready],
                                                          workers=workers, deadline_s=deadline_s)}
    out = []
    for pod in pods:
        name = name_of(pod)
        entry = entries.get(name) or {"ok": True, "value": ready.get(name), "error": ""}
        out.append({"name": name, "node": (pod.get("spec") or {}).get("nodeName") or "",
                    "labels": dict((pod.get("metadata") or {}).get("labels") or {}),
                    "phase": (pod.get("status") or {}).get("phase") or "",
                    "exit_code": _exit_code(pod), "log": entry["value"] or "" if entry["ok"] else "",
                    "error": "" if entry["ok"] else entry["error"]})
    return [name_of(p) for p in listed], out


class LogPrefetch:
    """Pods' logs read while the wait for the others goes on, each as soon as its pod has ended (an ended pod's
    containers have exited, so its log is whole). Reading 1,024 logs after the last pod had ended took about 3 s of
    the probe level (docs/fleet-scale.md); pods end at different times, so most of that hides in the wait.
    `read(name)` is log_reader's; at most `workers` reads run at a time. What did not come back in time is read
    again by read_logs, so a prefetch never changes what is judged, only when it is read. An attempt of probe_run
    that does not finish drops what it read: a pod seen ending in it is read once more by the attempt that
    finishes, never more (_pod_wait.follow tells only the pods a watch event shows ending)."""

    def __init__(self, read, workers=16):
        self._read, self._workers = read, max(1, int(workers))
        self._pool, self._futures = None, {}

    def submit(self, name):
        """Read `name`'s log in the background, once."""
        if not name or name in self._futures:
            return
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=self._workers,
                                                               thread_name_prefix="rlsv-log-prefetch")
        self._futures[name] = self._pool.submit(self._read, name)

    def collect(self, wait_s):
        """{name: log} of the reads that succeeded, waiting at most wait_s for those still running; then close."""
        if self._futures:
            concurrent.futures.wait(list(self._futures.values()), timeout=max(0.0, wait_s))
        out = {name: future.result() for name, future in self._futures.items()
               if future.done() and not future.cancelled() and future.exception() is None}
        self.close()
        return out

    def close(self):
        """Drop the reads not started (the module's exit waits only for those in flight, each bounded)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


def delete_failure_message(namespace, result):
    """One sentence for pods that could not be deleted: how many, where, and the first one's error."""
    first = result["failed"][0]
    return "%d of %d pods could not be deleted in namespace %s; the first, %s: %s" % (
        len(result["failed"]), len(result["deleted"]), namespace, first["name"], first["error"])
