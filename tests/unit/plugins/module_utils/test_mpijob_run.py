# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_mpijob_run: one MPIJob among the objects, the judge that reads the MPIJob with the pods, the operator's few seconds,
the launcher's log (with fake clients; the sim tests run the real API and MPI operator: tests/sim/test_sim_mpijob.py)."""
from __future__ import annotations

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _mpijob_run

PARAMS = {"grace_s": 45, "workloads": None, "record_wait_s": 10}


def launcher(phase, exit_code=0):
    terminated = {"state": {"terminated": {"exitCode": exit_code}}} if phase in ("Succeeded", "Failed") else {}
    return {"metadata": {"name": "m-launcher-x", "labels": {"training.kubeflow.org/job-role": "launcher"}},
            "status": {"phase": phase, "containerStatuses": [dict(terminated, name="launcher")]}}


def mpijob(*conditions):
    return {"metadata": {"name": "m", "creationTimestamp": "2099-01-01T00:00:00Z"},
            "status": {"conditions": [{"type": c, "status": "True"} for c in conditions]}}


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class Cluster:
    def __init__(self, states):
        self.states, self.reads = list(states), 0

    def mpijob(self):
        self.reads += 1
        return self.states[min(self.reads, len(self.states)) - 1]


def test_the_objects_hold_exactly_one_mpijob():
    objects = [{"kind": "ConfigMap", "metadata": {"name": "m"}}, {"kind": "MPIJob", "metadata": {"name": "m"}}]
    assert _mpijob_run.mpijob_name(objects) == "m"
    with pytest.raises(ValueError, match="exactly one MPIJob, found 0"):
        _mpijob_run.mpijob_name(objects[:1])


def test_the_wait_settles_on_the_launcher_and_reads_the_mpijob_at_most_every_poll():
    clock = Clock()
    cluster = Cluster([mpijob("Created", "Running")])
    judge = _mpijob_run.judge_with_mpijob(cluster, PARAMS, every_s=2, clock=clock)
    assert judge([launcher("Running")])["settled"] is False
    clock.sleep(1)
    assert judge([launcher("Running")])["settled"] is False and cluster.reads == 1  # not again within 2 s
    clock.sleep(1)
    out = judge([launcher("Succeeded")])
    assert out["settled"] is True and cluster.reads == 2


def test_the_end_gives_the_operator_a_few_seconds_to_record_why_it_failed():
    clock = Clock()
    cluster = Cluster([mpijob("Created"), mpijob("Created"), mpijob("Created", "Failed")])
    pods = [launcher("Failed", 1)]
    state = _mpijob_run.read_outcome(cluster, lambda: (pods, "1"), pods, PARAMS, clock=clock, sleep=clock.sleep)[2]
    assert cluster.reads == 3 and state["failed"] and state["source"] == "MPIJob status"
    # a launcher that succeeded is the outcome at once (the operator's record would add nothing)
    cluster = Cluster([mpijob("Created"), mpijob("Created", "Succeeded")])
    pods = [launcher("Succeeded")]
    state = _mpijob_run.read_outcome(cluster, lambda: (pods, "1"), pods, PARAMS, clock=clock, sleep=clock.sleep)[2]
    assert cluster.reads == 1 and state["complete"] and state["source"] == "launcher pod"
    # without the operator's record, the finished launcher pod is the outcome once record_wait_s passed
    clock = Clock()
    cluster = Cluster([mpijob("Created")])
    pods = [launcher("Failed", 1)]
    state = _mpijob_run.read_outcome(cluster, lambda: (pods, "1"), pods, dict(PARAMS, record_wait_s=2), clock=clock,
                                     sleep=clock.sleep)[2]
    assert clock.now == 2 and state["failed"] and state["source"] == "launcher pod"
