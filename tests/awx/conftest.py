# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tests of the AWX side: the execution environment (ee/, meta/), the AWX data (awx/), the playbook that
applies it (playbooks/awx_configure.yml) and validate.yml run through ansible-runner as AWX runs it.

The helpers next to this file (awx_data, awx_rules, survey_selection, runner_helpers) are imported by
name: pytest puts this directory on sys.path.
"""
from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_COLLECTIONS = os.path.abspath(os.path.join(_HERE, "..", "..", ".collections"))
for _path in (_HERE, _COLLECTIONS):
    if os.path.isdir(_path) and _path not in sys.path:
        sys.path.insert(0, _path)
