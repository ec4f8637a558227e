# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters that turn each level's evidence into level_assert checks (logic in module_utils/verdicts/_checks.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks, _example_rows

from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads
from ansible_collections.rlstack.validation.plugins.module_utils.gpu import _gpu_health
from ansible_collections.rlstack.validation.plugins.module_utils import _frameworks
from ansible_collections.rlstack.validation.plugins.filter.runner import _plain


def l0_checks(nodes, probes, expect):
    expect = _plain(expect or {})
    if expect.get("reads") is not None:  # what L0's probe read (runner_probe_reads), as the evidence it holds
        expect = dict(expect, **_checks.l0_read_evidence(expect.pop("reads")))
    return _checks.l0_checks(_plain(nodes or []), _plain(probes or {}), expect)


def l0_reads(daemonsets, namespace, storage_claim="", all_nodes=False):
    return _checks.l0_reads(_plain(daemonsets or []), _plain(namespace), _plain(storage_claim or ""), bool(all_nodes))


def l1_checks(probes, expect):
    return [c for node, outcome in sorted(_plain(probes or {}).items())
            for c in _checks.l1_checks(outcome, node, _plain(expect or {}))]


def l2_checks(probes, expect):
    return [c for node, outcome in sorted(_plain(probes or {}).items())
            for c in _checks.l2_checks(outcome, node, _plain(expect or {}))]


def l3_probe_checks(probes, expect):
    return [c for node, outcome in sorted(_plain(probes or {}).items())
            for c in _checks.l3_probe_checks(outcome, node, _plain(expect or {}))]


def l4_checks(probes, expect):
    return [c for node, outcome in sorted(_plain(probes or {}).items())
            for c in _checks.l4_checks(outcome, node, _plain(expect or {}))]


def job_log_checks(result, node, expect, name=None):
    result = _plain(result or {})
    expect = dict(_plain(expect or {}), log_error=result.get("log_error"))
    log = result.get("log") or ""
    found = _checks.log_checks(log, result.get("state"), node, expect) + _checks.placement_checks(log, node, expect)
    return [dict(c, name=str(name)) for c in found] if name else found


def example_rows(examples, context):
    try:
        return _example_rows.example_rows(_plain(examples or []), _plain(context or {}))
    except ValueError as exc:  # an unknown framework or a bad pattern: one sentence
        raise AnsibleFilterError(str(exc)) from None


def example_job(example, mode, nodes, image, deadline_s, simulator_env=None):
    try:
        return _workloads.example_job(_plain(example or {}), str(mode), _plain(nodes or []), str(image), int(deadline_s),
                                      _plain(simulator_env or {}))
    except ValueError as exc:  # an unknown framework or a bad pattern: one sentence
        raise AnsibleFilterError(str(exc)) from None


def libero_config(settings, directory):
    """The LIBERO config.yaml (every key it reads) and LIBERO_CONFIG_PATH pointing at `directory`."""
    try:
        return _frameworks.libero_config(_plain(settings or {}), str(directory))
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def host_job_results(results):
    """The registered run_example.py results of a loop over the level description's jobs, by example name."""
    return {r.get("item", {}).get("name", ""): _workloads.host_job_result(r) for r in _plain(results or [])}


def dcgm_plan(level, nodes=None):
    """The DCGM diagnostic's level, time bound per node and GPU-minutes over `nodes` (runner_gpu_nodes)."""
    gpus = sum(int(n.get("gpus") or 0) for n in _plain(nodes or []))
    return _gpu_health.dcgm_plan(int(level or 0), gpus)


def watched_jobs(definitions, described, mode):
    try:
        return _workloads.watched_jobs(_plain(definitions or []), _plain(described or []), str(mode))
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    """Level check filters."""

    def filters(self):
        return {
            "l0_checks": l0_checks,
            "l0_reads": l0_reads,
            "l1_checks": l1_checks,
            "l2_checks": l2_checks,
            "l3_probe_checks": l3_probe_checks,
            "l4_checks": l4_checks,
            "job_log_checks": job_log_checks,
            "libero_config": libero_config,
            "host_job_results": host_job_results,
            "example_job": example_job,
            "watched_jobs": watched_jobs,
            "example_rows": example_rows,
            "dcgm_plan": dcgm_plan,
        }
