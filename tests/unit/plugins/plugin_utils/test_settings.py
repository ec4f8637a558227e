# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/plugin_utils/_settings.py: one sentence per bad setting, never a traceback; the settings table
of docs/configuration.md and the runner's internal names agree with the argument spec.

Regenerate the table after changing roles/runner/meta/argument_specs.yml:
  RLSTACK_WRITE_DOCS=1 .venv/bin/pytest tests/unit/plugins/plugin_utils/test_settings.py -k table
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.rlstack.validation.plugins.module_utils import _levels
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _level_assert
from ansible_collections.rlstack.validation.plugins.plugin_utils import _settings

REPO = Path(__file__).resolve().parents[4]
PLAN = yaml.safe_load((REPO / "roles/runner/meta/argument_specs.yml").read_text(encoding="utf-8"))["argument_specs"]["plan"]
LEVEL_SPECS = {level_id: yaml.safe_load((REPO / "roles" / level_id / "meta/argument_specs.yml").read_text(encoding="utf-8"))
               ["argument_specs"]["main"]["options"] for level_id in _levels.ids() + _levels.diagnostic_ids()}
EVERY = dict(PLAN["options"])
for _options in LEVEL_SPECS.values():
    EVERY.update(_options)
BEGIN, END = "<!-- settings table: generated from roles/runner/meta/argument_specs.yml -->", "<!-- end of settings table -->"


# ------------------------------------------------------------------------------------------------ sentences


@pytest.mark.parametrize("name,value,words", [
    ("l0_infrastructure_timeout_s", "banana", 'l0_infrastructure_timeout_s is "banana", but it must be an integer from 1 to 604800.'),
    ("l0_infrastructure_timeout_s", -5, "is -5, but it must be an integer from 1 to 604800."),
    ("l0_infrastructure_timeout_s", 10 ** 30, "is 1000000000000000000000000000000, but it must be an integer"),
    ("l0_infrastructure_timeout_s", True, "is true, but it must be an integer"),
    ("l0_infrastructure_timeout_s", 1.5, "is 1.5, but it must be an integer"),
    ("validation_transport", "ssh", 'validation_transport is "ssh", but it must be one of kubernetes, host.'),
    ("validation_skip_to", "l9", 'but it must be one of "", l0, l1, l2, l3, phase0, l4, l5, l6.'),
    ("validation_continue_on_error", "maybe", 'validation_continue_on_error is "maybe", but it must be true or false.'),
    ("validation_tolerations", {"key": "x"}, "validation_tolerations is {\"key\": \"x\"}, but it must be a list of dicts (mappings)."),
    ("validation_image_pull_secrets", "a,b", 'is "a,b", but it must be a list of strings.'),
    ("validation_image_pull_secrets", [["a"]], 'is [["a"]], but it must be a list of strings.'),
    ("validation_simulator_env", ["A=1"], "but it must be a dict (a mapping)."),
    ("validation_image", ["x"], 'validation_image is ["x"], but it must be a string.'),
    ("l6_evaluation_floor", 1.5, "l6_evaluation_floor is 1.5, but it must be a number from 0 to 1."),
    ("l6_evaluation_floor", "nan", 'is "nan", but it must be a number from 0 to 1.'),
    ("l3_multi_gpu_sweep_max_bytes", 2 ** 41, "but it must be an integer from 1 to 2**40."),
    ("l0_infrastructure_efa_memlock_min_kib", -1, "is -1, but it must be an integer from 0 to 2**40."),
])
def test_one_sentence_names_the_setting_the_value_and_what_is_allowed(name, value, words):
    sentence = _settings.check(name, value, EVERY[name])
    assert words in sentence
    assert sentence.startswith(name) and sentence.endswith(".") and sentence.count(". ") == 0


@pytest.mark.parametrize("name,value", [
    ("l0_infrastructure_timeout_s", 120), ("l0_infrastructure_timeout_s", "120"), ("l0_infrastructure_timeout_s", 120.0),
    ("validation_continue_on_error", "true"), ("validation_continue_on_error", False), ("validation_continue_on_error", "no"),
    ("validation_transport", "host"), ("validation_skip_to", ""), ("validation_namespace", "rl"),
    ("validation_image_pull_secrets", []), ("validation_tolerations", [{"key": "a"}]), ("l6_evaluation_floor", "0.5"),
    ("validation_levels", {"anything": "raw"}), ("validation_kubeconfig", "/k"), ("validation_namespace", 5),
    ("l0_infrastructure_efa_memlock_min_kib", 8 * 2 ** 20),  # 8 GiB in KiB: over a count's 100000
])
def test_allowed_values_pass(name, value):
    assert _settings.check(name, value, EVERY[name]) is None


def test_the_source_of_a_default_is_named():
    sentence = _settings.check("l1_runtime_imports", "torch", EVERY["l1_runtime_imports"], "the default of roles/l1_runtime")
    assert sentence == 'l1_runtime_imports (the default of roles/l1_runtime) is "torch", but it must be a list of strings.'


def test_a_long_value_is_shortened():
    sentence = _settings.check("validation_image", {"x": "y" * 10240}, EVERY["validation_image"])
    assert "... (10249 characters), but it must be a string." in sentence and len(sentence) < 200


