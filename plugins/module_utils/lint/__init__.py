# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Local mode: linting a user's repository (manifests, pitfall rules, schemas, shell syntax, YAML
positions, envsubst rendering, node groups declared in Terraform and YAML).
"""
