#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: objects_absent
short_description: Delete every object of several kinds that carries some labels, in one call, and wait until they are gone
description:
  - Lists the objects of each of O(kinds) in O(namespace) that O(label_selectors) select, deletes them in parallel
    (at most O(workers) requests at a time) with O(propagation_policy), then lists each kind again every O(poll_s)
    seconds until none is left or O(wait_timeout_s) has passed.
  - Made for a level's cleanup, one module start instead of one M(kubernetes.core.k8s) call per kind.
  - A kind the API server does not serve (a CRD that is not installed) is skipped and returned in RV(not_served).
  - A failed list or delete does not fail the task; it is returned in RV(errors), one line each, so the caller can
    say what was left. Needs C(list) and C(delete) on each kind in O(namespace) (no C(deletecollection)).
author:
  - rlstack.validation maintainers (@rlstack)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - rlstack.validation._attributes
options:
  namespace:
    description: Namespace of the objects.
    type: str
    required: true
  label_selectors:
    description: Label selectors (C(key=value)) the objects must all match. At least one, so that nothing unlabelled goes.
    type: list
    elements: str
    required: true
  kinds:
    description: The kinds to delete, each with C(api_version) and C(kind), and C(plural) when the resource name is not
      the one Kubernetes guesses from the kind (lower case plus s, es or ies).
    type: list
    elements: dict
    required: true
  propagation_policy:
    description: What happens to the objects each deleted object owns.
    type: str
    choices: [Background, Foreground, Orphan]
    default: Background
  wait_timeout_s:
    description: The most seconds to wait until every object is gone (the deletes count in it).
    type: int
    default: 120
  poll_s:
    description: Seconds between two lists of a kind while objects are still there.
    type: float
    default: 0.5
  workers:
    description: The most delete requests in flight at once.
    type: int
    default: 16
attributes:
  check_mode:
    support: full
    details: In check mode nothing is deleted; the objects that would be are returned in RV(left).
  diff_mode:
    support: none
    details: It returns what it deleted (RV(deleted)), not a diff.
seealso:
  - module: kubernetes.core.k8s
"""

EXAMPLES = r"""
- name: Delete the objects of the level
  rlstack.validation.objects_absent:
    namespace: gpu-validation
    label_selectors:
      - rlstack.io/run=20261201-1907-ab12
      - rlstack.io/level=l0_infrastructure
    kinds:
      - {api_version: batch/v1, kind: Job}
      - {api_version: v1, kind: Pod}
      - {api_version: v1, kind: ConfigMap}
  register: cleanup
"""

RETURN = r"""
deleted:
  description: How many objects of each kind were deleted.
  returned: always
  type: dict
  sample: {"Pod": 2, "ConfigMap": 1}
left:
  description: The names of the objects of each kind still there at the end (empty when everything is gone).
  returned: always
  type: dict
not_served:
  description: The kinds the API server does not serve.
  returned: always
  type: list
  elements: str
errors:
  description: One line per list or delete that failed (the API server's answer).
  returned: always
  type: list
  elements: str
timed_out:
  description: Whether objects were still there after O(wait_timeout_s).
  returned: always
  type: bool
elapsed_s:
  description: Seconds the call took.
  returned: always
  type: float
"""

import copy
import json

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._fanout import pooled_core_api
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._module_end import end, unreachable
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_absent import (
    KindNotServed, api_caller, collection_path, delete_options, remove)

try:
    import kubernetes
except ImportError:  # reported by AnsibleK8SModule
    kubernetes = None


def argspec():
    spec = copy.deepcopy(AUTH_ARG_SPEC)
    spec.update(
        namespace=dict(type="str", required=True),
        label_selectors=dict(type="list", elements="str", required=True),
        kinds=dict(type="list", elements="dict", required=True),
        propagation_policy=dict(type="str", default="Background", choices=["Background", "Foreground", "Orphan"]),
        wait_timeout_s=dict(type="int", default=120),
        poll_s=dict(type="float", default=0.5),
        workers=dict(type="int", default=16),
    )
    return spec


def execute(module, api_client):
    params = module.params
    selector = ",".join(params["label_selectors"])
    kinds = params["kinds"]
    for spec in kinds:
        if not spec.get("api_version") or not spec.get("kind"):
            module.fail_json(msg="objects_absent: each of kinds needs api_version and kind; got %s" % json.dumps(spec))

    call = api_caller(kubernetes, api_client)

    def path_of(spec):
        return collection_path(spec["api_version"], spec["kind"], params["namespace"], spec.get("plural"))

    def list_names(spec):
        body = call("GET", path_of(spec), [("labelSelector", selector)])
        return [item["metadata"]["name"] for item in body.get("items") or []]

    def delete(spec, name):
        try:
            call("DELETE", "%s/%s" % (path_of(spec), name),
                 body=delete_options(params["propagation_policy"]))
        except KindNotServed:
            pass  # gone already (or its kind went with its CRD)

    if module.check_mode:
        left, not_served, errors = {}, [], []
        for spec in kinds:
            try:
                names = list_names(spec)
            except KindNotServed:
                not_served.append(spec["kind"])
                continue
            except RuntimeError as exc:
                errors.append("listing %s: %s" % (spec["kind"], exc))
                continue
            if names:
                left[spec["kind"]] = sorted(names)
        return {"changed": bool(left), "deleted": {}, "left": left, "not_served": not_served, "errors": errors,
                "timed_out": False, "elapsed_s": 0.0}
    out = remove(kinds, list_names, delete, timeout_s=params["wait_timeout_s"], poll_s=params["poll_s"],
                 workers=params["workers"], fatal=unreachable)
    out["changed"] = bool(out["deleted"])
    return out


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=True)

    def call():
        core = pooled_core_api(kubernetes, get_api_client(module=module), module.params["workers"])
        return execute(module, core.api_client)

    end(module, kubernetes, CoreException, call, "deleting in namespace %s" % module.params["namespace"])


if __name__ == "__main__":
    main()
