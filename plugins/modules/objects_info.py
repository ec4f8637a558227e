#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: objects_info
short_description: Read several collections or objects of the Kubernetes API in one module run
description:
  - Reads each of O(reads) in order, each a collection (optionally narrowed by labels) or one object by name, and
    returns them in the shape of a loop of M(kubernetes.core.k8s_info) reads (C(item), C(resources)).
  - Made for what the plan of a run reads before any level (roles/runner/tasks/nodes.yml) the nodes of every node
    selector of the plan, the DeviceClasses and the run's namespace; one module run in place of one
    M(kubernetes.core.k8s_info) run each (an interpreter and a client import, about a second on 2 cores;
    benchmarks/runner_overhead/).
  - A kind the server does not serve, or an object not found by name, gives no resources and says so in the read's
    C(error). Any other failure of a read marked O(reads[].required) fails the task with the API server's sentence;
    of another read, it is returned in its C(error).
  - Needs C(get) or C(list) on what O(reads) reads.
author:
  - rlstack.validation maintainers (@rlstack)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - rlstack.validation._attributes
attributes:
  check_mode:
    support: full
    details: It only reads.
  diff_mode:
    support: none
options:
  reads:
    description: What to read, in order.
    type: list
    elements: dict
    required: true
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
        description: Label selectors the objects must all match.
        type: list
        elements: str
        default: []
      hidden_fields:
        description:
          - Fields left out of every object read, as dotted paths (C(status.images)); C(metadata.managedFields) is
            always left out.
        type: list
        elements: str
        default: []
      required:
        description: Whether a failure of this read (other than its object or kind not being there) fails the task.
        type: bool
        default: false
      item:
        description: Anything; returned as the read's C(item) (what the read was for).
        type: raw
seealso:
  - module: kubernetes.core.k8s_info
"""

EXAMPLES = r"""
- name: Read the GPU nodes, the cheap EFA nodes and the namespace in one module run
  rlstack.validation.objects_info:
    reads:
      - {kind: Node, label_selectors: [role=gpu-training], hidden_fields: [status.images], required: true}
      - {kind: Node, label_selectors: [role=efa-cheap], hidden_fields: [status.images], required: true}
      - {kind: Namespace, name: gpu-validation, item: namespace}
  register: cluster_reads
"""

RETURN = r"""
reads:
  description: One entry per O(reads), in order, as a loop of M(kubernetes.core.k8s_info) reads.
  returned: success
  type: list
  elements: dict
  contains:
    item:
      description: The read's O(reads[].item) (an empty dict when it had none).
      type: raw
      sample: namespace
    resources:
      description: The objects read (one, or none, for a read by name).
      type: list
      elements: dict
    error:
      description: Empty, or why nothing was read ("not found" for an object or kind that is not there).
      type: str
"""

import copy

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._fanout import pooled_core_api
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._module_end import end, unreachable
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_absent import api_caller
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_info import (
    READ_OPTIONS,
    read_all,
    required_failure,
)

try:
    import kubernetes
except ImportError:  # reported by AnsibleK8SModule
    kubernetes = None


def argspec():
    spec = copy.deepcopy(AUTH_ARG_SPEC)
    spec.update(
        reads=dict(type="list", elements="dict", required=True, options=dict(
            copy.deepcopy(READ_OPTIONS),
            hidden_fields=dict(type="list", elements="str", default=[]),
            required=dict(type="bool", default=False),
        )),
    )
    return spec


def main():
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=True)
    queries = module.params["reads"]

    def call():
        core = pooled_core_api(kubernetes, get_api_client(module=module), 1)
        reads = read_all(api_caller(kubernetes, core.api_client), queries, fatal=unreachable)
        failure = required_failure(queries, reads)
        if failure:
            raise ValueError(failure)
        return {"changed": False, "reads": reads}

    end(module, kubernetes, CoreException, call, "reading the cluster")


if __name__ == "__main__":
    main()
