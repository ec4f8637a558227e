#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_batch
short_description: Create many pods at once, or delete a labelled set of pods at once
description:
  - With O(state=present), creates every pod of O(definitions), at most O(concurrency) requests in flight and
    all within O(deadline_s). A pod that already exists is left as it is. When any pod is refused, the task
    fails with the API server's own sentence for the first one (a quota, a PodSecurity level, an admission
    webhook, a missing permission).
  - With O(state=absent), deletes the pods of O(namespace) that all of O(label_selectors) select, at most
    O(concurrency) requests in flight, then waits up to O(wait_timeout_s) until none is listed. A pod gone
    already is not an error.
  - Made for the probe pods of the collection, one per node. kubernetes.core.k8s applies a list one
    definition after the other and deletes by label one pod at a time, which over 256 nodes took minutes
    (docs/fleet-scale.md). It needs C(create), C(list) and C(delete) on C(pods).
author:
  - rlstack.validation maintainers (@rlstack)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - rlstack.validation._attributes
attributes:
  check_mode:
    support: full
    details:
      - Nothing is created or deleted; the result says what would be.
  diff_mode:
    support: none
options:
  namespace:
    description: Namespace of the pods.
    type: str
    required: true
  state:
    description: Whether the pods should exist.
    type: str
    choices: [present, absent]
    default: present
  definitions:
    description: The Pod manifests to create (O(state=present)); each one's C(metadata.namespace) defaults to O(namespace).
    type: list
    elements: dict
    default: []
  label_selectors:
    description:
      - Label selectors (C(key=value)) that every pod to delete matches (O(state=absent)).
      - Required and not empty with O(state=absent), so that the module never deletes every pod of a namespace.
    type: list
    elements: str
    default: []
  concurrency:
    description: The most create or delete requests in flight at once.
    type: int
    default: 16
  deadline_s:
    description: Time for all the creates (or deletes) together, in seconds; pods not done by then are reported as failed.
    type: int
    default: 300
  wait_timeout_s:
    description: How long O(state=absent) waits until no selected pod is listed, in seconds; 0 does not wait.
    type: int
    default: 60
  grace_period_s:
    description: The pods' termination grace period for the delete, in seconds (0 frees their GPUs at once).
    type: int
    default: 0
seealso:
  - module: kubernetes.core.k8s
  - module: rlstack.validation.pod_logs
"""

EXAMPLES = r"""
- name: Start one probe pod per node
  rlstack.validation.pod_batch:
    namespace: gpu-validation
    definitions: "{{ pod | rlstack.validation.probe_pods(targets, 'rlsv-20261201-1907-ab12-l0-infrastructure') }}"
    concurrency: 16

- name: Free the GPUs of the probe pods
  rlstack.validation.pod_batch:
    namespace: gpu-validation
    state: absent
    label_selectors:
      - rlstack.io/run-id=20261201-1907-ab12
      - app.kubernetes.io/component=probe
    wait_timeout_s: 60
"""

RETURN = r"""
created:
  description: Names of the pods this task created (O(state=present)).
  returned: success
  type: list
  elements: str
existing:
  description: Names of the pods that existed already and were left as they were (O(state=present)).
  returned: success
  type: list
  elements: str
failed:
  description: 'The pods that could not be created or deleted: [{name, error}].'
  returned: failure
  type: list
  elements: dict
deleted:
  description: Names of the pods the selectors matched before the delete (O(state=absent)).
  returned: success
  type: list
  elements: str
left:
  description: Names of the selected pods still listed when the wait ended (O(state=absent)).
  returned: success
  type: list
  elements: str
elapsed_s:
  description: Seconds the requests (and the wait) took.
  returned: always
  type: float
