#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: probe_run
short_description: Run a level's probe pods from start to finish, one module run per step of the wait
description:
  - On its first attempt, sets the run's lease (O(lease)), creates O(config_maps) and then every pod of
    O(definitions) (or one per O(targets) from O(pod_template)), at most O(concurrency) requests in flight. When any pod is refused, the task fails with the API
    server's own sentence for the first one (a quota, a PodSecurity level, an admission webhook, a permission).
  - Then follows the pods O(label_selectors) selects with one list and a watch for at most O(step_s), judging them as
    the filter P(rlstack.validation.pods_summary#filter) does with C(want=probes). Each pod's log is read as soon
    as the pod has ended (its containers have exited), while the others are awaited.
  - Once the wait is settled, or O(deadline_at) has come, reads the level's own O(reads), the events of every pod
    that never ran, the nodes O(node_selector) selects when a pod did not end well, and every pod's log not read yet, then
    deletes the pods and O(config_maps), and returns C(finished=true).
  - The events are one list per pod for up to O(concurrency) pods that never ran; for more, the namespace's pod
    events in pages of 500 (the API server scans all of a namespace's events for each list).
  - A task repeats it with C(until) on C(finished), so a long wait still prints its progress and stays bounded. An
    attempt that finds the first of O(config_maps) existing does not create anything (the earlier attempt did).
  - Made for the collection's probe levels (roles/runner/tasks/probe_level.yml); one module run in place of three
    (docs/performance.md). Needs C(create), C(list), C(watch) and C(delete) on C(pods), C(get) on C(pods/log),
    C(list) on C(events), C(create) and C(delete) on C(configmaps), C(patch) on C(jobs) with O(lease),
    C(list) on C(nodes) with O(node_selector), and C(get) or C(list) on what O(reads) reads.
author:
  - rlstack.validation maintainers (@rlstack)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - rlstack.validation._attributes
attributes:
  check_mode:
    support: none
  diff_mode:
    support: none
options:
  namespace:
    description: Namespace of the pods and ConfigMaps.
    type: str
    required: true
  definitions:
    description: The Pod manifests to create on the first attempt; each one's C(metadata.namespace) defaults to O(namespace).
    type: list
    elements: dict
    default: []
  pod_template:
    description:
      - One Pod manifest from which the module makes a pod per O(targets), as the filter
        P(rlstack.validation.probe_pods#filter) does (its name O(name_prefix)-<node>, its node, the target's GPUs and EFA
        devices); in place of O(definitions).
    type: dict
  targets:
    description:
      - The probe's targets, C([{node, gpus, efa, ...}]) (the runner's C(runner_probe_targets)). With them the
        module returns each target's outcome (RV(outcomes)), read from the pods' logs, in place of the logs (RV(pods)).
    type: list
    elements: dict
  name_prefix:
    description: The pods' name prefix with O(pod_template).
    type: str
  finish_timeout_s:
    description: The bound of the whole probe in seconds, named in the outcome of a probe that did not finish.
    type: int
    default: 0
  config_maps:
    description:
      - ConfigMap manifests created before the pods (the files they mount), and deleted with them at the end.
      - The first one marks the start; it is required with O(definitions) or O(pod_template).
    type: list
    elements: dict
    default: []
  lease:
    description:
      - Before anything is created, set C(spec.activeDeadlineSeconds) of this Job in O(namespace), the run's lease,
        which must cover the wait (Kubernetes deletes what the Job owns when it runs out).
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
  label_selectors:
    description: Label selectors (C(key=value)) that select the probe pods, and only them; not empty.
    type: list
    elements: str
    required: true
  expected:
    description: How many pods the wait expects.
    type: int
    required: true
  grace_s:
    description: How long a pod's problem (image pull, scheduling, marked not ready) may last before it settles the wait.
    type: int
    default: 45
  start_timeout_s:
    description: A pod still Pending this long settles the wait.
    type: int
    required: true
  step_s:
    description: The most seconds one attempt waits before it returns what it saw.
    type: int
    default: 15
  deadline_at:
    description:
      - When the whole wait ends (seconds since the epoch); the attempt that reaches it reads and deletes the pods
        whatever their state, so the probe results name each unfinished one. 0 waits only on the pods' state.
    type: float
    default: 0
  request_timeout_s:
    description: Connect timeout of the watch, and how long it may stay silent before the pods are listed and judged again.
    type: int
    default: 5
  node_selector:
    description: Label selector of the target nodes, read again when a pod did not end well; empty reads none.
    type: str
    default: ''
  reads:
    description:
      - The level's own reads of the API, done at the end (L0's device plugins, storage claim and ResourceSlices),
        each a collection, optionally narrowed by labels, or one object by name. A kind the server does not serve, or
        an object not found by name, gives no resources and says so in the result's C(error).
    type: list
    elements: dict
    default: []
    suboptions:
      kind:
        description: Kind of the objects (its plural is guessed as Kubernetes does, or given in O(reads[].plural)).
        type: str
        required: true
      api_version:
        description: API group and version (C(v1) for the core group).
        type: str
        default: v1
      plural:
        description: The resource name, when the guess from O(reads[].kind) is wrong.
        type: str
      namespace:
        description: Namespace of a namespaced kind; empty for a cluster-scoped one.
        type: str
      name:
        description: Read this object only.
        type: str
      label_selectors:
        description: Label selectors (C(key=value)) the objects must all match.
        type: list
        elements: str
        default: []
      item:
        description: Anything; returned as the read's C(item) (what the read was for).
        type: raw
  concurrency:
    description: The most create, log or delete requests in flight at once.
    type: int
    default: 16
  create_deadline_s:
    description: Time for all the creates together, in seconds.
    type: int
    default: 300
  read_deadline_s:
    description:
      - Time for all the reads after the wait together (the events of pods that never ran, then the logs), in seconds.
      - A log not read by then is returned with an error; events not read by then are left out.
    type: int
    default: 120
  limit_bytes:
    description: The most bytes read of each log (the end of a probe's log holds its result).
    type: int
    default: 4194304
  delete_wait_s:
    description: How long the end waits until no probe pod is listed, in seconds.
    type: int
    default: 60
seealso:
  - module: rlstack.validation.pod_logs
  - module: rlstack.validation.objects_absent
  - module: kubernetes.core.k8s_info
"""

EXAMPLES = r"""
- name: Run one probe pod per node and read what each printed
  rlstack.validation.probe_run:
    namespace: gpu-validation
    lease:
      job: rlsv-20261201-1907-ab12-anchor
      active_deadline_s: 900
    config_maps:
      - apiVersion: v1
        kind: ConfigMap
        metadata: {name: rlsv-20261201-1907-ab12-l0-infrastructure}
        data: {probe_node.py: "print('hello')"}
    definitions: "{{ probe_pods }}"
    label_selectors:
      - rlstack.io/run=20261201-1907-ab12
      - app.kubernetes.io/component=probe
    expected: 2
    start_timeout_s: 900
    deadline_at: "{{ now(utc=true).timestamp() + 1000 }}"
    node_selector: node.kubernetes.io/instance-type=p5.48xlarge
  register: probe
  until: probe.finished | default(false) or probe.start_failed | default(false)
  retries: 70
  delay: 1
"""

RETURN = r"""
started:
  description: Whether this attempt created the pods.
  returned: always
  type: bool
finished:
  description: Whether the wait is over and the pods were read and deleted (repeat the task until it is).
  returned: always
  type: bool
settled:
  description: Whether the pods' state ended the wait (the summary's C(settled)); false at the deadline.
  returned: always
  type: bool
