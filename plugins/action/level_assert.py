# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rlstack.validation.level_assert judged in the controller (no module run on the host; docs in the module)."""

from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.rlstack.validation.plugins.module_utils._level_assert import argument_spec, judge


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        result["changed"] = False
        validated = ArgumentSpecValidator(argument_spec()).validate(self._task.args)
        if validated.error_messages:
            result.update(failed=True, msg="level_assert: " + "; ".join(validated.error_messages))
            return result
        outcome = judge(validated.validated_parameters)
        result.update(outcome)
        if not outcome["failed"]:
            result.pop("failed")
        return result
