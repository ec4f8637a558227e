# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: progress
type: stdout
author:
  - rlstack.validation maintainers (@rlstack)
version_added: 1.1.0
short_description: The default output, with one calm progress line per wait instead of FAILED - RETRYING
description:
  - "Everything ansible.builtin.default prints, except that a retry of an C(until) loop prints one line such as
    C(L3  waiting for the nccl-tests launcher: 42 s of at most 30 min 00 s (2/2 workers running)) instead of
    C(FAILED - RETRYING: ... (899 retries left))."
  - The line is built from the attempt's registered result (the pods a C(kubernetes.core.k8s_info) wait read),
    the task's C(delay) and C(retries), the level the runner started last on that host (the C(runner_level)
    fact), and the wait's own words (the task variable C(runner_progress), else the task name).
  - A line is printed when what it says changes, else at most every O(interval_s) seconds. It is plain text
    (no carriage returns or cursor movement), so it reads the same on a terminal, in CI logs and under AWX.
  - Under AWX, set the environment variable C(ANSIBLE_STDOUT_CALLBACK=rlstack.validation.progress) for the job
    (for example in the execution environment); ansible-runner then builds its C(awx_display) callback on top of
    this one (docs/architecture.md).
  - With C(-vv) or more the original C(FAILED - RETRYING) line with the full result is printed.
extends_documentation_fragment:
  - ansible.builtin.default_callback
  - ansible.builtin.result_format_callback
requirements:
  - set as stdout callback (C(stdout_callback = rlstack.validation.progress) in C(ansible.cfg))
options:
  interval_s:
    description: Seconds between two lines of the same wait when nothing changed.
    type: float
    default: 30
    env:
      - name: RLSTACK_PROGRESS_INTERVAL_S
    ini:
      - section: callback_rlstack_progress
        key: interval_s
"""

EXAMPLES = r"""
# ansible.cfg
# [defaults]
# stdout_callback = rlstack.validation.progress
#
# [callback_rlstack_progress]
# interval_s = 30
"""

import time

from ansible.plugins.callback.default import CallbackModule as DefaultCallbackModule

from ansible_collections.rlstack.validation.plugins.plugin_utils._progress import Throttle, describe, stopped_line

# The task variable a wait sets to say what it waits for, e.g. "the nccl-tests launcher".
PROGRESS_VAR = "runner_progress"
# The fact roles/runner/tasks/level_start.yml sets: {id, level, name, order, started}.
LEVEL_FACT = "runner_level"


class CallbackModule(DefaultCallbackModule):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "rlstack.validation.progress"

    def __init__(self):
        super().__init__()
        self._started = {}
        self._levels = {}
        self._hosts = set()
        self._throttle = None
        self._waiting = {}

    def _interval(self):
        if self._throttle is None:
            try:
                interval = self.get_option("interval_s")
            except KeyError:
                interval = None
            self._throttle = Throttle(30.0 if interval is None else float(interval))
        return self._throttle

    def v2_runner_on_start(self, host, task):
        name = host.get_name()
        self._hosts.add(name)
        self._started[(name, task._uuid)] = time.time()
        super().v2_runner_on_start(host, task)

    def _task_done(self, result):
        key = (result.host.get_name(), result.task._uuid)
        started = self._started.pop(key, None)
        self._interval().forget(key)
        waiting = self._waiting.pop(key, None)
        return waiting, started

    def v2_runner_on_ok(self, result):
        level = (result.result.get("ansible_facts") or {}).get(LEVEL_FACT)
        if isinstance(level, dict) and level.get("level"):
            self._levels[result.host.get_name()] = str(level["level"])
        waiting, started = self._task_done(result)
        if waiting and result.result.get("failed_when_result") is False and result.result.get("exception"):
            # A wait that ran out of retries (failed_when: false) carries Ansible's "Unknown error": that is
            # the bound being reached, which the level judges, not an error of the task.
            result.result.pop("exception", None)
            self._display.display(stopped_line(waiting[1], waiting[0], time.time() - (started or time.time())))
        super().v2_runner_on_ok(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._task_done(result)
        super().v2_runner_on_failed(result, ignore_errors=ignore_errors)

    def v2_runner_retry(self, result):
        if self._run_is_verbose(result, verbosity=2):
            super().v2_runner_retry(result)
            return
        host = result.host.get_name()
        task = result.task
        key = (host, task._uuid)
        now = time.time()
        started = self._started.get(key)
        delay = (result.task_fields or {}).get("delay")
        if delay in (None, ""):
            delay = getattr(task, "delay", None)
        what = (task.vars or {}).get(PROGRESS_VAR) if isinstance(task.vars, dict) else None
        if not isinstance(what, str) or "{{" in what or not what.strip():
            what = '"%s"' % (result.task_name or task.get_name()).strip()
        try:
            line, detail = describe(result.result, what.strip(), self._levels.get(host, ""),
                                    None if started is None else now - started, delay)
        except (TypeError, ValueError):
            super().v2_runner_retry(result)
            return
        self._waiting[key] = (what.strip(), self._levels.get(host, ""))
        if not self._interval().due(key, detail, now):
            return
        if len(self._hosts) > 1:
            line = "[%s] %s" % (host, line)
        self._display.display(line)
