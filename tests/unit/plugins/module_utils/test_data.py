# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_data.plain on the values a filter really gets: ansible-core's lazy containers, built by its own templar."""

from __future__ import annotations

import json

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.rlstack.validation.plugins.module_utils import _data

NODES = [{"metadata": {"name": "p5-node-%d" % i, "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"}},
          "status": {"allocatable": {"nvidia.com/gpu": "8"}, "conditions": [{"type": "Ready", "status": "True"}]}}
         for i in range(4)]


def through_a_filter(variables, expression):
    """What a filter receives for `expression` (a lazy container when it names a variable), and plain() of it."""
    seen = {}

    def grab(value):
        seen["given"] = value
        seen["plain"] = _data.plain(value)
        return 1

    templar = Templar(loader=DataLoader(), variables=variables)
    templar._engine.environment.filters["grab"] = grab
    templar.template(trust_as_template("{{ %s | grab }}" % expression))
    return seen


def _only_stored(copy):
    def guarded(value, stored):
        if not stored:
            pytest.fail("read through the templar")
        return copy(value, stored)
    return guarded


def test_a_lazy_container_without_templates_is_read_from_its_stored_values(monkeypatch):
    seen = through_a_filter({"nodes": NODES}, "nodes")
    assert hasattr(seen["given"], "_non_lazy_copy"), "ansible-core no longer hands filters lazy containers"
    assert seen["plain"] == NODES
    assert seen["plain"].__class__ is list and seen["plain"][0]["metadata"]["name"].__class__ is str  # builtins, untagged
    # the stored path is taken: the templated one is never entered
    monkeypatch.setattr(_data, "_copy", _only_stored(_data._copy))
    assert through_a_filter({"nodes": NODES}, "nodes")["plain"] == NODES


@pytest.mark.parametrize("variables,expression,expected", [
    # a template in the inventory, nested in a dict: rendered, as the templated path does
    ({"x": {"a": [1], "b": trust_as_template("{{ one + 1 }}")}, "one": 1}, "x", {"a": [1], "b": 2}),
    # a template that returns other variables' containers
    ({"x": {"n": trust_as_template("{{ nodes[:1] }}")}, "nodes": NODES}, "x", {"n": NODES[:1]}),
    ({"x": [trust_as_template("{% if one %}yes{% endif %}")], "one": 1}, "x", ["yes"]),
])
def test_a_template_under_the_container_is_rendered(variables, expression, expected):
    assert through_a_filter(variables, expression)["plain"] == expected


def test_text_that_only_looks_like_a_template_is_kept():
    # a module's output is not trusted as a template: Ansible never renders it, and neither path does
    logs = {"log": "printf '{{ .Name }}' and {% raw %}"}
    assert through_a_filter({"logs": logs}, "logs")["plain"] == logs


def test_builtin_values_are_copied():
    value = {"a": (1, 2.5, None, True), "b": b"x\xff"}
    out = _data.plain(value)
    assert out == {"a": [1, 2.5, None, True], "b": "x\ufffd"}


def test_json_text_of_a_lazy_container_is_compact_and_reads_back():
    templar = Templar(loader=DataLoader(), variables={"checks": NODES, "one": 1, "x": {"b": trust_as_template("{{ one + 1 }}")}})
    templar._engine.environment.filters["json_text"] = _data.json_text
    text = templar.template(trust_as_template("{{ checks | json_text }}"))
    assert isinstance(text, str) and ": " not in text and json.loads(text) == NODES
    # a template under the container is rendered first, as plain() does
    assert json.loads(templar.template(trust_as_template("{{ x | json_text }}"))) == {"b": 2}
    assert _data.json_text({"m": "é"}) == '{"m":"é"}'
