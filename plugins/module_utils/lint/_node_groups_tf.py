# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node groups a repository declares in Terraform (split from ``_node_groups``, which has the HCL reader and
the fit rules): ``eks_managed_node_groups`` / ``self_managed_node_groups`` (terraform-aws-modules/eks),
``resource "aws_eks_node_group"``, Karpenter NodePools in HCL (``resource "kubernetes_manifest"``, e.g.
aws-samples/sample-rlinf-on-eks ``infrastructure/workloads/main.tf``) and in YAML heredocs (``kubectl_manifest``).

Standard library only (PyYAML through ``_yaml_marks`` for heredocs), Python 3.8 syntax.
"""

from __future__ import annotations

import os
import re
import textwrap

from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import LintError
from ansible_collections.rlstack.validation.plugins.module_utils.lint._manifest_sources import interpolations
from ansible_collections.rlstack.validation.plugins.module_utils.lint._node_groups import (
    Unknown, _Object, _instance_types, _labels_map, _taint_list, from_yaml_document, node_group, parse_hcl)
from ansible_collections.rlstack.validation.plugins.module_utils.lint._yaml_marks import load_all


def _bodies_attrs(body):
    """The attributes {name: (value, line)} of a body and of every nested block."""
    yield body["attrs"]
    for _labels, inner, _line in body["blocks"]:
        yield from _bodies_attrs(inner)


def _with_defaults(value, defaults):
    """The node group map with *_node_group_defaults filled in (each branch of a conditional)."""
    if isinstance(value, tuple) and value and value[0] == "cond":
        return ("cond", _with_defaults(value[1], defaults), _with_defaults(value[2], defaults))
    if defaults is None or not isinstance(value, dict):
        return value
    if not isinstance(defaults, dict):
        unknown = _Object()
        for key, group in value.items():
            unknown[key] = Unknown("defaults")
        return unknown
    out = _Object()
    out.lines = getattr(value, "lines", {})
    for key, group in value.items():
        if isinstance(group, dict):
            merged = dict(defaults)
            merged.update(group)
            if isinstance(defaults.get("labels"), dict) and isinstance(group.get("labels"), dict):
                merged["labels"] = dict(defaults["labels"])
                merged["labels"].update(group["labels"])
            out[key] = merged
        else:
            out[key] = group
    return out


def _branches(value):
    """The alternatives of a conditional (both sides), else the value itself."""
    if isinstance(value, tuple) and value and value[0] == "cond":
        return _branches(value[1]) + _branches(value[2])
    return [value]


def _tf_groups(groups_value, attr, file, line, managed, pass_through):
    out = []
    kind = "Terraform %s" % attr
    for branch in _branches(groups_value):
        if isinstance(branch, dict):
            for key, group in branch.items():
                if not isinstance(group, dict):
                    out.append(node_group(str(key), kind, file, line, labels=Unknown("labels"), taints=Unknown("taints"),
                                          managed=managed))
                    continue
                name = group.get("name")
                entry = node_group(name if isinstance(name, str) else str(key), kind, file,
                                   getattr(branch, "lines", {}).get(key, line), labels=_labels_map(group.get("labels")),
                                   instance_types=_instance_types(group.get("instance_types")),
                                   taints=_taint_list(group.get("taints")), managed=managed)
                # the EKS node group name is `name` when set (terraform-aws-modules/eks), else the map key; an
                # interpolated name ("${local.name}-gpu") is unknown
                entry["name_known"] = isinstance(name, str) or "name" not in group
                out.append(entry)
        elif not pass_through:
            out.append(node_group("%s (%r)" % (attr, branch), kind, file, line, labels=Unknown("labels"),
                                  taints=Unknown("taints"), managed=managed))
    return out


def _resource_node_group(name, body, file, line):
    """resource "aws_eks_node_group": labels, instance_types, taint blocks (hashicorp/aws provider)."""
    attrs = dict((k, v) for k, (v, _l) in body["attrs"].items())
    taints = [dict((k, v) for k, (v, _l) in inner["attrs"].items())
              for labels, inner, _l in body["blocks"] if labels == ("taint",)]
    if any(labels == ("dynamic", "taint") for labels, _inner, _l in body["blocks"]):
        taints = Unknown("taints")
    group_name = attrs.get("node_group_name")
    return node_group(group_name if isinstance(group_name, str) else name, "Terraform aws_eks_node_group", file, line,
                      labels=_labels_map(attrs.get("labels")), instance_types=_instance_types(attrs.get("instance_types")),
                      taints=_taint_list(taints), managed=True)


def _no_interpolations(text):
    """The text with each Terraform ${...} (nested ones included) replaced by one placeholder word."""
    parts, pos = [], 0
    for start, end, _expression in interpolations(text):
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        alone = not text[line_start:start].strip() and not text[end:line_end if line_end >= 0 else None].strip()
        # a whole line that is one interpolation inserts optional YAML (`${cond ? "key: v" : ""}`): left out
        parts.extend([text[pos:start], "" if alone else "TF_PLACEHOLDER"])
        pos = end
    return "".join(parts + [text[pos:]])


def _chart_node_pool(text, path, line):
    """The Karpenter NodePool of a `karpenter-resources` Helm chart's values written as a Terraform heredoc
    (aws-ia/terraform-aws-eks-data-addons `karpenter_resources_helm_config`, used by awslabs/data-on-eks and
    ai-on-eks): `name`, `nodePool.labels` (a list of one-key maps), `nodePool.taints`, `nodePool.requirements`."""
    rendered = _no_interpolations(textwrap.dedent(text))
    try:
        docs = load_all(rendered, path)
    except LintError:
        return []
    out = []
    for doc, _marks, first in docs:
        pool = doc.get("nodePool") if isinstance(doc, dict) else None
        if not isinstance(pool, dict):
            continue
        labels = pool.get("labels")
        if isinstance(labels, list):
            merged = {}
            for item in labels:
                if isinstance(item, dict):
                    merged.update(item)
            labels = merged
        spec = {"requirements": pool.get("requirements"), "taints": pool.get("taints")}
        nodepool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": doc.get("name")},
                    "spec": {"template": {"metadata": {"labels": labels or {}}, "spec": spec}}}
        for group in from_yaml_document(nodepool, path, None, line + first):
            group["kind"] = "Karpenter NodePool (karpenter-resources chart values)"
            out.append(group)
    return out


def from_terraform(files):
    """Node groups of Terraform files: {path: text} (paths as shown in findings)."""
    parsed = {}
    for path, text in files.items():
        try:
            parsed[path] = parse_hcl(text, path)
        except LintError:
            continue  # terraform validate reports what does not parse
    called = set()
    for path, (body, _docs) in parsed.items():
        for labels, inner, _line in body["blocks"]:
            source = inner["attrs"].get("source", (None, 0))[0]
            if labels[:1] == ("module",) and isinstance(source, str) and source.startswith(("./", "../")):
                called.add(os.path.normpath(os.path.join(os.path.dirname(path), source)))
    out = []
    for path in sorted(parsed):
        body, heredocs = parsed[path]
        pass_through = os.path.normpath(os.path.dirname(path)) in called
        for attrs in _bodies_attrs(body):
            for name in ("eks_managed_node_groups", "self_managed_node_groups"):
                if name in attrs:
                    # terraform-aws-modules/eks: *_node_group_defaults apply to every group that does not set the key
                    defaults = attrs.get(name[:-len("s")] + "_defaults", (None, 0))[0]
                    value, line = attrs[name]
                    out.extend(_tf_groups(_with_defaults(value, defaults), name, path, line,
                                          name == "eks_managed_node_groups", pass_through))
        for labels, inner, line in body["blocks"]:
            if labels[:2] == ("resource", "aws_eks_node_group") and len(labels) >= 3:
                out.append(_resource_node_group(labels[2], inner, path, line))
            elif labels[:2] in (("resource", "kubernetes_manifest"), ("resource", "kubernetes_manifest_v1")):
                # a NodePool written in HCL (manifest = { apiVersion = "karpenter.sh/v1" ... }): every expression
                # in it (concat(...), var.x) is unknown, so a requirement built from variables allows any value
                manifest = inner["attrs"].get("manifest", (None, line))
                if isinstance(manifest[0], dict):
                    out.extend(from_yaml_document(manifest[0], path, None, manifest[1]))
        for text, line in heredocs:
            if re.search(r"(?m)^\s*nodePool:\s*$", text):
                out.extend(_chart_node_pool(text, path, line))
                continue
            if "karpenter.sh/" not in text or not re.search(r"(?m)^\s*kind:\s*(NodePool|Provisioner)\b", text):
                continue
            # Terraform interpolations become a placeholder string: a requirement's `values: ${jsonencode(...)}`
            # is then not a list, so that requirement allows any value
            rendered = _no_interpolations(textwrap.dedent(text))
            try:
                docs = load_all(rendered, path)
            except LintError:
                continue
            for doc, _marks, first in docs:
                out.extend(from_yaml_document(doc, path, None, line + first))
    return out
