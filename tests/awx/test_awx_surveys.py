# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every survey spec of awx/surveys.yml against AWX's rules (tests/awx/awx_rules.py), and what the
playbook receives from each question."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from ansible.module_utils.parsing.convert_bool import boolean

import awx_data
import awx_rules
import survey_selection

DATA = awx_data.load()
SURVEYS = DATA["awx_surveys"]
ROOT = Path(__file__).resolve().parents[2]
# Survey variables that only the proposed validate.yml change consumes (see docs/awx.md, "Surveys and tags").
PENDING_PLAYBOOK_SUPPORT = {"validation_levels", "validation_skip_to"}


def _questions():
    return [(name, item) for name, spec in SURVEYS.items() for item in spec["spec"]]


@pytest.mark.parametrize("name", sorted(SURVEYS))
def test_survey_spec_follows_awx_rules(name):
    assert awx_rules.survey_spec_errors(SURVEYS[name]) == []


@pytest.mark.parametrize("name", sorted(SURVEYS))
def test_survey_spec_round_trips_unchanged(name):
    """AWX stores choices/defaults given as strings normalised; ours must come back as given, or
    awx.awx.job_template reports changed on every run."""
    assert awx_rules.stored_survey_spec(SURVEYS[name]) == SURVEYS[name]


def test_every_survey_is_used_by_a_job_template():
    used = {jt["survey"] for jt in DATA["awx_job_templates"] if "survey" in jt}
    assert used == set(SURVEYS)


@pytest.mark.parametrize("name,item", _questions(), ids=lambda v: v if isinstance(v, str) else v["variable"])
def test_survey_variable_is_read_by_the_playbooks(name, item):
    """A survey answer nobody reads is a silent no-op in AWX."""
    pattern = re.compile(r"\b%s\b" % re.escape(item["variable"]))
    sources = list((ROOT / "roles").rglob("*.yml")) + list((ROOT / "playbooks").glob("validate*.yml"))
    used = any(pattern.search(p.read_text(encoding="utf-8")) for p in sources)
    if not used and item["variable"] in PENDING_PLAYBOOK_SUPPORT:
        pytest.skip(f"{item['variable']}: read once validate.yml takes survey levels (docs/awx.md)")
    assert used, item["variable"]


def test_the_rules_catch_bad_specs():
    """The checker itself: each broken question is reported."""
    good = {"name": "s", "description": "d", "spec": [
        {"question_name": "q", "variable": "v", "type": "multiplechoice", "choices": ["a", "b"], "default": "a",
         "required": True}]}
    assert awx_rules.survey_spec_errors(good) == []
    broken = {
        "unknown type": {"type": "boolean"},
        "default not among choices": {"default": "c"},
        "boolean choices": {"choices": [False, True], "default": ""},
        "required not bool": {"required": "true"},
        "bad variable": {"variable": "validation-levels"},
        "reserved variable": {"variable": "ansible_user"},
        "min not int": {"type": "integer", "min": "1", "default": 2, "choices": None},
        "two defaults": {"default": "a\nb"},
        "min above max": {"type": "integer", "min": 5, "max": 1, "default": 3},
        "integer default a string": {"type": "integer", "default": "3"},
        "no choices": {"choices": []},
    }
    for what, change in broken.items():
        spec = {**good, "spec": [{**good["spec"][0], **change}]}
        assert awx_rules.survey_spec_errors(spec), what
    assert awx_rules.survey_spec_errors({**good, "spec": [good["spec"][0], good["spec"][0]]})  # duplicate
    assert awx_rules.survey_spec_errors({"name": "s", "description": "d", "spec": []})


def test_survey_defaults_that_awx_applies_on_an_api_launch():
    """Launched through the API or CLI without answers, AWX sends these defaults and nothing else."""
    applied = awx_rules.survey_defaults_applied(SURVEYS["validate_level"])
    assert applied == {"validation_continue_on_error": "false"}


def _answer_sets(spec):
    """Answers as AWX sends them: every choice of each question, its bounds, and the defaults."""
    for item in spec["spec"]:
        var, qtype = item["variable"], item["type"]
        if qtype == "multiplechoice":
            for choice in item["choices"]:
                yield item, {var: choice}
        elif qtype == "multiselect":
            yield item, {var: list(item["choices"])}
            for choice in item["choices"]:
                yield item, {var: [choice]}
        elif qtype == "integer":
            yield item, {var: item["min"]}
            yield item, {var: item["max"]}
        elif qtype in ("text", "textarea"):
            yield item, {var: item.get("default", "")}


@pytest.mark.parametrize("name", sorted(SURVEYS))
def test_every_answer_awx_accepts_is_usable_by_the_playbook(name):
    """What AWX accepts must coerce cleanly on the playbook side (| bool, | int, the level filter)."""
    for item, answers in _answer_sets(SURVEYS[name]):
        assert awx_rules.survey_answer_errors(item, answers) == [], answers
        value = answers[item["variable"]]
        if item["variable"] == "validation_continue_on_error":
            assert boolean(value, strict=True) in (True, False)
        elif item["variable"] == "validation_levels":
            assert survey_selection.survey_tags(levels=value)
        elif item["variable"] == "validation_skip_to":
            assert survey_selection.survey_tags(skip_to=value) == ["from_" + value]
        elif item["type"] == "integer":
            assert int(value) == value


def test_awx_rejects_what_the_playbook_could_not_use():
    spec = {item["variable"]: item for item in SURVEYS["validate_level"]["spec"]}
    assert awx_rules.survey_answer_errors(spec["validation_levels"], {"validation_levels": "l0\nl3"})
    assert awx_rules.survey_answer_errors(spec["validation_levels"], {"validation_levels": ["l9"]})
    assert awx_rules.survey_answer_errors(spec["validation_continue_on_error"], {"validation_continue_on_error": "maybe"})
    assert awx_rules.survey_answer_errors(spec["validation_start_timeout_s"], {"validation_start_timeout_s": 5})
    assert awx_rules.survey_answer_errors(spec["validation_start_timeout_s"], {"validation_start_timeout_s": "900"})
    assert awx_rules.survey_answer_errors(spec["validation_example"], {"validation_example": "x" * 64})
    assert awx_rules.survey_answer_errors(spec["validation_continue_on_error"], {}) == ["'validation_continue_on_error' value missing"]
