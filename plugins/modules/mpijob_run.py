#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: mpijob_run
short_description: Run an nccl-tests MPIJob from start to outcome, one module run per step of the wait
description:
  - On its first attempt, sets the run's lease (O(lease)) and creates O(objects) in order (the ConfigMap of the
    scripts the ranks run, the EFA claim template when EFA comes through DRA, the MPIJob). The first object marks
    the start; an attempt that finds it existing creates nothing (the earlier attempt did). A refused create ends
    the task (C(start_failed)).
  - Then follows the MPIJob's pods (O(label_selectors)) with one list and a watch for at most O(step_s), reading the
    MPIJob again at most every O(poll_s). The wait is settled when the MPIJob succeeded or failed, its launcher pod
    finished, a pod cannot run past O(grace_s), or the MPI operator did not act on it within O(grace_s) (not
    running, or not watching the namespace), as the filter P(rlstack.validation.mpijob_state#filter) judges it.
  - Once settled, or at O(deadline_at), reads the MPIJob again (giving the operator up to O(record_wait_s) to record
    the outcome) and the launcher's log, and returns C(finished=true). With O(delete_after) it then deletes the
    objects it created and the pods, and waits until no pod is listed (RV(left_nothing)); without, they stay for the
    level's cleanup.
  - A task repeats it with C(until) on C(finished), so a long wait prints its progress and stays bounded. With
    O(wait=false) it only creates the objects (Kueue admits the MPIJob before the wait).
  - Talks to the cluster as every kubernetes.core module does (its authentication options, the C(K8S_AUTH_*)
    environment, the default kubeconfig or the in-cluster config). Needs C(create) on the kinds of O(objects),
    C(get) on C(mpijobs), C(list) and C(watch) on C(pods), C(get) on C(pods/log), C(patch) on C(jobs) with
    O(lease), and with O(delete_after) C(delete) on the kinds of O(objects) and on C(pods).
  - The logic is C(plugins/module_utils/k8s/_mpijob_run.py).
author:
  - rlstack.validation maintainers (@rlstack)
options:
  namespace:
    description: Namespace of the objects.
    type: str
    required: true
  objects:
    description: What to create, in order; exactly one C(kubeflow.org/v2beta1) MPIJob among them.
    type: list
    elements: dict
    required: true
  label_selectors:
    description: Label selectors of the MPIJob's pods (joined with commas).
    type: list
    elements: str
    required: true
extends_documentation_fragment:
  - rlstack.validation._workload_run
  - kubernetes.core.k8s_auth_options
attributes:
  check_mode:
    support: none
    description: It creates objects.
  diff_mode:
    support: none
    description: No diff.
requirements:
  - kubernetes (the Python client)
"""

EXAMPLES = r"""
- name: Run nccl-tests as an MPIJob and read its outcome and the launcher's log
  rlstack.validation.mpijob_run:
    namespace: default
    objects: "{{ [scripts_config_map, mpijob] }}"
    label_selectors: ["rlstack.io/run-id=20261201-1200-ab12", "rlstack.io/level=l3_multi_gpu"]
    deadline_at: "{{ now(utc=true).timestamp() + 1800 }}"
  register: ran
  until: ran.finished | default(false) or ran.start_failed | default(false)
  retries: 62
  delay: 1
"""

RETURN = r"""
started:
  description: Whether this attempt created the objects (the first one does).
  type: bool
  returned: always
name:
  description: The MPIJob's name.
  type: str
  returned: always
finished:
  description: The wait settled or reached O(deadline_at), and the outcome was read.
  type: bool
  returned: always
settled:
  description: The MPIJob's outcome is known (or it cannot run, or the operator did not act on it).
  type: bool
  returned: always
timed_out:
  description: The wait reached O(deadline_at) before it settled.
  type: bool
  returned: always
resources:
  description: The MPIJob's pods as last seen (managedFields left out), for the progress line and GPU time.
  type: list
  elements: dict
  returned: always
step_s:
  description: O(step_s), for the progress line.
  type: int
  returned: always
mpijob:
  description: The MPIJob as read at the end (V({}) when it was gone).
  type: dict
  returned: when finished
state:
  description: The MPIJob's state (the filter P(rlstack.validation.mpijob_state#filter)), C(source) saying whether the
    operator recorded it (C(MPIJob status)) or the finished launcher pod gave it (C(launcher pod)).
  type: dict
  returned: when finished
log:
  description: The launcher's log (its last pod's), V('') when there is none.
  type: str
  returned: when finished
log_error:
  description: Why there is no log (the launcher never started, a read that failed), V('') with a log.
  type: str
  returned: when finished
seen_at:
  description: When the outcome was read (seconds since the epoch), the end of the GPU time the pods held.
  type: float
  returned: when finished
left_nothing:
  description: With O(delete_after), whether every object it created and every pod is gone (none left, no delete error).
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
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _mpijob_run, _pod_batch
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
        objects=dict(type="list", elements="dict", required=True),
        label_selectors=dict(type="list", elements="str", required=True),
    )
    return spec


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=False)
    params = module.params
    if not _pod_batch.selector_of(params["label_selectors"]):
        module.fail_json(msg=_pod_batch.NO_SELECTOR % ("mpijob_run", params["namespace"]))

    def call():
        core = pooled_core_api(kubernetes, get_api_client(module=module), params["concurrency"])
        # An interrupted run's worker is gone: stop within the watch's silence bound rather than step_s.
        return _mpijob_run.run(kubernetes, urllib3, core, params, orphaned=orphan_check())

    # (a ValueError is objects without exactly one MPIJob: its sentence)
    end(module, kubernetes, CoreException, call, "the MPIJob in namespace %s" % params["namespace"])


if __name__ == "__main__":
    main()
