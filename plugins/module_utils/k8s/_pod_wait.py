# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A wait on a set of pods that follows them with one list and a watch, not a list every few seconds.

The probe pods of a level (one per node, 256 at 256 nodes) were polled with kubernetes.core.k8s_info every 2 s:
each poll a module run (interpreter, kubernetes client import) that listed every pod again and handed the whole
list to Ansible, which templated it into the wait's condition. `follow` lists once, then applies the watch's
events to what it holds and judges the pods with the same function the poll used (_k8s_status.pods_summary), at
most every `min_interval_s`, and at once when the stream has been idle for the caller's read timeout (a watch
whose last event settles the wait must not sit until the server ends the stream); a silent watch is followed by
a list (WatchIdle), which the API guard bounds. Standard library only: the module passes
in the calls that reach the API server (plugins/modules/pod_wait.py).
"""

from __future__ import annotations

import json
import os
import time


class WatchExpired(Exception):
    """The watch's resource version is too old (HTTP 410 Gone, or an ERROR event with code 410), or its stream
    broke: list again."""


class WatchIdle(WatchExpired):
    """The watch was silent for the caller's read timeout. The pods are listed again: a watch request is not
    bounded by the API guard (it is meant to stay open), the list is, so a stalled API server ends the wait
    within the guard's bound instead of looking like pods that do not change."""


def _parent_of(pid):
    """The parent pid of `pid` from /proc (Linux), or None."""
    try:
        with open("/proc/%d/stat" % pid) as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


# How often the ancestors are read again: `follow` asks after every watch event, and at 1,024 probe pods (some 7,000
# events) reading /proc each time took 0.7 s of the watch's own thread on 16 cores (py-spy, docs/fleet-scale.md).
ORPHAN_CHECK_EVERY_S = 0.5


def orphan_check(levels=2, parent_of=_parent_of, pid=None, every_s=ORPHAN_CHECK_EVERY_S, clock=time.monotonic):
    """A function that says whether this process's ancestors of `levels` generations changed since now, reading them
    at most every `every_s` seconds (between reads it repeats its last answer; once gone, always gone).

    A module runs as `sh -c 'python AnsiballZ... && sleep 0'` under an Ansible worker, so its parent (the shell)
    outlives a worker that an interrupted ansible-playbook took down; the shell's parent then changes (it is
    reparented). Without /proc the check never fires."""
    chain, current = [], os.getpid() if pid is None else pid
    for _generation in range(levels):
        parent = parent_of(current)
        if parent is None:
            return lambda: False
        chain.append((current, parent))
        current = parent
    last = {"at": clock(), "gone": False}

    def orphaned():
        now = clock()
        if not last["gone"] and now - last["at"] >= every_s:
            last["at"], last["gone"] = now, any(parent_of(child) != parent for child, parent in chain)
        return last["gone"]

    return orphaned


def strip(pod, hidden=("managedFields",)):
    """The pod without the metadata fields nothing reads (managedFields is about half of a pod object)."""
    meta = pod.get("metadata")
    if isinstance(meta, dict) and any(key in meta for key in hidden):
        pod = dict(pod, metadata={k: v for k, v in meta.items() if k not in hidden})
    return pod


def _key(pod):
    meta = pod.get("metadata") or {}
    return meta.get("uid") or meta.get("name")


