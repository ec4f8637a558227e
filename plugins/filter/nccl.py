# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters for the NCCL levels (L3, Phase 0): the nccl-tests MPIJob and level_assert nccl items."""

from __future__ import annotations


from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _nccl_checks
from ansible_collections.rlstack.validation.plugins.filter.runner import _plain


def nccl_item(result, name="nccl", expect=None, instance_types=None):
    return _nccl_checks.nccl_item(_plain(result or {}), str(name), _plain(expect or {}), _plain(instance_types or {}))


def nccl_mpijob(nodes, name, image, floors=None, network=None, tolerance=0.0):
    return _workloads.nccl_mpijob(_plain(nodes or []), str(name), str(image), _plain(floors or []),
                                  _plain(network or []), float(tolerance or 0.0))


def nccl_log_facts(text):
    """What nccl_log_info returns for a log given as content, parsed here; None for an empty log (there is none)."""
    return _nccl_checks.log_facts(text)


def nccl_sweep_items(probe_results, name="sweep", expect=None, instance_types=None):
    return _nccl_checks.sweep_items(_plain(probe_results or {}), str(name), _plain(expect or {}),
                                    _plain(instance_types or {}))


def nccl_launcher(mpijob):
    return _workloads.nccl_launcher(_plain(mpijob or {}))


class FilterModule:
    """NCCL filters."""

    def filters(self):
        return {"nccl_item": nccl_item, "nccl_mpijob": nccl_mpijob, "nccl_launcher": nccl_launcher,
                "nccl_log_facts": nccl_log_facts, "nccl_sweep_items": nccl_sweep_items}
