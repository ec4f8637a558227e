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
  - Talks to the cluster with the Kubernetes Python client (kubeconfig, context, or in-cluster config).
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
    description: Seconds to wait in all.
    type: int
    required: true
  poll_s:
    description: Seconds between rounds.
    type: float
    default: 2
  grace_s:
    description: Seconds a pod may stay Pending with a problem before it counts as unable to run.
    type: float
    default: 45
  kubeconfig:
    description: Path of the kubeconfig (default the client's own lookup, then the in-cluster config).
    type: path
  context:
    description: Context of the kubeconfig.
    type: str
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
  register: watched
"""

RETURN = r"""
settled:
  description: Every Job's pod finished, could not run, or its Job was stopped or deleted.
  type: bool
  returned: always
stopped:
  description: The Jobs deleted because their override did not take effect, by name, each with C(message),
    C(line), C(step), C(total), C(log) and C(seen_after_s) (seconds from the start of the watch).
  type: dict
  returned: always
gone:
  description: The Jobs of the run that disappeared during the watch without this watch deleting them (someone or
    something else deleted them), by name, each with C(seen_after_s).
  type: dict
  returned: always
elapsed_s:
  description: Seconds the watch took.
  type: float
  returned: always
"""

import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    from kubernetes import client, config
    HAS_K8S = True
except ImportError:  # pragma: no cover - reported by the module
    HAS_K8S = False

from ansible_collections.rlstack.validation.plugins.module_utils import _frameworks
from ansible_collections.rlstack.validation.plugins.module_utils import _k8s_status

JOB_NAME_LABEL = "batch.kubernetes.io/job-name"


def _api(params):
    try:
        config.load_kube_config(config_file=params.get("kubeconfig"), context=params.get("context"))
    except Exception:  # no kubeconfig: inside a pod
        config.load_incluster_config()
    return client.ApiClient()


def main():
    module = AnsibleModule(argument_spec=dict(
        namespace=dict(type="str", required=True),
        label_selectors=dict(type="list", elements="str", required=True),
        jobs=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True), framework=dict(type="str", default="custom"),
            mode=dict(type="str", choices=["train", "eval"], default="train"),
            launched=dict(type="dict", default={}))),
        timeout_s=dict(type="int", required=True), poll_s=dict(type="float", default=2.0),
        grace_s=dict(type="float", default=45.0), kubeconfig=dict(type="path"), context=dict(type="str"),
    ), supports_check_mode=False)
    if not HAS_K8S:
        module.fail_json(msg=missing_required_lib("kubernetes"))
    params = module.params
    try:
        contracts = {j["name"]: _frameworks.contract(j["framework"]) for j in params["jobs"]}
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    api = _api(params)
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    namespace, started = params["namespace"], time.time()
    watched = {j["name"]: j for j in params["jobs"] if contracts[j["name"]].get("step_patterns")}
    stopped, gone, settled = {}, {}, False
    names = [j["name"] for j in params["jobs"]]
    while True:
        pods = [api.sanitize_for_serialization(p) for p in core.list_namespaced_pod(
            namespace, label_selector=",".join(params["label_selectors"])).items]
        for pod in pods:
            meta = pod.get("metadata") or {}
            job = (meta.get("labels") or {}).get(JOB_NAME_LABEL) or ""
            phase = (pod.get("status") or {}).get("phase")
            index = (meta.get("annotations") or {}).get("batch.kubernetes.io/job-completion-index")
            if job not in watched or job in stopped or phase not in ("Running", "Succeeded", "Failed") \
                    or index not in (None, "0"):
                continue
            try:
                log = core.read_namespaced_pod_log(meta["name"], namespace)
            except client.ApiException:
                continue
            spec = watched[job]
            found = _frameworks.overrun(log, contracts[job], spec["mode"], spec["launched"])
            if found and phase == "Running":
                batch.delete_namespaced_job(job, namespace, propagation_policy="Background")
                stopped[job] = dict(found, log=log, seen_after_s=round(time.time() - started, 1))
        # A Job of this run that is gone and that this watch did not delete was deleted by someone else (a
        # cleanup script, another run's cleanup): its pods go with it, so without this the wait ran to its bound.
        present = set(j.metadata.name for j in batch.list_namespaced_job(
            namespace, label_selector=",".join(params["label_selectors"])).items)
        for name in _k8s_status.jobs_gone(names, present, stopped, gone):
            gone[name] = {"seen_after_s": round(time.time() - started, 1)}
        ended = set(stopped) | set(gone)
        left = [p for p in pods if ((p.get("metadata") or {}).get("labels") or {}).get(JOB_NAME_LABEL) not in ended]
        expected = len(params["jobs"]) - len(ended)
        settled = expected == 0 or _k8s_status.pods_summary(left, expected, params["grace_s"], "finished")["settled"]
        if settled or time.time() - started >= params["timeout_s"]:
            break
        time.sleep(params["poll_s"])
    module.exit_json(changed=bool(stopped), settled=settled, stopped=stopped, gone=gone,
                     elapsed_s=round(time.time() - started, 1))


if __name__ == "__main__":
    main()
