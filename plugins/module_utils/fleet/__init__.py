# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Acting on a fleet: bad-node findings and patches, bad-node isolation from pair runs, and the run's
cost in GPU time and money.
"""
