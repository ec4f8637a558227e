# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Findings of local mode as SARIF 2.1.0 (for GitHub and GitLab code scanning) and as a console summary.

SARIF: one run, one rule descriptor per rule that has findings (its fix as help, its default level), one
result per finding with its file:line:column relative to the repository root (``%SRCROOT%``). Levels:
error -> error, warning -> warning, info -> note. tests/local/test_sarif.py validates the output against
the OASIS schema.
"""

from __future__ import annotations

import os

from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import location
from ansible_collections.rlstack.validation.plugins.module_utils.lint._pitfall_rules import RULES_BY_NAME

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
TOOL = "rlstack.validation local mode"
INFORMATION_URI = "https://github.com/rlstack/validation/blob/main/docs/local-mode.md"


def _uri(path):
    return str(path).replace(os.sep, "/").lstrip("./") if not os.path.isabs(str(path)) else str(path)


def sarif(findings, root="", version=""):
    """A SARIF 2.1.0 log (dict) of the findings. root: the repository root (for %SRCROOT%)."""
    rules, index = [], {}
    results = []
    for item in findings:
        rule_id = item["rule"]
        if rule_id not in index:
            index[rule_id] = len(rules)
            known = RULES_BY_NAME.get(rule_id)
            descriptor = {"id": rule_id, "name": rule_id,
                          "shortDescription": {"text": known.summary if known else rule_id.replace("_", " ")},
                          "help": {"text": item.get("fix") or (known.fix if known else rule_id)},
                          "defaultConfiguration": {"level": LEVELS[known.severity if known else item["severity"]]}}
            rules.append(descriptor)
        result = {"ruleId": rule_id, "ruleIndex": index[rule_id], "level": LEVELS[item["severity"]],
                  "message": {"text": item["message"] + (" Fix: " + item["fix"] if item.get("fix") else "")}}
        # a location only for a file of the repository (not the inventory, not a rendered object's label)
        if item.get("file") and (item.get("line") or "/" in item["file"] or "." in item["file"]) \
                and item["file"] != "inventory" and " " not in item["file"]:
            physical = {"artifactLocation": {"uri": _uri(item["file"]), "uriBaseId": "%SRCROOT%"}}
            if item.get("line"):
                region = {"startLine": int(item["line"])}
                if item.get("column"):
                    region["startColumn"] = int(item["column"])
                physical["region"] = region
            location_ = {"physicalLocation": physical}
            names = [n for n in (item.get("object"), item.get("container") and "container " + item["container"]) if n]
            if names:
                location_["logicalLocations"] = [{"fullyQualifiedName": " ".join(names)}]
            result["locations"] = [location_]
            # a finding about several places (every use of an unset variable): each is a related location, so
            # code scanning shows it in every file
            related = [use for use in item.get("uses") or [] if use.get("file")][1:]
            if related:
                result["relatedLocations"] = [
                    {"id": index, "message": {"text": "used here"},
                     "physicalLocation": {"artifactLocation": {"uri": _uri(use["file"]), "uriBaseId": "%SRCROOT%"},
                                          "region": {"startLine": int(use.get("line") or 1)}}}
                    for index, use in enumerate(related, start=1)]
        results.append(result)
    driver = {"name": TOOL, "informationUri": INFORMATION_URI, "rules": rules}
    if version:
        driver["version"] = str(version)
    run = {"tool": {"driver": driver}, "results": results}
    if root:
        run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": "file://" + os.path.abspath(root).rstrip("/") + "/"}}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def summary(findings, verbose=False):
    """Console text: counts per rule and severity, then every error (and with verbose every finding),
    each as 'file:line:column rule: message -> fix'."""
    counts = {}
    for item in findings:
        key = item["rule"]
        counts.setdefault(key, {"error": 0, "warning": 0, "info": 0})[item["severity"]] += 1
    lines = ["Findings per rule (error / warning / info):"]
    if not counts:
        lines.append("  none")
    for rule in sorted(counts, key=lambda r: (-counts[r]["error"], -counts[r]["warning"], r)):
        c = counts[rule]
        lines.append("  %-20s %4d / %4d / %4d" % (rule, c["error"], c["warning"], c["info"]))
    shown = [f for f in findings if verbose or f["severity"] == "error"]
    hidden = len(findings) - len(shown)
    if shown:
        lines.append("Every %s:" % ("finding" if verbose else "error"))
    for item in sorted(shown, key=lambda f: (f.get("file") or "", f.get("line") or 0, f.get("column") or 0)):
        where = location(item) or item.get("source") or "?"
        who = " ".join(n for n in (item.get("object"), item.get("container") and "container " + item["container"]) if n)
        lines.append("  %s %s [%s] %s%s" % (where, item["severity"].upper(), item["rule"],
                                            item["message"], "" if not who or who in item["message"] else " (%s)" % who))
        if item.get("fix"):
            lines.append("      fix: %s" % item["fix"])
    if hidden:
        lines.append("%d warnings and notes not shown (run with -v, or ./validate.sh --verbose, to see them)" % hidden)
    return "\n".join(lines)
