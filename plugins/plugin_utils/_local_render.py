# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection's own manifests for local mode's opt-in group local_rendered (controller only): the
settings of the level roles, a representative cluster, what to render from the levels' own descriptions
(roles/<level>/tasks/describe.yml) and the objects it gives, as roles/local_checks/tasks/render.yml uses
them."""

from __future__ import annotations

import os


from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._k8s_status import dns_label
from ansible_collections.rlstack.validation.plugins.module_utils.workloads._probe_pods import probe_pods

UNSET = "__rlstack_local_checks_unset__"


def settings(defaults_list, keys, values, unset=UNSET):
    """The level roles' settings: their defaults (a list of dicts, later ones win) overridden by the
    values the run sets (values[i] for keys[i], `unset` where the run sets nothing)."""
    out = {}
    for defaults in defaults_list or []:
        out.update(defaults or {})
    for key, value in zip(keys or [], values or []):
        if value != unset:
            out[key] = value
    return out


def representative_nodes(count, instance_type, profile=None, subnet=1):
    """`count` nodes of one instance type as a real run discovers them ({node, instance_type, gpus, efa}),
    GPUs and EFA devices from its instance profile (one GPU, no EFA without a profile)."""
    profile = profile or {}
    return [{"node": "ip-10-0-%d-%d.us-east-2.compute.internal" % (int(subnet), 10 + index),
             "instance_type": instance_type, "gpus": int(profile.get("gpu_count") or 1),
             "efa": int(profile.get("efa_devices") or 0)} for index in range(int(count))]


def _mpijob_files(runner_dir):
    """The script every nccl-tests rank runs, shipped in a ConfigMap of the MPIJob's name
    (roles/runner/tasks/nccl_tests.yml)."""
    return {"nccl_tests_json.sh": os.path.join(runner_dir, "files", "nccl_tests_json.sh")}


def collect(to_render, rendered, inline, namespace, owner, provided_env=()):
    """The manifests for rlstack.validation.manifest_lint: the inline objects, then each rendered template
    (a ConfigMap gets the rendered labels and its data files; an MPIJob comes with the ConfigMap of its name
    that holds its ranks' script; a multi-node Job is preceded on a real run by
    the headless Service runner/tasks/jobs_kubernetes.yml creates, so it is added here too)."""
    out = list(inline or [])
    for item, result in zip(to_render or [], rendered or []):
        if item.get("configmap"):
            definition = dict(item["configmap"])
            definition["metadata"] = dict(definition["metadata"], labels=result)
            out.append({"source": item["source"], "definition": definition, "data_files": item["data_files"]})
            continue
        if item.get("template") == "probe_pod.yml.j2":  # as the real run makes each target's pod
            result = probe_pods(result, [item["target"]], item["probe_name"])[0]
        out.append({"source": item["source"], "definition": result})
        meta = (result or {}).get("metadata") or {}
        if item.get("template") == "mpijob.yml.j2":
            out.append({"source": item["source"] + " ConfigMap", "data_files": item.get("data_files") or {},
                        "definition": {"apiVersion": "v1", "kind": "ConfigMap",
                                       "metadata": {"name": meta.get("name"), "namespace": namespace,
                                                    "labels": meta.get("labels") or {}, "ownerReferences": owner},
                                       "data": {}}})
        spec = (result or {}).get("spec") or {}
        if item.get("template") == "job.yml.j2" and "completionMode" in spec:
            out.append({"source": item["source"][:-len(" Job")] + " headless Service" if item["source"].endswith(" Job")
                        else item["source"] + " headless Service",
                        "definition": {"apiVersion": "v1", "kind": "Service",
                                       "metadata": {"name": meta.get("name"), "namespace": namespace,
                                                    "labels": meta.get("labels") or {}, "ownerReferences": owner},
                                       "spec": {"clusterIP": "None",
                                                "selector": {"batch.kubernetes.io/job-name": meta.get("name")},
                                                "ports": [{"name": "ray", "port": 6379}]}}})
    provided = list(provided_env or [])
    return [dict(item, provided_env=provided) for item in out]


def render_from_descriptions(levels, descriptions, transport, run, namespace, owner, runner_dir):
    """What to render, from each level's own description (roles/<level>/tasks/describe.yml, the one the
    real run uses): [{source, template, id, ...}] in the registry's order. levels: the registry entries
    (lookup rlstack.validation.levels); descriptions: {level id: <id>_description}.

    transport kubernetes: the anchor Job, per probe level its ConfigMap (probe script + probe_common.py)
    and one probe pod per target, each nccl-tests MPIJob; any transport: the Jobs of L5/L6."""
    out = []
    if transport == "kubernetes":
        out.append({"source": "anchor Job", "template": "anchor_job.yml.j2", "id": "anchor"})
    for level in levels or []:
        described = (descriptions or {}).get(level["id"])
        if not described:
            continue
        probe = described.get("probe")
        if transport == "kubernetes" and probe:
            # the runner's name of the level's probe objects (roles/runner/tasks/probe_kubernetes.yml)
            name = dns_label("rlsv-%s-%s" % (run, level["id"]), 52)
            out.append({"source": "%s probe ConfigMap" % level["level"], "template": "labels.yml.j2", "id": level["id"],
                        "configmap": {"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": name, "namespace": namespace, "ownerReferences": owner},
                                      "data": {}},
                        "data_files": {os.path.basename(probe["script"]): os.path.realpath(probe["script"]),
                                       "probe_common.py": os.path.join(runner_dir, "files", "probe_common.py")}})
            for target in described.get("targets") or []:
                out.append({"source": "%s probe Pod on %s" % (level["level"], target["node"]),
                            "template": "probe_pod.yml.j2", "id": level["id"], "target": target, "probe_name": name,
                            "probe_timeout_s": int(probe["timeout_s"]), "probe_storage": bool(probe["storage"]),
                            "probe_env": dict(probe.get("env") or {}),
                            # the probe pod's entrypoint (roles/runner/tasks/probe_kubernetes.yml)
                            "probe_file": os.path.basename(probe["script"]),
                            "probe_launcher": probe.get("launcher") or "python3",
                            "probe_params": dict(probe.get("params") or {})})
        mpijob = described.get("mpijob")
        if transport == "kubernetes" and mpijob and len(mpijob.get("nodes") or []) >= 1:
            spec = _workloads.nccl_mpijob(mpijob["nodes"], mpijob["name"], mpijob["image"], mpijob.get("floors") or [],
                                          mpijob.get("network") or [], float(mpijob.get("tolerance") or 0.0))
            out.append({"source": "%s nccl-tests MPIJob" % level["level"], "template": "mpijob.yml.j2",
                        "id": level["id"], "mpijob": spec["mpijob"], "data_files": _mpijob_files(runner_dir)})
        for job in described.get("jobs") or []:
            out.append({"source": "%s %s %s Job" % (level["level"], described.get("mode", ""), job["name"]),
                        "template": "job.yml.j2", "id": level["id"], "job": job["job"]})
    return out
