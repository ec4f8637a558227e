# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a level would create, described once for the real run and for local mode."""

from __future__ import annotations


from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads


def example_jobs(examples, mode, nodes, image, deadline_s, simulator_env=None):
    """The Jobs of L5 (mode train) or L6 (mode eval): one {name, example, job} per example that fits on the
    GPU nodes found (an example needing more nodes than there are gets no Job; its row says why), where job
    is the input of the runner's templates/job.yml.j2."""
    out = []
    for example in examples or []:
        example = dict(example or {})
        if int(example.get("nodes") or 1) > len(nodes or []):
            continue
        out.append({"name": example.get("name", ""), "example": example,
                    "job": _workloads.example_job(example, mode, nodes, image, deadline_s, simulator_env)})
    return out
