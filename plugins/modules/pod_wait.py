#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_wait
short_description: Wait on a set of pods with one list and a watch, and judge them as the level's wait does
description:
  - Lists the pods of O(namespace) that O(label_selectors) select, then follows them with a watch, judging them
    with the collection's pod summary (the same as the filter P(rlstack.validation.pods_summary#filter)) until the
    summary says the wait is settled or O(step_s) seconds have passed.
  - One call waits at most O(step_s); a task repeats it with C(until) and C(retries), so a long wait still prints
    its progress and stays bounded. Made for the probe pods of a level, one per node; at 256 nodes a poll listed
    and returned every pod each time, a watch sends only what changed.
  - Needs C(list) and C(watch) on C(pods) in O(namespace). Read-only; always returns C(changed=false).
author:
  - rlstack.validation maintainers (@rlstack)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - rlstack.validation._attributes
  - rlstack.validation._attributes.info_module
options:
  namespace:
    description: Namespace of the pods.
    type: str
    required: true
  label_selectors:
    description: Label selectors (C(key=value)) the pods must all match.
    type: list
    elements: str
    default: []
  expected:
    description: How many pods the wait expects; the number listed when omitted.
    type: int
  want:
    description: What the pods must reach (see the filter P(rlstack.validation.pods_summary#filter)).
    type: str
    choices: [running, finished, probes, launcher]
    default: probes
  grace_s:
    description: How long a pod's problem (image pull, scheduling, marked not ready) may last before it settles the wait.
    type: int
    default: 45
  start_timeout_s:
    description: With O(want=probes), a pod still Pending this long settles the wait.
    type: int
  step_s:
    description: The most seconds this call waits before it returns what it saw.
    type: int
    default: 30
  request_timeout_s:
    description:
      - Connect timeout of the watch, and how long it may stay silent before the pods are listed and judged again.
      - The list is bounded by the collection's API guard, so a stalled API server ends the wait within its bound.
    type: int
    default: 5
seealso:
  - module: kubernetes.core.k8s_info
"""

EXAMPLES = r"""
- name: Wait until every probe pod has finished, or one cannot start
  rlstack.validation.pod_wait:
    namespace: gpu-validation
    label_selectors:
      - rlstack.io/run=20261201-1907-ab12
      - app.kubernetes.io/component=probe
    expected: 256
    want: probes
    start_timeout_s: 900
    step_s: 30
  register: probe_pods
  until: probe_pods.summary.settled
  retries: 40
  delay: 1
"""

RETURN = r"""
resources:
  description: The pods as last seen (as M(kubernetes.core.k8s_info) returns them, without C(metadata.managedFields)), in name order.
  returned: always
  type: list
  elements: dict
summary:
  description: The pod summary of the wait (settled, ok, expected, states, problems, gone, text).
  returned: always
  type: dict
settled:
  description: Whether the wait is over (the summary's C(settled)).
  returned: always
  type: bool
requests:
  description: Lists and watch events this call used, and how often it judged the pods.
  returned: always
  type: dict
elapsed_s:
  description: Seconds this call waited.
  returned: always
  type: float
step_s:
  description: O(step_s), so that a progress line can tell the bound of a wait that repeats this call.
  returned: always
  type: int
"""

import copy
import json
import time

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._diagnose import api_error_text
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._fanout import pooled_core_api
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._k8s_status import pods_summary
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._pod_wait import WatchExpired, WatchIdle, follow, orphan_check

try:
    import kubernetes
    import urllib3
except ImportError:  # reported by AnsibleK8SModule
    kubernetes = urllib3 = None


def argspec():
    spec = copy.deepcopy(AUTH_ARG_SPEC)
    spec.update(
        namespace=dict(type="str", required=True),
        label_selectors=dict(type="list", elements="str", default=[]),
        expected=dict(type="int"),
        want=dict(type="str", default="probes", choices=["running", "finished", "probes", "launcher"]),
        grace_s=dict(type="int", default=45),
        start_timeout_s=dict(type="int"),
        step_s=dict(type="int", default=30),
        request_timeout_s=dict(type="int", default=5),
    )
    return spec


def execute(module, core):
    params = module.params
    selector = ",".join(params["label_selectors"])
    connect_s = max(params["request_timeout_s"], 1)

    def list_pods():
        # no _request_timeout: the API guard bounds the list and retries it (docs/reliability.md)
        response = core.list_namespaced_pod(params["namespace"], label_selector=selector, _preload_content=False)
        body = json.loads(response.data)
        return body.get("items") or [], (body.get("metadata") or {}).get("resourceVersion")

    def watch_pods(version, timeout_s):
        try:
            stream = kubernetes.watch.Watch().stream(
                core.list_namespaced_pod, params["namespace"], label_selector=selector, resource_version=version,
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

    def judge(pods):
        return pods_summary(pods, expected=params["expected"], grace_s=params["grace_s"], want=params["want"],
                            start_timeout_s=params["start_timeout_s"])

    # An interrupted run's worker is gone (Ctrl-C: ansible-playbook signals its workers, which lead sessions of their
    # own, and this module's shell outlives them): stop within the watch's silence bound rather than step_s.
    t0 = time.monotonic()
    seen = follow(list_pods, watch_pods, judge, params["step_s"], orphaned=orphan_check())
    return {"changed": False, "resources": seen["pods"], "summary": seen["summary"],
            "settled": bool(seen["summary"].get("settled")),
            "requests": {"lists": seen["lists"], "events": seen["events"], "judged": seen["judged"]},
            "elapsed_s": round(time.monotonic() - t0, 3), "step_s": params["step_s"]}


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=True)
    try:
        module.exit_json(**execute(module, pooled_core_api(kubernetes, get_api_client(module=module), 2)))
    except CoreException as exc:
        module.fail_from_exception(exc)
    except kubernetes.client.exceptions.ApiException as exc:
        module.fail_json(msg="waiting on the pods in namespace %s: %s"
                         % (module.params["namespace"], api_error_text(exc.status, exc.reason, exc.body)))
    except Exception as exc:  # pylint: disable=broad-except
        # The API guard's one sentence (sitecustomize loads it under its own name, so match the class by name).
        if type(exc).__name__ != "APIUnreachableError":
            raise
        module.fail_json(msg=str(exc))


if __name__ == "__main__":
    main()
