# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The L5/L6 Job watch's looks at the pods (plugins/module_utils/k8s/_job_watch.py Rounds), on RLinf's own logs (the fixtures of
tests/unit/fixtures/frameworks, provenance in their SOURCES.md). The calls to the API server are a small fake
here; tests/sim/test_sim_job_run.py runs job_run against the simulated cluster."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _job_watch as jw
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._pod_wait import strip

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "frameworks"


def read(name):
    data = (LOGS / name).read_bytes()
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")


OVERRUN = read("rlinf/rlinf-train-override-ignored.log")


def pod(job, phase, index=None):
    meta = {"name": job + "-pod", "labels": {jw.JOB_NAME_LABEL: job}, "managedFields": [{"manager": "x"}]}
    if index is not None:
        meta["annotations"] = {jw.COMPLETION_INDEX: str(index)}
    return {"metadata": meta, "status": {"phase": phase}}


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class Cluster:
    """Jobs with one pod each, whose phases follow `script` (a list of {job: phase} per round)."""

    def __init__(self, script, logs=None, clock=None):
        self.script, self.logs, self.clock = list(script), logs or {}, clock
        self.jobs = set(self.script[0])
        self.deleted, self.rounds = [], 0

    def list_pods(self):
        phases = self.script[min(self.rounds, len(self.script) - 1)]
        self.rounds += 1
        return [pod(job, phase) for job, phase in phases.items() if job in self.jobs]

    def read_log(self, name):
        return self.logs.get(name[:-len("-pod")])

    def delete_job(self, name):
        self.deleted.append(name)
        self.jobs.discard(name)

    def job_names(self):
        return set(self.jobs)


TRAIN = {"name": "train", "framework": "rlinf", "mode": "train",
         "launched": {"command": ["bash", "run_embodiment.sh"], "overrides": ["runner.max_steps=1"]}}


def look(cluster, jobs, state, clock):
    """One look of the watch at the pods the cluster lists now (as job_run's judge makes it)."""
    return jw.Rounds(cluster, jobs, 45, state, clock).look([strip(p) for p in cluster.list_pods()])


def test_a_job_that_ignores_its_override_is_deleted_on_the_look_that_sees_it():
    clock = Clock()
    cluster = Cluster([{"train": "Running"}], {"train": OVERRUN})
    state = jw.new_state(clock())
    clock.sleep(7)
    assert look(cluster, [TRAIN], state, clock) is True  # the only Job was stopped: nothing left to wait for
    assert cluster.deleted == ["train"]
    stopped = state["stopped"]["train"]
    assert (stopped["step"], stopped["total"], stopped["seen_after_s"]) == (1, 1000, 7.0)
    assert "bash run_embodiment.sh ignored runner.max_steps=1" in stopped["message"]
    assert state["gone"] == {}  # deleted by the watch itself, so not "gone"


def test_a_running_job_keeps_the_wait_going_and_a_finished_one_settles_it():
    clock = Clock()
    cluster = Cluster([{"train": "Pending"}, {"train": "Running"}, {"train": "Succeeded"}])
    job = dict(TRAIN, framework="custom")
    state = jw.new_state(clock())
    assert [look(cluster, [job], state, clock) for _look in range(3)] == [False, False, True]
    assert state == {"started": 1000.0, "created": False, "stopped": {}, "gone": {}}


def test_a_stop_in_an_earlier_attempt_is_not_taken_for_a_deletion_by_someone_else(tmp_path):
    clock = Clock()
    path = str(tmp_path / "watch.json")
    cluster = Cluster([{"train": "Running", "eval": "Running"}, {"eval": "Running"}, {"eval": "Succeeded"}],
                      {"train": OVERRUN})
    jobs = [TRAIN, {"name": "eval", "framework": "custom", "mode": "eval"}]
    settled = False
    while not settled:  # each look in an attempt of its own, the state carried by the file
        state = jw.load_state(path, clock())
        settled = look(cluster, jobs, state, clock)
        jw.save_state(path, state, settled)
        clock.sleep(10)
    assert list(state["stopped"]) == ["train"] and state["gone"] == {}
    assert not Path(path).exists()  # removed when the watch ended


def test_a_job_deleted_by_someone_else_is_named_at_once():
    clock = Clock()
    cluster = Cluster([{"train": "Running"}] * 5)
    job = dict(TRAIN, framework="custom")
    state = jw.new_state(clock())
    assert look(cluster, [job], state, clock) is False
    clock.sleep(4)
    cluster.jobs.clear()
    assert look(cluster, [job], state, clock) is True
    assert state["gone"] == {"train": {"seen_after_s": 4.0}} and state["stopped"] == {}


def test_only_the_head_pod_of_an_indexed_job_is_read():
    pods = [pod("train", "Running", index=0), pod("train", "Running", index=1), pod("other", "Running"),
            pod("train", "Pending")]
    assert jw.head_pods_to_read(pods, {"train": TRAIN}, {}) == [("train", "train-pod", "Running")]
    assert jw.head_pods_to_read(pods, {"train": TRAIN}, {"train": {}}) == []


def test_a_state_file_that_is_not_a_state_starts_a_new_watch(tmp_path):
    path = tmp_path / "watch.json"
    path.write_text(json.dumps(["not", "a", "state"]))
    assert jw.load_state(str(path), 5.0) == {"started": 5.0, "created": False, "stopped": {}, "gone": {}}
    assert jw.load_state("", 6.0)["started"] == 6.0


def test_a_pod_waiting_for_a_gpu_just_freed_is_not_stuck_yet():
    # three 1-GPU examples on a 1-GPU machine (a lent H100, 2026-12-06): the watch stopped the one that ran (its
    # override was ignored); another waits with the scheduler's Unschedulable condition it got while the GPU was taken
    import time
    from k8s_kit import unschedulable_pod
    jobs = [{"name": n, "framework": "trl", "mode": "train", "launched": {}} for n in ("ex-a", "ex-b")]
    waiting_pod = unschedulable_pod("ex-b-x", age_s=120.0, labels={jw.JOB_NAME_LABEL: "ex-b"})
    now = time.time()
    state = {"started": now - 120, "created": True, "stopped": {"ex-a": {}}, "gone": {}, "held_at": now - 5}
    rounds = jw.Rounds(Cluster([{}]), jobs, 45, state, clock=lambda: now)
    assert rounds.settled([waiting_pod]) is False
    # no pod of the run has held a node for longer than the grace: it is stuck
    state["held_at"] = now - 60
    assert rounds.settled([waiting_pod]) is True
