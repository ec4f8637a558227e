# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Files and tools of local mode (controller only: git and the file system): which files to lint, and
the output of shellcheck, yamllint and terraform turned into findings and checks.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess

from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import LintError, check, finding
from ansible_collections.rlstack.validation.plugins.module_utils.lint._manifest_sources import sniff
from ansible_collections.rlstack.validation.plugins.module_utils.lint._manifest_lint import display_path

PRUNED_DIRS = (".git", ".venv*", "venv", ".tox", ".nox", ".cache", ".collections", ".ansible", ".sim",
               "node_modules", "__pycache__", ".terraform", ".pytest_cache", ".hypothesis", ".mypy_cache")


def pruned(name):
    """True for a directory name that is never searched (tool state, virtual environments, caches)."""
    return any(fnmatch.fnmatch(name, pattern) for pattern in PRUNED_DIRS)


def exclude_match(rel_path, patterns):
    """True when a relative path is one of the excluded paths, under one, or matches one of the globs."""
    rel = rel_path.replace(os.sep, "/")
    while rel.startswith("./"):
        rel = rel[2:]
    for pattern in patterns or []:
        pattern = str(pattern).strip().rstrip("/")
        while pattern.startswith("./"):
            pattern = pattern[2:]
        if not pattern:
            continue
        if rel == pattern or rel.startswith(pattern + "/") or fnmatch.fnmatch(rel, pattern):
            return True
    return False


