# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/k8s/_k8s_status.py: object names and label values, the GPU nodes and
the device-plugin DaemonSets as the runner reads them."""

from __future__ import annotations

import re

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s

from k8s_kit import REPO

DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


# -------------------------------------------------------------------------------------- dns_label, label_value


@pytest.mark.parametrize("text,expected", [
    ("rlsv-20261130t024035-l5_training_step/libero-pi0", "rlsv-20261130t024035-l5-training-step-libero-pi0"),
    ("ip-10-0-1-23.us-west-2.compute.internal", "ip-10-0-1-23-us-west-2-compute-internal"),
    ("P5 Node_1", "p5-node-1"),
    ("--Foo--", "foo"),
    ("a---b", "a-b"),
    ("a_-_b", "a-b"),
    ("", "x"),
    ("___", "x"),
    ("Ünïcödé", "n-c-d"),
    (12345, "12345"),
])
def test_dns_label_examples(text, expected):
    assert k8s.dns_label(text) == expected


def test_dns_label_exactly_max_length_is_not_cut():
    text = "a" * 63
    assert k8s.dns_label(text) == text
    assert k8s.dns_label("b" * 52, 52) == "b" * 52


@pytest.mark.parametrize("max_len", [63, 52, 20, 7])
def test_dns_label_cut_is_valid_and_within_max_length(max_len):
    text = "rlsv-20261130t024035-l5_training_step/" + "openvla-oft-libero-spatial-" * 4
    label = k8s.dns_label(text, max_len)
    assert len(label) <= max_len
    assert DNS_1123.match(label), label
    assert re.search(r"-[0-9a-f]{5}$", label)
    assert k8s.dns_label(text, max_len) == label


def test_dns_label_cut_after_a_dash_does_not_double_it():
    text = "a" * 56 + "-" + "b" * 20
    label = k8s.dns_label(text)
    assert "--" not in label
    assert label.startswith("a" * 56 + "-")
    assert len(label) == 62  # the dash at the cut is dropped, then "-" and 5 hex digits


def test_dns_label_long_names_sharing_a_52_char_prefix_differ():
    prefix = "rlsv-20261130t024035-l5_training_step/".ljust(52, "x")
    first, second = prefix + "-openvla-oft", prefix + "-pi0-libero"
    assert first[:52] == second[:52]
    for max_len in (52, 63):
        one, two = k8s.dns_label(first, max_len), k8s.dns_label(second, max_len)
        assert one != two
        assert len(one) <= max_len and len(two) <= max_len
        assert DNS_1123.match(one) and DNS_1123.match(two)


def test_dns_label_hash_is_of_the_original_text():
    assert k8s.dns_label("A" * 80) != k8s.dns_label("a" * 80)


@pytest.mark.parametrize("max_len", [6, 5])
def test_dns_label_small_max_length(max_len):
    label = k8s.dns_label("abcdefghijklmnop", max_len)
    assert len(label) <= max_len
    assert DNS_1123.match(label), label


@pytest.mark.parametrize("text,expected", [
    ("l5_training_step/libero-pi0", "l5_training_step.libero-pi0"),
    ("phase0_efa", "phase0_efa"),
    ("L3.5", "L3.5"),
    ("l6_evaluation/My Example!", "l6_evaluation.My.Example"),
    ("///", "x"),
    ("", "x"),
    ("_-.abc._-", "abc"),
])
def test_label_value_examples(text, expected):
    assert k8s.label_value(text) == expected


def test_label_value_is_cut_to_max_length_and_stays_valid():
    value = k8s.label_value("a" * 62 + "/b")
    assert value == "a" * 62
    value = k8s.label_value("l5_training_step/" + "x" * 100)
    assert len(value) == 63
    assert LABEL_VALUE.match(value)
    assert k8s.label_value("abcdef/ghi", 7) == "abcdef"


# --------------------------------------------------------------------------------------------- gpu_nodes

SIM_NODES = REPO / "sim" / "cluster" / "nodes.yaml"


def test_gpu_nodes_reads_the_sim_nodes_sorted_with_their_devices():
    import yaml
    nodes = [n for n in yaml.safe_load(SIM_NODES.read_text(encoding="utf-8")) if n["kind"] == "Node"]
    out = k8s.gpu_nodes(list(reversed(nodes)))
    assert [n["node"] for n in out] == sorted(n["metadata"]["name"] for n in nodes)
    p5 = next(n for n in out if n["node"] == "p5-node-0")
    assert p5 == {"node": "p5-node-0", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32}
    assert all(isinstance(n["gpus"], int) and isinstance(n["efa"], int) for n in out)


def test_gpu_nodes_without_labels_or_devices_counts_zero():
    out = k8s.gpu_nodes([{"metadata": {"name": "cpu-1"}, "status": {"allocatable": {"cpu": "4", "nvidia.com/gpu": "n/a"}}},
                         {"metadata": {"name": "b"}}])
    assert out == [{"node": "b", "instance_type": "", "gpus": 0, "efa": 0},
                   {"node": "cpu-1", "instance_type": "", "gpus": 0, "efa": 0}]


def test_gpu_nodes_host_transport_is_the_inventory_host():
    host = {"node": "gpu-box", "instance_type": "p5.48xlarge", "gpus": "8", "efa": None}
    assert k8s.gpu_nodes([{"metadata": {"name": "ignored"}}], "host", host) == [
        {"node": "gpu-box", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 0}]
    assert k8s.gpu_nodes(None, "host") == [{"node": "", "instance_type": "", "gpus": 0, "efa": 0}]


# --------------------------------------------------------------------------------------------- daemonset_summary


def ds_result(name_contains, namespace, *daemonsets, label="NVIDIA device plugin"):
    return {"item": {"name_contains": name_contains, "label": label, "namespace": namespace},
            "resources": [{"metadata": {"name": n, "namespace": namespace}, "status": status} for n, status in daemonsets]}


def test_daemonset_summary_adds_up_every_match():
    result = ds_result("nvidia-device-plugin", "kube-system",
                       ("nvidia-device-plugin-daemonset", {"desiredNumberScheduled": 2, "numberReady": 2}),
                       ("nvidia-device-plugin-mps", {"desiredNumberScheduled": 1, "numberReady": 0}),
                       ("aws-node", {"desiredNumberScheduled": 5, "numberReady": 5}))
    assert k8s.daemonset_summary([result]) == [
        {"name": "nvidia_device_plugin", "label": "NVIDIA device plugin", "namespace": "kube-system", "found": True,
         "desired": 3, "ready": 2}]


def test_daemonset_summary_none_found_and_missing_status():
    missing = ds_result("efa", "kube-system", ("aws-node", {}), label="EFA")
    no_status = {"item": {"name_contains": "efa", "label": "EFA", "namespace": "x"},
                 "resources": [{"metadata": {"name": "aws-efa-k8s-device-plugin"}}]}
    failed_read = {"item": {"name_contains": "efa", "label": "EFA", "namespace": "gone"}, "failed": True}
    out = k8s.daemonset_summary([missing, no_status, failed_read])
    assert [(o["found"], o["desired"], o["ready"]) for o in out] == [(False, 0, 0), (True, 0, 0), (False, 0, 0)]
    assert k8s.daemonset_summary(None) == []


def test_daemonset_summary_name_contains_is_a_regular_expression():
    result = ds_result("^nvidia-.*plugin$", "kube-system", ("nvidia-device-plugin", {"desiredNumberScheduled": 1}),
                       ("my-nvidia-device-plugin", {"desiredNumberScheduled": 1}))
    (out,) = k8s.daemonset_summary([result])
    assert out["desired"] == 1 and out["name"] == "_nvidia_plugin_"