def _ended(pod):
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def follow(list_pods, watch_pods, judge, step_s, clock=time.monotonic, min_interval_s=0.5, watch_s=30,
           orphaned=lambda: False, on_ended=lambda name: None):
    """Follow pods until judge(pods)["settled"] or `step_s` seconds have passed.

    list_pods() -> (pods, resource_version); watch_pods(resource_version, timeout_s) -> iterable of events
    ({"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": dict}) that ends when the server ends the stream,
    or raises WatchIdle when it was silent for the caller's read timeout. An ERROR event with code 410, or
    WatchExpired (WatchIdle included) raised by either call, lists again. judge(pods) -> a dict with "settled".
    orphaned() says that whoever waits on this call is gone (an interrupted ansible-playbook's worker): the wait
    then returns at the next event or silence, so the module does not outlive the run (the interrupt watchdog
    cleans up once the run has exited). on_ended(name) is told each pod a watch event shows ended (Succeeded or
    Failed), at least once (probe_run reads its log meanwhile, _pod_batch.LogPrefetch); not the pods a list finds
    ended: a later attempt of the task lists those first, and the attempt that finishes reads them anyway.
    Returns {"pods": [...] (in name order, managedFields left out), "summary": judge's last answer,
    "lists": n, "events": n, "judged": n}.
    """
    start = clock()
    held, version = {}, None
    lists = events = judged = 0

    def relist():
        nonlocal held, version, lists
        pods, version = list_pods()
        held = {_key(p): strip(p) for p in pods}
        lists += 1

    def verdict():
        nonlocal judged
        judged += 1
        return judge(sorted(held.values(), key=lambda p: (p.get("metadata") or {}).get("name") or ""))

    relist()
    summary, judged_at = verdict(), clock()
    while not summary.get("settled") and clock() - start < step_s and not orphaned():
        left = step_s - (clock() - start)
        try:
            for event in watch_pods(version, max(1, min(int(left), watch_s))):
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    if (obj.get("code") or 0) == 410:
                        raise WatchExpired(obj.get("message") or "resource version too old")
                    continue
                version = (obj.get("metadata") or {}).get("resourceVersion") or version
                if kind == "BOOKMARK":
                    continue
                events += 1
                if kind == "DELETED":
                    held.pop(_key(obj), None)
                elif kind in ("ADDED", "MODIFIED"):
                    held[_key(obj)] = strip(obj)
                    if _ended(obj):
                        on_ended((obj.get("metadata") or {}).get("name"))
                # At most every min_interval_s (4 ms a judgement at 256 pods, an event per pod and phase), and at
                # once when no held pod is still Pending or Running: the event that may settle the wait.
                if clock() - judged_at >= min_interval_s or (kind == "DELETED" or _ended(obj)) and not any(
                        not _ended(p) for p in held.values()):
                    summary, judged_at = verdict(), clock()
                    if summary.get("settled") or clock() - start >= step_s:
                        break
                if orphaned():
                    break
        except WatchExpired:
            relist()
        # the stream ended (server timeout, idle): judge what is held now, unless a verdict ended it
        if not summary.get("settled"):
            summary, judged_at = verdict(), clock()
    pods = sorted(held.values(), key=lambda p: (p.get("metadata") or {}).get("name") or "")
    return {"pods": pods, "summary": summary, "lists": lists, "events": events, "judged": judged}


def pod_calls(kubernetes, urllib3, core, namespace, selector, connect_s=5):
    """The list and the watch `follow` takes, made with the client packages passed in (this file needs only the
    standard library): list_pods() -> (pods as the API's JSON, resource version); watch_pods(version, timeout_s)
    -> the watch's events, raising WatchExpired (410, a broken stream) or WatchIdle (silent for connect_s)."""
    connect_s = max(connect_s, 1)

    def list_pods():
        # no _request_timeout: the API guard bounds the list and retries it (docs/reliability.md)
        response = core.list_namespaced_pod(namespace, label_selector=selector, _preload_content=False)
        body = json.loads(response.data)
        return body.get("items") or [], (body.get("metadata") or {}).get("resourceVersion")

    def watch_pods(version, timeout_s):
        try:
            stream = kubernetes.watch.Watch().stream(
                core.list_namespaced_pod, namespace, label_selector=selector, resource_version=version,
                allow_watch_bookmarks=True, timeout_seconds=timeout_s, deserialize=False,
                # the read timeout is the silence after which the pods are judged again
                _request_timeout=(connect_s, connect_s))
            yield from stream
        except kubernetes.client.exceptions.ApiException as exc:
            if exc.status == 410:
                raise WatchExpired(str(exc.reason)) from None
            raise
        except (urllib3.exceptions.ReadTimeoutError, urllib3.exceptions.ProtocolError) as exc:
            if "timed out" in str(exc).lower():
                raise WatchIdle(str(exc)) from None  # silent: list again (the guard bounds the list) and judge
            raise WatchExpired(str(exc)) from None  # a broken stream: list again (bounded by the guard)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise WatchExpired(str(exc)) from None

    return list_pods, watch_pods
