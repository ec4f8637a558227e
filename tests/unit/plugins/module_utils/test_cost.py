# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.fleet import _cost
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._k8s_status import parse_time

T0 = "2026-12-01T10:00:00Z"


def pod(name, node, gpus, scheduled=T0, phase="Running", finished=None, deleted=None, requests_only=False):
    resources = {"requests": {"nvidia.com/gpu": str(gpus)}} if requests_only else {"limits": {"nvidia.com/gpu": gpus}}
    status = {"phase": phase, "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": scheduled}]}
    if finished:
        status["containerStatuses"] = [{"state": {"terminated": {"exitCode": 0, "finishedAt": finished}}}]
    meta = {"name": name, "uid": "uid-" + name}
    if deleted:
        meta["deletionTimestamp"] = deleted
    return {"metadata": meta, "spec": {"nodeName": node, "containers": [{"name": "c", "resources": resources}]},
            "status": status}


NODES = {"p5-node-0": "p5.48xlarge", "p5-node-1": "p5.48xlarge", "g6-node-0": "g6.8xlarge"}


def test_running_pods_hold_until_observed_and_finished_pods_until_finished():
    now = parse_time(T0) + 600
    usage = _cost.gpu_usage([
        pod("w0", "p5-node-0", 8),                                              # 600 s x 8
        pod("w1", "p5-node-1", 8, finished="2026-12-01T10:05:00Z", phase="Succeeded"),  # 300 s x 8
        pod("launcher", "", 0),                                                 # no GPU: not counted
    ], now, NODES)
    assert usage["pods"] == 2
    assert usage["by_instance_type"]["p5.48xlarge"]["gpu_seconds"] == 7200.0
    assert usage["gpu_minutes"] == 120.0
    assert usage["by_instance_type"]["p5.48xlarge"]["nodes"] == ["p5-node-0", "p5-node-1"]


def test_deletion_timestamp_ends_the_hold_and_requests_count():
    now = parse_time(T0) + 600
    usage = _cost.gpu_usage([pod("p", "g6-node-0", 1, deleted="2026-12-01T10:01:00Z", requests_only=True)], now, NODES)
    assert usage["gpu_seconds"] == 60.0


def test_unscheduled_pods_hold_nothing_and_snapshots_count_once():
    now = parse_time(T0) + 100
    pending = pod("p", "", 8)
    pending["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    running = pod("w", "p5-node-0", 8)
    usage = _cost.gpu_usage([pending, running, running], now, NODES)
    assert usage["pods"] == 1 and usage["gpu_seconds"] == 800.0


def test_merge_usage_sums_levels():
    now = parse_time(T0) + 60
    a = _cost.gpu_usage([pod("a", "g6-node-0", 1)], now, NODES)
    b = _cost.gpu_usage([pod("b", "p5-node-0", 8)], now, NODES)
    total = _cost.merge_usage([a, b, None])
    assert total["gpu_seconds"] == 540.0 and sorted(total["by_instance_type"]) == ["g6.8xlarge", "p5.48xlarge"]


def test_price_from_the_profile_with_source_and_date():
    info = _cost.price("p5en.48xlarge")
    assert info["price_per_hour_usd"] == 63.296 and info["as_of"] == "2026-08-06"
    assert "dstack" in info["source"] and info["price_per_gpu_hour_usd"] == pytest.approx(7.912)


def test_unknown_price_says_how_to_set_it_and_overrides_win():
    info = _cost.price("p5.48xlarge")
    assert info["price_per_hour_usd"] is None and "validation_prices.p5.48xlarge" in info["source"]
    override = {"p5.48xlarge": {"price_per_hour_usd": 39.33, "source": "capacity block", "as_of": "2026-11-30"}}
    info = _cost.price("p5.48xlarge", override)
    assert info["price_per_gpu_hour_usd"] == pytest.approx(4.91625) and info["source"] == "capacity block"


def test_money_is_unknown_when_a_type_has_no_price():
    usage = _cost.gpu_usage([pod("w", "p5-node-0", 8)], parse_time(T0) + 3600, NODES)
    assert _cost.money(usage)["usd"] is None and _cost.money(usage)["unpriced"] == ["p5.48xlarge"]
    priced = _cost.money(usage, {"p5.48xlarge": {"price_per_hour_usd": 40.0}})
    assert priced["usd"] == pytest.approx(40.0)


def test_what_if_holds_whole_instances():
    info = _cost.what_if(1800, "p5en.48xlarge", 2)
    assert info["usd"] == pytest.approx(63.296)


def test_usd_reads_well():
    assert [_cost.usd(v) for v in (None, 0.01234, 12.345, 1450)] == ["unknown", "$0.0123", "$12.35", "$1,450"]


def test_mpijob_workers_deleted_before_the_runner_saw_them_count_from_its_status():
    mpijob = {"metadata": {"creationTimestamp": T0},
              "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 2, "template": {"spec": {"containers": [
                  {"name": "worker", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}},
              "status": {"startTime": "2026-12-01T10:00:00Z", "completionTime": "2026-12-01T10:00:30Z"}}
    g6 = {"g6-node-0": "g6.8xlarge", "g6-node-1": "g6.8xlarge"}
    usage = _cost.gpu_usage([], parse_time(T0) + 100, g6, mpijob)
    assert usage["pods"] == 2 and usage["by_instance_type"]["g6.8xlarge"]["gpu_seconds"] == 60.0
    seen = pod("w0", "g6-node-0", 1)
    seen["metadata"]["labels"] = {"training.kubeflow.org/job-role": "worker"}
    usage = _cost.gpu_usage([seen], parse_time(T0) + 40, g6, mpijob)
    assert usage["pods"] == 2 and usage["gpu_seconds"] == 70.0  # 40 s seen + 30 s from the status


def test_one_jobs_pods_only():
    a, b = pod("a", "p5-node-0", 8), pod("b", "p5-node-1", 8)
    a["metadata"]["labels"] = {"batch.kubernetes.io/job-name": "rlsv-r-l5-one"}
    b["metadata"]["labels"] = {"batch.kubernetes.io/job-name": "rlsv-r-l5-two"}
    usage = _cost.gpu_usage([a, b], parse_time(T0) + 10, NODES, job="rlsv-r-l5-one")
    assert usage["pods"] == 1 and usage["gpu_seconds"] == 80.0
