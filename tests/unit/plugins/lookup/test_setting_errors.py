# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/lookup/setting_errors.py over the real argument specs and role defaults of the collection."""

from __future__ import annotations

import pytest
import yaml
from ansible import constants as C
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.rlstack.validation.plugins.lookup import setting_errors

NAME = "rlstack.validation.setting_errors"


@pytest.fixture
def lookup():
    options = yaml.safe_load(setting_errors.DOCUMENTATION)["options"]
    C.config.initialize_plugin_configuration_definitions("lookup", NAME, options)
    loader = DataLoader()
    plugin = setting_errors.LookupModule(loader=loader, templar=Templar(loader=loader))
    plugin._load_name = NAME
    return plugin


def test_the_defaults_of_every_level_are_allowed(lookup):
    assert lookup.run([], variables={"inventory_hostname": "c1"}) == []


def test_bad_values_from_the_inventory_or_e(lookup):
    errors = lookup.run([], variables={"inventory_hostname": "c1", "l0_infrastructure_timeout_s": "banana",
                                       "validation_transport": "ssh"})
    assert errors == ['validation_transport is "ssh", but it must be one of kubernetes, host.',
                      'l0_infrastructure_timeout_s is "banana", but it must be an integer from 1 to 604800.']


def test_a_bad_run_wide_value_reaches_a_levels_default(lookup):
    errors = lookup.run([], variables={"inventory_hostname": "c1", "validation_framework_imports": "torch"})
    assert 'validation_framework_imports is "torch", but it must be a list of strings.' in errors
    assert ('l1_runtime_imports (the default of roles/l1_runtime) is "torch", but it must be a list of strings.'
            in errors)


def test_a_template_that_cannot_be_read_is_one_sentence(lookup):
    errors = lookup.run(["l2_single_gpu"], variables={"l2_single_gpu_dtype": trust_as_template("{{ nope }}")})
    assert len(errors) == 1 and errors[0].startswith("l2_single_gpu_dtype could not be read: ")
    assert "nope" in errors[0]


def test_one_level_only(lookup):
    assert lookup.run(["l3_multi_gpu"], variables={"validation_transport": "ssh"}) == []