"""

import copy
import json
import time

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _pod_batch
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._fanout import pooled_core_api

try:
    import kubernetes
except ImportError:  # reported by AnsibleK8SModule
    kubernetes = None


def argspec():
    spec = copy.deepcopy(AUTH_ARG_SPEC)
    spec.update(
        namespace=dict(type="str", required=True),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        definitions=dict(type="list", elements="dict", default=[]),
        label_selectors=dict(type="list", elements="str", default=[]),
        concurrency=dict(type="int", default=16),
        deadline_s=dict(type="int", default=300),
        wait_timeout_s=dict(type="int", default=60),
        grace_period_s=dict(type="int", default=0),
    )
    return spec


def _drain(response):
    """Read a raw response to its end before its connection goes back to the pool (a connection released with
    its body unread breaks the next request sent on it)."""
    try:
        response.data  # pylint: disable=pointless-statement
    finally:
        response.release_conn()


def present(module, core):
    params = module.params
    namespace = params["namespace"]
    definitions = params["definitions"]
    t0 = time.monotonic()
    if module.check_mode:
        names = [(d.get("metadata") or {}).get("name", "") for d in definitions]
        return {"changed": bool(names), "created": names, "existing": [], "elapsed_s": 0.0}

    def create(definition):
        # _preload_content=False: the created pod is not turned into a V1Pod (nothing reads it; at 256 pods
        # that model conversion cost seconds of the controller's CPU).
        response = core.create_namespaced_pod((definition.get("metadata") or {}).get("namespace") or namespace,
                                              definition, _preload_content=False)
        _drain(response)

    result = _pod_batch.create_all(create, definitions, workers=params["concurrency"], deadline_s=params["deadline_s"])
    out = dict(result, changed=bool(result["created"]), elapsed_s=round(time.monotonic() - t0, 3))
    if result["failed"]:
        module.fail_json(msg=_pod_batch.failure_message(namespace, result, len(definitions)), **out)
    del out["failed"]
    return out


def absent(module, core):
    params = module.params
    namespace, selector = params["namespace"], ",".join(params["label_selectors"])
    if not selector.strip(","):
        module.fail_json(msg="pod_batch with state=absent needs label_selectors: it never deletes every pod of "
                             "namespace %s" % namespace)
    t0 = time.monotonic()

    def list_names():
        # The names only: the JSON as it came, not V1Pod models (seconds of CPU over 256 pods).
        response = core.list_namespaced_pod(namespace, label_selector=selector, _preload_content=False)
        return [item["metadata"]["name"] for item in json.loads(response.data).get("items") or []]

    before = list_names()
    if module.check_mode or not before:
        return {"changed": bool(before), "deleted": before, "left": before if module.check_mode else [],
                "elapsed_s": round(time.monotonic() - t0, 3)}

    def delete(name):
        response = core.delete_namespaced_pod(name, namespace, grace_period_seconds=params["grace_period_s"],
                                              propagation_policy="Background", _preload_content=False)
        _drain(response)

    deleted = _pod_batch.delete_all(delete, before, workers=params["concurrency"], deadline_s=params["deadline_s"])
    waited = _pod_batch.wait_gone(list_names, wait_s=params["wait_timeout_s"])
    out = {"changed": True, "deleted": before, "left": waited["left"], "elapsed_s": round(time.monotonic() - t0, 3)}
    if deleted["failed"]:
        first = deleted["failed"][0]
        module.fail_json(msg="%d of %d pods could not be deleted in namespace %s; the first, %s: %s" % (
            len(deleted["failed"]), len(before), namespace, first["name"], first["error"]),
            failed=deleted["failed"], **out)
    return out


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=True)
    try:
        core = pooled_core_api(kubernetes, get_api_client(module=module), module.params["concurrency"])
        run = present if module.params["state"] == "present" else absent
        module.exit_json(**run(module, core))
    except CoreException as exc:
        module.fail_from_exception(exc)
    except kubernetes.client.exceptions.ApiException as exc:
        module.fail_json(msg="pods in namespace %s: %s" % (module.params["namespace"], _pod_batch.api_message(exc)))
    except Exception as exc:  # pylint: disable=broad-except
        # The API guard's one sentence (sitecustomize loads it under its own name, so match the class by name).
        if type(exc).__name__ != "APIUnreachableError":
            raise
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
