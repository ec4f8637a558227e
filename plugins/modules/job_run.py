#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: job_run
short_description: Run a level's Jobs from start to outcome, stopping one whose override did not take effect
description:
  - On its first attempt, sets the run's lease (O(lease)) and creates, in order, the headless Service of every
    multi-node Job (O(jobs[].service)), the EFA claim template of every Job that has one (O(jobs[].claim)) and every
    Job (O(jobs[].definition)). The first object marks the start; an
    attempt that finds it existing creates nothing (the earlier attempt did). A refused create ends the task
    (C(start_failed)).
  - Then follows the Jobs' pods (O(label_selectors)) with one list and a watch for at most O(step_s). At most every
    O(poll_s) it reads the log of each running head pod of a Job whose framework prints a step counter; when that
    log shows a total above one or a step past one (O(jobs[].watch.mode) C(train)), or any training step (C(eval)),
    it deletes that Job at once (its GPUs are freed) and returns the finding and the log (the framework contracts
    are the collection's C(plugins/module_utils/_frameworks.py)). A Job of the run that disappears without this
    module deleting it is named as deleted by someone else.
  - Once every Job's pod finished or cannot run, or O(deadline_at) has come, reads the Jobs (giving their controller
    up to O(record_wait_s) to record the outcome), the scheduler's C(Scheduled) events when a Job has a Service
    (its workers may be gone by then), and the log of each Job's last pod, and returns C(finished=true) with every
    Job's result (RV(examples)). With O(delete_after) it then deletes the Jobs, their Services, claim templates and pods and
    waits until no pod is listed (RV(left_nothing)); without, they stay for the level's cleanup.
  - A task repeats it with C(until) on C(finished), so a long wait prints its progress and stays bounded; the
    attempts share what the wait found through O(state_file). With O(wait=false) it only starts the Jobs (Kueue
    admits them before the wait).
  - Talks to the cluster as every kubernetes.core module does (its authentication options, the C(K8S_AUTH_*)
    environment, the default kubeconfig or the in-cluster config; C(plugins/module_utils/k8s/_cluster_access.py)).
    Needs C(create) (and with O(delete_after) C(delete)) on C(services), C(jobs) and, for O(jobs[].claim),
    C(resourceclaimtemplates) (resource.k8s.io), C(delete) on C(pods) with
    O(delete_after), C(list), C(watch) on C(pods), C(get) on C(pods/log), C(list) and
    C(delete) on C(jobs), C(list) on C(events), and C(patch) on C(jobs) with O(lease).
  - The logic is C(plugins/module_utils/k8s/_job_run.py) and C(_job_watch.py).
author:
  - rlstack.validation maintainers (@rlstack)
options:
  namespace:
    description: Namespace of the Jobs.
    type: str
    required: true
  jobs:
    description: The level's Jobs, as the filter P(rlstack.validation.watched_jobs#filter) gives them.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The example's name (the key of RV(examples)).
        type: str
        required: true
      definition:
        description: The Job.
        type: dict
        required: true
      service:
        description: The headless Service of a multi-node Job, created before it.
        type: dict
      claim:
        description: The ResourceClaimTemplate its pods claim EFA through (EFA from the EFA DRA driver), created before it.
        type: dict
      watch:
        description: What the watch needs to stop the Job when its log shows the override did not take effect.
        type: dict
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
  label_selectors:
    description: Label selectors of the Jobs' pods (joined with commas).
    type: list
    elements: str
    required: true
  state_file:
    description:
      - A file on the controller that carries the wait from one attempt to the next (when it began, the Jobs it
        stopped or found gone); removed when the wait ends. Unset, each attempt starts a wait of its own.
    type: path
extends_documentation_fragment:
  - rlstack.validation._workload_run
  - kubernetes.core.k8s_auth_options
attributes:
  check_mode:
    support: none
    description: It creates and deletes Jobs.
  diff_mode:
    support: none
    description: No diff.
requirements:
  - kubernetes (the Python client)
"""

EXAMPLES = r"""
- name: Run the L5 Jobs, stopping any that ignores its one-step override
  rlstack.validation.job_run:
    namespace: default
    jobs: "{{ runner_jobs }}"
    label_selectors: ["rlstack.io/run-id=20261201-1200-ab12", "rlstack.io/level=l5_training_step"]
    deadline_at: "{{ now(utc=true).timestamp() + 3900 }}"
    state_file: /tmp/rlstack-job-run-20261201-1200-ab12.json
  register: ran
  until: ran.finished | default(false) or ran.start_failed | default(false)
  retries: 130
  delay: 1
