# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The run as a person reads it (controller only; the stdout callback rlstack.validation.progress is its shell).

Per cluster: one line when a level starts (what it is about to create), a line now and then while it waits (what
for, how long of its bound, the pods), one line when it ends (verdict, duration, the first failed check with its
node and hint, and up to 3 lines of its log excerpt), and one sentence for an error that stops the play. The
VALIDATION RESULTS table and its footer come from the report callback. Each method returns (line, kind) pairs;
kind is PASS, FAIL, SKIPPED, WAIT or None, which the callback maps to a colour (only on a terminal).

Standard library only. See docs/console.md.
"""

from __future__ import annotations

import os
import re
import shutil
import sys

from ansible_collections.rlstack.validation.plugins.module_utils import _levels
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._report import also_failed_text, failed_groups
from ansible_collections.rlstack.validation.plugins.plugin_utils._progress import LEVEL_WIDTH, Throttle, describe, \
    level_column, seconds, stopped_line

# What a level creates, by the kinds of objects of the registry's `local` field.
_CREATES = {"probe_pod": "probe pods on the GPU nodes", "mpijob": "an nccl-tests MPIJob", "job": "a Job per example"}
EXCERPT_LINES = 3
# Rows that are not a level's: they start and end on one line at their verdict.
ONE_LINE_ROWS = _levels.DIAGNOSTIC_ROWS + ("phase0_gate",)


def terminal_width():
    """The columns of the terminal the console prints to, or None (piped: a CI log; or under ansible-runner, whose pty
    is no one's terminal: AWX shows the events' text in its own page), where lines stay whole."""
    if os.environ.get("AWX_ISOLATED_DATA_DIR") or not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def _what_it_creates(level_id):
    try:
        kinds = _levels.by_id(level_id)["local"]
    except KeyError:
        return ""
    return ", then ".join(_CREATES.get(k, k) for k in kinds)


def _gpu_minutes(verdict):
    usage = verdict.get("gpu")
    usage = usage if isinstance(usage, list) else [usage]
    return sum(float(u.get("gpu_minutes") or 0.0) for u in usage if isinstance(u, dict))


class _Level:
    def __init__(self, info, started):
        self.info = info
        self.started = started
        self.rows = []


class Console:
    """State of one run's console: which level each cluster runs, its rows' verdicts, the waits' throttle."""

    def __init__(self, interval_s=30.0, first_after_s=10.0):
        self.first_after_s = float(first_after_s)
        self._throttle = Throttle(interval_s)
        self._hosts = []
        self._levels = {}
        self._held = {}
        # the last failure said for each cluster: a rescue that fails the play with the sentence of the failure it
        # rescued (the plan's, for an API server that does not answer) says nothing new
        self._last_failure = {}

    # ---------------------------------------------------------------------------------------------- helpers
    def host_seen(self, host):
        if host not in self._hosts:
            self._hosts.append(host)

    def _named(self, host, lines):
        if len(self._hosts) > 1:
            return [("[%s] %s" % (host, text), kind) for text, kind in lines]
        return lines

    def level_of(self, host):
        level = self._levels.get(host)
        return level.info.get("level", "") if level else ""

    # ------------------------------------------------------------------------------------------ the levels
    def level_started(self, host, info, now):
        """runner_level as tasks/level_start.yml sets it. A level's own row starts it; its per-example rows (L5)
        and a rescued row belong to the level already running."""
        if not isinstance(info, dict) or not info.get("id"):
            return []
        level_id = str(info["id"])
        current = self._levels.get(host)
        if current and _levels.row_level(level_id) == _levels.row_level(current.info.get("id")):
            return []
        lines = self.level_done(host, now) if current else []  # a level that ended without runner_stop
        self._levels[host] = _Level(info, float(info.get("started") or now))
        if level_id in ONE_LINE_ROWS:
            return lines
        creates = _what_it_creates(level_id)
        text = "%s%s: starting%s" % (level_column(info.get("level", "")), info.get("name", level_id),
                                     " (%s)" % creates if creates else "")
        # what the level says before it starts (L0: how long the DCGM diagnostic holds the GPUs)
        notice = [(" " * LEVEL_WIDTH + str(info["notice"]), None)] if info.get("notice") else []
        return lines + self._named(host, [(text, None)] + notice)

    def verdict(self, host, verdict, now):
        """A row's verdict (level_assert's). A diagnostic row (Baseline, the Phase 0 gate) ends at once."""
        if not isinstance(verdict, dict):
            return []
        level = self._levels.get(host)
        if level is None:
            level = self._levels[host] = _Level(dict(verdict), now)
        level.rows.append(verdict)
        if str(verdict.get("id")) in ONE_LINE_ROWS:
            return self.level_done(host, now)
        return []

    def level_done(self, host, now):
        """The level's last task ran (runner_stop decided): one line for the level, its first failure under it."""
        level = self._levels.pop(host, None)
        self._held.pop(host, None)  # a failed task of the level: its verdict says it (tasks/level_failed.yml)
        if level is None or not level.rows:
            return []
        rows = level.rows
        statuses = [str(r.get("status") or "FAIL").upper() for r in rows]
        status = "FAIL" if "FAIL" in statuses else ("PASS" if "PASS" in statuses else "SKIPPED")
        info = level.info
        # the rows' own durations, as the table shows them (a level's rows run side by side), else the wall time
        durations = [float(r["duration_s"]) for r in rows if isinstance(r.get("duration_s"), (int, float))]
        head = "%s%s: %s in %s" % (level_column(info.get("level", "")), info.get("name", ""), status,
                                   seconds(max(durations) if durations else now - level.started))
        notes = []
        if len(rows) > 1:
            failed = statuses.count("FAIL")
            notes.append("%d of %d examples failed" % (failed, len(rows)) if failed
                         else "%d/%d examples passed" % (statuses.count("PASS"), len(rows)))
        elif status == "PASS" and (rows[0].get("summary") or {}).get("total"):
            notes.append("%d checks" % rows[0]["summary"]["total"])
        elif status == "SKIPPED" and rows[0].get("reason"):
            notes.append(str(rows[0]["reason"]))
        minutes = sum(_gpu_minutes(r) for r in rows)
        if minutes >= 0.05:  # what rounds to 0.0 says nothing
            notes.append("%.1f GPU-min" % minutes)
        lines = [(head + (" (%s)" % ", ".join(notes) if notes else ""), status)]
        for row in rows:
            groups = failed_groups(row.get("checks")) if str(row.get("status")).upper() == "FAIL" else []
            if not groups:
                continue
            lines.extend(self._failure_lines(row, groups[0], len(rows) > 1))
            break
        return self._named(host, lines)

    @staticmethod
    def _failure_lines(row, group, name_row):
        """The first failed check of `row` (its node, message and fix, and the other nodes where it failed too)."""
        check, others = group
        indent = " " * LEVEL_WIDTH
        where = check.get("node") or "cluster"
        if name_row:
            where = "%s on %s" % (str(row.get("name") or row.get("id")), where)
        lines = [("%s%s: %s" % (indent, where, check.get("message") or check.get("name")), "FAIL")]
        if others:
            lines.append(("%s  %s" % (indent, also_failed_text(check, others)), "FAIL"))
        if check.get("hint"):
            lines.append(("%s-> %s" % (indent, check["hint"]), "FAIL"))
        excerpt = check.get("excerpt")
        if isinstance(excerpt, list):
            lines.extend(("%s| %s" % (indent, str(text).rstrip()), "FAIL") for text in excerpt[-EXCERPT_LINES:])
        return lines

    # ----------------------------------------------------------------------------------------------- waits
    def wait(self, host, key, result, what, elapsed_s, delay_s, now, every_change=False):
        """One retry of a bounded wait. Quiet: the first line after first_after_s, then every interval_s; with
        every_change (the full stream) also whenever what it says changes."""
        line, detail = describe(result, what, self.level_of(host), elapsed_s, delay_s)
        minutes = (result or {}).get("gpu_minutes") if isinstance(result, dict) else None
        if minutes:
            line += ", %.1f GPU-min so far" % float(minutes)
        if every_change:
            due = self._throttle.due(key, detail, now)
        elif elapsed_s is not None and elapsed_s < self.first_after_s:
            due = False
        else:
            due = self._throttle.due(key, "", now)
        return self._named(host, [(line, "WAIT")]) if due else []

    def wait_stopped(self, host, key, what, level, elapsed_s):
        self._throttle.forget(key)
        return self._named(host, [(stopped_line(level, what, elapsed_s), "WAIT")])

    def wait_done(self, key):
        self._throttle.forget(key)

    def message(self, host, msg):
        """What a debug task says to the person (cleanup problems, what isolation costs, local mode's findings):
        its msg, a line per line, without the task's frame."""
        parts = msg if isinstance(msg, list) else str(msg if msg is not None else "").splitlines()
        return self._named(host, [(str(part).rstrip(), None) for part in parts if str(part).strip()])

    # ---------------------------------------------------------------------------------------------- errors
    def failed(self, host, message):
        """A task failed (not ignored). Inside a level the level's verdict records it (its rescue), so the line
        is held and dropped when the level ends; elsewhere it stops the play: one sentence, now, and not again when
        the next failure of that cluster says the same (a rescue failing the play with the rescued sentence)."""
        text = " ".join(str(message or "failed").split()) if "\n" not in str(message or "") else str(message)
        lines = [("%s: %s" % (host, part.strip()), "FAIL") for part in text.splitlines() if part.strip()]
        if host in self._levels:
            self._held.setdefault(host, []).extend(lines)
            return []
        if self._last_failure.get(host) == lines:
            return []
        self._last_failure[host] = lines
        return lines

    def unreachable(self, host, message):
        return [("%s: cannot reach the cluster: %s" % (host, " ".join(str(message or "").split())), "FAIL")]

    def finish(self, now):
        """At the end of the run: levels that ended without runner_stop (local mode's rows), and failures that no
        level recorded (the play stopped inside a level)."""
        out = []
        for host in list(self._levels):
            held = self._held.pop(host, [])
            out.extend(self.level_done(host, now) + held)
        for host in list(self._held):
            out.extend(self._held.pop(host))
        return out


# How ansible-core 2.19 frames what a filter or lookup of a task's arguments raised: "Task failed: Finalization of
# task args for 'ansible.builtin.set_fact' failed: Error while resolving value for 'runner_survey': The filter plugin
# 'rlstack.validation.validation_survey' failed: <the plugin's sentence>". This collection's plugins raise one sentence
# for the user (a survey answer that names no level); the framing before it is Ansible's plumbing.
_OWN_PLUGIN_FRAMING = re.compile(r"^Task failed: .*?The (?:filter|lookup|test) plugin 'rlstack\.validation\.\w+' failed: ",
                                 re.S)


def error_message(result):
    """The sentence of a failed task's result: its msg, else the module's stderr, without Ansible's framing. A loop's
    result says only "One or more items failed": its failed items' sentences instead, a line each."""
    result = result if isinstance(result, dict) else {}
    items = [item for item in result.get("results") or [] if isinstance(item, dict) and item.get("failed")]
    if items:
        return "\n".join(" ".join(error_message(item).split()) for item in items)
    msg = result.get("msg") or result.get("module_stderr") or result.get("stderr") or "the task failed"
    return _OWN_PLUGIN_FRAMING.sub("", str(msg).strip(), count=1)