def git_files(directory):
    """The files git knows under a directory of a work tree (tracked, and untracked but not ignored),
    as absolute paths; None when the directory is not in a git work tree or git is missing."""
    try:
        proc = subprocess.run(["git", "-C", directory, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    names = proc.stdout.decode("utf-8", errors="replace").split("\0")
    return [os.path.join(directory, name) for name in names if name]


def _walk_files(directory):
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not pruned(d))
        for name in sorted(files):
            yield os.path.join(root, name)


DEFAULT_PATTERNS = {
    "shell": ["*.sh", "*.bash"],
    "yaml": ["*.yml", "*.yaml"],
    "terraform": ["*.tf"],
    "kustomization": ["kustomization.yaml", "kustomization.yml", "Kustomization"],
    # read for the envsubst calls that say how each manifest is rendered (_render_plan), not linted
    "docs": ["*.md", "*.markdown", "*.rst"],
}


def lint_files(paths, exclude=(), base="", patterns=None, use_git=True):
    """Files to lint, by kind: {'shell': [...], 'yaml': [...]} (absolute paths, sorted).

    paths: files and directories. In a directory of a git work tree the files are those git knows
    (tracked, or untracked and not ignored by .gitignore); elsewhere every file. Directories named in
    PRUNED_DIRS (tool state such as .git, .venv*, .collections, .ansible) are never searched, nor what
    `exclude` names (paths relative to `base`, or globs). A file given explicitly is always kept.
    patterns: DEFAULT_PATTERNS by default; a file goes to every kind whose globs match its name. A file no
    glob matches is read by content (_manifest_sources.sniff): a Kubernetes object in a file of another name
    (job.yaml-template, pod.tpl, job.yaml.j2, no extension) goes to 'manifest_other', a shell script without a
    .sh name (its #! line) to 'script_other'.
    """
    patterns = patterns or DEFAULT_PATTERNS
    base = os.path.abspath(base or os.getcwd())
    out = dict((kind, []) for kind in patterns)
    out.update(manifest_other=[], script_other=[])

    def classify(path):
        name = os.path.basename(path)
        matched = False
        for kind, globs in patterns.items():
            if any(fnmatch.fnmatch(name, g) for g in globs):
                out[kind].append(os.path.abspath(path))
                matched = True
        if not matched:
            found = sniff(path)
            if found:
                out[found + "_other"].append(os.path.abspath(path))

    for path in paths or []:
        path = os.path.abspath(os.path.join(base, str(path)))
        if os.path.isfile(path):
            classify(path)
            continue
        if not os.path.isdir(path):
            raise LintError("%s does not exist" % path)
        files = git_files(path) if use_git else None
        if files is None:
            files = _walk_files(path)
        for full in files:
            rel_dir = os.path.relpath(os.path.dirname(full), path)
            if rel_dir != "." and any(pruned(part) for part in rel_dir.split(os.sep)):
                continue
            if not os.path.isfile(full):
                continue  # a link to a directory, or a deleted file git still tracks
            if not exclude_match(os.path.relpath(full, base), exclude):
                classify(full)
    return dict((kind, sorted(set(items))) for kind, items in out.items())


# The severity policy of shellcheck's comments (docs/local-mode.md, "Severity policy"): what makes a script
# fail or do something else than it says is an error; what may be intended is a warning; what is about
# shellcheck not seeing the whole program (a file it cannot follow) is a note, since the script is not wrong.
SHELLCHECK_LEVELS = {"error": "error", "warning": "error", "info": "info", "style": "info"}
SHELLCHECK_CODE_SEVERITY = {
    "SC1090": "info",     # can't follow non-constant source: the sourced path is computed at run time
    "SC1091": "info",     # not following a sourced file (not given, or not there before a build)
    "SC2034": "warning",  # appears unused: often read by a script that sources this one
    "SC2154": "warning",  # referenced but not assigned: often exported by the caller or the container
    "SC2155": "warning",  # declare and assign separately: only hides a failing command's status
}
SHELLCHECK_FIX = ("fix it or, where it is intended, add `# shellcheck disable=SCxxxx` with the reason above the line "
                  "(https://www.shellcheck.net/wiki/SCxxxx)")


def shellcheck_severity(code, level):
    """The severity of one shellcheck comment under the policy above (code 'SC1090', level 'warning')."""
    return SHELLCHECK_CODE_SEVERITY.get(code) or SHELLCHECK_LEVELS.get(str(level), "warning")


def shellcheck_findings(output, files, base=""):
    """(checks, findings) of `shellcheck --format=json1` output: one finding per comment, with the severity
    of the policy (shellcheck_severity); a failing check per error, one passing check per file without an
    error (its warnings and notes counted)."""
    try:
        data = json.loads(output)
    except (TypeError, ValueError):
        raise LintError("shellcheck printed no JSON (%s)" % (str(output)[:300] or "no output at all"))
    comments = data.get("comments", []) if isinstance(data, dict) else data
    by_file = {}
    for item in comments or []:
        key = os.path.abspath(os.path.join(base or "", str(item.get("file"))))
        by_file.setdefault(key, []).append(item)
    checks, findings = [], []
    for path in files:
        shown = display_path(path, base)
        items = sorted(by_file.get(os.path.abspath(str(path)), []),
                       key=lambda c: (c.get("line", 0), c.get("column", 0), c.get("code", 0)))
        errors = 0
        for item in items:
            code = "SC%s" % item.get("code")
            found = finding("shellcheck", shellcheck_severity(code, item.get("level")),
                            "%s (%s): %s" % (code, item.get("level"), item.get("message")),
                            SHELLCHECK_FIX.replace("SCxxxx", code), file=shown, line=item.get("line") or 0,
                            column=item.get("column") or 0, path=code, actual=1, expected=0)
            findings.append(found)
            if found["severity"] == "error":
                errors += 1
                checks.append(check("shellcheck", "%s:%s:%s" % (shown, found["line"], found["column"]), op="eq",
                                    actual=1, expected=0, unit=code, message=found["message"], hint=found["fix"]))
        if not errors:
            notes = len(items)
            checks.append(check("shellcheck", shown, op="eq", actual=0, expected=0,
                                unit="errors" + (" (%d warnings or notes)" % notes if notes else "")))
    return checks, findings


_YAMLLINT_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): \[(?P<level>\w+)\] (?P<msg>.*)$")
YAMLLINT_FIX = "fix the line; the rules are those of the yamllint configuration the run used (local_checks_yamllint_config)"


