# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rlstack.validation.nccl_log_info: a log given as C(content) is parsed in the controller (no module run on the host:
an interpreter and an import of the collection, about 1 s on 2 cores, each time L3 and Phase 0 read their launcher's
log); a C(path) is a file of the host, so the module runs there. Docs in the module."""

from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl

ARGUMENT_SPEC = dict(path=dict(type="path"), content=dict(type="str"))


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        result["changed"] = False
        validated = ArgumentSpecValidator(ARGUMENT_SPEC, mutually_exclusive=[("path", "content")],
                                          required_one_of=[("path", "content")]).validate(self._task.args)
        if validated.error_messages:
            result.update(failed=True, msg="nccl_log_info: " + "; ".join(validated.error_messages))
            return result
        content = validated.validated_parameters.get("content")
        if content is None:  # a file of the host: the module reads it there
            result.update(self._execute_module(module_name="rlstack.validation.nccl_log_info", task_vars=task_vars))
            return result
        try:
            _nccl.check_content(content)
            result.update(_nccl.parse_text(content))
        except _nccl.NcclLogError as exc:
            result.update(failed=True, msg=str(exc))
        return result
