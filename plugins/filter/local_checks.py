# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of local mode (role rlstack.validation.local_checks). They run on the controller and read its
files; the logic is in plugins/plugin_utils/_lint_files.py, _references.py, _sarif.py and _local_plan.py."""

from __future__ import annotations

import os
import shutil

from ansible.errors import AnsibleFilterError

from ansible_collections.rlstack.validation.plugins.module_utils._data import plain as _plain
from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import LintError
from ansible_collections.rlstack.validation.plugins.module_utils.lint._manifest_lint import display_path
from ansible_collections.rlstack.validation.plugins.plugin_utils import (
    _lint_files, _local_closing, _local_plan, _local_render, _references, _sarif)


def local_lint_files(paths, exclude=None, base="", patterns=None):
    """{'shell': [...], 'yaml': [...], 'terraform': [...], 'kustomization': [...]}: the files to lint."""
    try:
        return _lint_files.lint_files(_plain(paths or []), _plain(exclude or []), str(base or ""),
                                      _plain(patterns) if patterns else None)
    except LintError as exc:
        raise AnsibleFilterError("local_lint_files: %s" % exc)


def local_display_path(path, base=""):
    """The path relative to base when it is below base, else as given."""
    return display_path(str(path or ""), str(base or ""))


def shellcheck_checks(output, files, base=""):
    """`shellcheck --format=json1` output -> {checks, findings}."""
    try:
        checks, findings = _lint_files.shellcheck_findings(str(output or ""), _plain(files or []), str(base or ""))
    except LintError as exc:
        raise AnsibleFilterError("shellcheck_checks: %s" % exc)
    return {"checks": checks, "findings": findings}


def yamllint_checks(output, files, base=""):
    """`yamllint --format parsable` output -> {checks, findings}."""
    checks, findings = _lint_files.yamllint_findings(str(output or ""), _plain(files or []), str(base or ""))
    return {"checks": checks, "findings": findings}


def reference_checks(root, collection="", paths=None, kustomizations=None, scripts=None):
    """{'checks', 'references', 'findings'}: reference integrity of the Ansible content under root, of the
    kustomization files and of the shell scripts' `source` lines."""
    checks, refs = _references.reference_checks(str(root), str(collection or ""),
                                                _plain(paths) if paths else ("roles", "playbooks"),
                                                _plain(kustomizations or []), _plain(scripts or []))
    return {"checks": checks, "references": refs, "findings": _references.reference_findings(refs)}


def terraform_root_modules(files, base=""):
    """The root modules (directories) among the directories of the given *.tf files."""
    return _lint_files.terraform_root_modules(_plain(files or []), str(base or ""))


def terraform_checks(roots, base, fmt_results=None, init_results=None, validate_results=None, offline=""):
    """{'checks', 'findings', 'skipped'} of the registered loop results of terraform fmt, init and validate."""
    checks, findings, skipped = _lint_files.terraform_checks(
        _plain(roots or []), str(base or ""), _plain(fmt_results or []), _plain(init_results or []),
        _plain(validate_results or []), str(offline or ""))
    return {"checks": checks, "findings": findings, "skipped": skipped}


def terraform_init_plan(roots, first_init_results=None):
    """{'first', 'rest', 'offline'}: which root modules to initialise; offline once the first init found the
    registry unreachable."""
    return _lint_files.terraform_init_plan(_plain(roots or []), _plain(first_init_results or []))


def local_sarif(findings, root="", version=""):
    """A SARIF 2.1.0 log (dict) of the findings."""
    return _sarif.sarif(_plain(findings or []), str(root or ""), str(version or ""))


def local_summary(findings, verbose=False):
    """The console summary: counts per rule, every error (every finding with verbose)."""
    return _sarif.summary(_plain(findings or []), bool(verbose))


def local_closing(findings, plan=None, failed=None, out_dir="", root=""):
    """Local mode's closing summary: {'exit_code', 'text'}."""
    return _local_closing.closing(_plain(findings or []), _plain(plan or []), _plain(failed or []),
                                  str(out_dir or ""), str(root or ""))


def local_plan(levels, run_tags=None, skip_tags=None, grouped=None):
    """The rows of local mode, each with selected and reason, as --tags/--skip-tags select them."""
    return _local_plan.plan(_plain(levels or []), _plain(run_tags or []), _plain(skip_tags or []),
                            _plain(grouped or []))


def local_settings(defaults_list, keys, values, unset=_local_render.UNSET):
    """The level roles' settings: their defaults overridden by what the run sets."""
    return _local_render.settings(_plain(defaults_list or []), _plain(keys or []), _plain(values or []), unset)


def local_nodes(count, instance_type, profile=None, subnet=1):
    """`count` representative nodes of one instance type ({node, instance_type, gpus, efa})."""
    return _local_render.representative_nodes(int(count), str(instance_type), _plain(profile or {}), int(subnet))


def local_render_list(levels, descriptions, transport, run, namespace, owner, runner_dir):
    """What to render from the runner's templates, from each level's own description."""
    return _local_render.render_from_descriptions(_plain(levels or []), _plain(descriptions or {}), str(transport),
                                                  str(run), str(namespace), _plain(owner or []), str(runner_dir))


def local_collect_rendered(to_render, results, inline, namespace, owner, provided_env=None):
    """The manifests for manifest_lint from the rendered templates (results: the registered loop results)."""
    rendered = [r.get("ansible_facts", {}).get("_local_checks_one") for r in _plain(results or [])]
    return _local_render.collect(_plain(to_render or []), rendered, _plain(inline or []), str(namespace),
                                 _plain(owner or []), _plain(provided_env or []))


def local_which(name, first_dirs=None):
    """Path of a program: `name` itself when it is a path, else the first of first_dirs/name that is
    executable, else shutil.which(name); '' when there is none."""
    name = str(name or "").strip()
    if not name:
        return ""
    if os.sep in name:
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else ""
    for directory in _plain(first_dirs or []):
        candidate = os.path.join(str(directory), name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name) or ""


class FilterModule:
    """Local mode filters."""

    def filters(self):
        return {
            "local_lint_files": local_lint_files,
            "local_which": local_which,
            "local_display_path": local_display_path,
            "shellcheck_checks": shellcheck_checks,
            "yamllint_checks": yamllint_checks,
            "reference_checks": reference_checks,
            "terraform_root_modules": terraform_root_modules,
            "terraform_checks": terraform_checks,
            "terraform_init_plan": terraform_init_plan,
            "local_sarif": local_sarif,
            "local_closing": local_closing,
            "local_summary": local_summary,
            "local_plan": local_plan,
            "local_settings": local_settings,
            "local_nodes": local_nodes,
            "local_render_list": local_render_list,
            "local_collect_rendered": local_collect_rendered,
        }
