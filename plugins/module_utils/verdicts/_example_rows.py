# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rows of L5 and L6, one per example, judged on its own Job (the filter rlstack.validation.example_rows; the
runner's tasks/example_jobs.yml records them in one level_assert call, its rows). Standard library only.

Each example is judged by its framework's contract (_frameworks.py) with its own markers and patterns
(_checks.log_checks for a training step, _checks.l6_checks for an evaluation), a multi-node one also on where its
pods ran and the cluster its framework saw (_checks.placement_checks), and counts the GPU time of every pod of its
Job (_cost.gpu_usage)."""

from __future__ import annotations

import time

from ansible_collections.rlstack.validation.plugins.module_utils.fleet import _cost
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads


def _count(value, default=1):
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return default


def skip_reason(example, gpu_nodes, node_selector, check_mode):
    """Why an example is not run: check mode, or fewer matching GPU nodes than it needs; '' when it runs."""
    if check_mode:
        return "check mode: no Jobs are started"
    needs = _count(example.get("nodes"))
    if needs > len(gpu_nodes):
        return "needs %d GPU nodes, the cluster has %d matching %s" % (needs, len(gpu_nodes), node_selector)
    return ""


def judgement(example, mode, job, run, error_patterns, floor):
    """What the example's log is judged against: its framework's contract with its own markers and patterns, and
    for a multi-node example the pods and Scheduled events that say where it ran."""
    evaluation = example.get("evaluation") or {}
    judge = {"nodes": _count(example.get("nodes")), "job": job, "pods": run.get("resources") or [],
             "scheduled": run.get("scheduled") or [], "framework": example.get("framework") or "custom",
             "mode": mode, "launched": _workloads.example_job(example, mode, [], "", 0)["launched"],
             "success_markers": example.get("success_markers") or [], "pattern": evaluation.get("pattern") or "",
             "error_patterns": list(error_patterns or [])}
    if mode == "eval":
        judge.update(floor=float(evaluation.get("floor", floor)), floors=evaluation.get("floors") or {})
    return judge


def checks(result, judge):
    """The checks of one example's Job result ({state, log, log_error}) under `judge`."""
    expect = dict(judge, log_error=result.get("log_error"))
    log = result.get("log") or ""
    judged = (_checks.l6_checks if judge["mode"] == "eval" else _checks.log_checks)(log, result.get("state"), "", expect)
    return judged + _checks.placement_checks(log, "", expect)


def example_rows(examples, context, now=time.time):
    """One row per example: [{id, name, checks, skip_reason, attach: {gpu}}], the rows of level_assert that
    tasks/finish_level.yml passes.

    context: {level: the level's registry row ({id, name}), mode: train | eval, floor (L6's default success floor),
    error_patterns, run (job_run's result: examples {example name: {state, log, log_error}}, resources, scheduled,
    seen_at; only examples on the host transport), jobs (the watched_jobs entries: each example's Job name), gpu_nodes,
    node_selector, check_mode}."""
    level, mode = context.get("level") or {}, context.get("mode") or "train"
    run = context.get("run") or {}
    results = run.get("examples") or {}
    gpu_nodes = context.get("gpu_nodes") or []
    node_types = dict((str(n.get("node", "")), str(n.get("instance_type", ""))) for n in gpu_nodes)
    job_names = dict((j.get("name"), ((j.get("definition") or {}).get("metadata") or {}).get("name"))
                     for j in context.get("jobs") or [])
    observed_at = float(run.get("seen_at") or now())
    rows = []
    for example in examples or []:
        name = example.get("name")
        job = job_names.get(name) or "-"
        judge = judgement(example, mode, job, run, context.get("error_patterns"), context.get("floor", 0.0))
        gpu = _cost.gpu_usage(run.get("resources") or [], observed_at, node_types, None, job)
        rows.append({"id": "%s/%s" % (level.get("id"), name), "name": "%s: %s" % (level.get("name"), name),
                     "checks": checks(results.get(name) or {}, judge),
                     "skip_reason": skip_reason(example, gpu_nodes, context.get("node_selector") or "",
                                                bool(context.get("check_mode"))),
                     "attach": {"gpu": [gpu]}})
    return rows
