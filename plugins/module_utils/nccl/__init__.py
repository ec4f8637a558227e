# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The NCCL log reader: the streaming parser, nccl-tests tables and JSON files, the failure-signature
catalog, network facts, and the readers of a parse result (standard library only, nothing else
of the collection: tests/unit/plugins/module_utils/test_nccl.py).
"""
