# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of bad-node isolation (roles/isolate, docs/isolation.md); the logic is module_utils/fleet/_isolate.py."""

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils.fleet import _isolate
from ansible_collections.rlstack.validation.plugins.filter.runner import _plain, _grace


def isolate_plan(nodes, settings=None):
    return _isolate.plan(_plain(nodes or []), _plain(settings or {}))


def isolate_round(state, run, scripts_configmap):
    return _isolate.next_round(_plain(state), str(run), str(scripts_configmap))


def isolate_round_state(pods, names, grace_s=None):
    return _isolate.round_jobs(_plain(pods or []), _plain(names or []), grace_s=_grace(grace_s))


def isolate_record(state, planned, jobs, logs, seconds):
    return _isolate.record_round(_plain(state), _plain(planned), _plain(jobs or {}), _plain(logs or []),
                                 float(seconds))


def isolate_outcome(state):
    out = _isolate.outcome(_plain(state))
    out["gpu_minutes"] = _plain(state).get("gpu_minutes", 0.0)
    return out


def isolate_offer(levels, node_count):
    return _isolate.offer(_plain(levels or []), int(node_count))


class FilterModule:
    """Bad-node isolation filters."""

    def filters(self):
        return {"isolate_plan": isolate_plan, "isolate_round": isolate_round,
                "isolate_round_state": isolate_round_state, "isolate_record": isolate_record,
                "isolate_outcome": isolate_outcome, "isolate_offer": isolate_offer}
