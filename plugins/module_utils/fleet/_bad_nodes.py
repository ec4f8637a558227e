# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Bad-node findings, and the node patches that act on them (validation_on_bad_node, docs/fleet-scale.md).

Standard library only. The one place the levels feed: every level result (finish_level.yml) adds its
findings with :func:`findings`; isolation adds its suspects the same way (:func:`finding`); one step at
the end of the run (runner tasks/bad_nodes.yml) turns them into node patches with :func:`node_patch`, and
playbooks/release_nodes.yml undoes exactly what was applied with :func:`release_patch`.

A node is bad when a check that names it failed (not a warning, not "could not collect the evidence": a
probe that could not run proves nothing about the node). Only names of the cluster's nodes count: a check
whose ``node`` is a pod's hostname or an example name is not a node finding.

What a patch writes (names under rlstack.io, the collection's prefix for labels it owns):
  label       rlstack.io/validation=bad                 (label, taint and cordon all set it)
  annotation  rlstack.io/validation-reason              the reasons, "; "-joined, at most REASON_CHARS
  annotation  rlstack.io/validation-run                 the run id that marked the node last
  annotation  rlstack.io/validation-applied             what the collection changed: label[,taint][,cordon]
  taint       rlstack.io/validation-bad=<run id>:NoSchedule   (taint)
  cordon      spec.unschedulable=true                   (cordon; recorded only when the node was schedulable)
The patches are JSON merge patches (RFC 7386). Taints are a list a merge patch replaces whole, so the patch lists
the node's other taints as they were when the node was read, just before; the node's resourceVersion is not sent,
because the kubelet's status updates change it all the time and would make the patch fail (409) for no reason.
"""

from __future__ import annotations

ACTIONS = ("report", "label", "taint", "cordon")
LABEL = "rlstack.io/validation"
LABEL_VALUE = "bad"
SELECTOR = LABEL + "=" + LABEL_VALUE
REASON = "rlstack.io/validation-reason"
RUN = "rlstack.io/validation-run"
APPLIED = "rlstack.io/validation-applied"
TAINT_KEY = "rlstack.io/validation-bad"
TAINT_EFFECT = "NoSchedule"
REASON_CHARS = 1024  # an annotation is small; the report has every reason
# what each action applies, in order
APPLIES = {"report": (), "label": ("label",), "taint": ("label", "taint"), "cordon": ("label", "cordon")}


class BadNodeError(ValueError):
    """Bad input (an unknown action); the text is one sentence for the user."""


def finding(node, level, check, reason):
    """One bad-node finding: {node, level, check, reason}."""
    return {"node": str(node), "level": str(level or ""), "check": str(check or ""), "reason": str(reason or "")}


def findings(result, node_names):
    """The findings of one level result (level_assert's result): its failed checks that name a node of the
    cluster (node_names)."""
    result = result if isinstance(result, dict) else {}
    known = set(str(n) for n in (node_names or []))
    out = []
    for entry in result.get("checks") or []:
        if not isinstance(entry, dict) or entry.get("passed") or entry.get("warning") or entry.get("evidence_missing"):
            continue
        node = str(entry.get("node") or "")
        if node not in known:
            continue
        message = str(entry.get("message") or entry.get("name") or "failed")
        out.append(finding(node, result.get("level"), entry.get("name"), "%s %s" % (result.get("level") or "", message)))
    return out


def suspect_findings(suspects):
    """Findings from bad-node isolation's suspects ([{node, confidence, evidence}], roles/isolate)."""
    out = []
    for suspect in suspects or []:
        if isinstance(suspect, dict) and suspect.get("node"):
            evidence = suspect.get("evidence") or []
            shown = "; ".join(str(e) for e in evidence[:3]) if isinstance(evidence, list) else str(evidence)
            reason = "isolation: suspect, %s confidence" % (suspect.get("confidence") or "unknown")
            if shown:
                reason += " (%s)" % shown
            out.append(finding(suspect["node"], "ISOLATE", "isolation", reason))
    return out


def by_node(all_findings):
    """{node: [reason, ...]} in first-seen order, each reason once."""
    out = {}
    for item in all_findings or []:
        if not isinstance(item, dict) or not item.get("node"):
            continue
        reasons = out.setdefault(str(item["node"]), [])
        reason = str(item.get("reason") or item.get("check") or "found bad")
        if reason not in reasons:
            reasons.append(reason)
    return out


def _check_action(action):
    if action not in ACTIONS:
        raise BadNodeError("validation_on_bad_node is %r, but it must be one of %s." % (action, ", ".join(ACTIONS)))


def _reason_text(reasons):
    text = "; ".join(reasons)
    if len(text) > REASON_CHARS:
        text = text[:REASON_CHARS - 3] + "..."
    return text


def _applied(metadata):
    raw = str(((metadata or {}).get("annotations") or {}).get(APPLIED) or "")
    return [part for part in raw.split(",") if part]


def node_patch(node, reasons, action, run_id):
    """The merge patch that marks one node (a Node object as the API server returns it), or None for report.

    Returns {name, patch, applies, reasons}: applies is what this patch adds (label, taint, cordon)."""
    _check_action(action)
    if action == "report":
        return None
    node = node if isinstance(node, dict) else {}
    metadata = node.get("metadata") or {}
    spec = node.get("spec") or {}
    name = str(metadata.get("name") or "")
    if not name:
        raise BadNodeError("a node to mark has no metadata.name.")
    applied = _applied(metadata)
    adds = list(APPLIES[action])
    patch_spec = {}
    if "taint" in adds:
        ours = {"key": TAINT_KEY, "value": str(run_id), "effect": TAINT_EFFECT}
        others = [t for t in spec.get("taints") or [] if not (t.get("key") == TAINT_KEY and t.get("effect") == TAINT_EFFECT)]
        patch_spec["taints"] = others + [ours]
    if "cordon" in adds:
        if spec.get("unschedulable") and "cordon" not in applied:
            adds.remove("cordon")  # cordoned by someone else: not ours to undo later
        else:
            patch_spec["unschedulable"] = True
    applied_now = [part for part in ("label", "taint", "cordon") if part in applied or part in adds]
    patch = {"metadata": {"name": name, "labels": {LABEL: LABEL_VALUE},
                          "annotations": {REASON: _reason_text(reasons), RUN: str(run_id),
                                          APPLIED: ",".join(applied_now)}}}
    if patch_spec:
        patch["spec"] = patch_spec
    check = {"name": "on_bad_node", "node": name, "op": "info", "actual": action,
             "fail_msg": "%s (%s); undo with playbooks/release_nodes.yml"
                         % ("applied " + ", ".join(adds) if adds else "already marked", "; ".join(reasons))}
    return {"name": name, "patch": patch, "applies": adds, "reasons": list(reasons), "check": check}


def node_patches(all_findings, nodes, action, run_id, suspects=None):
    """node_patch for every node with findings (and isolation suspects); nodes: the Node objects (read just
    before). A node with findings but no object (gone since) is left out; nodes without findings are never
    patched."""
    _check_action(action)
    reasons = by_node(list(all_findings or []) + suspect_findings(suspects))
    objects = dict((str((n.get("metadata") or {}).get("name")), n) for n in nodes or [] if isinstance(n, dict))
    out = []
    for name in sorted(reasons):
        if name in objects:
            patch = node_patch(objects[name], reasons[name], action, run_id)
            if patch:
                out.append(patch)
    return out


def release_patch(node, run_id=""):
    """The merge patch that undoes what the collection applied to one node, or None when the node carries no
    mark of it (or, with run_id, a mark of another run)."""
    node = node if isinstance(node, dict) else {}
    metadata = node.get("metadata") or {}
    spec = node.get("spec") or {}
    labels = metadata.get("labels") or {}
    annotations = metadata.get("annotations") or {}
    if labels.get(LABEL) != LABEL_VALUE and RUN not in annotations:
        return None
    if run_id and str(annotations.get(RUN) or "") != str(run_id):
        return None
    applied = _applied(metadata)
    patch = {"metadata": {"name": str(metadata.get("name") or ""), "labels": {LABEL: None},
                          "annotations": {REASON: None, RUN: None, APPLIED: None}}}
    taints = spec.get("taints") or []
    kept = [t for t in taints if not (t.get("key") == TAINT_KEY and t.get("effect") == TAINT_EFFECT)]
    patch_spec = {}
    if len(kept) != len(taints):
        patch_spec["taints"] = kept or None
    if "cordon" in applied and spec.get("unschedulable"):
        patch_spec["unschedulable"] = None
    if patch_spec:
        patch["spec"] = patch_spec
    return {"name": patch["metadata"]["name"], "patch": patch, "run": str(annotations.get(RUN) or ""),
            "undoes": [part for part in applied if part != "cordon" or "unschedulable" in patch_spec]}


def release_patches(nodes, run_id=""):
    """release_patch for every node that carries the collection's mark (of run_id, when given)."""
    out = []
    for node in sorted((n for n in nodes or [] if isinstance(n, dict)),
                       key=lambda n: str((n.get("metadata") or {}).get("name"))):
        patch = release_patch(node, run_id)
        if patch:
            out.append(patch)
    return out