def yamllint_findings(output, files, base=""):
    """(checks, findings) of `yamllint --format parsable` output: errors fail, warnings are findings only."""
    by_file = {}
    for line in str(output or "").splitlines():
        match = _YAMLLINT_LINE.match(line.strip())
        if match:
            key = os.path.abspath(os.path.join(base or "", match.group("file")))
            by_file.setdefault(key, []).append(match.groupdict())
    checks, findings = [], []
    for path in files:
        shown = display_path(path, base)
        items = by_file.get(os.path.abspath(str(path)), [])
        for item in items:
            severity = "error" if item["level"] == "error" else "warning"
            rule = re.search(r"\(([\w-]+)\)\s*$", item["msg"])
            found = finding("yamllint", severity, item["msg"], YAMLLINT_FIX, file=shown, line=int(item["line"]),
                            column=int(item["col"]), path=rule.group(1) if rule else "", actual=1, expected=0)
            findings.append(found)
            if severity == "error":
                checks.append(check("yamllint", "%s:%s:%s" % (shown, item["line"], item["col"]), op="eq", actual=1,
                                    expected=0, unit="errors", message=item["msg"], hint=YAMLLINT_FIX))
        if not [i for i in items if i["level"] == "error"]:
            warnings = len(items)
            checks.append(check("yamllint", shown, op="eq", actual=0, expected=0,
                                unit="errors" + (" (%d warnings)" % warnings if warnings else "")))
    return checks, findings


# --------------------------------------------------------------------------------------------------
# Terraform

_MODULE_SOURCE = re.compile(r'(?m)^\s*source\s*=\s*"(\.{1,2}/[^"]*)"')


