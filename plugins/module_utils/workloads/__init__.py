# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Building what a level creates: the probe pods and their protocol (entrypoint, output markers),
the nccl-tests MPIJob and TrainJob, the L5/L6 example Jobs, and the description of all of it
for local mode.
"""
