# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: cluster_access
author:
  - rlstack.validation maintainers (@rlstack)
version_added: 1.2.0
short_description: Which cluster access the run's modules use, decided as kubernetes.core decides it
description:
  - Resolves the cluster access in kubernetes.core 6.2.0's order (C(plugins/module_utils/k8s/_cluster_access.py)),
    that is the given O(kubeconfig) and O(context) (the inventory's C(validation_kubeconfig) and C(validation_context)),
    else the C(K8S_AUTH_*) environment (as AWX credentials inject it), else, in a pod, the in-cluster service
    account, else the first file of C(KUBECONFIG), else C(~/.kube/config).
  - Returns no secret (no token, password, key or inline kubeconfig).
options:
  kubeconfig:
    description: The kubeconfig path (or inline kubeconfig) the inventory gives; empty means unset.
    type: raw
    default: ""
  context:
    description: The kubeconfig context the inventory gives; empty means unset.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Say which cluster the run talks to
  ansible.builtin.debug:
    msg: "{{ (query('rlstack.validation.cluster_access', kubeconfig=validation_kubeconfig | default('')) | first).sentence }}"
"""

RETURN = r"""
_raw:
  description: One dict with C(mode) (host, kubeconfig, in-cluster or none), C(kubeconfig) (path, empty when
    in-cluster, given inline or by host), C(context), C(source) (the setting or variable that chose it),
    C(sentence) (what the run uses, or why there is no access) and C(auth) (the kubernetes.core options, secrets left out).
  type: list
  elements: dict
"""

from ansible.plugins.lookup import LookupBase

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _cluster_access


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        found = _cluster_access.resolve({"kubeconfig": self.get_option("kubeconfig"),
                                         "context": self.get_option("context")})
        return [dict({key: found[key] for key in ("mode", "kubeconfig", "context", "source", "sentence")},
                     auth=found["public"])]