def terraform_root_modules(files, base):
    """The root modules among the directories holding *.tf files: those that no other directory calls as
    a local module (source = "./..." or "../..."), sorted; .terraform directories left out."""
    dirs = sorted(set(os.path.dirname(os.path.abspath(f)) for f in files
                      if f.endswith(".tf") and ".terraform" not in f.split(os.sep)))
    called = set()
    for directory in dirs:
        for name in sorted(os.listdir(directory)):
            if not name.endswith(".tf"):
                continue
            try:
                with open(os.path.join(directory, name), "r", encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
            except (IOError, OSError):
                continue
            for source in _MODULE_SOURCE.findall(text):
                called.add(os.path.normpath(os.path.join(directory, source)))
    return [d for d in dirs if d not in called]


_OFFLINE = re.compile(r"(?i)(could not connect|no such host|dial tcp|i/o timeout|failed to query available "
                      r"provider packages|failed to download|connection refused|network is unreachable|"
                      r"could not retrieve the list of available versions|TLS handshake timeout|"
                      r"Failed to install provider|registry\.terraform\.io)")


def terraform_init_plan(roots, first_init_runs=None):
    """Which root modules are initialised, so that an unreachable registry is found once, not per module:
    {'first': index of the first root without .terraform/ (-1: none), 'rest': the indexes of the others without
    it, 'offline': why the registry could not be reached, from the first module's init result (a registered loop
    result of one item), '' when it could or before it ran}."""
    uninit = [i for i, root in enumerate(roots or []) if not os.path.isdir(os.path.join(str(root), ".terraform"))]
    offline = ""
    for run in first_init_runs or []:
        if run.get("skipped") or run.get("rc") == 0:
            continue
        text = str(run.get("stderr") or "") + str(run.get("stdout") or "")
        if _OFFLINE.search(text):
            offline = "%s (terraform init -backend=false in %s)" % (_first_error(text), run.get("item"))
    return {"first": uninit[0] if uninit else -1, "rest": uninit[1:], "offline": offline}


def terraform_checks(roots, base, fmt_runs, init_runs, validate_runs, offline=""):
    """(checks, findings, skipped) of terraform fmt -check, init -backend=false and validate -json per root
    module. The *_runs are the registered loop results (each with item, rc, stdout, stderr, or skipped);
    an init that fails because the registry cannot be reached makes that module's validate SKIPPED (in
    `skipped`, with the reason), not FAIL. offline (terraform_init_plan's): the registry was found unreachable
    once, so the other modules without .terraform/ were not initialised: SKIPPED with that reason too."""
    def by_item(runs):
        out = {}
        for run in runs or []:
            out[str(run.get("item"))] = run
        return out
    fmt_by, init_by, validate_by = by_item(fmt_runs), by_item(init_runs), by_item(validate_runs)
    checks, findings, skipped = [], [], []
    for root in roots:
        node = display_path(root, base) or "."
        fmt = fmt_by.get(root) or {}
        if fmt.get("rc") == 2 or (fmt and fmt.get("rc") not in (0, 3) and not fmt.get("skipped")):
            checks.append(check("terraform_fmt", node, op="eq", actual=None, expected=0, unit="files",
                                evidence_missing=True, message="terraform fmt could not read the configuration: %s"
                                % str(fmt.get("stderr") or "").strip()[:400], hint="fix the syntax error it names"))
        elif fmt and not fmt.get("skipped"):
            unformatted = [l.strip() for l in str(fmt.get("stdout") or "").splitlines() if l.strip()]
            for name in unformatted:
                findings.append(finding("terraform_fmt", "error", "%s is not formatted as terraform fmt writes it"
                                        % name, "run terraform fmt -recursive %s" % node,
                                        file=display_path(os.path.join(root, name), base), line=1))
            checks.append(check("terraform_fmt", node, op="eq", actual=len(unformatted), expected=0, unit="files",
                                message="not formatted: %s" % ", ".join(unformatted) if unformatted else "",
                                hint="run terraform fmt -recursive %s" % node if unformatted else ""))
        init = init_by.get(root) or {}
        if offline and (not init or init.get("skipped")) and not os.path.isdir(os.path.join(root, ".terraform")):
            why = ("not initialised: the provider registry could not be reached from the first module, so no other "
                   "module tried: %s" % offline)
            skipped.append({"module": node, "why": why})
            findings.append(finding("terraform_validate", "info", "%s: validate SKIPPED: %s" % (node, why),
                                    "run terraform init in %s where the registry can be reached (or set "
                                    "TF_PLUGIN_CACHE_DIR / a provider mirror), then run local mode again" % node,
                                    file=node))
            continue
        if init and not init.get("skipped") and init.get("rc") != 0:
            text = str(init.get("stderr") or "") + str(init.get("stdout") or "")
            if _OFFLINE.search(text):
                why = ("terraform init -backend=false could not download providers or modules (no network, or no "
                       "registry mirror), and validate needs them: %s" % _first_error(text))
                skipped.append({"module": node, "why": why})
                findings.append(finding("terraform_validate", "info", "%s: validate SKIPPED: %s" % (node, why),
                                        "run terraform init in %s where the registry can be reached (or set "
                                        "TF_PLUGIN_CACHE_DIR / a provider mirror), then run local mode again" % node,
                                        file=node))
            else:
                checks.append(check("terraform_init", node, op="eq", actual=init.get("rc"), expected=0,
                                    message="terraform init -backend=false failed: %s" % _first_error(text),
                                    hint="fix the error it names, or run terraform init in %s first" % node))
            continue
        run = validate_by.get(root) or {}
        if not run or run.get("skipped"):
            continue
        try:
            data = json.loads(run.get("stdout") or "{}")
        except ValueError:
            data = {}
        errors = [d for d in data.get("diagnostics") or [] if d.get("severity") == "error"]
        for diag in errors:
            rng = diag.get("range") or {}
            start = rng.get("start") or {}
            where = os.path.join(root, rng["filename"]) if rng.get("filename") else root
            detail = (": " + diag["detail"]) if diag.get("detail") else ""
            line, column = start.get("line") or 0, start.get("column") or 0
            fix = "terraform -chdir=%s validate shows it in full" % node
            findings.append(finding("terraform_validate", "error", "%s%s" % (diag.get("summary"), detail), fix,
                                    file=display_path(where, base), line=line, column=column))
            checks.append(check("terraform_validate", "%s:%s:%s" % (display_path(where, base), line, column),
                                op="eq", actual=1, expected=0, unit="errors", message=str(diag.get("summary")),
                                hint=fix))
        if not errors:
            checks.append(check("terraform_validate", node, op="eq", actual=0, expected=0, unit="errors"))
    return checks, findings, skipped


def _first_error(text):
    lines = [l.strip() for l in str(text).splitlines() if l.strip() and not l.strip().startswith("│ ") or "Error" in l]
    for line in lines:
        if "Error" in line:
            return line.strip("│ ").strip()[:300]
    return (lines[0] if lines else "no output")[:300]