summary:
  description: The pod summary of the wait (settled, ok, expected, states, problems, gone, text).
  returned: always
  type: dict
resources:
  description:
    - The pods as last seen by the wait, in name order, with only the fields the runner reads after it (the GPU
      time, the image digest; RETURNED_POD_FIELDS in module_utils/k8s/_probe_run.py).
  returned: always
  type: list
  elements: dict
events:
  description: "For each pod that never ran: C({item: its state, resources: its events}) (as a loop of M(kubernetes.core.k8s_info))."
  returned: when finished
  type: list
  elements: dict
nodes:
  description: The nodes O(node_selector) selects, read again after a pod that did not end well; else empty.
  returned: when finished
  type: list
  elements: dict
reads:
  description: "One entry per O(reads), in order: C({item, resources, error}) (as a loop of M(kubernetes.core.k8s_info))."
  returned: when finished
  type: list
  elements: dict
pods:
  description: One entry per pod with its log, as M(rlstack.validation.pod_logs) returns them.
  returned: when finished, without O(targets)
  type: list
  elements: dict
outcomes:
  description:
    - "Each target's probe outcome, C({node: {status, data, error, hint, ...}}), as the filter
      P(rlstack.validation.probe_results#filter) reads it from the pods' logs and states (docs/probes.md)."
    - As compact JSON text, which the filter P(rlstack.validation.probe_outcomes#filter) reads back. Ansible moves one
      string as it is, where it scrubs, decodes and copies every value of a dict (over 256 nodes the L0 outcomes are
      4 MB, and as a dict the scrubbing alone took 0.3 s at the module's exit).
  returned: when finished, with O(targets)
  type: str
left_nothing:
  description: Whether every pod and ConfigMap is gone (none left, no delete error).
  returned: when finished
  type: bool
delete_errors:
  description: "What could not be deleted: [{name, error}]."
  returned: when finished
  type: list
  elements: dict
start_failed:
  description:
    - On a failed attempt, whether it failed while starting the pods (a refused create or lease, a missing
      permission). Repeat the task only until this is true as well, since another attempt would fail alike.
  returned: when the start failed
  type: bool
step_s:
  description: O(step_s), so that a progress line can tell the bound of a wait that repeats this call.
  returned: always
  type: int
elapsed_s:
  description: Seconds this attempt took.
  returned: always
  type: float
"""

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _pod_batch, _probe_run
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._fanout import pooled_core_api
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._module_end import end
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_info import READ_OPTIONS
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._pod_wait import orphan_check

try:
    import kubernetes
    import urllib3
except ImportError:  # reported by AnsibleK8SModule
    kubernetes = urllib3 = None


def argspec():
    spec = copy.deepcopy(AUTH_ARG_SPEC)
    spec.update(
        namespace=dict(type="str", required=True),
        definitions=dict(type="list", elements="dict", default=[]),
        pod_template=dict(type="dict"),
        targets=dict(type="list", elements="dict"),
        name_prefix=dict(type="str"),
        finish_timeout_s=dict(type="int", default=0),
        config_maps=dict(type="list", elements="dict", default=[]),
        lease=dict(type="dict", options=dict(job=dict(type="str", required=True),
                                             active_deadline_s=dict(type="int", required=True))),
        label_selectors=dict(type="list", elements="str", required=True),
        expected=dict(type="int", required=True),
        grace_s=dict(type="int", default=45),
        start_timeout_s=dict(type="int", required=True),
        step_s=dict(type="int", default=15),
        deadline_at=dict(type="float", default=0),
        request_timeout_s=dict(type="int", default=5),
        node_selector=dict(type="str", default=""),
        reads=dict(type="list", elements="dict", default=[], options=copy.deepcopy(READ_OPTIONS)),
        concurrency=dict(type="int", default=16),
        create_deadline_s=dict(type="int", default=300),
        read_deadline_s=dict(type="int", default=120),
        limit_bytes=dict(type="int", default=4194304),
        delete_wait_s=dict(type="int", default=60),
    )
    return spec


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(),
                              mutually_exclusive=[("definitions", "pod_template")],
                              required_by={"pod_template": ("targets", "name_prefix")})
    params = module.params
    if not _pod_batch.selector_of(params["label_selectors"]):
        module.fail_json(msg=_pod_batch.NO_SELECTOR % ("probe_run", params["namespace"]))
    if (params["definitions"] or params["pod_template"]) and not params["config_maps"]:
        module.fail_json(msg="probe_run needs config_maps with definitions or pod_template: the first ConfigMap marks "
                             "the start")

    def call():
        core = pooled_core_api(kubernetes, get_api_client(module=module), params["concurrency"])
        # An interrupted run's worker is gone: stop within the watch's silence bound rather than step_s.
        return _probe_run.run(kubernetes, urllib3, core, params, orphaned=orphan_check())

    end(module, kubernetes, CoreException, call, "probe pods in namespace %s" % params["namespace"])


if __name__ == "__main__":
    main()
