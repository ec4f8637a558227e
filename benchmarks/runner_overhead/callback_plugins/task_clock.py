# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark-only callback (benchmarks/runner_overhead/run.py enables it): one JSON line per task start, with
the wall time, the CPU seconds ansible-playbook and its reaped workers and modules used so far (cpu: the next
line's minus this one's is about the task's own), and the roles the task sits in (outermost first), into
$TASK_CLOCK_FILE."""
from __future__ import annotations

import json
import os
import resource
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
    name: task_clock
    type: aggregate
    short_description: time stamp of every task start (benchmark only)
    description: Writes one JSON line per task start to the file named by TASK_CLOCK_FILE.
"""


def _roles(task):
    names = []
    node = task
    while node is not None:
        role = getattr(node, "_role", None)
        if role is not None:
            name = role.get_name(include_role_fqcn=False)
            if not names or names[-1] != name:
                names.append(name)
        node = getattr(node, "_parent", None)
    return list(reversed(names))


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_clock"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self._out = open(os.environ["TASK_CLOCK_FILE"], "a", encoding="utf-8")  # pylint: disable=consider-using-with

    def _write(self, **record):
        used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        cpu = sum(u.ru_utime + u.ru_stime for u in used)
        self._out.write(json.dumps(dict(record, t=time.time(), cpu=round(cpu, 3))) + "\n")
        self._out.flush()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._write(event="task", name=task.get_name(), roles=_roles(task))

    def v2_playbook_on_stats(self, stats):
        self._write(event="end")
