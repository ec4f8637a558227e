# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every part of local mode shares: the error type, the check shape that
``rlstack.validation.level_assert`` judges, the finding shape (rule, severity, file:line:column, object,
container, message, fix) that the console summary, report.json and SARIF read, and object paths.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

SEVERITIES = ("error", "warning", "info")


class LintError(ValueError):
    """An input cannot be linted (bad options, unreadable file); the text says what to fix."""


def fmt_path(path):
    """('spec', 'containers', 0, 'image') -> 'spec.containers[0].image'."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += "[%d]" % part
        else:
            text += ("." if text else "") + str(part)
    return text


def object_label(doc):
    """'Job/name' (or 'Job/<no name>'); '' for something that is not a Kubernetes object."""
    if not isinstance(doc, dict):
        return ""
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = meta.get("name") or meta.get("generateName") or "<no name>"
    return "%s/%s" % (doc.get("kind") or "?", name)


def is_k8s_object(doc):
    return isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str) and isinstance(doc.get("kind"), str)


def check(name, node="", op="eq", actual=None, expected=None, hint="", message="", unit="",
          evidence_missing=False):
    """A check for rlstack.validation.level_assert."""
    return {"name": name, "node": node or "", "op": op, "actual": actual, "expected": expected, "hint": hint,
            "fail_msg": message, "unit": unit, "evidence_missing": bool(evidence_missing)}


def finding(rule, severity, message, fix, file="", line=0, column=0, obj="", container="", path="",
            actual=None, expected=None, op="eq", unit=""):
    """One finding. line/column are 1-based, 0 when unknown; file is shown as given."""
    if severity not in SEVERITIES:
        raise LintError("severity %r of rule %s is not one of %s" % (severity, rule, ", ".join(SEVERITIES)))
    return {"rule": rule, "severity": severity, "message": message, "fix": fix, "file": file or "",
            "line": int(line or 0), "column": int(column or 0), "object": obj or "", "container": container or "",
            "path": path or "", "actual": actual, "expected": expected, "op": op, "unit": unit}


def location(item):
    """'file:line:column' of a finding ('file:line' without a column, 'file' without a line)."""
    text = item.get("file") or ""
    if item.get("line"):
        text += ":%d" % item["line"]
        if item.get("column"):
            text += ":%d" % item["column"]
    return text


def finding_node(item):
    """The node of a finding's check: where it is and in what ('k8s/job.yaml:12:9 Job/train container main')."""
    parts = [location(item)] if location(item) else []
    if item.get("object"):
        parts.append(item["object"])
    if item.get("container"):
        parts.append("container %s" % item["container"])
    return " ".join(parts)


def finding_checks(findings, passing_name="", passing_node=""):
    """Checks of findings: one failing check per error (warnings and info never fail a row); with
    passing_name, one passing check when there is no error (so a clean file still shows in the row)."""
    checks = []
    for item in findings:
        if item.get("severity") != "error":
            continue
        checks.append(check(item["rule"], finding_node(item), op=item.get("op") or "eq", actual=item.get("actual"),
                            expected=item.get("expected"), unit=item.get("unit") or "", hint=item.get("fix") or "",
                            message=item["message"]))
    if not checks and passing_name:
        others = len(findings)
        checks.append(check(passing_name, passing_node, op="eq", actual=0, expected=0,
                            unit="errors" + (" (%d warnings or notes)" % others if others else "")))
    return checks
