# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: example_jobs
author:
  - rlstack.validation maintainers (@rlstack)
version_added: 1.1.0
short_description: The Jobs L5 or L6 would create, one per example that fits on the GPU nodes
description:
  - Describes the Job of each example of C(validation_examples) for L5 (O(mode=train)) or L6 (O(mode=eval)),
    as the input of the runner's C(templates/job.yml.j2).
  - An example that needs more nodes than O(nodes) lists gets no Job (its row of the results table says why).
  - The real run (C(roles/runner/tasks/example_jobs.yml)) and local mode use it, so both describe the same Jobs.
  - Each framework's one-step (L5) and evaluation-only (L6) overrides come from its contract
    (C(plugins/module_utils/_frameworks.py)); an unknown framework or a bad pattern is an error.
positional: mode, nodes, image, deadline_s, simulator_env
options:
  _input:
    description: The examples (C(validation_examples) entries).
    type: list
    elements: dict
    required: true
  mode:
    description: V(train) for one training step (L5), V(eval) for an evaluation-only run (L6).
    type: str
    choices: [train, eval]
    required: true
  nodes:
    description: The GPU nodes found (C(runner_gpu_nodes), dicts with C(node), C(gpus), C(efa)).
    type: list
    elements: dict
    required: true
  image:
    description: The default container image (C(validation_image)).
    type: str
    required: true
  deadline_s:
    description: The Jobs' C(activeDeadlineSeconds).
    type: int
    required: true
  simulator_env:
    description: Environment of the simulator (C(validation_simulator_env)); an example's own C(env) wins.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Describe the L5 Jobs
  ansible.builtin.set_fact:
    l5_jobs: >-
      {{ validation_examples | rlstack.validation.example_jobs('train', runner_gpu_nodes,
           validation_image, 3600) }}
"""

RETURN = r"""
_value:
  description: One C({name, example, job}) per example that fits, in the order given; C(job) is the input of C(job.yml.j2).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _describe
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain as _plain


def example_jobs(examples, mode, nodes, image, deadline_s, simulator_env=None):
    if mode not in ("train", "eval"):
        raise AnsibleFilterError("example_jobs: mode must be 'train' or 'eval', not %r" % (mode,))
    try:
        return _describe.example_jobs(_plain(examples or []), str(mode), _plain(nodes or []), str(image),
                                      int(deadline_s), _plain(simulator_env or {}))
    except ValueError as exc:  # an unknown framework or a bad pattern: one sentence
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    """The example_jobs filter."""

    def filters(self):
        return {"example_jobs": example_jobs}
