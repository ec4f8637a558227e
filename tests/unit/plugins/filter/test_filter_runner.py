# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/filter/runner.py: the names it exposes and the _plain conversion of Ansible values."""

from __future__ import annotations

from collections import OrderedDict

import pytest
from ansible.errors import AnsibleFilterError
from ansible.template import trust_as_template

from ansible_collections.rlstack.validation.plugins.module_utils import _levels
from ansible_collections.rlstack.validation.plugins.filter import runner
from filter_helpers import tagged

LEVELS = _levels.levels()
NAMES = {"pods_summary", "mpijob_state", "probe_output", "dns_label", "label_value", "validation_plan",
         "validation_survey", "validation_tags_problem", "admission_summary", "efa_request",
         "gpu_nodes", "daemonset_summary", "limit", "job_deadline_s",
         "probe_command", "probe_results", "probe_pods", "pod_hosts", "label_selector", "plan_reads",
         "plan_nodes", "json_text", "probe_outcomes"}


def exact_types(value):
    """Every str, dict and list in value is exactly that type (no subclass, no tuple)."""
    if isinstance(value, dict):
        return value.__class__ is dict and all(k.__class__ is str and exact_types(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return value.__class__ is list and all(exact_types(v) for v in value)
    if isinstance(value, str):
        return value.__class__ is str
    return True


def ready_pod(name, node, target):
    return {"metadata": {"name": name, "creationTimestamp": "2026-11-30T02:00:00Z", "labels": {"rlstack.io/target": target}},
            "spec": {"nodeName": node},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                       "containerStatuses": ({"name": "main", "state": {"running": {}}},)}}


def test_filters_exposes_the_names():
    filters = runner.FilterModule().filters()
    assert set(filters) == NAMES
    assert all(callable(f) for f in filters.values())
    assert filters["pods_summary"] is runner.pods_summary


def test_plain_turns_tagged_and_nested_values_into_plain_types():
    value = tagged({"a": ["x", ("y", {"z": "w"})], "n": 3, "none": None, "flag": True})
    assert not exact_types(value)
    plain = runner._plain(value)  # pylint: disable=protected-access
    assert plain == {"a": ["x", ["y", {"z": "w"}]], "n": 3, "none": None, "flag": True}
    assert exact_types(plain)
    assert exact_types(runner._plain(OrderedDict([(1, "one")])))  # pylint: disable=protected-access
    assert runner._plain(OrderedDict([(1, "one")])) == {"1": "one"}  # pylint: disable=protected-access


@pytest.mark.parametrize("convert", [lambda v: v, tagged], ids=["plain", "tagged"])
def test_pods_summary_filter(convert):
    pods = convert([ready_pod("probe-a", "ip-10-0-1-23.us-west-2.compute.internal", "ip-10-0-1-23-us-west-2-compute-internal"),
                    ready_pod("probe-b", "ip-10-0-1-24.us-west-2.compute.internal", "ip-10-0-1-24-us-west-2-compute-internal")])
    summary = runner.FilterModule().filters()["pods_summary"](pods, 2, "45")
    assert (summary["ok"], summary["settled"], summary["text"]) == (True, True, "2 Running of 2 expected")
    assert exact_types(summary)


def test_probe_output_filter_reads_plain_stdout_and_registered_results():
    stdout = '{"probe": "smoke", "ok": true}\n__rlstack_rc=0\n'
    assert runner.probe_output(trust_as_template(stdout))["status"] == "ok"
    exec_result = tagged({"rc": 0, "stdout": '{"probe": "smoke", "ok": true}\n__rlstack_rc=137\n', "stderr": "", "failed": False})
    out = runner.probe_output(exec_result)
    assert (out["status"], out["rc"]) == ("crashed", 137)
    command_result = {"rc": 1, "stdout": '{"probe": "smoke", "ok": false}\n', "stderr": "boom\n", "failed": True}
    out = runner.probe_output(command_result)
    assert (out["status"], out["rc"], out["stderr_tail"]) == ("crashed", 1, "boom")
    failed = {"failed": True, "msg": "pod not found", "stdout": '{"probe": "smoke"}\n'}
    out = runner.probe_output(failed)
    assert (out["status"], out["error"]) == ("no_output", "pod not found")


def test_dns_label_and_label_value_filters_accept_text_lengths():
    assert runner.dns_label(trust_as_template("rlsv-run1-L5/libero"), "52") == "rlsv-run1-l5-libero"
    assert len(runner.dns_label("x" * 80, "52")) == 52
    assert runner.label_value(trust_as_template("l5_training_step/libero-pi0")) == "l5_training_step.libero-pi0"


def test_mpijob_state_filter():
    mpijob = tagged({"metadata": {"name": "m"}, "status": {"conditions": [{"type": "Succeeded", "status": "True"}]}})
    assert runner.mpijob_state(mpijob)["complete"] is True


def test_validation_plan_filter_on_tagged_levels():
    rows = runner.validation_plan(tagged(LEVELS), tagged([{"name": "libero-pi0", "evaluation": {"floor": 0.5}}]),
                                  tagged(["from_l2"]), tagged(["from_l4"]), "yes", None, None)
    assert [r["id"] for r in rows if r["selected"]] == ["l2_single_gpu", "l3_multi_gpu", "phase0_efa"]
    assert exact_types(rows)


def test_validation_survey_filter():
    assert runner.validation_survey(tagged(LEVELS), tagged(["l0", "phase0"]))["ids"] == ["l0_infrastructure", "phase0_efa"]
    with pytest.raises(AnsibleFilterError, match="validation_levels: 'l9' is not a level"):
        runner.validation_survey(LEVELS, "l9")


def test_validation_tags_problem_filter():
    assert runner.validation_tags_problem(tagged(["l0", "from_l3"]), tagged(["l6"])) == ""
    assert runner.validation_tags_problem(["l7"]).startswith("--tags l7: this tag selects no level.")


def test_admission_summary_and_states_take_tagged_workloads():
    created = "2020-01-01T00:00:00Z"  # long past any grace
    job = tagged({"kind": "Job", "metadata": {"name": "j", "uid": "u1", "creationTimestamp": created},
                  "spec": {"suspend": True}})
    workloads = tagged([{"metadata": {"name": "w", "ownerReferences": [{"uid": "u1"}]},
                         "status": {"conditions": [{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                                                    "message": "couldn't assign flavors"}]}}])
    summary = runner.admission_summary([job], workloads, 45)
    assert summary["settled"] and "couldn't assign flavors" in summary["problems"][0]["problem"]["message"]
    assert runner.mpijob_state(job, [], 45, None)["settled"]


def test_grace_defaults_to_the_limit_and_bad_text_is_a_filter_error(monkeypatch):
    seen = []
    monkeypatch.setattr(runner.k8s, "pods_summary", lambda pods, expected=None, grace_s=None, want="running",
                        start_timeout_s=None: seen.append(grace_s))
    runner.pods_summary([], 1)
    runner.pods_summary([], 1, trust_as_template("60"))
    assert seen == [45.0, 60.0]
    with pytest.raises(AnsibleFilterError, match="grace period must be a number"):
        runner.mpijob_state({}, [], "a while")


def test_limit_and_job_deadline_filters():
    assert runner.limit(trust_as_template("start_timeout_s")) == 900
    with pytest.raises(AnsibleFilterError, match="unknown limit 'nope'"):
        runner.limit("nope")
    assert runner.job_deadline_s(trust_as_template("300")) == 600
    assert runner.job_deadline_s(None) == 3600
    with pytest.raises(AnsibleFilterError, match="number of seconds"):
        runner.job_deadline_s("soon")


def test_pod_hosts_on_tagged_values():
    pods = tagged([{"metadata": {"name": "w-0"}, "spec": {"hostname": "w-0", "nodeName": "p5-node-0"}},
                   {"metadata": {"name": "launcher-abc"}, "spec": {"nodeName": "p5-node-1"}}])
    out = runner.pod_hosts(pods)
    assert out == {"w-0": "p5-node-0", "launcher-abc": "p5-node-1"} and exact_types(out)
    assert runner.pod_hosts(None) == {}


def test_gpu_nodes_and_daemonset_summary_filters_on_tagged_values():
    node = tagged({"metadata": {"name": "n", "labels": {"node.kubernetes.io/instance-type": "g6.8xlarge"}},
                   "status": {"allocatable": {"nvidia.com/gpu": "1", "vpc.amazonaws.com/efa": "1"}}})
    assert runner.gpu_nodes([node], trust_as_template("kubernetes")) == [
        {"node": "n", "instance_type": "g6.8xlarge", "gpus": 1, "efa": 1}]
    assert runner.gpu_nodes(None, "host", tagged({"node": "h", "gpus": "8"}))[0]["gpus"] == 8
    plugin = {"metadata": {"name": "aws-efa-k8s-device-plugin"}, "status": {"desiredNumberScheduled": 2, "numberReady": 2}}
    result = tagged({"item": {"name_contains": "efa", "label": "EFA", "namespace": "kube-system"}, "resources": [plugin]})
    out = runner.daemonset_summary([result])
    assert out == [{"name": "efa", "label": "EFA", "namespace": "kube-system", "found": True, "desired": 2, "ready": 2}]
    assert exact_types(out)


def test_label_selector_keeps_the_labels_order():
    assert runner.label_selector({"node.kubernetes.io/instance-type": "g6.8xlarge", "efa": "true"}) == \
        "node.kubernetes.io/instance-type=g6.8xlarge,efa=true"
    assert runner.label_selector({}) == ""
    with pytest.raises(AnsibleFilterError, match="dict of labels"):
        runner.label_selector("role=gpu")


def test_the_plan_reads_every_selector_once_then_what_it_creates_needs():
    reads = runner.plan_reads(["role=gpu", "type=g6", "role=gpu"], "gpu-validation", True)
    assert [(r["kind"], r.get("label_selectors"), r.get("name"), r.get("required", False)) for r in reads] == [
        ("Node", ["role=gpu"], None, True), ("Node", ["type=g6"], None, True),
        ("DeviceClass", None, None, False), ("Namespace", None, "gpu-validation", True)]
    assert reads[0]["hidden_fields"] == ["status.images"]
    # check mode: the nodes only
    assert [r["kind"] for r in runner.plan_reads(["role=gpu"], "", False)] == ["Node"]


def test_the_plan_keeps_each_selectors_nodes_apart():
    node = {"metadata": {"name": "p5-node-1", "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"}},
            "status": {"allocatable": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"}}}
    cheap = {"metadata": {"name": "g6-node-0", "labels": {}}, "status": {"allocatable": {"nvidia.com/gpu": "1"}}}
    reads = [{"item": {"node_selector": "role=gpu"}, "resources": [node, dict(node, metadata={"name": "p5-node-0"})]},
             {"item": {"node_selector": "type=g6"}, "resources": [cheap]},
             {"item": {"device_classes": True}, "resources": [], "error": "not found: /apis/..."},
             {"item": {"namespace": "gpu-validation"}, "resources": [], "error": "not found: /api/..."}]
    nodes = runner.plan_nodes(reads, ["role=gpu", "type=g6", "role=none"])
    assert [n["node"] for n in nodes["nodes"]["role=gpu"]] == ["p5-node-0", "p5-node-1"]
    assert [o["metadata"]["name"] for o in nodes["objects"]["role=gpu"]] == ["p5-node-0", "p5-node-1"]
    assert nodes["nodes"]["type=g6"] == [{"node": "g6-node-0", "instance_type": "", "gpus": 1, "efa": 0}]
    # a selector not read has no nodes, not a missing key
    assert nodes["nodes"]["role=none"] == [] and nodes["objects"]["role=none"] == []
    # the host transport reads nothing: each selector's node is the inventory host
    host = runner.plan_nodes([], ["role=gpu"], "host", {"node": "gpu-box", "gpus": 8})
    assert host["nodes"] == {"role=gpu": [{"node": "gpu-box", "instance_type": "", "gpus": 8, "efa": 0}]}


def test_probe_outcomes_filter_reads_the_module_text_and_the_host_dict():
    outcomes = {"p5-node-0": {"status": "ok", "data": {"nccl": "2.27.3"}}}
    assert runner.probe_outcomes('{"p5-node-0":{"status":"ok","data":{"nccl":"2.27.3"}}}') == outcomes
    assert runner.probe_outcomes(tagged(outcomes)) == outcomes and runner.probe_outcomes(None) == {}
    with pytest.raises(AnsibleFilterError, match="^probe_outcomes: probe outcomes are JSON of a list"):
        runner.probe_outcomes("[]")
