# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rlstack.validation.level_assert judged in the controller (no module run on the host; docs in the module)."""

from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._level_assert import (
    ChecksTextError,
    argument_spec,
    canonical_checks,
    decoded_checks,
    judge_rows,
)


def mergeable(data):
    """The statistics `data` as a value the run's aggregate statistics merge.

    ansible-core 2.19 merges a statistic only into a value of the same type (executor/stats.py,
    update_custom_stats: `isinstance(what, type(stored))`), and what ansible.builtin.set_stats stores carries tags
    (an _AnsibleTaggedDict): a plain dict published after the run's plan would be dropped without a word. A tagged
    dict is an instance of both. Before 2.19 nothing is tagged, and the plain dict merges."""
    try:
        from ansible._internal._datatag._tags import Origin
        from ansible.module_utils._internal._datatag import AnsibleTagHelper
    except ImportError:
        return data
    origin = Origin(description="<rlstack.validation.level_assert publish_host>")
    return dict((key, AnsibleTagHelper.tag(value, origin)) for key, value in data.items())


def copied_once(data):
    """The statistics `data` ({key: {host: {levels: {id: result}}}}, judge_rows) with each level result's lists as
    tuples, which ansible-core then hands on without copying them.

    ansible-core 2.19 copies a task's result for every callback that reads it and again for `register`
    (executor/task_result.py, as_callback_task_result; plugins/strategy/__init__.py: module_response_deepcopy, then
    strip_internal_keys), walking every dict and list in it; it passes a tuple on whole (nothing in a published
    check is an internal key). Over 1,024 nodes a level's result holds 32,772 checks: 1.8 -> 1.0 s for the task on
    the 2-core machine (docs/fleet-scale.md, "Per-node data"). A tuple is written as a list in every output."""
    def frozen(result):
        return dict((key, tuple(value) if isinstance(value, list) else value) for key, value in result.items())

    def with_frozen_levels(entry):
        return dict(entry, levels=dict((level_id, frozen(result)) for level_id, result in entry["levels"].items()))

    return dict((key, dict((host, with_frozen_levels(entry)) for host, entry in hosts.items()))
                for key, hosts in data.items())


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        result["changed"] = False
        args = self._task.args
        try:
            # the checks may come as JSON text (filter rlstack.validation.json_text says why)
            args = dict(args, checks=decoded_checks(args["checks"])) if "checks" in args else args
        except ChecksTextError as exc:
            result.update(failed=True, msg=str(exc))
            return result
        # checks already in the spec's shape skip its per-check validation (canonical_checks)
        checks = canonical_checks(args.get("checks"))
        validated = ArgumentSpecValidator(argument_spec()).validate(
            args if checks is None else dict(args, checks=[]))
        if validated.error_messages:
            result.update(failed=True, msg="level_assert: " + "; ".join(validated.error_messages))
            return result
        params = validated.validated_parameters
        if checks is not None:
            params["checks"] = checks
        outcome = judge_rows(params)
        if "ansible_stats" in outcome:
            outcome["ansible_stats"]["data"] = mergeable(copied_once(outcome["ansible_stats"]["data"]))
        result.update(outcome)
        if not outcome["failed"]:
            result.pop("failed")
        return result
