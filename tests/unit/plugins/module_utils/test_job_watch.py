# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The L5/L6 Job watch in bounded steps (plugins/module_utils/k8s/_job_watch.py), on RLinf's own logs (the fixtures of
tests/unit/fixtures/frameworks, provenance in their SOURCES.md). The calls to the API server are a small fake
here; tests/sim/test_sim_job_watch.py runs the module against the simulated cluster."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _job_watch as jw

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


def test_a_job_that_ignores_its_override_is_deleted_on_the_round_that_sees_it():
    clock = Clock()
    cluster = Cluster([{"train": "Running"}], {"train": OVERRUN})
    out = jw.watch(cluster, [TRAIN], 3900, 45, 2, step_s=30, clock=clock, sleep=clock.sleep)
    assert cluster.deleted == ["train"] and out["settled"] and not out["timed_out"]
    stopped = out["stopped"]["train"]
    assert (stopped["step"], stopped["total"]) == (1, 1000)
    assert "bash run_embodiment.sh ignored runner.max_steps=1" in stopped["message"]
    assert out["gone"] == {}  # deleted by the watch itself, so not "gone"


def test_a_step_ends_at_step_s_with_the_pods_for_the_progress_line_and_the_next_step_goes_on():
    clock = Clock()
    cluster = Cluster([{"train": "Pending"}] * 20 + [{"train": "Running"}] * 20 + [{"train": "Succeeded"}])
    job = dict(TRAIN, framework="custom")
    first = jw.watch(cluster, [job], 3900, 45, 2, step_s=30, clock=clock, sleep=clock.sleep)
    assert (first["settled"], first["timed_out"], first["step_s"]) == (False, False, 30)
    assert first["resources"] == [{"metadata": {"name": "train-pod", "labels": {jw.JOB_NAME_LABEL: "train"}},
                                   "status": {"phase": "Pending"}}]  # managedFields left out
    steps = [first]
    while not steps[-1]["settled"]:
        steps.append(jw.watch(cluster, [job], 3900, 45, 2, step_s=30, state=steps[-1]["state"], clock=clock,
                              sleep=clock.sleep))
        assert len(steps) < 10
    # elapsed_s counts from the first step: the whole watch, not the last call
    assert steps[-1]["elapsed_s"] == clock.now - 1000.0 and steps[-1]["elapsed_s"] > 60


def test_a_stop_in_an_earlier_step_is_not_taken_for_a_deletion_by_someone_else(tmp_path):
    clock = Clock()
    path = str(tmp_path / "watch.json")
    cluster = Cluster([{"train": "Running", "eval": "Running"}] * 30 + [{"eval": "Succeeded"}],
                      {"train": OVERRUN})
    jobs = [TRAIN, {"name": "eval", "framework": "custom", "mode": "eval"}]
    out = jw.watch(cluster, jobs, 3900, 45, 2, step_s=10, state=jw.load_state(path, clock()), clock=clock,
                   sleep=clock.sleep)
    assert not out["settled"] and list(out["stopped"]) == ["train"]
    jw.save_state(path, out.pop("state"), False)
    while not out["settled"]:
        out = jw.watch(cluster, jobs, 3900, 45, 2, step_s=10, state=jw.load_state(path, clock()), clock=clock,
                       sleep=clock.sleep)
        jw.save_state(path, out.pop("state"), out["settled"])
    assert list(out["stopped"]) == ["train"] and out["gone"] == {}
    assert not Path(path).exists()  # removed when the watch ended


def test_a_job_deleted_by_someone_else_is_named_at_once():
    clock = Clock()
    cluster = Cluster([{"train": "Running"}] * 5)
    job = dict(TRAIN, framework="custom")
    first = jw.watch(cluster, [job], 3900, 45, 2, step_s=4, clock=clock, sleep=clock.sleep)
    assert not first["settled"]
    cluster.jobs.clear()
    out = jw.watch(cluster, [job], 3900, 45, 2, step_s=30, state=first["state"], clock=clock, sleep=clock.sleep)
    assert out["settled"] and out["gone"] == {"train": {"seen_after_s": 4.0}} and out["stopped"] == {}


def test_the_whole_watch_ends_at_timeout_s_from_its_first_step():
    clock = Clock()
    cluster = Cluster([{"train": "Running"}])
    job = dict(TRAIN, framework="custom")
    out = {"settled": False, "timed_out": False, "state": None}
    calls = 0
    while not (out["settled"] or out["timed_out"]):
        out = jw.watch(cluster, [job], 100, 45, 2, step_s=30, state=out["state"], clock=clock, sleep=clock.sleep)
        calls += 1
    assert out["timed_out"] and not out["settled"] and calls == 4 and out["elapsed_s"] == 100.0


def test_only_the_head_pod_of_an_indexed_job_is_read():
    pods = [pod("train", "Running", index=0), pod("train", "Running", index=1), pod("other", "Running"),
            pod("train", "Pending")]
    assert jw.head_pods_to_read(pods, {"train": TRAIN}, {}) == [("train", "train-pod", "Running")]
    assert jw.head_pods_to_read(pods, {"train": TRAIN}, {"train": {}}) == []


def test_a_state_file_that_is_not_a_state_starts_a_new_watch(tmp_path):
    path = tmp_path / "watch.json"
    path.write_text(json.dumps(["not", "a", "state"]))
    assert jw.load_state(str(path), 5.0) == {"started": 5.0, "stopped": {}, "gone": {}}
    assert jw.load_state("", 6.0)["started"] == 6.0
