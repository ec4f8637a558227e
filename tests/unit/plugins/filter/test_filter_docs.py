# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every filter has its documentation (plugins/filter/<name>.yml, as ansible-core and community.general document
the filters of a file that holds several), and the documentation matches the function: name, positional
arguments, options and their defaults."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
import yaml

from ansible_collections.rlstack.validation.plugins.filter import (checks, example_jobs, isolate, local_checks, nccl,
                                                                   phase0_gate, runner, trainjob)
from ansible_collections.rlstack.validation.plugins.module_utils import _limits

FILTER_DIR = Path(__file__).resolve().parents[4] / "plugins" / "filter"
FILTERS = {}
for _module in (checks, example_jobs, isolate, local_checks, nccl, phase0_gate, runner, trainjob):
    FILTERS.update(_module.FilterModule().filters())
# Filters whose docs also state each option's required-ness and default exactly as the function has them.
STRICT = set()
for _module in (checks, isolate, nccl, runner, trainjob):
    STRICT.update(_module.FilterModule().filters())


def _doc(name):
    path = FILTER_DIR / (name + ".yml")
    if not path.is_file() and (FILTER_DIR / (name + ".py")).is_file():
        # A filter in a file of its own carries DOCUMENTATION/EXAMPLES/RETURN as module strings.
        tree = ast.parse((FILTER_DIR / (name + ".py")).read_text(encoding="utf-8"))
        strings = {node.targets[0].id: node.value.value for node in tree.body
                   if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                   and isinstance(node.targets[0], ast.Name)}
        return {"DOCUMENTATION": yaml.safe_load(strings["DOCUMENTATION"]), "EXAMPLES": strings["EXAMPLES"],
                "RETURN": yaml.safe_load(strings["RETURN"])}
    assert path.is_file(), "filter %s has no documentation: add plugins/filter/%s.yml" % (name, name)
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_every_doc_file_documents_a_filter():
    assert {p.stem for p in FILTER_DIR.glob("*.yml")} <= set(FILTERS)


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_the_documentation_matches_the_function(name):
    doc = _doc(name)
    documentation = doc["DOCUMENTATION"]
    assert documentation["name"] == name
    assert documentation["short_description"] and documentation["description"] and documentation["author"]
    params = list(inspect.signature(FILTERS[name]).parameters.values())
    names = ["_input"] + [p.name for p in params[1:]]
    options = documentation["options"]
    assert sorted(options) == sorted(names)
    if name not in STRICT:
        return
    assert [n.strip() for n in documentation["positional"].split(",")] == names
    assert list(options) == names
    assert options["_input"].get("required") is True
    for param in params[1:]:
        option = options[param.name]
        assert option["description"] and option["type"], param.name
        required = param.default is inspect.Parameter.empty
        assert bool(option.get("required")) == required, param.name
        if not required and param.default is not None:
            assert option.get("default") == param.default, param.name
    examples = yaml.safe_load(doc["EXAMPLES"])
    assert examples and ("rlstack.validation." + name) in doc["EXAMPLES"]
    assert doc["RETURN"]["_value"]["description"] and doc["RETURN"]["_value"]["type"]


def test_the_limit_filter_documents_every_limit():
    assert sorted(_doc("limit")["DOCUMENTATION"]["options"]["_input"]["choices"]) == sorted(dict(_limits.LIMITS, **_limits.TOLERANCES))
