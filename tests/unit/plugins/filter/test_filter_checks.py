# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/filter/checks.py: the names it exposes and calls on plain and tagged data."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.rlstack.validation.plugins.filter import checks as checks_filter
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _probe_pods
from filter_helpers import tagged

REPO = Path(__file__).resolve().parents[4]
PROBES = REPO / "sim" / "replay" / "probes"
NAMES = {"watched_jobs", "l0_checks", "l0_reads", "l1_checks", "l2_checks", "l3_probe_checks", "l4_checks", "job_log_checks", "example_rows",
         "example_job", "dcgm_plan", "libero_config", "host_job_results"}


def outcome(*parts):
    return _probe_pods.probe_output(PROBES.joinpath(*parts).read_text(encoding="utf-8") + "__rlstack_rc=0\n")


def test_filters_exposes_the_names():
    filters = checks_filter.FilterModule().filters()
    assert set(filters) == NAMES
    assert all(callable(f) for f in filters.values())


@pytest.mark.parametrize("convert", [lambda v: v, tagged], ids=["plain", "tagged"])
def test_l0_checks_filter(convert):
    node = {"metadata": {"name": "p5-node-1", "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"}},
            "status": {"capacity": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}, "conditions": [{"type": "Ready", "status": "True"}]}}
    probes = {"p5-node-1": outcome("probe_node", "gpu-missing", "p5.48xlarge.out")}
    result = checks_filter.l0_checks(convert([node]), convert(probes), convert({"transport": "kubernetes", "min_nodes": 1}))
    gpu = [c for c in result if c["name"] == "gpu_count"][0]
    assert (gpu["node"], gpu["actual"], gpu["expected"]) == ("p5-node-1", 7, 8)
    assert checks_filter.l0_checks(None, None, None)[0]["name"] == "gpu_nodes"


@pytest.mark.parametrize("convert", [lambda v: v, tagged], ids=["plain", "tagged"])
def test_l0_checks_filter_judges_what_the_probe_read(convert):
    """runner_probe_reads (the l0_reads reads, done by the probe's module) become the DaemonSet and claim checks."""
    queries = checks_filter.l0_reads([{"label": "EFA device plugin", "namespace": "kube-system", "name_contains": "efa"}],
                                     "ns", "fsx-claim")
    reads = [{"item": queries[0]["item"], "resources": [], "error": ""},
             {"item": queries[1]["item"], "resources": [{"status": {"phase": "Bound"}}], "error": ""},
             {"item": queries[2]["item"], "resources": [], "error": "not found"}]
    result = checks_filter.l0_checks(convert([]), convert({}), convert({"transport": "host", "reads": reads}))
    efa = [c for c in result if c["name"] == "daemonset_efa"][0]
    claim = [c for c in result if c["name"] == "storage_claim"][0]
    assert (efa["actual"], claim["actual"]) == (False, "Bound")


