# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/local_checks: every default has an argument spec entry and the literal defaults agree; the rows
of vars/main.yml and the task files that judge them agree."""

from __future__ import annotations

import re

import yaml

from local_helpers import ROOT

ROLE = ROOT / "roles" / "local_checks"


def load(rel):
    return yaml.safe_load((ROLE / rel).read_text())


def test_defaults_and_argument_spec_agree():
    defaults = load("defaults/main.yml")
    spec = load("meta/argument_specs.yml")["argument_specs"]["main"]["options"]
    assert sorted(defaults) == sorted(spec)
    for name, option in spec.items():
        if "default" in option:
            assert option["default"] == defaults[name], name
        elif not (isinstance(defaults[name], str) and "{{" in defaults[name]):
            raise AssertionError("%s has a literal default %r that its argument spec lacks" % (name, defaults[name]))


def test_every_row_is_started_by_a_task_file():
    rows = [row["id"] for row in load("vars/main.yml")["__local_checks_levels"]]
    started = set()
    for path in (ROLE / "tasks").glob("*.yml"):
        started.update(re.findall(r"_local_checks_row: (local_\w+)", path.read_text()))
    assert started == set(rows)
