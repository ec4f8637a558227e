# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reads of the API in one module run: a level's own, done in the module run that ends its probe
(rlstack.validation.probe_run's `reads`), and what the plan reads of the cluster before any level
(rlstack.validation.objects_info: the nodes of every node selector of the plan, the DeviceClasses, the run's
namespace). Standard library only.

Why: L0 read the device-plugin DaemonSets (one read per namespace), the storage claim and the ResourceSlices with
kubernetes.core.k8s_info, a module run each (an interpreter and a client import, about 1 s on an idle 2-core
machine): more than the rest of the level's own time (benchmarks/runner_overhead/). Here each read is one GET of
the collection (or of one object by name), as the API's JSON; the results come back in the shape of a loop of
k8s_info reads ([{item, resources}]), so the filters that read those loops read these alike.
"""

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_absent import KindNotServed, collection_path

# The argument spec of one read (the suboptions of probe_run's and objects_info's `reads`; objects_info adds its own).
READ_OPTIONS = dict(
    kind=dict(type="str", required=True),
    api_version=dict(type="str", default="v1"),
    plural=dict(type="str"),
    namespace=dict(type="str"),
    name=dict(type="str"),
    label_selectors=dict(type="list", elements="str", default=[]),
    item=dict(type="raw"),
)

# The start of a read's error when the object or the kind is not there (an answer, not a failure).
NOT_FOUND = "not found: "
# What every resource read here leaves out: managedFields are about half of an object and nothing reads them.
HIDDEN_FIELDS = ("metadata.managedFields",)


def _without(obj, path):
    """`obj` without the field at the dotted `path` (copied only along the path, and only when the field is there)."""
    head, rest = path.split(".", 1) if "." in path else (path, "")
    if not isinstance(obj, dict) or head not in obj:
        return obj
    if not rest:
        return {k: v for k, v in obj.items() if k != head}
    inner = _without(obj[head], rest)
    return obj if inner is obj[head] else dict(obj, **{head: inner})


def _strip(obj, hidden=()):
    for path in HIDDEN_FIELDS + tuple(hidden or ()):
        obj = _without(obj, path)
    return obj


def read_all(call, queries, fatal=lambda exc: False):
    """Run every query ({kind, api_version, namespace, name, label_selectors, hidden_fields, item}) with
    call("GET", path, query_params) (_objects_absent.api_caller), which returns the API's JSON or raises KindNotServed
    (HTTP 404) or another exception whose text is the API's sentence. Returns [{item, resources, error}] in the
    queries' order: an object not found by name, or a kind the server does not serve, gives no resources (the error
    says which); any other failure gives its sentence, except one that fatal(exc) says ends the reads (an API server
    that cannot be reached: the task fails)."""
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
            entry["error"] = NOT_FOUND + path
        except Exception as exc:  # pylint: disable=broad-except
            if fatal(exc):
                raise
            entry["error"] = str(exc)  # the API's sentence (the module's get makes it one)
        else:
            items = [body] if query.get("name") else body.get("items") or []
            entry["resources"] = [_strip(item, query.get("hidden_fields")) for item in items]
        out.append(entry)
    return out


def required_failure(queries, reads):
    """The sentence of the first read that `queries` mark `required` and that failed for another reason than its
    object or kind not being there (a refusal: the run cannot go on without it); none when there is none."""
    for query, entry in zip(queries, reads):
        if query.get("required") and entry["error"] and not entry["error"].startswith(NOT_FOUND):
            what = "%s %s" % (query["kind"], query.get("name") or ",".join(query.get("label_selectors") or []) or "")
            return "reading %s: %s" % (what.strip(), entry["error"])
    return None


# What the plan reads of a node: status.images lists up to 50 images a node pulled (the kubelet's nodeStatusMaxImages,
# k8s v1.34.4 pkg/kubelet/apis/config/v1beta1/defaults.go) with their digests and sizes, most of a real node object;
# nothing reads them.
NODE_HIDDEN_FIELDS = ["status.images"]


def plan_reads(node_selectors, namespace, device_classes=False):
    """What the plan of a run reads before any level, in one module run (rlstack.validation.objects_info): the nodes
    of each label selector in `node_selectors` (the GPU nodes', and those of a level that runs on its own nodes), the
    DeviceClasses when `device_classes` (a level of the plan may ask for EFA), and the run's namespace when one is
    given. Each read's item says what it was for ({node_selector}, {device_classes}, {namespace})."""
    reads = [{"kind": "Node", "label_selectors": [selector] if selector else [], "hidden_fields": NODE_HIDDEN_FIELDS,
              "required": True, "item": {"node_selector": selector}}
             for selector in dict.fromkeys(node_selectors or [])]
    if device_classes:
        # an API server without resource.k8s.io/v1 serves none: no EFA DRA driver (not required)
        reads.append({"kind": "DeviceClass", "api_version": "resource.k8s.io/v1", "item": {"device_classes": True}})
    if namespace:
        reads.append({"kind": "Namespace", "name": namespace, "required": True, "item": {"namespace": namespace}})
    return reads


def plan_nodes(reads, node_selectors, gpu_nodes):
    """The nodes the plan read for each selector (plan_reads' results, in any order, or none): {objects: {selector:
    node objects sorted by name}, nodes: {selector: gpu_nodes(those objects)}}. `gpu_nodes(objects)` summarises one
    selector's node objects (_k8s_status.gpu_nodes, which with the host transport gives the inventory host whatever
    it is given): every selector of `node_selectors` gets an entry, read or not."""
    objects = {}
    for entry in reads or []:
        item = entry.get("item") or {}
        if "node_selector" in item:
            objects[item["node_selector"]] = sorted(entry.get("resources") or [],
                                                    key=lambda obj: (obj.get("metadata") or {}).get("name") or "")
    selectors = list(dict.fromkeys(node_selectors or []))
    return {"objects": {sel: objects.get(sel, []) for sel in selectors},
            "nodes": {sel: gpu_nodes(objects.get(sel, [])) for sel in selectors}}
