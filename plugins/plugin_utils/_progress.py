# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""Progress lines for the bounded waits of the runner (controller only; used by the progress callback).

A wait in ``roles/runner`` is a ``kubernetes.core.k8s_info`` task with ``until``/``retries``/``delay``. On each
retry the stdout callback ``rlstack.validation.progress`` turns the registered result of that attempt into one
calm line instead of Ansible's ``FAILED - RETRYING``::

    L3    waiting for the nccl-tests launcher: 42 s of at most 1800 s (2/2 workers running, launcher not created yet)

Standard library only. See docs/architecture.md ("Progress of a wait").
"""

from __future__ import annotations

ROLE_LABEL = "training.kubeflow.org/job-role"
COMPONENT_LABEL = "app.kubernetes.io/component"
# Waiting reasons worth naming while a pod is Pending (a 15-20 GB image pull shows as ContainerCreating).
_PLURALS = {"launcher": "launchers", "worker": "workers", "probe": "probe pods", "job": "Job pods", "pod": "pods"}
_SINGULARS = {"probe": "probe pod", "job": "Job pod"}


def _group(pod):
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return labels.get(ROLE_LABEL) or labels.get(COMPONENT_LABEL) or "pod"


def _waiting_reason(pod):
    status = pod.get("status") or {}
    for cstatus in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        reason = ((cstatus.get("state") or {}).get("waiting") or {}).get("reason")
        if reason:
            return reason
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return cond.get("reason") or "not scheduled"
    return ""


def _name(group, count):
    if count == 1:
        return _SINGULARS.get(group, group)
    return _PLURALS.get(group, group + "s")


def pods_progress(pods):
    """What a list of pods (as k8s_info returns them) is doing, in a few words per kind of pod.

    ``[2 Running workers]`` -> ``2/2 workers running``; an MPIJob whose workers exist but whose launcher does
    not yet (``launcherCreationPolicy: WaitForWorkersReady``) adds ``launcher not created yet``.
    """
    groups = {}
    for pod in pods or []:
        if isinstance(pod, dict):
            groups.setdefault(_group(pod), []).append(pod)
    if not groups:
        return "no pods yet"
    parts = []
    order = sorted(groups, key=lambda g: (g != "worker", g != "launcher", g))
    for group in order:
        members = groups[group]
        phases = {}
        reasons = {}
        for pod in members:
            phase = (pod.get("status") or {}).get("phase") or "Pending"
            phases[phase] = phases.get(phase, 0) + 1
            if phase == "Pending":
                reason = _waiting_reason(pod)
                if reason:
                    reasons[reason] = reasons.get(reason, 0) + 1
        total = len(members)
        if group == "launcher" and total == 1:
            phase = next(iter(phases))
            text = "launcher %s" % {"Running": "running", "Succeeded": "finished", "Failed": "failed"}.get(
                phase, "pending")
        else:
            text = "%d/%d %s running" % (phases.get("Running", 0), total, _name(group, total))
            for phase in ("Succeeded", "Failed", "Pending", "Unknown"):
                if phases.get(phase):
                    text += ", %d %s" % (phases[phase], {"Succeeded": "finished"}.get(phase, phase.lower()))
        if reasons:
            text += " (%s)" % ", ".join("%d %s" % (n, r) if n > 1 else r for r, n in sorted(reasons.items()))
        parts.append(text)
    if "worker" in groups and "launcher" not in groups:
        parts.append("launcher not created yet")
    return ", ".join(parts)


def seconds(value):
    """Whole seconds for a person: 42 s, 4 min 05 s, 1 h 02 min."""
    value = max(int(round(float(value or 0))), 0)
    if value < 120:
        return "%d s" % value
    if value < 3600:
        return "%d min %02d s" % (value // 60, value % 60)
    return "%d h %02d min" % (value // 3600, (value % 3600) // 60)


LEVEL_WIDTH = 6


def level_column(level):
    """The level, padded so that the text after it lines up: 'L3    ', 'L3.5  ' (nothing without a level)."""
    return ("%s  " % level).ljust(LEVEL_WIDTH) if level else ""


def progress_line(level, what, elapsed_s, bound_s, detail=""):
    """``L3    waiting for the nccl-tests launcher: 42 s of at most 1800 s (2/2 workers running)``."""
    head = level_column(level)
    text = "%swaiting for %s: %s" % (head, what, seconds(elapsed_s))
    if bound_s:
        text += " of at most %s" % seconds(bound_s)
    if detail:
        text += " (%s)" % detail
    return text


def describe(result, what="", level="", elapsed_s=None, delay_s=None):
    """The progress line for one retry of a wait: ``result`` is the attempt's registered result (with
    ``attempts`` and ``retries`` as Ansible adds them), ``what`` the wait's own words (or the task name)."""
    result = result if isinstance(result, dict) else {}
    attempts = int(result.get("attempts") or 1)
    retries = int(result.get("retries") or 0)
    delay = float(delay_s) if delay_s not in (None, "") else 0.0
    if elapsed_s is None:
        elapsed_s = attempts * delay
    # Ansible reports retries as the number of attempts (the task's retries + 1), with a delay between two; a wait
    # module that itself waits up to step_s per attempt (rlstack.validation.probe_run) adds that to each.
    step = float(result.get("step_s") or 0)
    bound = max(retries - 1, 0) * (delay + step) if delay or step else 0
    if isinstance(result.get("resources"), list):
        detail = pods_progress(result["resources"])
    else:
        detail = "attempt %d of %d" % (attempts, retries) if retries else ""
    return progress_line(level, what, elapsed_s, bound, detail), detail


def stopped_line(level, what, elapsed_s):
    """The wait reached its bound: said once, calmly; the level then judges what it saw."""
    head = level_column(level)
    return "%sstopped waiting for %s after %s (its bound); the level reports what it saw" % (
        head, what, seconds(elapsed_s))


class Throttle:
    """Print a wait's line when what it says changes, else at most every ``interval_s`` seconds."""

    def __init__(self, interval_s=30.0):
        self.interval_s = float(interval_s)
        self._last = {}

    def due(self, key, detail, now):
        previous = self._last.get(key)
        if previous is None or previous[1] != detail or now - previous[0] >= self.interval_s:
            self._last[key] = (now, detail)
            return True
        return False

    def forget(self, key):
        self._last.pop(key, None)
