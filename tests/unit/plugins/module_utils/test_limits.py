# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/_limits.py, and that every literal copy of a limit and the table
"Where thresholds live" in docs/verdicts.md agree with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.rlstack.validation.plugins.module_utils import _limits
from ansible_collections.rlstack.validation.plugins.module_utils.lint import _pitfall_rules

REPO = Path(__file__).resolve().parents[4]


def _yaml(path):
    return yaml.safe_load((REPO / path).read_text(encoding="utf-8"))


def _argspec_default(role, option):
    return _yaml("roles/%s/meta/argument_specs.yml" % role)["argument_specs"]["main"]["options"][option]["default"]


def _table(path, heading):
    """The rows of the first Markdown table after `heading`, as lists of cells."""
    text = (REPO / path).read_text(encoding="utf-8")
    section = text[text.index(heading):]
    rows = []
    for line in section.splitlines()[1:]:
        if line.startswith("## "):
            break
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[1:]  # without the header


def test_limits_are_positive_whole_numbers_and_named_like_their_constants():
    for name, value in _limits.LIMITS.items():
        # 0 only where it has a meaning of its own (efa_memlock_min_kib: unlimited)
        assert isinstance(value, int) and (value > 0 or name in _limits.ZERO_MEANS), name
        assert getattr(_limits, name.upper()) == value, name
    assert set(_limits.ZERO_MEANS) <= set(_limits.LIMITS)


def test_limit_by_name_and_unknown_names():
    assert _limits.limit("problem_grace_s") == 45
    with pytest.raises(_limits.LimitError, match="unknown limit 'grace'; known: .*problem_grace_s"):
        _limits.limit("grace")


@pytest.mark.parametrize("value,expected", [(None, 3600), ("", 3600), (300, 600), (600, 600), ("7200", 7200),
                                            (900.0, 900), ("1200.0", 1200), (0, 600)])
def test_job_deadline_s_applies_the_default_and_the_floor(value, expected):
    assert _limits.job_deadline_s(value) == expected


@pytest.mark.parametrize("value", ["soon", [600], {}])
def test_job_deadline_s_rejects_what_is_not_seconds(value):
    with pytest.raises(_limits.LimitError, match="number of seconds"):
        _limits.job_deadline_s(value)


@pytest.mark.parametrize("value,expected", [(None, 45.0), ("", 45.0), ("60", 60.0), (0, 0.0), (12.5, 12.5)])
def test_grace_s(value, expected):
    assert _limits.grace_s(value) == expected
    assert isinstance(_limits.grace_s(value), float)


def test_grace_s_rejects_text():
    with pytest.raises(_limits.LimitError, match="grace period must be a number"):
        _limits.grace_s("a while")


def test_the_docs_table_lists_every_limit_with_its_value():
    rows = _table("docs/verdicts.md", "## Where thresholds live")
    documented = {row[0].strip("`"): float(row[1]) for row in rows}
    assert documented == dict(_limits.LIMITS, **_limits.TOLERANCES)


def test_tolerances_are_fractions_named_like_their_constants_and_read_by_name():
    for name, value in _limits.TOLERANCES.items():
        assert 0 < value < 1, name
        assert getattr(_limits, name.upper()) == value, name
        assert _limits.limit(name) == value


def test_literal_copies_agree_with_the_module():
    floor, deadline = _limits.JOB_DEADLINE_FLOOR_S, _limits.JOB_DEADLINE_S
    assert _pitfall_rules.DEFAULT_OPTIONS["min_deadline_s"] == floor
    assert _yaml("roles/local_checks/defaults/main.yml")["local_checks_min_deadline_s"] == floor
    assert _argspec_default("local_checks", "local_checks_min_deadline_s") == floor
    memlock = _limits.EFA_MEMLOCK_MIN_KIB
    assert _yaml("roles/l0_infrastructure/defaults/main.yml")["l0_infrastructure_efa_memlock_min_kib"] == memlock
    assert _argspec_default("l0_infrastructure", "l0_infrastructure_efa_memlock_min_kib") == memlock
    for role in ("l5_training_step", "l6_evaluation"):
        assert _yaml("roles/%s/defaults/main.yml" % role)["%s_deadline_s" % role] == deadline
        assert _argspec_default(role, "%s_deadline_s" % role) == deadline
    # configuration.md is generated from the run-wide argument spec: its `default` column is the spec's default.
    rows = _table("docs/configuration.md", "| setting")
    header = [cell.strip() for cell in "| setting | allowed | default | meaning |".strip("|").split("|")]
    settings = {row[0].strip("`"): row[header.index("default")].strip("`") for row in rows
                if row[0].startswith("`validation_")}
    for setting, name in (("validation_problem_grace_s", "problem_grace_s"), ("validation_start_timeout_s", "start_timeout_s"),
                          ("validation_lease_margin_s", "lease_margin_s"), ("validation_keep_failed_s", "keep_failed_s"),
                          ("validation_renewed_lease_s", "renewed_lease_s")):
        assert settings[setting] == str(_limits.LIMITS[name]), setting


def test_the_runners_wait_defaults_are_the_modules():
    # runner/vars/main.yml holds literals (tests/unit/plugins/plugin_utils/test_settings.py reads them).
    defaults = _yaml("roles/runner/vars/main.yml")
    for var, name in (("runner_problem_grace_s", "problem_grace_s"), ("runner_start_timeout_s", "start_timeout_s"),
                      ("runner_lease_margin_s", "lease_margin_s"), ("runner_keep_failed_s", "keep_failed_s"),
                      ("runner_renewed_lease_s", "renewed_lease_s")):
        assert "| default(%d) }}" % _limits.LIMITS[name] in defaults[var], var


# Files that still clamp with a literal 600 (owned by another change; remove them from here as they go).
CLAMP_ALLOWED = {"roles/local_checks/tasks/render.yml"}


def test_no_task_or_template_clamps_the_deadline_with_a_literal():
    clamp = re.compile(r",\s*600\s*\]\s*\|\s*max")
    found = {str(p.relative_to(REPO)) for pattern in ("roles/*/tasks/*.yml", "roles/*/templates/*.j2", "playbooks/*.yml")
             for p in REPO.glob(pattern) if clamp.search(p.read_text(encoding="utf-8"))}
    assert found <= CLAMP_ALLOWED