def test_check_all_keeps_the_order_and_reports_unreadable_templates():
    errors = _settings.check_all([
        ("validation_transport", "ssh", EVERY["validation_transport"], ""),
        ("validation_namespace", "ok", EVERY["validation_namespace"], ""),
        ("l2_single_gpu_dtype", _settings.Unreadable("'nope' is undefined."), EVERY["l2_single_gpu_dtype"], ""),
    ])
    assert errors == ['validation_transport is "ssh", but it must be one of kubernetes, host.',
                      "l2_single_gpu_dtype could not be read: 'nope' is undefined."]


def test_every_number_setting_has_a_range_and_every_range_a_setting():
    for name, spec in EVERY.items():
        if spec.get("type") in ("int", "float"):
            low, high = _settings.range_of(name, spec["type"])
            assert low >= 0 and high < 10 ** 16, name
    assert set(_settings.RANGES) <= set(EVERY)


# ------------------------------------------------------------------------------- the keys of a dict setting

EXPECTED = EVERY["l0_infrastructure_expected"]
FLOORS = EVERY["l3_multi_gpu_min_busbw"]


@pytest.mark.parametrize("name,value,spec,sentence", [
    # a misspelt key would be ignored, and L0 would pass on the profile's GPU count
    ("l0_infrastructure_expected", {"gpu_cont": 4}, EXPECTED,
     "l0_infrastructure_expected has key gpu_cont, but its keys are cuda_version, driver_version, efa_count, "
     "gpu_count, gpu_memory_mib_min, gpu_name_pattern, nvlink_per_gpu, nvswitch, pcie_gen, pcie_width."),
    ("l0_infrastructure_expected", {"gpu_count": "eight"}, EXPECTED,
     'l0_infrastructure_expected.gpu_count is "eight", but it must be an integer from 0 to 100000.'),
    # a floor judged only after the MPIJob ran: refused before it is started
    ("l3_multi_gpu_min_busbw", [{"size": "1G", "floor": 100}, {"size": "16G", "floor": "fast"}], FLOORS,
     'l3_multi_gpu_min_busbw[1].floor is "fast", but it must be a number from 0 to 1e+15.'),
    ("l3_multi_gpu_min_busbw", [{"floor": 100}], FLOORS, "l3_multi_gpu_min_busbw[0] has no size, which it needs."),
    ("l3_multi_gpu_min_busbw", [{"size": "1G", "floor": 100, "tolerance": 5}], FLOORS,
     "l3_multi_gpu_min_busbw[0].tolerance is 5, but it must be a number from 0 to 1."),
    ("l3_multi_gpu_min_busbw", ["1G"], FLOORS,
     'l3_multi_gpu_min_busbw is ["1G"], but it must be a list of dicts (mappings).'),
])
def test_the_keys_of_a_dict_setting_are_checked_as_settings(name, value, spec, sentence):
    assert _settings.check(name, value, spec) == sentence
    if "must be a number from 0 to 1." not in sentence:  # Ansible knows no ranges; the rest it refuses too
        assert ArgumentSpecValidator({name: spec}).validate({name: value}).error_messages


@pytest.mark.parametrize("name,value", [
    ("l0_infrastructure_expected", {"gpu_count": "8", "gpu_name_pattern": "H100", "nvswitch": "yes",
                                    "driver_version": "580.159.04", "efa_count": None}),
    ("l3_multi_gpu_min_busbw", [{"size": "1G", "floor": "100.5"},
                                {"size": 17179869184, "floor": 400, "tolerance": 0.2}]),
    ("l4_rollout_benchmark", {"call": "libero.libero.benchmark.get_benchmark", "name": "libero_10",
                              "expect_tasks": 10}),
])
def test_a_dict_setting_with_known_keys_passes(name, value):
    assert _settings.check(name, value, EVERY[name]) is None


@pytest.mark.parametrize("level_id", sorted(LEVEL_SPECS))
def test_ansibles_own_check_passes_with_each_roles_defaults(level_id):
    """What the role's argument spec says (a required key of a dict setting, say) holds for its defaults too:
    Ansible checks them when the role starts, given or not (a required key under an empty default dict fails)."""
    defaults = yaml.safe_load((REPO / "roles" / level_id / "defaults/main.yml").read_text(encoding="utf-8")) or {}
    options = LEVEL_SPECS[level_id]
    values = dict((k, v) for k, v in defaults.items() if k in options and "{{" not in str(v))
    assert ArgumentSpecValidator(options).validate(values).error_messages == []


