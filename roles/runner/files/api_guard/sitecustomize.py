# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Loaded by Python at the start of every module the runner runs (validate.yml puts this directory on
PYTHONPATH): bounds every request of the kubernetes client (plugins/module_utils/k8s/_api_guard.py, which says
why), then runs the sitecustomize this one shadows, if the interpreter has one."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _main():
    here = os.path.dirname(os.path.abspath(__file__))
    guard = os.path.join(here, "..", "..", "..", "..", "plugins", "module_utils", "k8s", "_api_guard.py")
    if os.path.isfile(guard):
        _load("_rlstack_api_guard", guard).install()
    others = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    shadowed = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if shadowed is not None and shadowed.origin and os.path.abspath(shadowed.origin) != os.path.abspath(__file__):
        _load("_shadowed_sitecustomize", shadowed.origin)


_main()
