# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An interrupted run leaves nothing behind even when nothing on the controller cleans up: validate.yml is
stopped with Ctrl-C (SIGINT, then SIGKILL) while its L5 Jobs run, with the interrupt watchdog
(rlstack.validation.interrupt_cleanup, tests/faults) turned off, as when the API server is unreachable at
that moment or AWX removes the job's container; Kubernetes must then delete every object of the run by
itself once the run's lease (the anchor Job's deadline) has passed. ~60-90 s."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

RUN_LABEL = "rlstack.io/run-id"
NAMESPACE = "default"  # the simulated inventory's namespace (its FSx claim lives there)
JOBS_TIMEOUT_S = 30    # l5_training_step_timeout_s: the wait the run is interrupted in
MARGIN_S = 60          # validation_lease_margin_s, its lowest allowed value (20 ran out on a loaded machine)


def _objects(core, batch, run_id):
    """Names of every object of the run that the runner creates (probe pods, ConfigMaps, Jobs, Services)."""
    selector = f"{RUN_LABEL}={run_id}"
    found = []
    for kind, lister in (("Job", batch.list_namespaced_job), ("Pod", core.list_namespaced_pod),
                         ("Service", core.list_namespaced_service), ("ConfigMap", core.list_namespaced_config_map)):
        found += [f"{kind}/{obj.metadata.name}" for obj in lister(NAMESPACE, label_selector=selector).items]
    return found


def _stop(proc):
    """Ctrl-C as a terminal sends it (to the process group); SIGKILL if the run does not stop in 20 s."""
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def test_interrupted_run_is_removed_by_its_lease(core, batch, tmp_path):
    run_id = "interrupt-" + uuid.uuid4().hex[:6]
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(tmp_path),
               ANSIBLE_CALLBACKS_ENABLED="rlstack.validation.report",  # the lease alone, no watchdog
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
           "--tags", "l5", "-e", f"validation_kubeconfig={simkit.KUBECONFIG}", "-e", f"validation_run_id={run_id}",
           "-e", f"validation_lease_margin_s={MARGIN_S}", "-e", f"l5_training_step_timeout_s={JOBS_TIMEOUT_S}",
           "-e", "validation_example=libero-10-openvlaoft"]
    log = (tmp_path / "playbook.log").open("w")
    proc = subprocess.Popen(cmd, cwd=str(simkit.ROOT), env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        seen = []
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            seen = [name for name in _objects(core, batch, run_id) if name.startswith("Pod/")]
            if seen:
                break
            time.sleep(0.5)
        assert seen, "the L5 Job's pod never appeared:\n" + (tmp_path / "playbook.log").read_text()[-3000:]
        anchors = batch.list_namespaced_job(NAMESPACE, label_selector=f"{RUN_LABEL}={run_id},"
                                            "app.kubernetes.io/component=anchor").items
        assert len(anchors) == 1
        anchor = anchors[0]
        # The deadline counts from the Job's start (set by the Job controller just after creation).
        started = (anchor.status.start_time or anchor.metadata.creation_timestamp).timestamp()
        lease_ends = started + anchor.spec.active_deadline_seconds
        # The lease was moved over the Jobs' wait: it covers that wait, and not much more than wait + margin
        # (slack: the Job controller sets startTime a moment after creation, in whole seconds, under CI load).
        assert lease_ends >= time.time() + JOBS_TIMEOUT_S - 5, anchor.spec.active_deadline_seconds
        assert lease_ends <= time.time() + JOBS_TIMEOUT_S + MARGIN_S + 15, anchor.spec.active_deadline_seconds
        _stop(proc)
        left = _objects(core, batch, run_id)
        assert left, "the interrupted run cleaned up after itself; this test needs it not to"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()

    # Nothing of the run may outlive its lease by more than the controllers' reaction time.
    gone_by = lease_ends + 45
    while time.time() < gone_by:
        left = _objects(core, batch, run_id)
        if not left:
            break
        time.sleep(2)
    assert not left, (f"objects of the interrupted run {run_id} still exist {time.time() - lease_ends:.0f} s after "
                      f"its lease ended: {left}")
