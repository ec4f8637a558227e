# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters the runner role uses to read Kubernetes objects and probe output (logic in module_utils)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _objects_info
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _probe_pods
from ansible_collections.rlstack.validation.plugins.module_utils import _limits
from ansible_collections.rlstack.validation.plugins.module_utils import _levels, _plan
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain as _plain
from ansible_collections.rlstack.validation.plugins.module_utils._data import json_text


def _grace(grace_s):
    try:
        return _limits.grace_s(_plain(grace_s))
    except _limits.LimitError as exc:
        raise AnsibleFilterError(str(exc)) from None


def pods_summary(pods, expected=None, grace_s=None, want="running", start_timeout_s=None):
    return k8s.pods_summary(_plain(pods), expected=expected, grace_s=_grace(grace_s), want=want,
                            start_timeout_s=_plain(start_timeout_s))


def mpijob_state(mpijob, pods=None, grace_s=None, workloads=None):
    return k8s.mpijob_state(_plain(mpijob), _plain(pods or []), grace_s=_grace(grace_s), workloads=_plain(workloads))


def efa_request(nodes, device_classes=None):
    """{mode: extended|dra|none, device_class}: how the level's pods request EFA on these nodes (see _k8s_status)."""
    return k8s.efa_request(_plain(nodes or []), _plain(device_classes or []))


def admission_summary(objs, workloads=None, grace_s=None):
    """Jobs/MPIJobs that Kueue holds suspended: settled once all run or one stayed suspended past grace_s."""
    return k8s.admission_summary(_plain(objs or []), _plain(workloads), grace_s=_grace(grace_s))


def pod_hosts(pods):
    return k8s.pod_hosts(_plain(pods))


def gpu_nodes(nodes, transport="kubernetes", host=None):
    return k8s.gpu_nodes(_plain(nodes or []), str(transport), _plain(host or {}))


def label_selector(labels):
    """{key: value} -> "key=value,..." (the labels in their order): the selector a level's node_selector setting makes."""
    labels = _plain(labels or {})
    if not isinstance(labels, dict):
        raise AnsibleFilterError("label_selector takes a dict of labels, not %r" % (labels,))
    return ",".join("%s=%s" % (key, value) for key, value in labels.items())


def plan_reads(node_selectors, namespace="", device_classes=False):
    return _objects_info.plan_reads(_plain(node_selectors or []), _plain(namespace), bool(device_classes))


def plan_nodes(reads, node_selectors, transport="kubernetes", host=None):
    transport, host = str(transport), _plain(host or {})
    return _objects_info.plan_nodes(_plain(reads or []), _plain(node_selectors or []),
                                    lambda nodes: k8s.gpu_nodes(nodes, transport, host))


def daemonset_summary(results):
    return k8s.daemonset_summary(_plain(results or []))


def limit(name):
    try:
        return _limits.limit(_plain(name))
    except _limits.LimitError as exc:
        raise AnsibleFilterError(str(exc)) from None


def job_deadline_s(value=None):
    try:
        return _limits.job_deadline_s(_plain(value))
    except _limits.LimitError as exc:
        raise AnsibleFilterError(str(exc)) from None


def probe_output(result):
    """A registered command / k8s_exec result (or plain stdout) to the probe outcome."""
    result = _plain(result)
    if isinstance(result, str):
        return _probe_pods.probe_output(result)
    rc = result.get("rc") if result.get("rc") is not None and "__rlstack_rc=" not in (result.get("stdout") or "") \
        else None
    out = _probe_pods.probe_output(result.get("stdout") or "", rc=rc, stderr=result.get("stderr") or "")
    if result.get("failed") and out["status"] == "ok" and rc is None:
        out.update(status="no_output", error=result.get("msg") or "the probe could not be run")
    return out


def probe_command(launcher, script, params=None):
    """The container command of a probe pod that runs `launcher script params` as its entrypoint."""
    return _probe_pods.probe_command(_plain(launcher), _plain(script), _plain(params or {}))


def probe_pods(pod, targets, name_prefix):
    """One probe pod per target from the level's rendered probe pod."""
    return _probe_pods.probe_pods(_plain(pod), _plain(targets or []), str(name_prefix))


def probe_results(logs, targets, start, events=None, start_timeout_s=900, finish_timeout_s=None, nodes=None,
                  listed=True):
    """Every target's probe outcome from the probe pods' logs and the start wait's pod states."""
    return _probe_pods.probe_results(_plain(logs or []), _plain(targets or []), _plain(start or {}), _plain(events or []),
                                     _plain(start_timeout_s), _plain(finish_timeout_s), nodes=_plain(nodes or []),
                                     listed=bool(listed))


def dns_label(text, max_len=63):
    return k8s.dns_label(text, int(max_len))


def label_value(text, max_len=63):
    return k8s.label_value(text, int(max_len))


def validation_plan(levels, examples=None, run_tags=None, skip_tags=None, phase0_enabled=False, example_filter="",
                    survey_tags=None):
    return _plan.build_plan(_plain(levels), _plain(examples or []), _plain(run_tags or []), _plain(skip_tags or []),
                            bool(phase0_enabled), str(example_filter or ""), _plain(survey_tags or []))


def validation_tags_problem(run_tags, skip_tags=None):
    return _plan.tags_problem(_levels.playbook_tags(), _plain(run_tags or []), _plain(skip_tags or []))


def validation_survey(levels, chosen_levels=None, skip_to=None):
    try:
        return _plan.survey_selection(_plain(levels), _plain(chosen_levels), _plain(skip_to))
    except _plan.SurveyError as exc:
        raise AnsibleFilterError(str(exc)) from None


def probe_outcomes(value):
    """{node: outcome}: what a level's probe returned (probe_run's JSON text, or the host transport's dict)."""
    try:
        return _probe_pods.outcomes_of(value if isinstance(value, str) else _plain(value))
    except ValueError as exc:
        raise AnsibleFilterError("probe_outcomes: %s" % exc) from None


class FilterModule:
    """Runner filters."""

    def filters(self):
        return {
            "pods_summary": pods_summary,
            "admission_summary": admission_summary,
            "efa_request": efa_request,
            "mpijob_state": mpijob_state,
            "probe_output": probe_output,
            "probe_command": probe_command,
            "probe_results": probe_results,
            "probe_pods": probe_pods,
            "dns_label": dns_label,
            "label_value": label_value,
            "validation_plan": validation_plan,
            "validation_survey": validation_survey,
            "validation_tags_problem": validation_tags_problem,
            "gpu_nodes": gpu_nodes,
            "label_selector": label_selector,
            "plan_reads": plan_reads,
            "plan_nodes": plan_nodes,
            "pod_hosts": pod_hosts,
            "daemonset_summary": daemonset_summary,
            "limit": limit,
            "job_deadline_s": job_deadline_s,
            "json_text": json_text,
            "probe_outcomes": probe_outcomes,
        }
