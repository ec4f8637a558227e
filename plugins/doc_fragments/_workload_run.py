# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment:
    """The options job_run and mpijob_run share (their argument spec: _job_run.workload_options())."""

    DOCUMENTATION = r"""
options:
  lease:
    description: The run's anchor Job and its new C(activeDeadlineSeconds), set before anything is created.
    type: dict
    suboptions:
      job:
        description: The anchor Job's name.
        type: str
        required: true
      active_deadline_s:
        description: Its new deadline, in seconds from its start.
        type: int
        required: true
  wait:
    description: Whether to wait after the start. V(false) only creates the objects (Kueue admits them before the wait).
    type: bool
    default: true
  deadline_at:
    description: When the wait ends at the latest (seconds since the epoch); the attempt that reaches it reads the outcome.
    type: float
    default: 0
  step_s:
    description: Seconds one attempt waits at most (the progress line's step).
    type: int
    default: 30
  poll_s:
    description: Seconds between the reads the wait makes besides its watch of the pods (head pods' logs, the MPIJob).
    type: float
    default: 2
  grace_s:
    description: Seconds a pod may stay Pending with a problem (or an operator not act) before the wait ends on it.
    type: float
    default: 45
  workloads:
    description: Kueue's Workloads, when a queue admits the workload (their reason when one stays suspended).
    type: list
    elements: dict
  record_wait_s:
    description:
      - Seconds the end gives the workload's controller (the Job controller, the MPI operator) to record the outcome
        before the finished pods are the outcome.
    type: int
    default: 10
  request_timeout_s:
    description: Seconds the watch may stay silent before the pods are listed again.
    type: int
    default: 5
  concurrency:
    description: Log reads in flight at most.
    type: int
    default: 16
  read_deadline_s:
    description: Seconds all log reads together may take.
    type: int
    default: 120
  limit_bytes:
    description: Bytes read of each log at most.
    type: int
    default: 4194304
  delete_after:
    description:
      - Whether the attempt that reads the outcome then deletes what the start created (in reverse order) and the pods
        O(label_selectors) pick, and waits until no pod is listed (RV(left_nothing)). Without, they stay for the
        level's cleanup.
    type: bool
    default: false
"""
