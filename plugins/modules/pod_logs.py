#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_logs
short_description: Read the logs of many pods at once, with a bound on requests in flight and on time
description:
  - Lists the pods of O(namespace) that O(label_selectors) select (or those named in O(names)) and reads
    each pod's log, at most O(concurrency) requests at a time, every request bounded by
    O(request_timeout_s) and all of them by O(deadline_s).
  - Made for the probe pods of the collection, which print their result into their log (one pod per node);
    reading 256 logs takes about as long as reading a few. It needs C(get) and C(list) on C(pods) and C(get) on
    C(pods/log), not C(pods/exec).
  - Read-only; always returns C(changed=false).
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
  names:
    description: Names of the pods to read; with O(label_selectors), only pods that match both.
    type: list
    elements: str
    default: []
  container:
    description: Container whose log is read; the pod's first container when omitted.
    type: str
  concurrency:
    description: The most log requests in flight at once.
    type: int
    default: 16
  request_timeout_s:
    description: Connect and read timeout of each request to the API server, in seconds.
    type: int
    default: 30
  deadline_s:
    description: Time for all the log reads together, in seconds; pods not read by then are returned with an error.
    type: int
    default: 120
  limit_bytes:
    description: The most bytes read of each log (the end of a probe's log holds its result, so keep it generous).
    type: int
    default: 4194304
  delete_after:
    description:
      - Once the logs are read, delete the pods O(label_selectors) selects (required then), with a grace period of
        0 (their GPUs are free at once), and wait up to O(delete_wait_s) until none is listed, as
        M(rlstack.validation.probe_run) does at its end. Needs C(delete) on C(pods).
      - In the same call as the reads, so the pods' GPUs are free without one more module run.
    type: bool
    default: false
  delete_wait_s:
    description: How long O(delete_after) waits until no selected pod is listed, in seconds.
    type: int
    default: 60
seealso:
  - module: kubernetes.core.k8s_log
"""

EXAMPLES = r"""
- name: Read every probe pod's result of this run
  rlstack.validation.pod_logs:
    namespace: gpu-validation
    label_selectors:
      - rlstack.io/run=20261201-1907-ab12
      - app.kubernetes.io/component=probe
    concurrency: 16
  register: probe_logs
"""

RETURN = r"""
pods:
  description: One entry per pod, in name order.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: Pod name., type: str, returned: always}
    node: {description: Node the pod ran on (empty when it never was scheduled)., type: str, returned: always}
    labels: {description: The pod's labels., type: dict, returned: always}
    phase: {description: The pod's phase when it was listed., type: str, returned: always}
    exit_code: {description: 'Exit code of the container when it terminated, else null.', type: int, returned: always}
    log: {description: The log text (empty when it could not be read)., type: str, returned: always}
    error: {description: 'Why the log could not be read; empty when it was read.', type: str, returned: always}
elapsed_s:
  description: Seconds the reads took together.
  returned: always
  type: float
deleted:
  description: Names of the pods the selectors matched when they were deleted (O(delete_after)).
  returned: when O(delete_after) is true
  type: list
  elements: str
left:
  description: Names of the deleted pods still listed when the wait ended (O(delete_after)).
  returned: when O(delete_after) is true
  type: list
  elements: str
delete_errors:
  description: "The pods that could not be deleted: [{name, error}] (O(delete_after))."
  returned: when O(delete_after) is true
  type: list
  elements: dict
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
        label_selectors=dict(type="list", elements="str", default=[]),
        names=dict(type="list", elements="str", default=[]),
        container=dict(type="str"),
        concurrency=dict(type="int", default=16),
        request_timeout_s=dict(type="int", default=30),
        deadline_s=dict(type="int", default=120),
        limit_bytes=dict(type="int", default=4194304),
        delete_after=dict(type="bool", default=False),
        delete_wait_s=dict(type="int", default=60),
    )
    return spec


def execute(module, core):
    params = module.params
    selector = _pod_batch.selector_of(params["label_selectors"])
    if params["delete_after"] and not selector:
        module.fail_json(msg=_pod_batch.NO_SELECTOR % ("pod_logs with delete_after", params["namespace"]))
    t0 = time.monotonic()
    listed, out = _pod_batch.read_logs(kubernetes, core, params["namespace"], selector, names=params["names"],
                                       container=params["container"], workers=params["concurrency"],
                                       request_timeout_s=params["request_timeout_s"],
                                       deadline_s=params["deadline_s"], limit_bytes=params["limit_bytes"])
    result = {"changed": False, "pods": out, "elapsed_s": round(time.monotonic() - t0, 3)}
    if params["delete_after"]:
        # every pod the selectors selected in the list above (names narrows the reads only): not listed again
        gone = _pod_batch.delete_selected(core, params["namespace"], selector, workers=params["concurrency"],
                                          wait_s=params["delete_wait_s"], check_mode=module.check_mode,
                                          names=listed)
        result.update(changed=gone["changed"], deleted=gone["deleted"], left=gone["left"], delete_errors=gone["failed"])
    return result


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=True)
    try:
        k8s_client = get_api_client(module=module)
        core = pooled_core_api(kubernetes, k8s_client, module.params["concurrency"])
        module.exit_json(**execute(module, core))
    except CoreException as exc:
        module.fail_from_exception(exc)
    except kubernetes.client.exceptions.ApiException as exc:
        module.fail_json(msg="reading the pods' logs in namespace %s failed: %s %s"
                         % (module.params["namespace"], exc.status, exc.reason))


if __name__ == "__main__":
    main()
