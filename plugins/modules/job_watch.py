#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: job_watch
short_description: Wait for L5/L6 Jobs and stop one whose log shows that its override did not take effect
description:
  - Polls the pods of the given Jobs until each has finished or cannot run (the same rule as the runner's
    bounded wait), reading the log of every running head pod on each round.
  - When a log shows the framework's step counter with a total above one, or a step past one (O(jobs[].mode)
    C(train)), or any training step (C(eval)), the module deletes that Job at once (its GPUs are freed)
    and returns the finding and the log; the framework contracts are the collection's
    C(plugins/module_utils/_frameworks.py).
  - Talks to the cluster as every kubernetes.core module does (its authentication options, the C(K8S_AUTH_*)
    environment, the default kubeconfig or the in-cluster config; C(plugins/module_utils/k8s/_cluster_access.py)).
  - The logic is C(plugins/module_utils/k8s/_job_watch.py).
author:
  - rlstack.validation maintainers (@rlstack)
options:
  namespace:
    description: Namespace of the Jobs.
    type: str
    required: true
  label_selectors:
    description: Label selectors of the Jobs' pods (joined with commas).
    type: list
    elements: str
    required: true
  jobs:
    description: The Jobs to watch.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The Job's name.
        type: str
        required: true
      framework:
        description: The example's framework contract (rlinf, verl, trl, custom).
        type: str
        default: custom
      mode:
        description: C(train) (L5) or C(eval) (L6).
        type: str
        choices: [train, eval]
        default: train
      launched:
        description: How the example was launched (command, overrides, delivery), for the message.
        type: dict
        default: {}
  timeout_s:
    description: Seconds the whole watch may take, counted from its first step.
    type: int
    required: true
  step_s:
    description:
      - Seconds this call waits at most; the runner repeats the call in an C(until) loop, so that the wait
        prints its progress (the Jobs' pods in RV(resources)) and an interrupted run's module ends within a step.
      - V(0) waits for the whole O(timeout_s) in one call.
    type: int
    default: 0
  state_file:
    description:
      - A file on the controller that carries the watch from one step to the next (when it began, the Jobs it
        stopped or found gone); removed when the watch ends. Unset, each call is a watch of its own.
    type: path
  poll_s:
    description: Seconds between rounds.
    type: float
    default: 2
  grace_s:
    description: Seconds a pod may stay Pending with a problem before it counts as unable to run.
    type: float
    default: 45
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
attributes:
  check_mode:
    support: none
    description: It deletes Jobs.
  diff_mode:
    support: none
    description: No diff.
requirements:
  - kubernetes (the Python client)
"""

EXAMPLES = r"""
- name: Wait for the L5 Jobs, stopping any that ignores its one-step override
  rlstack.validation.job_watch:
    namespace: default
    label_selectors: ["rlstack.io/run-id=20261201-1200-ab12", "rlstack.io/level=l5_training_step"]
    jobs:
      - {name: rlsv-20261201-1200-ab12-train-maniskill, framework: rlinf, mode: train}
    timeout_s: 3900
    step_s: 30
    state_file: /tmp/rlstack-job-watch-20261201-1200-ab12.json
  register: watched
  until: watched.settled or watched.timed_out
  retries: 130
  delay: 1
"""

RETURN = r"""
settled:
  description: Every Job's pod finished, could not run, or its Job was stopped or deleted.
  type: bool
  returned: always
timed_out:
  description: The watch reached O(timeout_s) before it settled.
  type: bool
  returned: always
resources:
  description: The Jobs' pods as the last round listed them (managedFields left out), for the progress line.
  type: list
  elements: dict
  returned: always
step_s:
  description: The bound of this call (O(step_s), or O(timeout_s) when that is 0), for the progress line.
  type: int
  returned: always
stopped:
  description: The Jobs deleted because their override did not take effect (in this step or an earlier one), by name, each with C(message),
    C(line), C(step), C(total), C(log) and C(seen_after_s) (seconds from the start of the watch).
  type: dict
  returned: always
gone:
  description: The Jobs of the run that disappeared during the watch without this watch deleting them (someone or
    something else deleted them), by name, each with C(seen_after_s).
  type: dict
  returned: always
elapsed_s:
  description: Seconds since the watch's first step.
  type: float
  returned: always
"""

import copy
import time

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _job_watch
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._diagnose import api_error_text
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._pod_wait import orphan_check

try:
    import kubernetes
except ImportError:  # reported by AnsibleK8SModule
    kubernetes = None


class Cluster:
    """The calls _job_watch.watch makes, on one namespace and label selector."""

    def __init__(self, api_client, namespace, selector):
        self.api = api_client
        self.core = kubernetes.client.CoreV1Api(api_client)
        self.batch = kubernetes.client.BatchV1Api(api_client)
        self.namespace, self.selector = namespace, selector

    def list_pods(self):
        return [self.api.sanitize_for_serialization(p) for p in self.core.list_namespaced_pod(
            self.namespace, label_selector=self.selector).items]

    def read_log(self, pod):
        try:
            return self.core.read_namespaced_pod_log(pod, self.namespace)
        except kubernetes.client.exceptions.ApiException:
            return None

    def delete_job(self, name):
        self.batch.delete_namespaced_job(name, self.namespace, propagation_policy="Background")

    def job_names(self):
        return set(j.metadata.name for j in self.batch.list_namespaced_job(
            self.namespace, label_selector=self.selector).items)


def argspec():
    spec = copy.deepcopy(AUTH_ARG_SPEC)
    spec.update(
        namespace=dict(type="str", required=True),
        label_selectors=dict(type="list", elements="str", required=True),
        jobs=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True), framework=dict(type="str", default="custom"),
            mode=dict(type="str", choices=["train", "eval"], default="train"),
            launched=dict(type="dict", default={}))),
        timeout_s=dict(type="int", required=True), step_s=dict(type="int", default=0),
        state_file=dict(type="path"), poll_s=dict(type="float", default=2.0),
        grace_s=dict(type="float", default=45.0),
    )
    return spec


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=False)
    params = module.params
    state = _job_watch.load_state(params["state_file"], time.time())
    try:
        cluster = Cluster(get_api_client(module=module).client.client, params["namespace"],
                          ",".join(params["label_selectors"]))
        result = _job_watch.watch(cluster, params["jobs"], params["timeout_s"], params["grace_s"], params["poll_s"],
                                  params["step_s"], state, orphaned=orphan_check())
    except ValueError as exc:  # an unknown framework
        module.fail_json(msg=str(exc))
    except CoreException as exc:
        module.fail_from_exception(exc)
    except kubernetes.client.exceptions.ApiException as exc:
        module.fail_json(msg="waiting on the Jobs in namespace %s: %s"
                         % (params["namespace"], api_error_text(exc.status, exc.reason, exc.body)))
    except Exception as exc:  # pylint: disable=broad-except
        # The API guard's one sentence (sitecustomize loads it under its own name, so match the class by name).
        if type(exc).__name__ != "APIUnreachableError":
            raise
        module.fail_json(msg=str(exc))
    _job_watch.save_state(params["state_file"], result.pop("state"), result["settled"] or result["timed_out"])
    module.exit_json(changed=bool(result["stopped"]), **result)


if __name__ == "__main__":
    main()