"""

RETURN = r"""
started:
  description: Whether this attempt created the Jobs (the first one does).
  type: bool
  returned: always
finished:
  description: The wait settled or reached O(deadline_at), and the outcome was read.
  type: bool
  returned: always
settled:
  description: Every Job's pod finished, could not run, or its Job was stopped or deleted.
  type: bool
  returned: always
timed_out:
  description: The wait reached O(deadline_at) before it settled.
  type: bool
  returned: always
resources:
  description: The Jobs' pods as the wait last saw them (managedFields left out), for the progress line and GPU time.
  type: list
  elements: dict
  returned: always
step_s:
  description: O(step_s), for the progress line.
  type: int
  returned: always
stopped:
  description: The Jobs deleted because their override did not take effect (in this attempt or an earlier one), by
    name, each with C(message), C(line), C(step), C(total), C(log) and C(seen_after_s) (seconds from the start of the wait).
  type: dict
  returned: when it waited
gone:
  description: The Jobs of the run that disappeared during the wait without this module deleting them, by name,
    each with C(seen_after_s).
  type: dict
  returned: when it waited
elapsed_s:
  description: Seconds since the wait's first attempt.
  type: float
  returned: when it waited
jobs:
  description: The Jobs as read at the end.
  type: list
  elements: dict
  returned: when finished
states:
  description: Each Job's state (C(settled), C(complete), C(failed), C(reason), C(message), C(pods), C(problems), C(source)),
    C(source) saying whether the Job controller recorded it (C(Job status)) or the finished pods gave it (C(pods)).
  type: list
  elements: dict
  returned: when finished
scheduled:
  description: The scheduler's C(Scheduled) events of the namespace's pods, when a Job has a Service.
  type: list
  elements: dict
  returned: when finished
logs:
  description: The log of each Job's last pod, as M(rlstack.validation.pod_logs) returns them.
  type: list
  elements: dict
  returned: when finished
examples:
  description: "Each example's result, by O(jobs[].name): C({state, log, log_error}), the log redacted
    (C(_k8s_status.job_results)): a stopped Job has the log the wait read, a Job deleted by someone else names that."
  type: dict
  returned: when finished
seen_at:
  description: When the outcome was read (seconds since the epoch), the end of the GPU time the pods held.
  type: float
  returned: when finished
left_nothing:
  description: With O(delete_after), whether every Job, Service and pod is gone (none left, no delete error).
  type: bool
  returned: when finished
delete_errors:
  description: "With O(delete_after), what could not be deleted: [{name, error}]."
  type: list
  elements: dict
  returned: when finished with O(delete_after)
start_failed:
  description: On a failed attempt, whether it failed while starting (a refused create, a missing permission).
  type: bool
  returned: when the start failed
attempt_s:
  description: Seconds this attempt took.
  type: float
  returned: always
"""

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _job_run, _pod_batch
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._fanout import pooled_core_api
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._job_run import workload_options
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._module_end import end
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._pod_wait import orphan_check

try:
    import kubernetes
    import urllib3
except ImportError:  # reported by AnsibleK8SModule
    kubernetes = urllib3 = None


def argspec():
    spec = copy.deepcopy(AUTH_ARG_SPEC)
    spec.update(workload_options())
    spec.update(
        namespace=dict(type="str", required=True),
        jobs=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True), definition=dict(type="dict", required=True),
            service=dict(type="dict"), claim=dict(type="dict"),
            watch=dict(type="dict", required=True, options=dict(
                name=dict(type="str", required=True), framework=dict(type="str", default="custom"),
                mode=dict(type="str", choices=["train", "eval"], default="train"),
                launched=dict(type="dict", default={}))))),
        label_selectors=dict(type="list", elements="str", required=True),
        state_file=dict(type="path"),
    )
    return spec


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=False)
    params = module.params
    if not _pod_batch.selector_of(params["label_selectors"]):
        module.fail_json(msg=_pod_batch.NO_SELECTOR % ("job_run", params["namespace"]))

    def call():
        core = pooled_core_api(kubernetes, get_api_client(module=module), params["concurrency"])
        # An interrupted run's worker is gone: stop within the watch's silence bound rather than step_s.
        return _job_run.run(kubernetes, urllib3, core, params, orphaned=orphan_check())

    # (a ValueError is an unknown framework: its sentence)
    end(module, kubernetes, CoreException, call, "the Jobs in namespace %s" % params["namespace"])


if __name__ == "__main__":
    main()
