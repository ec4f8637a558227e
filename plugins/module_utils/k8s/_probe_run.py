# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A level's probe pods from start to finish in one module run (rlstack.validation.probe_run; standard library only).

Why: a probe level took three module runs around its pods (create, wait, read and delete), each an interpreter and
a kubernetes client import (about 1 s on an idle 2-core machine): most of a probe level's own time on a warm
cluster (benchmarks/runner_overhead/). One call now starts the pods (unless an earlier attempt of the same task did),
follows them for at most `step_s`, and once the wait is settled, or its deadline has come, reads what the level
needs to judge them (the level's own reads of the API, the events of pods that never ran, the nodes again when a
probe did not end well, every log) and deletes the pods and their ConfigMaps. A task repeats the call with `until: finished`, so a long wait still
prints its progress and stays bounded.

The first ConfigMap of `config_maps` marks the start: an attempt that finds it existing only waits (a repeat of
the task by `until` must not create pods again, nor bring back a pod that was deleted during the wait).
"""

from __future__ import annotations

import json
import time

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _pod_batch
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._fanout import bounded_map
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._k8s_status import pods_summary
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._module_end import StartFailed, unreachable
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_absent import api_caller
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_info import read_all
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._pod_wait import follow, pod_calls
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _probe_pods

# Pods in these phases ran: their events say nothing the probe's own output does not.
RAN_PHASES = ("Running", "Succeeded", "Failed")
# Each log or event request's connect and read bound (all of them together are bounded by read_deadline_s).
READ_REQUEST_TIMEOUT_S = 30
# Events per page when the namespace's pod events are read at once (pod_events).
EVENTS_PAGE = 500
# What the nodes read again keeps (as the runner's node list: managedFields and the image list are most of a node).
HIDDEN_NODE_FIELDS = ("managedFields",)
# What the runner reads of a probe pod after the wait (the GPU time, fleet/_cost.gpu_usage; the image digest,
# verdicts/_fingerprint.image_digest): {section: keys}, and of each container and container status. The rest of a
# pod (its command, env, volumes, tolerations) is most of its bytes, and every byte of the result is copied by
# Ansible several times: at 256 nodes the whole pods were 1.1 MB of the result.
RETURNED_POD_FIELDS = {
    "metadata": ("name", "namespace", "uid", "labels", "creationTimestamp", "deletionTimestamp"),
    "spec": ("nodeName",),
    "status": ("phase", "reason", "message", "conditions", "startTime"),
}
RETURNED_CONTAINER_FIELDS = ("name", "image", "resources")
RETURNED_CONTAINER_STATUS_FIELDS = ("name", "image", "imageID", "state", "restartCount")


def echoed_args(params):
    """The arguments the result echoes (its `invocation`): all but the pods' and ConfigMaps' definitions and the
    targets, which at 256 nodes were 0.7 MB of the result; their number instead."""
    out = {key: value for key, value in params.items() if key not in ("definitions", "config_maps", "targets")}
    out.update(definitions_count=len(params.get("definitions") or []),
               config_maps_count=len(params.get("config_maps") or []), targets_count=len(params.get("targets") or []))
    return out


def returned_pod(pod):
    """The fields of `pod` the runner reads after the wait (RETURNED_POD_FIELDS)."""
    out = {}
    for section, keys in RETURNED_POD_FIELDS.items():
        part = pod.get(section) or {}
        out[section] = {key: part[key] for key in keys if key in part}
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    out["spec"]["containers"] = [{key: c[key] for key in RETURNED_CONTAINER_FIELDS if key in c}
                                 for c in spec.get("containers") or []]
    if "containerStatuses" in status:
        out["status"]["containerStatuses"] = [{key: c[key] for key in RETURNED_CONTAINER_STATUS_FIELDS if key in c}
                                              for c in status["containerStatuses"] or []]
    return out


class StartRefused(StartFailed):
    """The API server refused a probe pod (quota, PodSecurity, an admission webhook, a permission): its sentence, with
    the pods created and refused (returned with the failure)."""

    def __init__(self, message, result):
        super().__init__(message, {"created": result["created"], "refused": result["failed"]})
        self.result = result


def has_pods(params):
    """Whether the call has pods to create: `definitions`, or `pod_template` with targets."""
    return bool(params.get("definitions") or params.get("pod_template") and params.get("targets"))


def definitions_of(params):
    """The pods to create: `definitions`, or one pod per target from `pod_template` (probe_pods: built here, not
    templated by Ansible, which at 256 nodes copied 256 pod manifests into the task's arguments)."""
    if params.get("pod_template"):
        return _probe_pods.probe_pods(params["pod_template"], params.get("targets") or [], params["name_prefix"])
    return params.get("definitions") or []


def start(kubernetes, core, params):
    """Create the probe's ConfigMaps and pods under the run's lease, unless the first ConfigMap exists (an earlier
    attempt started them: the pods are not even built then). Returns {started, created, existing}; raises
    StartRefused when a pod was refused."""
    namespace, config_maps = params["namespace"], params["config_maps"]
    if config_maps and _pod_batch.create_config_maps(kubernetes, core, namespace, config_maps[:1], patch_existing=False):
        return {"started": False, "created": [], "existing": []}
    definitions = definitions_of(params)
    _pod_batch.extend_lease(kubernetes, core, namespace, params["lease"])
    _pod_batch.create_config_maps(kubernetes, core, namespace, config_maps[1:])
    made = _pod_batch.create_pods(core, namespace, definitions, workers=params["concurrency"],
                                  deadline_s=params["create_deadline_s"])
    if made["failed"]:
        raise StartRefused(_pod_batch.failure_message(namespace, made, len(definitions)), made)
    return {"started": True, "created": made["created"], "existing": made["existing"]}


def pod_events(core, namespace, states, workers=16, deadline_s=60.0, clock=time.monotonic):
    """The events of every pod that never ran, as a loop of kubernetes.core.k8s_info reads returns them
    ([{item: state, resources: [event]}]: what probe_results reads), all within `deadline_s`.

    Up to `workers` such pods (one bad node, a few): one list per pod, all at once. More (a fleet-wide image pull
    error, cordoned nodes): the namespace's pod events in pages, sorted out here. The API server filters events by
    scanning all of the namespace's, so each per-pod list costs a scan: one after the other, 256 pods that never
    started took 16 s of the level on the simulated cluster (11,000 events in the namespace), at 16 in flight still
    15 s, where one list took 0.4 s (docs/fleet-scale.md). A read that fails or comes late counts as no events:
    they explain a pod's state, which the level judges without them."""
    waiting = [state for state in states or [] if state.get("phase") not in RAN_PHASES and state.get("pod")]
    if len(waiting) <= workers:
        return events_per_pod(core, namespace, waiting, workers, deadline_s)
    by_pod = namespace_pod_events(core, namespace, {state["pod"] for state in waiting}, clock() + deadline_s, clock)
    return [{"item": state, "resources": by_pod.get(state["pod"], [])} for state in waiting]


def events_per_pod(core, namespace, states, workers, deadline_s):
    """pod_events for a few pods: one list per pod, `workers` at a time."""
    timeout = (READ_REQUEST_TIMEOUT_S, READ_REQUEST_TIMEOUT_S)

    def read(state):
        response = core.list_namespaced_event(namespace, field_selector="involvedObject.name=%s" % state["pod"],
                                              _request_timeout=timeout, _preload_content=False)
        return json.loads(response.data).get("items") or []

    return [{"item": entry["item"], "resources": entry["value"] if entry["ok"] else []}
            for entry in bounded_map(read, states, workers=workers, deadline_s=deadline_s)]


def namespace_pod_events(core, namespace, pods, until, clock=time.monotonic):
    """{pod: [event]} for the names in `pods`, from the namespace's pod events read page by page until `until`
    (a clock() value); what a failed or late page would have added is left out."""
    by_pod, token = {}, None
    try:
        while True:
            left = until - clock()
            if left <= 0:
                break
            bound = max(1.0, min(float(READ_REQUEST_TIMEOUT_S), left))
            response = core.list_namespaced_event(namespace, field_selector="involvedObject.kind=Pod",
                                                  limit=EVENTS_PAGE, _continue=token,
                                                  _request_timeout=(bound, bound), _preload_content=False)
            page = json.loads(response.data)
            for event in page.get("items") or []:
                name = (event.get("involvedObject") or {}).get("name")
                if name in pods:
                    by_pod.setdefault(name, []).append(event)
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                break
    except Exception:  # pylint: disable=broad-except  # the client's errors, a timeout: the events read so far
        pass
    return by_pod


def nodes_again(core, label_selector):
    """The nodes `label_selector` selects, read again after a probe that did not end well (NotReady, cordoned,
    gone: probe_results names the node as the cause)."""
    response = core.list_node(label_selector=label_selector, _preload_content=False)
    nodes = []
    for node in json.loads(response.data).get("items") or []:
        meta = {k: v for k, v in (node.get("metadata") or {}).items() if k not in HIDDEN_NODE_FIELDS}
        status = {k: v for k, v in (node.get("status") or {}).items() if k != "images"}
        nodes.append(dict(node, metadata=meta, status=status))
    return sorted(nodes, key=lambda n: n["metadata"].get("name") or "")


def delete_config_maps(kubernetes, core, namespace, definitions):
    """Delete the probe's ConfigMaps by name (one gone already is not an error): [{name, error}] of those that failed."""
    failed = []
    for definition in definitions:
        name = definition["metadata"]["name"]
        try:
            _pod_batch.drain(core.delete_namespaced_config_map(
                name, (definition.get("metadata") or {}).get("namespace") or namespace, _preload_content=False))
        except kubernetes.client.exceptions.ApiException as exc:
            if exc.status != 404:
                failed.append({"name": name, "error": _pod_batch.api_message(exc)})
    return failed


def finish(kubernetes, core, params, selector, summary, prefetch=None):
    """Read what the level judges, then delete the pods and ConfigMaps: {events, nodes, pods, reads, deleted, left,
    delete_errors, left_nothing}. `prefetch`: the logs read during the wait (_pod_batch.LogPrefetch)."""
    reads = read_all(api_caller(kubernetes, core.api_client), params["reads"], fatal=unreachable)
    t0 = time.monotonic()
    events = pod_events(core, params["namespace"], summary.get("states"), workers=params["concurrency"],
                        deadline_s=params["read_deadline_s"])
    nodes = nodes_again(core, params["node_selector"]) if not summary.get("ok") and params["node_selector"] else []
    ready = prefetch.collect(params["read_deadline_s"]) if prefetch else {}
    listed, logs = _pod_batch.read_logs(kubernetes, core, params["namespace"], selector, workers=params["concurrency"],
                                        request_timeout_s=READ_REQUEST_TIMEOUT_S, limit_bytes=params["limit_bytes"],
                                        deadline_s=max(1.0, params["read_deadline_s"] - (time.monotonic() - t0)),
                                        ready=ready)
    gone = _pod_batch.delete_selected(core, params["namespace"], selector, workers=params["concurrency"],
                                      wait_s=params["delete_wait_s"], names=listed)
    errors = gone["failed"] + delete_config_maps(kubernetes, core, params["namespace"], params["config_maps"])
    out = {"events": events, "nodes": nodes, "reads": reads, "deleted": gone["deleted"], "left": gone["left"],
           "delete_errors": errors, "left_nothing": not gone["left"] and not errors}
    if params.get("targets") is None:
        return dict(out, pods=logs)
    # Each target's outcome, read here from the logs: the logs themselves are not returned (a probe's output is in
    # its outcome, parsed once). As one JSON text, which Ansible moves as it is: as a dict every value of it was
    # scrubbed for no_log values at the module's exit (0.3 s for 256 L0 outcomes, 4 MB), decoded in the worker and
    # copied twice in the controller (docs/fleet-scale.md, "Per-node data"). Filter probe_outcomes reads it.
    out["outcomes"] = _probe_pods.outcomes_text(_probe_pods.probe_results(
        logs, params["targets"], summary, events, params["start_timeout_s"], params.get("finish_timeout_s") or None,
        nodes))
    return out


def run(kubernetes, urllib3, core, params, orphaned=lambda: False, now=time.time):
    """One attempt: start (first attempt), wait up to step_s, finish once settled or at deadline_at (epoch s).
    Returns the module's result (see plugins/modules/probe_run.py RETURN)."""
    t0 = time.monotonic()
    selector = _pod_batch.selector_of(params["label_selectors"])
    nothing = {"started": False, "created": [], "existing": []}
    try:
        started = start(kubernetes, core, params) if has_pods(params) else nothing
    except StartRefused:
        raise
    except Exception as exc:  # pylint: disable=broad-except
        raise StartFailed(str(exc)) from exc
    list_pods, watch_pods = pod_calls(kubernetes, urllib3, core, params["namespace"], selector,
                                      params["request_timeout_s"])

    def judge(pods):
        return pods_summary(pods, expected=params["expected"], grace_s=params["grace_s"], want="probes",
                            start_timeout_s=params["start_timeout_s"])

    left_s = max(0.0, params["deadline_at"] - now()) if params["deadline_at"] else params["step_s"]
    prefetch = _pod_batch.LogPrefetch(_pod_batch.log_reader(kubernetes, core, params["namespace"],
                                                            request_timeout_s=READ_REQUEST_TIMEOUT_S,
                                                            limit_bytes=params["limit_bytes"]),
                                      workers=params["concurrency"])
    try:
        seen = follow(list_pods, watch_pods, judge, min(params["step_s"], left_s), orphaned=orphaned,
                      on_ended=prefetch.submit)
        summary = seen["summary"]
        out = dict(started, changed=started["started"], resources=[returned_pod(pod) for pod in seen["pods"]],
                   summary=summary, invocation={"module_args": echoed_args(params)},
                   settled=bool(summary.get("settled")), step_s=params["step_s"],
                   requests={"lists": seen["lists"], "events": seen["events"], "judged": seen["judged"]})
        out["finished"] = out["settled"] or bool(params["deadline_at"]) and now() >= params["deadline_at"]
        if out["finished"] and not orphaned():
            out.update(finish(kubernetes, core, params, selector, summary, prefetch), changed=True)
    finally:
        prefetch.close()
    out["elapsed_s"] = round(time.monotonic() - t0, 3)
    return out
