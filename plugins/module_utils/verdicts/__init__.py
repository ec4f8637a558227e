# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turning evidence into verdicts and reports: the level checks and the NCCL checks, level_assert's
verdict, the report (table, report.json, junit.xml), log excerpts, the cluster baseline, the
Phase 0 fingerprint and gate.
"""