def _untemplated(value):
    """The value with each templated string as None (not set): the lookup renders them before it checks."""
    if isinstance(value, dict):
        return dict((k, _untemplated(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_untemplated(v) for v in value]
    return None if isinstance(value, str) and "{{" in value else value


@pytest.mark.parametrize("name", ["l3_multi_gpu_single_node_min_busbw", "l3_multi_gpu_min_busbw", "phase0_efa_min_busbw"])
def test_each_roles_busbw_floors_have_the_keys_level_assert_judges(name):
    """The floors' keys are written in three role specs (YAML has no import across files): each must say what
    level_assert's nccl expect.min_busbw takes, or a floor the settings check lets through fails at the verdict."""
    judged = _level_assert.argument_spec()["nccl"]["options"]["expect"]["options"]["min_busbw"]["options"]
    assert dict((key, (spec["type"], bool(spec.get("required")))) for key, spec in EVERY[name]["options"].items()) \
        == dict((key, (spec["type"], bool(spec.get("required")))) for key, spec in judged.items())


def test_every_inventory_of_the_repo_uses_only_known_keys():
    """inventories/gpu-host's gpu_memory_mib_min (140000) was refused by a count's range until MiB had their own."""
    for path in sorted(REPO.glob("inventories/*/group_vars/all/*.yml")):
        values = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for name, value in values.items():
            if name in EVERY and EVERY[name].get("options") and _untemplated(value) is not None:
                assert _settings.check(name, _untemplated(value), EVERY[name]) is None, (path, name)


# ------------------------------------------------------------------------------------- property: any value

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 40), max_value=10 ** 40)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=50)
    | st.text(min_size=1, max_size=4).map(lambda t: (t * 10240)[:10240])  # 10 kB strings, unicode too
    | st.sampled_from(["", "true", "900", "-1", "1e400", "ünïcødé ✓", "[]", "{}", "a,b"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(EVERY)), value=VALUES)
def test_any_value_is_allowed_or_one_clear_sentence(name, value):
    spec = EVERY[name]
    sentence = _settings.check(name, value, spec)
    if sentence is None:
        # what passes here also passes Ansible's own check of the role's argument spec
        result = ArgumentSpecValidator({name: dict((k, v) for k, v in spec.items() if k != "default")}).validate({name: value})
        assert not result.error_messages, (name, value, result.error_messages)
        return
    assert "Traceback" not in sentence and "\n" not in sentence and sentence.endswith(".")
    if sentence.startswith(name + " is "):
        assert sentence.rpartition(", but it must be ")[2][:-1] == _settings.allowed(name, spec)
        assert len(sentence) < 300
    else:  # about a key of a dict setting whose spec lists its keys (keys_problem)
        assert spec.get("options") and sentence.startswith((name + ".", name + "[", name + " has ")), sentence
        assert len(sentence) < 600


# ---------------------------------------------------------------------------- the copies of the settings


def test_every_validation_setting_is_in_the_argument_spec():
    used = set()
    for path in list((REPO / "roles").glob("*/*/*.yml")) + list((REPO / "playbooks").glob("*.yml")):
        used |= set(re.findall(r"\bvalidation_[a-z0-9_]+\b", path.read_text(encoding="utf-8")))
    used -= {"validation_plan", "validation_survey", "validation_tags_problem"}  # filters of the collection, not settings
    assert used <= set(PLAN["options"]), sorted(used - set(PLAN["options"]))


def test_the_runners_internal_names_default_as_the_spec_says():
    text = (REPO / "roles/runner/vars/main.yml").read_text(encoding="utf-8")
    aliases = re.findall(r'^runner_\w+: "\{\{ (validation_\w+) \| default\((.*)\) \}\}"$', text, re.M)
    assert len(aliases) >= 20
    assert not (REPO / "roles/runner/defaults/main.yml").exists(), "runner_* are internal (vars), not defaults"
    for name, default in aliases:
        assert name in PLAN["options"], name
        if default == "inventory_hostname":
            assert "default" not in PLAN["options"][name]
            continue
        literal = ast.literal_eval(default.replace("false", "False").replace("true", "True"))
        assert PLAN["options"][name].get("default") == literal, name


def test_the_configuration_table_is_generated_from_the_spec():
    path = REPO / "docs" / "configuration.md"
    text = path.read_text(encoding="utf-8")
    table = _settings.configuration_table(PLAN["options"])
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    if os.environ.get("RLSTACK_WRITE_DOCS"):
        path.write_text(text[:start] + "\n" + table + "\n" + text[end:], encoding="utf-8")
        text = path.read_text(encoding="utf-8")
        start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    assert text[start:end].strip() == table, "regenerate: RLSTACK_WRITE_DOCS=1 pytest %s" % __file__


def test_an_empty_awx_survey_answer_read_back_as_null_means_not_set():
    """AWX 24.6.1 writes an empty survey answer as !unsafe '', which ansible-core 2.19 reads back as null."""
    assert _settings.check("validation_example", None, EVERY["validation_example"]) is None
    assert _settings.check("validation_example", "", EVERY["validation_example"]) is None


@pytest.mark.parametrize("name", sorted(n for n, s in EVERY.items()
                                        if s.get("default") in ("", None) and not s.get("required")))
def test_a_null_answer_is_not_set_for_ansible_too(name):
    # AWX's empty survey answer reaches the play as null: our check reads it as "not set", and the role's
    # argument spec must not refuse it either (found by the property above, validation_skip_to=None)
    spec = dict((k, v) for k, v in EVERY[name].items() if k != "default")
    assert _settings.check(name, None, EVERY[name]) is None
    assert not ArgumentSpecValidator({name: spec}).validate({name: None}).error_messages
