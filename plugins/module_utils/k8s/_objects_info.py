# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A level's own reads of the API, done in the module run that ends its probe (rlstack.validation.probe_run's
`reads`; standard library only).

Why: L0 read the device-plugin DaemonSets (one read per namespace), the storage claim and the ResourceSlices with
kubernetes.core.k8s_info, a module run each (an interpreter and a client import, about 1 s on an idle 2-core
machine): more than the rest of the level's own time (benchmarks/runner_overhead/). Here each read is one GET of
the collection (or of one object by name), as the API's JSON; the results come back in the shape of a loop of
k8s_info reads ([{item, resources}]), so the filters that read those loops read these alike.
"""

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_absent import KindNotServed, collection_path

# What every resource read here leaves out: managedFields are about half of an object and nothing reads them.
HIDDEN_METADATA = ("managedFields",)


def _strip(obj):
    meta = obj.get("metadata")
    if isinstance(meta, dict) and any(k in meta for k in HIDDEN_METADATA):
        obj = dict(obj, metadata={k: v for k, v in meta.items() if k not in HIDDEN_METADATA})
    return obj


def read_all(call, queries, fatal=lambda exc: False):
    """Run every query ({kind, api_version, namespace, name, label_selectors, item}) with call("GET", path,
    query_params) (_objects_absent.api_caller), which returns the API's JSON or raises KindNotServed (HTTP 404) or
    another exception whose text is the API's
    sentence. Returns [{item, resources, error}] in the queries' order: an object not found by name, or a kind the
    server does not serve, gives no resources (the error says which); any other failure gives its sentence, except
    one that fatal(exc) says ends the reads (an API server that cannot be reached: the task fails)."""
    out = []
    for query in queries:
        path = collection_path(query.get("api_version") or "v1", query["kind"], query.get("namespace"),
                               query.get("plural"))
        if query.get("name"):
            path = "%s/%s" % (path, query["name"])
        params = [("labelSelector", ",".join(query["label_selectors"]))] if query.get("label_selectors") else []
        entry = {"item": query.get("item") if query.get("item") is not None else {}, "resources": [], "error": ""}
        try:
            body = call("GET", path, params)
        except KindNotServed:
            entry["error"] = "not found: %s" % path
        except Exception as exc:  # pylint: disable=broad-except
            if fatal(exc):
                raise
            entry["error"] = str(exc)  # the API's sentence (the module's get makes it one)
        else:
            items = [body] if query.get("name") else body.get("items") or []
            entry["resources"] = [_strip(item) for item in items]
        out.append(entry)
    return out
