# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest
import yaml
from ansible import constants as C
from ansible.errors import AnsibleLookupError

from ansible_collections.rlstack.validation.plugins.lookup import instance_profile

NAME = "rlstack.validation.instance_profile"


@pytest.fixture
def lookup():
    options = yaml.safe_load(instance_profile.DOCUMENTATION)["options"]
    C.config.initialize_plugin_configuration_definitions("lookup", NAME, options)
    plugin = instance_profile.LookupModule()
    plugin._load_name = NAME
    return plugin


def test_returns_one_profile_per_term(lookup):
    result = lookup.run(["p5.48xlarge", "g6.8xlarge"])
    assert [r["instance_type"] for r in result] == ["p5.48xlarge", "g6.8xlarge"]
    assert result[0]["gpu_count"] == 8 and result[0]["expected_busbw_2node"]["1GiB"]["busbw_gbps"] == 437.0


def test_unknown_type_is_a_clear_error(lookup):
    with pytest.raises(AnsibleLookupError) as exc:
        lookup.run(["m5.large"])
    text = str(exc.value)
    assert "m5.large" in text and "known types" in text and "g6e.48xlarge" in text


def test_unknown_type_ignored(lookup):
    assert lookup.run(["m5.large", "p4d.24xlarge"], errors="ignore")[0] == {}
