# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters for nccl-tests as a Kubeflow Trainer v2 TrainJob (logic in module_utils/workloads/_trainjob.py)."""

from __future__ import annotations


from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _trainjob
from ansible_collections.rlstack.validation.plugins.filter.runner import _grace, _plain


def trainjob_runtime_problem(runtime, crd_present, runtime_name, efa_mode="extended", efa_per_node=0):
    return _trainjob.runtime_problem(bool(crd_present), _plain(runtime or {}), str(runtime_name), str(efa_mode),
                                     int(efa_per_node or 0))


def trainjob_definition(mpijob, name, namespace, runtime_name, labels, scripts_configmap, tolerations, shm_size,
                        queue="", queue_label=None, owner_references=None):
    job = _plain(mpijob or {})
    launcher = _workloads.nccl_launcher(job)
    extra = {"queue_label": str(queue_label)} if queue_label else {}
    return _trainjob.definition(job, str(name), str(namespace), str(runtime_name), _plain(labels or {}),
                                launcher["args"], launcher["env"], str(scripts_configmap),
                                _plain(tolerations or []), str(shm_size), queue=str(queue or ""),
                                owner_references=_plain(owner_references or []), **extra)


def trainjob_state(trainjob, pods=None, grace_s=None, workloads=None):
    return _trainjob.trainjob_state(_plain(trainjob or {}), _plain(pods or []), grace_s=_grace(grace_s),
                                    workloads=_plain(workloads))


class FilterModule:
    """TrainJob filters."""

    def filters(self):
        return {"trainjob_runtime_problem": trainjob_runtime_problem, "trainjob_definition": trainjob_definition,
                "trainjob_state": trainjob_state}
