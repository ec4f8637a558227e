# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/filter/nccl.py: the names it exposes and calls on plain and tagged data."""

from __future__ import annotations

import pytest

from ansible_collections.rlstack.validation.plugins.filter import nccl as nccl_filter
from filter_helpers import tagged


def test_filters_exposes_the_names():
    filters = nccl_filter.FilterModule().filters()
    assert set(filters) == {"nccl_item", "nccl_mpijob", "nccl_launcher", "nccl_log_facts", "nccl_sweep_items"}
    assert filters["nccl_item"] is nccl_filter.nccl_item
    assert filters["nccl_mpijob"] is nccl_filter.nccl_mpijob


@pytest.mark.parametrize("convert", [lambda v: v, tagged], ids=["plain", "tagged"])
def test_nccl_item_filter(convert):
    result = convert({"item": {"key": "p5-node-1", "value": {"gpus": 8}}, "nranks": 8, "complete": True, "changed": False})
    item = nccl_filter.nccl_item(result, convert("sweep"), convert({"min_busbw": [{"size": "1G", "floor": 300}]}))
    assert item["name"] == "sweep" and item["name"].__class__ is str
    assert item["node"] == "p5-node-1"
    assert item["facts"]["nranks"] == 8
    assert item["expect"] == {"min_busbw": [{"size": "1G", "floor": 300}]}
    assert nccl_filter.nccl_item(None) == {"name": "nccl", "node": "", "facts": {}, "expect": {}}


@pytest.mark.parametrize("convert", [lambda v: v, tagged], ids=["plain", "tagged"])
def test_nccl_mpijob_filter(convert):
    nodes = convert([{"node": "g6-node-1", "instance_type": "g6.8xlarge", "gpus": 1, "efa": 1},
                     {"node": "g6-node-2", "instance_type": "g6.8xlarge", "gpus": 1, "efa": 1}])
    job = nccl_filter.nccl_mpijob(nodes, convert("rlsv-run1-phase0"), convert("public.ecr.aws/hpc-cloud/nccl-tests:latest"), None, None, "0.05")
    assert job["mpijob"]["name"] == "rlsv-run1-phase0-nccl"
    assert (job["mpijob"]["rdma"], job["mpijob"]["max_bytes"]) == (False, "1G")
    assert job["expect"] == {"network": ["efa"], "nranks": 2, "min_busbw": [{"size": 1073741824, "floor": 1.0}], "tolerance": 0.05,
                             "require_complete": True,
                             "transport": {"instance_type": "g6.8xlarge", "provider": "efa", "nics": 1, "protocol": None,
                                           "gdrdma": False}}
    assert job["instance_type"].__class__ is str


@pytest.mark.parametrize("convert", [lambda v: v, tagged], ids=["plain", "tagged"])
def test_nccl_log_facts_is_what_nccl_log_info_returns_for_content(convert):
    from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl
    log = ("# nccl-tests version 2.17.6 nccl-headers=22807 nccl-library=22807\n"
           "#  Rank  0 Group  0 Pid   1 on p5-node-0 device  0 [0000:53:00] NVIDIA H100 80GB HBM3\n"
           "# Avg bus bandwidth    : 120.5 \n")
    facts = nccl_filter.nccl_log_facts(convert(log))
    assert facts == _nccl.parse_text(log) and facts["nccl_tests_version"] == "2.17.6"
    assert nccl_filter.nccl_log_facts(convert("")) is None and nccl_filter.nccl_log_facts(None) is None


@pytest.mark.parametrize("convert", [lambda v: v, tagged], ids=["plain", "tagged"])
def test_nccl_sweep_items_parse_each_probe_that_ran_as_its_nodes_item(convert):
    from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl
    log = "# nccl-tests version 2.17.6 nccl-headers=22807 nccl-library=22807\n"
    results = convert({"p5-node-0": {"status": "ok", "stdout": log}, "p5-node-1": {"status": "crashed", "stdout": log},
                       "p5-node-2": {"status": "ok", "stdout": ""}})
    items = nccl_filter.nccl_sweep_items(results, convert("sweep"), convert({"single_rank_ok": True}),
                                         convert({"p5-node-0": "p5.48xlarge"}))
    assert [i["node"] for i in items] == ["p5-node-0", "p5-node-2"]
    assert items[0] == {"name": "sweep", "node": "p5-node-0", "facts": _nccl.parse_text(log),
                        "expect": {"single_rank_ok": True}, "instance_type": "p5.48xlarge"}
    assert items[1]["facts"] is None and "instance_type" not in items[1]
    assert nccl_filter.nccl_sweep_items(None) == []
