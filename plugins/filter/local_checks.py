# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filters of local mode (role rlstack.validation.local_checks); the logic is in module_utils/_pitfalls.py.

Local mode runs on the controller, so these filters read the controller's files: the files to lint, and
the files that the collection's roles and playbooks refer to.
"""

from __future__ import annotations

import os
import shutil

from ansible.errors import AnsibleFilterError

from ansible_collections.rlstack.validation.plugins.filter.runner import _plain
from ansible_collections.rlstack.validation.plugins.module_utils import _pitfalls


def local_lint_files(paths, exclude=None, base="", patterns=None):
    """{'shell': [...], 'yaml': [...]}: the files to lint under the given files and directories."""
    try:
        return _pitfalls.lint_files(_plain(paths or []), _plain(exclude or []), str(base or ""),
                                    _plain(patterns) if patterns else None)
    except _pitfalls.LintError as exc:
        raise AnsibleFilterError("local_lint_files: %s" % exc)


def local_display_path(path, base=""):
    """The path relative to base when it is below base, else as given."""
    return _pitfalls.display_path(str(path or ""), str(base or ""))


def shellcheck_checks(output, files, base="", severity="warning"):
    """`shellcheck --format=json1` output -> one check per file."""
    try:
        return _pitfalls.shellcheck_checks(str(output or ""), _plain(files or []), str(base or ""), str(severity))
    except _pitfalls.LintError as exc:
        raise AnsibleFilterError("shellcheck_checks: %s" % exc)


def yamllint_checks(output, files, base=""):
    """`yamllint --format parsable` output -> one check per file."""
    return _pitfalls.yamllint_checks(str(output or ""), _plain(files or []), str(base or ""))


def reference_checks(root, collection="", paths=None):
    """{'checks': [...], 'references': [...]}: reference integrity of the roles and playbooks under root."""
    checks, refs = _pitfalls.reference_checks(str(root), str(collection or ""),
                                              _plain(paths) if paths else ("roles", "playbooks"))
    return {"checks": checks, "references": refs}


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
        }
