# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/plugin_utils/_local_plan.py and _local_render.py (what roles/local_checks/tasks/plan.yml and
render.yml used to build with Jinja loops)."""

from __future__ import annotations

import os

import yaml

from ansible_collections.rlstack.validation.plugins.plugin_utils import _local_plan, _local_render

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
with open(os.path.join(ROOT, "roles", "local_checks", "vars", "main.yml")) as _handle:
    LEVELS = yaml.safe_load(_handle)["__local_checks_levels"]
GROUP = ["local_manifests", "local_pitfalls"]


def selected(rows):
    return [row["id"] for row in rows if row["selected"]]


def test_plan_selects_by_tags_and_keeps_the_group_together():
    assert selected(_local_plan.plan(LEVELS, ["all"], [], GROUP)) == [level["id"] for level in LEVELS]
    rows = _local_plan.plan(LEVELS, ["all"], ["local_pitfalls"], GROUP)
    assert "local_manifests" not in selected(rows) and "local_shell" in selected(rows)
    assert selected(_local_plan.plan(LEVELS, ["local_shell"], [], GROUP)) == ["local_shell"]


def test_settings_defaults_then_what_the_run_sets():
    cfg = _local_render.settings([{"a": 1, "b": 2}, {"c": 3}], ["a", "b", "c"], [_local_render.UNSET, 20, _local_render.UNSET])
    assert cfg == {"a": 1, "b": 20, "c": 3}


def test_representative_nodes():
    nodes = _local_render.representative_nodes(2, "p5.48xlarge", {"gpu_count": 8, "efa_devices": 32})
    assert nodes == [{"node": "ip-10-0-1-10.us-east-2.compute.internal", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32},
                     {"node": "ip-10-0-1-11.us-east-2.compute.internal", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32}]
    assert _local_render.representative_nodes(1, "x", None, 2)[0]["gpus"] == 1


def test_collect():
    nodes = _local_render.representative_nodes(1, "p5.48xlarge", {"gpu_count": 8})
    items = [{"source": "anchor Job", "template": "anchor_job.yml.j2"},
             {"source": "L1 probe ConfigMap", "template": "labels.yml.j2", "data_files": {"p.py": "/p.py"},
              "configmap": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}},
             {"source": "L1 probe Pod on " + nodes[0]["node"], "template": "probe_pod.yml.j2", "target": nodes[0],
              "probe_name": "rlsv-run-l1-runtime"},
             {"source": "L5 train one Job", "template": "job.yml.j2"}]
    job = {"metadata": {"name": "train-one", "labels": {"a": "b"}}, "spec": {"completionMode": "Indexed"}}
    pod = {"kind": "Pod", "metadata": {"name": "rlsv-run-l1-runtime"}, "spec": {"containers": [{"name": "probe"}]}}
    out = _local_render.collect(items, [{}, {"l": "v"}, pod, job], [{"source": "Namespace"}], "ns", [],
                                ["LIBERO_CONFIG_PATH"])
    assert [o["source"] for o in out] == ["Namespace", "anchor Job", "L1 probe ConfigMap",
                                          "L1 probe Pod on " + nodes[0]["node"], "L5 train one Job",
                                          "L5 train one headless Service"]
    assert out[2]["definition"]["metadata"]["labels"] == {"l": "v"}
    # the probe pod as the real run makes it for its target (rlstack.validation.probe_pods)
    probe = out[3]["definition"]
    assert probe["metadata"]["name"] == "rlsv-run-l1-runtime-" + nodes[0]["node"].replace(".", "-")
    assert probe["spec"]["nodeSelector"] == {"kubernetes.io/hostname": nodes[0]["node"]}
    assert probe["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 8}}
    assert all(o["provided_env"] == ["LIBERO_CONFIG_PATH"] for o in out)


def test_render_from_the_levels_own_descriptions():
    nodes = _local_render.representative_nodes(2, "p5.48xlarge", {"gpu_count": 8, "efa_devices": 32})
    levels = [{"id": "l1_runtime", "level": "L1"}, {"id": "l3_multi_gpu", "level": "L3"},
              {"id": "l5_training_step", "level": "L5"}, {"id": "l6_evaluation", "level": "L6"}]
    script = os.path.join(ROOT, "roles", "l1_runtime", "files", "probe_runtime.py")
    descriptions = {
        "l1_runtime": {"id": "l1_runtime", "probe": {"script": script, "timeout_s": "300", "storage": False, "env": {}},
                       "targets": nodes[:1], "mpijob": None},
        "l3_multi_gpu": {"id": "l3_multi_gpu", "probe": None, "targets": [],
                         "mpijob": {"name": "l3", "nodes": nodes, "image": "nccl:1", "floors": [], "network": ["efa"],
                                    "tolerance": 0.1}},
        "l5_training_step": {"id": "l5_training_step", "mode": "train",
                             "jobs": [{"name": "one", "example": {}, "job": {"name": "train-one"}}]},
    }
    items = _local_render.render_from_descriptions(levels, descriptions, "kubernetes", "run1", "ns", [],
                                                   os.path.join(ROOT, "roles", "runner"))
    assert [i["source"] for i in items] == ["anchor Job", "L1 probe ConfigMap", "L1 probe Pod on " + nodes[0]["node"],
                                            "L3 nccl-tests MPIJob", "L5 train one Job"]
    assert items[1]["data_files"]["probe_runtime.py"] == script
    assert items[2]["probe_timeout_s"] == 300 and items[3]["mpijob"]["workers"] == 2
    host = _local_render.render_from_descriptions(levels, descriptions, "host", "run1", "ns", [], ROOT)
    assert [i["source"] for i in host] == ["L5 train one Job"]


def test_an_mpijob_comes_with_the_configmap_of_its_ranks_script():
    items = [{"source": "L3 nccl-tests MPIJob", "template": "mpijob.yml.j2",
              "data_files": {"nccl_tests_json.sh": "/runner/files/nccl_tests_json.sh"}}]
    mpijob = {"kind": "MPIJob", "metadata": {"name": "rlsv-x-l3-nccl", "labels": {"a": "b"}}, "spec": {}}
    out = _local_render.collect(items, [mpijob], [], "ns", [{"kind": "Job"}])
    assert [o["source"] for o in out] == ["L3 nccl-tests MPIJob", "L3 nccl-tests MPIJob ConfigMap"]
    config = out[1]
    assert config["definition"]["metadata"] == {"name": "rlsv-x-l3-nccl", "namespace": "ns", "labels": {"a": "b"},
                                                "ownerReferences": [{"kind": "Job"}]}
    assert config["data_files"] == {"nccl_tests_json.sh": "/runner/files/nccl_tests_json.sh"}
