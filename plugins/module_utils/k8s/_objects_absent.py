# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Delete every object of some kinds that a label selector picks, and wait until they are gone (standard library only).

The objects_absent module's logic: one list per kind, the deletes in parallel (a bounded fan-out), then one list per
kind every `poll_s` until nothing is left or the deadline passes. A level's cleanup was one kubernetes.core.k8s call
per kind, each a module start and a wait in steps of 1-5 s: about 8 s per level on the simulated cluster, for a
handful of objects. Only `list` and `delete` are needed (no `deletecollection`), the verbs rbac/ grants
(tests/unit/plugins/module_utils/test_objects_absent.py compares them).

The one home of what a run may create and how it is found (RUN_KINDS, the labels): the level cleanup
(roles/runner/tasks/cleanup.yml), the interrupt watchdog (plugins/plugin_utils/_run_guard.py) and
playbooks/cleanup.yml all read them here (through the rlstack.validation.run_kinds lookup in Ansible).
"""

from __future__ import annotations

import json
import time

from ansible_collections.rlstack.validation.plugins.module_utils.k8s._diagnose import api_error_text
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._fanout import CallError, bounded_map


MANAGED_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "rlstack.validation"
RUN_LABEL = "rlstack.io/run-id"
# What a run may create, deleted in this order (owners first). TrainJob, MPIJob and ResourceClaimTemplate are the
# kinds of an operator or driver that may not be installed: a level lists them only when it used them.
RUN_KINDS = (
    {"api_version": "kubeflow.org/v2beta1", "kind": "MPIJob"},
    {"api_version": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"},
    {"api_version": "batch/v1", "kind": "Job"},
    {"api_version": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate"},
    {"api_version": "v1", "kind": "Pod"},
    {"api_version": "v1", "kind": "Service"},
    {"api_version": "v1", "kind": "ConfigMap"},
)
# The verbs the cleanup needs on each of RUN_KINDS (list to find, delete to remove; the module's wait lists again).
CLEANUP_VERBS = ("list", "delete")


def run_kinds():
    """A copy of RUN_KINDS, as a list of dicts."""
    return [dict(kind) for kind in RUN_KINDS]


def delete_options(propagation_policy="Background"):
    """The body of every DELETE of the cleanup (its owned objects go with it)."""
    return {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation_policy}


class KindNotServed(Exception):
    """The API server does not serve the kind (HTTP 404 on its collection: a CRD that is not installed)."""


def api_caller(kubernetes, api_client):
    """call(method, path, query=None, body=None) over the kubernetes client `api_client` (the package `kubernetes`
    passed in, so that this file needs only the standard library): the API's JSON; KindNotServed on HTTP 404; the
    API's sentence (RuntimeError) on another refusal. No _request_timeout: the API guard bounds each call and
    retries it (docs/reliability.md). objects_absent, probe_run's reads and the deletes at the end of job_run and
    mpijob_run (_job_run.delete_created) share it."""
    def call(method, path, query=None, body=None):
        try:
            response = api_client.call_api(path, method, query_params=query or [], body=body,
                                           header_params={"Accept": "application/json",
                                                          "Content-Type": "application/json"},
                                           auth_settings=["BearerToken"], _preload_content=False,
                                           _return_http_data_only=True)
        except kubernetes.client.exceptions.ApiException as exc:
            if exc.status == 404:
                raise KindNotServed(path) from None
            raise RuntimeError(api_error_text(exc.status, exc.reason, exc.body)) from None
        return json.loads(response.data or b"{}")

    return call


def plural_of(kind):
    """The resource name of a kind, as Kubernetes guesses it (k8s.io/apimachinery v0.34 pkg/api/meta/restmapper.go
    UnsafeGuessKindToResource): lower case, then -s, -es after an s, -ies for a final y."""
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"


def collection_path(api_version, kind, namespace, plural=None):
    """The URL path of a collection: /api/v1/... for the core group, /apis/<group>/<version>/... else; a cluster-scoped
    one (namespace None or empty) has no namespaces/<namespace> part."""
    prefix = "/api/%s" % api_version if "/" not in api_version else "/apis/%s" % api_version
    if not namespace:
        return "%s/%s" % (prefix, plural or plural_of(kind))
    return "%s/namespaces/%s/%s" % (prefix, namespace, plural or plural_of(kind))


def remove(kinds, list_names, delete, timeout_s=120.0, poll_s=0.5, workers=16, clock=time.monotonic,
           sleep=time.sleep, fatal=lambda exc: False):
    """Delete what `list_names(kind)` finds for every kind, and wait until a list of each finds nothing.

    kinds: [{"kind", ...}] (passed back to the callables as they are). list_names(kind) -> [name], raising
    KindNotServed for a kind the server does not serve. delete(kind, name) deletes one object (gone already: fine).
    Returns {"deleted": {kind: n}, "left": {kind: [name]}, "not_served": [kind], "errors": [text], "elapsed_s",
    "timed_out"}: `left` is what was still there at the deadline, `errors` one line per failed list or delete.
    An exception that `fatal` accepts (an API server found unreachable) ends the call at once: nothing after it
    could get through, and the run's lease removes what is left.
    """
    start = clock()
    end = start + max(0.0, float(timeout_s))
    out = {"deleted": {}, "left": {}, "not_served": [], "errors": [], "timed_out": False}
    found = []
    for spec in kinds:
        try:
            found.extend((spec, name) for name in list_names(spec))
        except KindNotServed:
            out["not_served"].append(spec["kind"])
        except Exception as exc:  # one kind's failure must not keep the others from being deleted
            out["errors"].append("listing %s: %s" % (spec["kind"], _text(exc)))
            if fatal(exc):
                out["elapsed_s"] = round(clock() - start, 3)
                return out

    def delete_one(pair):
        try:
            delete(*pair)
        except CallError:
            raise
        except Exception as exc:
            raise CallError("deleting %s %s: %s" % (pair[0]["kind"], pair[1], _text(exc))) from None

    results = bounded_map(delete_one, found, workers=workers, deadline_s=max(end - clock(), 0.0), clock=clock)
    for entry in results:
        spec, _name = entry["item"]
        if entry["ok"]:
            out["deleted"][spec["kind"]] = out["deleted"].get(spec["kind"], 0) + 1
        else:
            out["errors"].append(entry["error"] if not entry["timed_out"]
                                 else "deleting %s %s: %s" % (spec["kind"], entry["item"][1], entry["error"]))
    # Wait on every kind something was found of: the deletes are graceful (a pod ends its containers first).
    waiting = {spec["kind"]: spec for spec, _name in found}
    for spec, name in found:
        out["left"].setdefault(spec["kind"], []).append(name)
    while waiting:
        for kind, spec in list(waiting.items()):
            try:
                names = list_names(spec)
            except KindNotServed:
                names = []
            except Exception as exc:  # a transient error: list again next round, within the deadline
                if fatal(exc):
                    out["errors"].append("listing %s: %s" % (kind, _text(exc)))
                    waiting = {}
                    break
                continue
            if names:
                out["left"][kind] = sorted(names)
            else:
                out["left"].pop(kind, None)
                del waiting[kind]
        if not waiting:
            break
        if clock() >= end:
            out["timed_out"] = True
            break
        sleep(max(min(poll_s, end - clock()), 0.0))
    out["elapsed_s"] = round(clock() - start, 3)
    return out


def _text(exc):
    return str(exc) or type(exc).__name__
