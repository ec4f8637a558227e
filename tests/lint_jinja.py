# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fail on data-building Jinja in task files: a `{% set %}` block that mutates (`.append(`, `.update(`,
`namespace(`). Such logic belongs in a documented, unit-tested filter or module_util (house style).

Usage: python tests/lint_jinja.py [ROOT]; prints one line per block and exits 1 when it finds one that is
not allowed. Task files are roles/*/tasks/**/*.yml and playbooks/**/*.yml.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

TASK_GLOBS = ("roles/*/tasks/**/*.yml", "roles/*/tasks/**/*.yaml", "playbooks/**/*.yml", "playbooks/**/*.yaml")

# Files that may still build data with Jinja, with the number of mutating blocks each may hold (none
# since local mode's blocks became filters; an entry is a debt with a reason, and its count only goes down).
ALLOWED = {}

SET = re.compile(r"\{%-?\s*set\s+(\w+)\s*=\s*(\[|\{|namespace\()")
MUTATORS = r"\.(append|update|extend|insert|setdefault)\("


def mutating_blocks(text):
    """(line number, variable) of each `{% set x = [] / {} / namespace(...) %}` that the scalar it is in
    then mutates (`x.append(`, `x.update(`, `namespace(` ...)."""
    found = []
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        match = SET.search(line)
        if not match:
            continue
        name = match.group(1)
        if match.group(2) == "namespace(":
            found.append((number, name))
            continue
        # Look ahead in the same scalar (until a line indented no deeper than the key holding it).
        indent = len(line) - len(line.lstrip())
        for later in lines[number:]:
            if later.strip() and len(later) - len(later.lstrip()) < indent:
                break
            if re.search(r"\b%s%s" % (re.escape(name), MUTATORS), later):
                found.append((number, name))
                break
    return found


def main(argv):
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parents[1])
    files = sorted({p for pattern in TASK_GLOBS for p in root.glob(pattern)})
    bad = 0
    for path in files:
        rel = str(path.relative_to(root))
        blocks = mutating_blocks(path.read_text(encoding="utf-8"))
        allowed = ALLOWED.get(rel, 0)
        for number, name in blocks:
            print("%s:%d: Jinja `set %s` builds data in a task file; move it into a filter or module_util (%s)"
                  % (rel, number, name, "allowed for now" if len(blocks) <= allowed else "not allowed"))
        if len(blocks) > allowed:
            bad += 1
    if bad:
        print("lint_jinja: %d task file(s) build data with mutating Jinja" % bad)
        return 1
    print("lint_jinja: ok (%d task files)" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
