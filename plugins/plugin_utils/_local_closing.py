# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Local mode's own closing summary (controller only): what it found per rule and severity, which rows
failed, where findings.json and local.sarif are, and what the exit code says. validate.sh prints it after
the results table and exits with its code, so that a run with findings ends in a sentence of local mode and
not in an Ansible error frame (issue 28 item 6)."""

from __future__ import annotations

import os

SEVERITIES = ("error", "warning", "info")
EXIT_FINDINGS = 2


def _counts(findings):
    counts, total = {}, dict((s, 0) for s in SEVERITIES)
    for item in findings:
        severity = item.get("severity") if item.get("severity") in SEVERITIES else "info"
        counts.setdefault(item.get("rule") or "?", dict((s, 0) for s in SEVERITIES))[severity] += 1
        total[severity] += 1
    return counts, total


def closing(findings, plan=(), failed=(), out_dir="", root=""):
    """{'exit_code', 'text'}: exit_code 2 when a row failed, else 0; text: the closing lines.
    plan: the rows of local mode ({id, name}); failed: ids of the failed rows; out_dir: where findings.json
    and local.sarif were written ('' = nowhere); root: the repository linted."""
    findings = list(findings or [])
    names = dict((row.get("id"), row.get("name") or row.get("id")) for row in plan or [])
    failed = list(failed or [])
    counts, total = _counts(findings)
    exit_code = EXIT_FINDINGS if failed else 0
    lines = ["LOCAL MODE SUMMARY%s" % (": " + root if root else ""),
             "  %d errors, %d warnings, %d notes" % (total["error"], total["warning"], total["info"])]
    if counts:
        lines.append("  %-22s %5s %8s %5s" % ("rule", "error", "warning", "info"))
    for rule in sorted(counts, key=lambda r: (-counts[r]["error"], -counts[r]["warning"], -counts[r]["info"], r)):
        c = counts[rule]
        lines.append("  %-22s %5d %8d %5d" % (rule, c["error"], c["warning"], c["info"]))
    if out_dir:
        lines.append("  findings.json: %s" % os.path.join(out_dir, "findings.json"))
        lines.append("  local.sarif:   %s (SARIF 2.1.0, for code scanning)" % os.path.join(out_dir, "local.sarif"))
    else:
        lines.append("  findings.json and local.sarif were not written: give --report-dir DIR to keep them")
    if failed:
        lines.append("  exit code %d: %s failed (an error finding, or a check that could not run); "
                     "warnings and notes alone never fail" % (exit_code, ", ".join(names.get(i, i) for i in failed)))
    else:
        lines.append("  exit code 0: no check failed%s" % (
            " (the warnings and notes above do not fail a run)" if total["warning"] + total["info"] else ""))
    return {"exit_code": exit_code, "text": "\n".join(lines)}
