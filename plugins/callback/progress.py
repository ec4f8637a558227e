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
short_description: The run as a person reads it - one line per level, its waits, its verdict; -v for every task
description:
  - "By default prints, per cluster, one line when a level starts (what it is about to create), a line now and
    then while it waits (for example C(L3    waiting for the nccl-tests launcher: 42 s of at most 30 min 00 s
    (2/2 workers running))), and one line when it ends (its verdict, its duration, and for a failure the first
    failed check with its node and hint, and up to 3 lines of the check's log excerpt). The report callback
    C(rlstack.validation.report) then prints the VALIDATION RESULTS table and its footer. No task banners."
  - A C(ansible.builtin.debug) task's message (what could not be cleaned up, what bad-node isolation costs, local
    mode's findings) is printed as it is, without the task frame.
  - A task error that stops the play (a bad setting, a cluster that cannot be reached) is one line naming the
    cluster, with the error's own sentence, and no task frame. An error inside a level is recorded by the level
    and shown on its end line.
  - With C(-v) or more, or O(tasks) true, everything C(ansible.builtin.default) prints is printed as well (task
    banners, results), with the wait lines instead of C(FAILED - RETRYING) (with C(-vv) the original retry line).
  - When the inventory has more than one cluster, each line starts with C([<cluster>]).
  - Plain text, one line at a time (no carriage returns or cursor movement); colour only on a terminal, never
    with C(NO_COLOR) or C(ANSIBLE_NOCOLOR) set (Ansible's own colour rules).
  - Under AWX, set the environment variable C(ANSIBLE_STDOUT_CALLBACK=rlstack.validation.progress) for the job
    (for example in the execution environment); ansible-runner then builds its C(awx_display) callback on top of
    this one (docs/awx.md).
  - The logic is C(plugins/plugin_utils/_console.py); docs/console.md shows a run.
extends_documentation_fragment:
  - ansible.builtin.default_callback
  - ansible.builtin.result_format_callback
requirements:
  - set as stdout callback (C(stdout_callback = rlstack.validation.progress) in C(ansible.cfg))
options:
  interval_s:
    description: Seconds between two lines of the same wait.
    type: float
    default: 30
    env:
      - name: RLSTACK_PROGRESS_INTERVAL_S
    ini:
      - section: callback_rlstack_progress
        key: interval_s
  first_after_s:
    description: A wait prints its first line once it has lasted this long (shorter waits print nothing).
    type: float
    default: 10
    version_added: 1.2.0
    env:
      - name: RLSTACK_PROGRESS_FIRST_AFTER_S
    ini:
      - section: callback_rlstack_progress
        key: first_after_s
  tasks:
    description: Print every task as C(ansible.builtin.default) does (as C(-v) does), with the level lines.
    type: bool
    default: false
    version_added: 1.2.0
    env:
      - name: RLSTACK_CONSOLE_TASKS
    ini:
      - section: callback_rlstack_progress
        key: tasks
"""

EXAMPLES = r"""
# ansible.cfg
# [defaults]
# stdout_callback = rlstack.validation.progress
#
# [callback_rlstack_progress]
# interval_s = 30
# tasks = false          # true (or RLSTACK_CONSOLE_TASKS=true, or -v) prints every task as well
"""

from collections.abc import Mapping
import re
import time

from ansible import constants as C
from ansible.plugins.callback.default import CallbackModule as DefaultCallbackModule

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._report import wrap_line
from ansible_collections.rlstack.validation.plugins.plugin_utils._console import Console, error_message, terminal_width

# The task variable a wait sets to say what it waits for, e.g. "the nccl-tests launcher".
PROGRESS_VAR = "runner_progress"
# A task whose failure the results table already tells (finish_run.yml's "a level failed") sets it.
QUIET_VAR = "runner_progress_quiet"
# The facts of roles/runner: a level starts (level_start.yml), a level ends (level.yml decides runner_stop),
# the Phase 0 gate settles (finish_level.yml, with Phase 0's verdict).
LEVEL_FACT = "runner_level"
_COLORS = {"PASS": C.COLOR_OK, "FAIL": C.COLOR_ERROR, "SKIPPED": C.COLOR_SKIP, "WAIT": None}


# The results the quiet console reads (_level_lines, _says): level_assert's verdicts, a debug message, and the set_fact
# tasks of the facts above. Reading any other result makes ansible-core 2.19 convert the whole of it for the callbacks
# (executor/task_result.py, CallbackTaskResult.result): at 256 nodes the probe's pods and logs or the node list,
# about a second of the controller's CPU per level for nothing (docs/fleet-scale.md, "Per-node data").
_SPOKEN_FACTS = frozenset((LEVEL_FACT, "runner_phase0_gate", "runner_stop"))


def _may_speak(task):
    """Whether the quiet console may have something to say about a result of `task` (judged by its action and its
    arguments' names, without reading the result)."""
    action = (getattr(task, "action", "") or "").rpartition(".")[2]
    if action in ("level_assert", "debug"):
        return True
    args = getattr(task, "args", None) or {}
    return action == "set_fact" and not _SPOKEN_FACTS.isdisjoint(args)


def _says(result):
    """A debug task's message is for the person: the quiet console prints it (without the task frame). A loop of
    them speaks through its items; the loop's own result says only "All items completed"."""
    action = getattr(result.task, "action", "") or ""
    returned = _returned(result) or {}
    return action.rpartition(".")[2] == "debug" and "msg" in returned and "results" not in returned


def _returned(result):
    """What the task returned, to read a few keys of: ansible-core 2.19's `result` property first copies the whole
    result into native types, every value (level_assert's carries each check of its level: 1.3 s of the controller
    at 32,772 checks, docs/fleet-scale.md), so the data it was made from is read where the result has it."""
    data = getattr(result, "_return_data", None)
    return data if isinstance(data, Mapping) else result.result


def _task_var(task, name):
    variables = getattr(task, "vars", None)
    return variables.get(name) if isinstance(variables, dict) else None


class CallbackModule(DefaultCallbackModule):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "rlstack.validation.progress"

    def __init__(self):
        super().__init__()
        self._started = {}
        self._waiting = {}
        self._gate_said = {}  # the Phase 0 gate's line per host, said once the level that settled it has its line
        self._console = None
        self._full = None

    # ------------------------------------------------------------------------------------------ settings
    def _option(self, name, default):
        try:
            value = self.get_option(name)
        except KeyError:
            value = None
        return default if value is None else value

    def _con(self):
        if self._console is None:
            self._console = Console(float(self._option("interval_s", 30.0)),
                                    float(self._option("first_after_s", 10.0)))
        return self._console

    def _stream(self):
        """Whether the whole Ansible stream is printed (-v, or the tasks option)."""
        if self._full is None:
            self._full = self._display.verbosity >= 1 or bool(self._option("tasks", False))
        return self._full

    def _show(self, lines):
        # on a terminal a longer line is wrapped at a space to its width, continued after the level column ("L3    ");
        # piped (CI logs) and under AWX, lines stay whole
        width = terminal_width()
        for text, kind in lines:
            column = re.match(r"L[0-9.]+ +", text)
            for part in wrap_line(text, width, " " * column.end() if column else None):
                self._display.display(part, color=_COLORS.get(kind))

    # ------------------------------------------------------------------------- what the quiet console hides
    def v2_playbook_on_play_start(self, play):
        if self._stream():
            super().v2_playbook_on_play_start(play)

    def v2_playbook_on_task_start(self, task, is_conditional):
        if self._stream():
            super().v2_playbook_on_task_start(task, is_conditional)

    def v2_playbook_on_handler_task_start(self, task):
        if self._stream():
            super().v2_playbook_on_handler_task_start(task)

    def v2_playbook_on_cleanup_task_start(self, task):
        if self._stream():
            super().v2_playbook_on_cleanup_task_start(task)

    def v2_playbook_on_include(self, included_file):
        if self._stream():
            super().v2_playbook_on_include(included_file)

    def v2_runner_on_skipped(self, result):
        if self._stream():
            super().v2_runner_on_skipped(result)

    def v2_runner_item_on_ok(self, result):
        if self._stream():
            super().v2_runner_item_on_ok(result)
        elif _says(result):
            self._show(self._con().message(result.host.get_name(), result.result["msg"]))

    def v2_runner_item_on_skipped(self, result):
        if self._stream():
            super().v2_runner_item_on_skipped(result)

    def v2_runner_item_on_failed(self, result):
        if self._stream():
            super().v2_runner_item_on_failed(result)

    def v2_playbook_on_stats(self, stats):
        self._show(self._con().finish(time.time()) + [self._gate_said.pop(h) for h in list(self._gate_said)])
        if self._stream():
            super().v2_playbook_on_stats(stats)

    # ----------------------------------------------------------------------------------------- the levels
    def v2_runner_on_start(self, host, task):
        name = host.get_name()
        self._con().host_seen(name)
        self._started[(name, task._uuid)] = time.time()
        super().v2_runner_on_start(host, task)

    def _task_done(self, result):
        key = (result.host.get_name(), result.task._uuid)
        started = self._started.pop(key, None)
        self._con().wait_done(key)
        return self._waiting.pop(key, None), started

    def v2_runner_on_ok(self, result):
        host = result.host.get_name()
        now = time.time()
        waiting, started = self._task_done(result)
        if waiting and getattr(result.task, "failed_when", None) and result.result.get("failed_when_result") is False \
                and result.result.get("exception"):
            # A wait that ran out of retries (failed_when: false) carries Ansible's "Unknown error": that is
            # the bound being reached, which the level judges, not an error of the task.
            result.result.pop("exception", None)
            self._show(self._con().wait_stopped(host, None, waiting[0], waiting[1], now - (started or now)))
        if not self._stream() and not _may_speak(result.task):
            return
        self._show(self._level_lines(host, _returned(result), now))
        if self._stream():
            super().v2_runner_on_ok(result)
        elif _says(result):
            self._show(self._con().message(host, _returned(result)["msg"]))

    def _level_lines(self, host, res, now):
        con = self._con()
        facts = res.get("ansible_facts") or {}
        lines = []
        if isinstance(facts.get(LEVEL_FACT), dict) and "runner_level_gpu" in facts:
            lines += con.level_started(host, facts[LEVEL_FACT], now)
        # level_assert's verdict of each row it judged (the examples of L5/L6, tasks/finish_level.yml), or of a loop's
        rows = res.get("rows") if isinstance(res.get("rows"), list) else [res] + list(res.get("results") or [])
        for judged in [r for r in rows if isinstance(r, dict)]:
            if isinstance(judged.get("verdict"), dict) and judged["verdict"].get("status"):
                lines += con.verdict(host, judged["verdict"], now)
        # Phase 0 in this run stopped the expensive levels (its verdict settles the gate): said right after Phase 0's
        # own line (a pass is the footer's line)
        gate = facts.get("runner_phase0_gate")
        if isinstance(gate, dict) and gate.get("action") == "fail" and gate.get("reason") == "same_run_failed":
            self._gate_said[host] = ("Phase 0 gate: %s" % gate.get("message"), "FAIL")
        if "runner_stop" in facts and con.level_of(host):
            lines += con.level_done(host, now)
        if "runner_stop" in facts or not con.level_of(host):
            lines += [self._gate_said.pop(host)] if host in self._gate_said else []
        return lines

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._task_done(result)
        if self._stream():
            super().v2_runner_on_failed(result, ignore_errors=ignore_errors)
            return
        if ignore_errors or _task_var(result.task, QUIET_VAR):
            return
        self._show(self._con().failed(result.host.get_name(), error_message(result.result)))

    def v2_runner_on_unreachable(self, result):
        self._task_done(result)
        if self._stream():
            super().v2_runner_on_unreachable(result)
            return
        self._show(self._con().unreachable(result.host.get_name(), error_message(result.result)))

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
        what = _task_var(task, PROGRESS_VAR)
        if not isinstance(what, str) or "{{" in what or not what.strip():
            what = '"%s"' % (result.task_name or task.get_name()).strip()
        con = self._con()
        try:
            lines = con.wait(host, key, result.result, what.strip(), None if started is None else now - started,
                             delay, now, every_change=self._stream())
        except (TypeError, ValueError):
            super().v2_runner_retry(result)
            return
        self._waiting[key] = (what.strip(), con.level_of(host))
        self._show(lines)
