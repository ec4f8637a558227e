# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/cleanup.yml removes every kind a run may create (plugins/module_utils/k8s/_objects_absent.py RUN_KINDS),
TrainJobs and ResourceClaimTemplates included: its own list of kinds had neither, so a killed run's TrainJob or
EFA claim template survived it (issue 27). The left-overs carry the collection's labels, as a run's would; the
simulated cluster serves the real Trainer v2.3.0 CRD and resource.k8s.io/v1. About 15 s."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import simkit
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _objects_absent

pytestmark = pytest.mark.sim

TRAINJOB = ("trainer.kubeflow.org", "v1alpha1", "trainjobs")
CLAIM_TEMPLATE = ("resource.k8s.io", "v1", "resourceclaimtemplates")


def test_cleanup_playbook_removes_a_left_over_trainjob_and_claim_template(custom, core, namespace):
    run_id = "left-" + uuid.uuid4().hex[:6]
    labels = {_objects_absent.MANAGED_LABEL: _objects_absent.MANAGED_BY, _objects_absent.RUN_LABEL: run_id}
    custom.create_namespaced_custom_object(*TRAINJOB[:2], namespace, TRAINJOB[2], {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "nccl-left", "labels": labels},
        "spec": {"runtimeRef": {"name": "rlstack-nccl-tests"}, "suspend": True}})
    custom.create_namespaced_custom_object(*CLAIM_TEMPLATE[:2], namespace, CLAIM_TEMPLATE[2], {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "nccl-left-efa", "labels": labels},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "efa", "exactly": {"deviceClassName": "efa.networking.k8s.aws", "count": 1}}]}}}})
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "left", "labels": labels}})

    def left():
        selector = _objects_absent.RUN_LABEL + "=" + run_id
        return ([i["metadata"]["name"] for api in (TRAINJOB, CLAIM_TEMPLATE)
                 for i in custom.list_namespaced_custom_object(*api[:2], namespace, api[2],
                                                               label_selector=selector)["items"]]
                + [c.metadata.name for c in core.list_namespaced_config_map(namespace, label_selector=selector).items])

    assert sorted(left()) == ["left", "nccl-left", "nccl-left-efa"]
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/cleanup.yml",
                           "-i", "inventories/sim", "-e", "validation_run_id=" + run_id,
                           "-e", "validation_kubeconfig=" + str(simkit.KUBECONFIG)],
                          cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert left() == []