@pytest.mark.parametrize("convert", [lambda v: v, tagged], ids=["plain", "tagged"])
def test_dcgm_plan_filter_counts_the_gpus_of_the_nodes(convert):
    nodes = convert([{"node": "p5-node-0", "gpus": 8}, {"node": "p5-node-1", "gpus": "8"}])
    plan = checks_filter.dcgm_plan(convert(3), nodes)
    assert (plan["level"], plan["gpu_minutes"]) == (3, 16 * plan["bound_s"] // 60)
    assert checks_filter.dcgm_plan(0)["bound_s"] == 0


@pytest.mark.parametrize("convert", [lambda v: v, tagged], ids=["plain", "tagged"])
def test_per_node_filters_sort_by_node(convert):
    probes = convert({"node-b": outcome("probe_runtime", "healthy", "default.out"), "node-a": {"status": "no_output", "error": "boom"}})
    result = checks_filter.l1_checks(probes, convert({"gpu_count": 1}))
    assert result[0]["node"] == "node-a"
    assert result[0]["name"] == "probe"
    assert [c["name"] for c in result if c["node"] == "node-b"][:3] == ["torch", "cuda_available", "gpu_count"]
    assert checks_filter.l2_checks({}, {}) == []
    l3 = checks_filter.l3_probe_checks(convert({"n": outcome("probe_multigpu", "healthy", "default.out")}), {"world_size": 2})
    assert [c["name"] for c in l3] == ["process_group", "world_size", "fsdp", "allreduce_correct"]
    l4 = checks_filter.l4_checks(convert({"n": outcome("probe_sim_import", "sim-hang", "default.out")}), None)
    assert l4[0]["actual"] == "prompts_for_input"


def test_job_log_checks_filter_passes_the_log_error():
    result = tagged({"log": "", "log_error": "pods \"x\" not found", "state": {"complete": True, "settled": True}})
    checks = checks_filter.job_log_checks(result, "p5-node-1", {"success_markers": ["TRAINING_STEP_TEST_PASSED"]})
    assert [(c["name"], c["fail_msg"]) for c in checks] == [("job", ""), ("log", 'pods "x" not found')]
    assert checks_filter.job_log_checks(None, "", None)[0]["actual"] == "unknown"


def context(**kw):
    out = {"level": {"id": "l6_evaluation", "name": "Evaluation"}, "mode": "eval", "floor": 0.5,
           "error_patterns": ["Traceback"], "run": {}, "jobs": [],
           "gpu_nodes": [{"node": "n1", "instance_type": "p5.48xlarge"}], "node_selector": "role=gpu",
           "check_mode": False}
    out.update(kw)
    return tagged(out)


def test_example_rows_filter_judges_each_example_on_its_own_job_and_skips_what_does_not_fit():
    examples = tagged([{"name": "libero", "framework": "custom"}, {"name": "big", "nodes": 2, "framework": "custom"}])
    results = {"libero": {"log": "eval/libero_10/success_rate: 0.9\n", "log_error": "", "state": {"complete": True}}}
    rows = checks_filter.example_rows(examples, context(run={"examples": results}))
    assert [(r["id"], r["name"]) for r in rows] == [("l6_evaluation/libero", "Evaluation: libero"),
                                                    ("l6_evaluation/big", "Evaluation: big")]
    assert [(c["name"], c["actual"]) for c in rows[0]["checks"]] == [
        ("job", "Complete"), ("log_errors", []), ("success_rate:eval/libero_10/success_rate", 0.9)]
    assert (rows[0]["skip_reason"], rows[1]["skip_reason"]) == ("", "needs 2 GPU nodes, the cluster has 1 matching role=gpu")
    assert rows[0]["attach"]["gpu"][0]["gpu_seconds"] == 0  # no pod of a Job named "-"
    assert checks_filter.example_rows(examples[:1], context(check_mode=True))[0]["skip_reason"] == (
        "check mode: no Jobs are started")


def test_job_log_checks_names_every_check_after_the_nccl_launcher_when_asked():
    failed = tagged({"log": "", "log_error": "", "state": {"failed": True, "settled": True, "reason": "BackoffLimitExceeded"}})
    named = checks_filter.job_log_checks(failed, "", {}, "mpijob")
    assert [c["name"] for c in named] == ["mpijob", "mpijob"]
    assert [c["actual"] for c in named] == [c["actual"] for c in checks_filter.job_log_checks(failed, "", {})]


def test_example_job_filter_unknown_framework_is_a_filter_error():
    with pytest.raises(AnsibleFilterError, match="framework 'nope' has no contract"):
        checks_filter.example_job({"name": "x", "framework": "nope"}, "train", [], "img", 60)
    job = checks_filter.example_job(tagged({"name": "x", "framework": "trl", "command": ["python", "t.py"]}), "train",
                                    [], "img", 60)
    assert job["args"][:2] == ["--max_steps", "1"]


def test_libero_config_filter():
    cfg = checks_filter.libero_config(tagged({"benchmark_root": "/opt/libero/libero"}), "/etc/rlstack/libero")
    assert cfg["env"] == {"LIBERO_CONFIG_PATH": "/etc/rlstack/libero"}
    assert 'bddl_files: "/opt/libero/libero/bddl_files"\n' in cfg["text"]
    with pytest.raises(AnsibleFilterError, match="keys LIBERO does not read: LIBERO_DATASET_DIR"):
        checks_filter.libero_config({"LIBERO_DATASET_DIR": "/fsx"}, "/x")
