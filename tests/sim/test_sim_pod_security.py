# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run's pods ask for no more than they need (issue 27 item 7): L0-L2 pass in a namespace that enforces Pod
Security baseline, and with validation_run_as_user in one that enforces restricted. The simulated kube-apiserver
(v1.36) runs the PodSecurity admission plugin (on by default), so the namespace label is enforced: the test first
shows that a bare pod is refused there. The namespace exists before the run (the run then takes it as it is and
leaves it); no shared storage there, so validation_storage_claim is empty. About 60 s each."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from kubernetes.client.rest import ApiException

import simkit
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _trainjob

pytestmark = pytest.mark.sim

LEVELS = ("l0_infrastructure", "l1_runtime", "l2_single_gpu")


@pytest.mark.parametrize("level,run_as_user", [("baseline", 0), ("restricted", 1000)])
def test_l0_to_l2_pass_where_pod_security_is_enforced(core, namespace, tmp_path, level, run_as_user):
    core.patch_namespace(namespace, {"metadata": {"labels": {
        "pod-security.kubernetes.io/enforce": level, "pod-security.kubernetes.io/enforce-version": "latest"}}})
    # The label bites: a pod that adds a capability neither level allows is refused.
    bare = simkit.pod_body("psa-bare")
    bare["spec"]["containers"][0]["securityContext"] = {"capabilities": {"add": ["SYS_ADMIN"]}}
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_pod(namespace, bare)
    assert refused.value.status == 403 and "violates PodSecurity" in refused.value.body, refused.value.body
    if level == "baseline":
        # An EFA rank adds no capability (docs/security.md): a TrainJob node's securityContext with EFA devices is
        # admitted under baseline (a dry run: the API server admits it and stores nothing).
        job = {"workers": 2, "gpus_per_worker": 8, "efa_per_worker": 32, "image": simkit.IMAGE}
        tj = _trainjob.definition(job, "psa-efa", namespace, "rt", {}, [], [], "cm", [], "1Gi")
        patch = tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][1]
        node = patch["template"]["spec"]["template"]["spec"]
        efa_pod = simkit.pod_body("psa-efa", gpus=8, efa=32)
        efa_pod["spec"]["securityContext"] = node["securityContext"]
        efa_pod["spec"]["containers"][0]["securityContext"] = node["containers"][0]["securityContext"]
        core.create_namespaced_pod(namespace, efa_pod, dry_run="All")

    run_id = "psa-" + uuid.uuid4().hex[:6]
    extra = {"validation_kubeconfig": str(simkit.KUBECONFIG), "validation_namespace": namespace,
             "validation_storage_claim": "", "validation_run_id": run_id, "validation_run_as_user": run_as_user,
             "validation_report_dir": str(tmp_path / "report")}
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml",
                           "-i", "inventories/sim", "--tags", "l0,l1,l2", "-e", json.dumps(extra)],
                          cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout + proc.stderr
    assert "violates PodSecurity" not in out, out[-4000:]
    assert proc.returncode == 0, out[-4000:]
    cluster = json.loads((tmp_path / "report" / "report.json").read_text())["clusters"][0]
    statuses = {lv["id"]: lv["status"] for lv in cluster["levels"]}
    assert all(statuses.get(lv) == "PASS" for lv in LEVELS), statuses
    assert not core.list_namespaced_pod(namespace, label_selector="rlstack.io/run-id=" + run_id).items
