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
    (docs/fleet-scale.md). It needs C(create), C(list) and C(delete) on C(pods); with O(config_maps), C(create)
    and C(patch) on C(configmaps); with O(lease), C(patch) on C(jobs).
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
  config_maps:
    description:
      - ConfigMap manifests created before the pods (O(state=present)), for the files the pods mount; one that
        exists already gets their data. Each one's C(metadata.namespace) defaults to O(namespace).
      - In the same call as the pods, so a probe level makes one request round instead of two module runs.
    type: list
    elements: dict
    default: []
  lease:
    description:
      - Before anything is created (O(state=present)), set C(spec.activeDeadlineSeconds) of this Job in
        O(namespace), the validation run's lease, which must cover the wait that follows (Kubernetes deletes
        what the Job owns when it runs out). Needs C(patch) on C(jobs).
    type: dict
    suboptions:
      job:
        description: Name of the Job (the run's anchor).
        type: str
        required: true
      active_deadline_s:
        description: The Job's new C(spec.activeDeadlineSeconds), counted from the Job's start.
        type: int
        required: true
seealso:
  - module: kubernetes.core.k8s
  - module: rlstack.validation.pod_logs
"""

EXAMPLES = r"""
- name: Start one probe pod per node, with the ConfigMap they mount, under the run's extended lease
  rlstack.validation.pod_batch:
    namespace: gpu-validation
    lease:
      job: rlsv-20261201-1907-ab12-anchor
      active_deadline_s: 900
    config_maps:
      - apiVersion: v1
        kind: ConfigMap
        metadata: {name: rlsv-20261201-1907-ab12-l0-infrastructure}
        data: {probe_node.py: "{{ lookup('ansible.builtin.file', 'probe_node.py') }}"}
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
        config_maps=dict(type="list", elements="dict", default=[]),
        lease=dict(type="dict", options=dict(job=dict(type="str", required=True),
                                             active_deadline_s=dict(type="int", required=True))),
    )
    return spec


def _create_config_maps(core, namespace, definitions):
    """Create the ConfigMaps the pods mount; one that exists gets the new content by a merge patch (the same task
    run again): C(patch), which the role grants, not C(update)."""
    for definition in definitions:
        target = (definition.get("metadata") or {}).get("namespace") or namespace
        try:
            _pod_batch.drain(core.create_namespaced_config_map(target, definition, _preload_content=False))
        except kubernetes.client.exceptions.ApiException as exc:
            if exc.status != 409:
                raise
            _pod_batch.drain(core.patch_namespaced_config_map(definition["metadata"]["name"], target,
                                                              {"data": definition.get("data") or {}},
                                                              _preload_content=False))


def _extend_lease(module, core, namespace):
    """Patch the run's anchor Job's deadline (its lease) before the pods are made, so the wait that follows is
    covered: roles/runner/tasks/lease.yml does the same for the other waits."""
    lease = module.params["lease"]
    if not lease:
        return
    batch = kubernetes.client.BatchV1Api(core.api_client)  # the same configuration and pool as the pods' calls
    _pod_batch.drain(batch.patch_namespaced_job(lease["job"], namespace,
                                                {"spec": {"activeDeadlineSeconds": lease["active_deadline_s"]}},
                                                _preload_content=False))


def present(module, core):
    params = module.params
    namespace = params["namespace"]
    definitions = params["definitions"]
    t0 = time.monotonic()
    if module.check_mode:
        names = [(d.get("metadata") or {}).get("name", "") for d in definitions]
        return {"changed": bool(names), "created": names, "existing": [], "elapsed_s": 0.0}
    _extend_lease(module, core, namespace)
    _create_config_maps(core, namespace, params["config_maps"])

    def create(definition):
        # _preload_content=False: the created pod is not turned into a V1Pod (nothing reads it; at 256 pods
        # that model conversion cost seconds of the controller's CPU).
        response = core.create_namespaced_pod((definition.get("metadata") or {}).get("namespace") or namespace,
                                              definition, _preload_content=False)
        _pod_batch.drain(response)

    result = _pod_batch.create_all(create, definitions, workers=params["concurrency"], deadline_s=params["deadline_s"])
    out = dict(result, changed=bool(result["created"]), elapsed_s=round(time.monotonic() - t0, 3))
    if result["failed"]:
        module.fail_json(msg=_pod_batch.failure_message(namespace, result, len(definitions)), **out)
    del out["failed"]
    return out


def absent(module, core):
    params = module.params
    namespace, selector = params["namespace"], _pod_batch.selector_of(params["label_selectors"])
    if not selector:
        module.fail_json(msg=_pod_batch.NO_SELECTOR % ("pod_batch with state=absent", namespace))
    out = _pod_batch.delete_selected(core, namespace, selector, grace_period_s=params["grace_period_s"],
                                     workers=params["concurrency"], deadline_s=params["deadline_s"],
                                     wait_s=params["wait_timeout_s"], check_mode=module.check_mode)
    if out["failed"]:
        module.fail_json(msg=_pod_batch.delete_failure_message(namespace, out), **out)
    del out["failed"]
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
