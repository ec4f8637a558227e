# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Talking to the Kubernetes API: which cluster and credentials (cluster access), bounds on every call
(API guard), waits on pods and Jobs, reading objects' state, deleting a run's objects, and the
diagnosis of a pod or Job that did not do what a level waited for.
"""
