# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rlstack.validation.evidence_file: on a local connection the record is written in the controller (no module run:
an interpreter and an import of the collection, about 1 s on 2 cores); on another host the module writes it there.
Docs in the module."""

from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.rlstack.validation.plugins.module_utils._data import plain
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._evidence_file import (
    argument_spec, file_mode, write)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        if self._connection.transport != "local" or self._play_context.become:
            result.update(self._execute_module(module_name="rlstack.validation.evidence_file", task_vars=task_vars))
            return result
        validated = ArgumentSpecValidator(argument_spec()).validate(self._task.args)
        if validated.error_messages:
            result.update(failed=True, msg="evidence_file: " + "; ".join(validated.error_messages))
            return result
        params = validated.validated_parameters
        try:
            result.update(write(params["path"], plain(params["content"]), file_mode(params["mode"]),
                                self._task.check_mode))
        except (OSError, ValueError) as exc:
            result.update(failed=True, msg="evidence_file: cannot write %s: %s" % (params["path"], exc))
        return result
