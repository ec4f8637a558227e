# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Kueue admission against the real control plane: the sim runs no Kueue controller, so a Job or MPIJob
created suspended with the kueue.x-k8s.io/queue-name label is exactly a workload Kueue never admits.
The Job controller and the MPI operator write their own Suspended conditions; the collection must report
"not admitted by Kueue" within the grace, not wait for a timeout. ~60-90 s."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import simkit
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s

pytestmark = pytest.mark.sim

L5 = "l5_training_step"
NAMESPACE = "default"  # the simulated inventory's namespace (its FSx claim lives there)
GRACE_S = 5            # validation_problem_grace_s in the playbook run
TIMEOUT_S = 300        # l5_training_step_timeout_s: what the run would wait without the admission check


def test_suspended_job_is_not_admitted(api_client, core, batch, namespace):
    body = simkit.job_body("queued", L5)
    body["metadata"]["labels"][k8s.KUEUE_QUEUE_LABEL] = "team-a"
    body["spec"]["suspend"] = True
    batch.create_namespaced_job(namespace, body)

    def read():
        job = api_client.sanitize_for_serialization(batch.read_namespaced_job("queued", namespace))
        cond = simkit.condition(job["status"].get("conditions"), "Suspended")
        return job if cond else None

    job = simkit.wait_until(read, 20, "the Job controller's Suspended condition")
    state = k8s.job_state(job, [], grace_s=0, workloads=[])
    assert state["settled"] and not state["complete"] and not state["failed"]
    message = state["problems"][0]["problem"]["message"]
    assert message.startswith("not admitted by Kueue (queue team-a)"), message
    assert "(JobSuspended: Job suspended)" in message and "no Kueue Workload names it" in message
    assert simkit.job_pods(core, namespace, "queued") == []


def test_suspended_mpijob_is_not_admitted(custom, core, namespace):
    from test_sim_mpijob import GROUP, PLURAL, VERSION, mpijob_body
    body = mpijob_body("queued-nccl")
    body["metadata"]["labels"][k8s.KUEUE_QUEUE_LABEL] = "team-a"
    body["spec"]["runPolicy"]["suspend"] = True
    custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)

    def read():
        obj = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "queued-nccl")
        return obj if simkit.condition((obj.get("status") or {}).get("conditions"), "Suspended") else None

    mpijob = simkit.wait_until(read, 30, "the MPI operator's Suspended condition")
    state = k8s.mpijob_state(mpijob, [], grace_s=0, workloads=[])
    assert state["settled"] and not state["complete"] and not state["failed"]
    message = state["problems"][0]["problem"]["message"]
    assert "(MPIJobSuspended: MPIJob suspended)" in message, message
    # The operator starts no worker while the MPIJob is suspended.
    assert core.list_namespaced_pod(namespace).items == []


def test_run_reports_a_job_kueue_never_admits(core, batch, tmp_path):
    run_id = "kueue-" + uuid.uuid4().hex[:6]
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(tmp_path),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
           "--tags", "l5", "-e", f"validation_kubeconfig={simkit.KUBECONFIG}", "-e", f"validation_run_id={run_id}",
           "-e", "validation_kueue_queue=team-a", "-e", f"validation_problem_grace_s={GRACE_S}",
           "-e", f"l5_training_step_timeout_s={TIMEOUT_S}", "-e", "validation_example=libero-10-openvlaoft"]
    started = time.monotonic()
    run = subprocess.run(cmd, cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
                         check=False)
    took = time.monotonic() - started
    out = run.stdout[-4000:] + run.stderr[-2000:]
    assert run.returncode != 0, out
    report = json.loads((tmp_path / "report.json").read_text())
    text = json.dumps(report)
    assert "not admitted by Kueue (queue team-a)" in text, out
    assert "JobSuspended" in text and "LocalQueue" in text, out
    # Reported after the grace, not at the Jobs' timeout.
    assert took < TIMEOUT_S / 2, (took, out)
    # Nothing of the run is left, and no pod of it ever ran.
    selector = f"rlstack.io/run-id={run_id}"
    assert batch.list_namespaced_job(NAMESPACE, label_selector=selector).items == []
    assert core.list_namespaced_pod(NAMESPACE, label_selector=selector + ",app.kubernetes.io/component=job").items == []
