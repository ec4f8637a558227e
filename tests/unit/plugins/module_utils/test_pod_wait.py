# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The watch-based wait of the probe pods (plugins/module_utils/k8s/_pod_wait.py), judged by the real pods_summary."""
from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._pod_wait import WatchExpired, WatchIdle, follow, orphan_check, strip


def pod(name, phase, version, uid=None):
    return {"metadata": {"name": name, "uid": uid or "uid-" + name, "resourceVersion": str(version),
                         "managedFields": [{"manager": "kubelet"}], "labels": {}},
            "spec": {"nodeName": "n-" + name, "containers": [{"name": "probe"}]},
            "status": {"phase": phase}}


def judge(expected):
    return lambda pods: k8s.pods_summary(pods, expected=expected, want="probes", start_timeout_s=900)


class Clock:
    """A clock that moves only when the fake API says time passed."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_pods_already_finished_are_judged_from_the_list_alone():
    calls = []

    def watch(_version, _timeout):
        calls.append("watch")
        return []

    out = follow(lambda: ([pod("a", "Succeeded", 5), pod("b", "Succeeded", 6)], "6"), watch, judge(2), 30)
    assert out["summary"]["settled"] and out["summary"]["ok"]
    assert calls == [] and out["lists"] == 1 and out["events"] == 0
    assert [p["metadata"]["name"] for p in out["pods"]] == ["a", "b"]
    assert all("managedFields" not in p["metadata"] for p in out["pods"])


def test_the_watch_events_settle_the_wait_and_it_returns_at_once():
    versions = []

    def watch(version, _timeout):
        versions.append(version)
        yield {"type": "MODIFIED", "object": pod("a", "Succeeded", 11)}
        yield {"type": "MODIFIED", "object": pod("b", "Failed", 12)}
        raise AssertionError("read past the event that settled the wait")

    out = follow(lambda: ([pod("a", "Running", 5), pod("b", "Running", 6)], "10"), watch, judge(2), 30,
                 min_interval_s=0)
    assert versions == ["10"]
    assert out["summary"]["settled"] and not out["summary"]["ok"]
    assert out["events"] == 2


def test_a_deleted_probe_pod_counts_as_gone():
    def watch(_version, _timeout):
        yield {"type": "MODIFIED", "object": pod("a", "Succeeded", 11)}
        yield {"type": "DELETED", "object": pod("b", "Running", 12)}

    out = follow(lambda: ([pod("a", "Running", 5), pod("b", "Running", 6)], "10"), watch, judge(2), 30,
                 min_interval_s=0)
    assert out["summary"]["settled"] and out["summary"]["gone"] == 1
    assert [p["metadata"]["name"] for p in out["pods"]] == ["a"]


def test_an_expired_resource_version_lists_again():
    lists = [([pod("a", "Running", 5)], "10"), ([pod("a", "Succeeded", 30)], "30")]

    def list_pods():
        return lists.pop(0)

    def watch(version, _timeout):
        assert version == "10", "the watch after the relist should not run: the list settled the wait"
        yield {"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old resource version"}}

    out = follow(list_pods, watch, judge(1), 30, min_interval_s=0)
    assert out["lists"] == 2 and out["summary"]["settled"] and out["summary"]["ok"]


def test_a_broken_stream_lists_again():
    state = {"lists": 0}

    def list_pods():
        state["lists"] += 1
        return [pod("a", "Running" if state["lists"] == 1 else "Succeeded", state["lists"])], str(state["lists"])

    def watch(_version, _timeout):
        yield from ()  # a stream that fails on its first read
        raise WatchExpired("connection reset by peer")

    out = follow(list_pods, watch, judge(1), 30)
    assert state["lists"] == 2 and out["summary"]["ok"]


def test_a_quiet_watch_lists_again_and_returns_after_step_s_with_what_it_saw():
    clock = Clock()
    timeouts = []

    def watch(_version, timeout):
        timeouts.append(timeout)
        clock.now += 5  # silent for 5 s: the caller's idle read timeout
        yield from ()  # a stream that fails on its first read
        raise WatchIdle("Read timed out.")

    lists = []

    def list_pods():
        lists.append(clock.now)  # a stalled API server fails this list within the guard's bound
        return [pod("a", "Running", 5)], "10"

    out = follow(list_pods, watch, judge(1), 12, clock=clock)
    assert not out["summary"]["settled"]
    assert clock.now == 15 and timeouts == [12, 7, 2]
    assert lists == [0, 5, 10, 15]
    assert out["pods"][0]["status"]["phase"] == "Running"


def test_a_list_that_fails_ends_the_wait_with_its_error():
    state = {"n": 0}

    def list_pods():
        state["n"] += 1
        if state["n"] > 1:
            raise RuntimeError("The Kubernetes API server of cluster sim did not answer")
        return [pod("a", "Running", 5)], "10"

    def watch(_version, _timeout):
        yield from ()  # a stream that fails on its first read
        raise WatchIdle("Read timed out.")

    try:
        follow(list_pods, watch, judge(1), 30)
        raise AssertionError("the failed list was swallowed")
    except RuntimeError as exc:
        assert "did not answer" in str(exc)


def test_the_pods_are_judged_at_most_every_min_interval_while_events_stream():
    clock = Clock()
    judged = []

    def counting(pods):
        judged.append(clock.now)
        return k8s.pods_summary(pods, expected=100, want="finished")

    def watch(version, _timeout):
        if version != "10":  # after the burst: silent until the step ends
            clock.now += 1
            return
        for i in range(100):
            clock.now += 0.01
            yield {"type": "ADDED", "object": pod("p%03d" % i, "Running", 100 + i)}

    out = follow(lambda: ([], "10"), watch, counting, 1.5, clock=clock, min_interval_s=0.5)
    assert out["events"] == 100
    # 100 events over 1 s: the list, two judgements during the stream and one at its end, not 100
    assert len(judged) <= 5, judged


def test_bookmarks_move_the_resource_version_and_are_not_events():
    versions = []

    def watch(version, _timeout):
        versions.append(version)
        if len(versions) == 1:
            yield {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "42"}}}
        else:
            yield {"type": "MODIFIED", "object": pod("a", "Succeeded", 43)}

    out = follow(lambda: ([pod("a", "Running", 5)], "10"), watch, judge(1), 30, min_interval_s=0)
    assert versions == ["10", "42"] and out["events"] == 1 and out["summary"]["ok"]


def test_strip_leaves_the_pod_itself_alone():
    original = pod("a", "Running", 1)
    stripped = strip(original)
    assert "managedFields" in original["metadata"] and "managedFields" not in stripped["metadata"]
    assert stripped["metadata"]["name"] == "a"
    bare = {"metadata": {"name": "b"}}
    assert strip(bare) is bare


def test_the_event_that_ends_the_last_pod_is_judged_at_once():
    clock = Clock()

    def watch(_version, _timeout):
        for name, phase in (("a", "Succeeded"), ("b", "Succeeded")):
            clock.now += 0.01  # well within min_interval_s of the last judgement
            yield {"type": "MODIFIED", "object": pod(name, phase, 20)}
        raise AssertionError("waited for more events after the last pod ended")

    out = follow(lambda: ([pod("a", "Running", 5), pod("b", "Running", 6)], "10"), watch, judge(2), 30,
                 clock=clock, min_interval_s=0.5)
    assert out["summary"]["ok"] and out["judged"] == 2 and clock.now < 0.05


def test_an_orphaned_wait_returns_at_the_next_silence():
    clock = Clock()
    gone = {"worker": False}

    def watch(_version, _timeout):
        clock.now += 5
        gone["worker"] = True  # the run was interrupted meanwhile
        yield from ()  # a stream that fails on its first read
        raise WatchIdle("Read timed out.")

    out = follow(lambda: ([pod("a", "Running", 5)], "10"), watch, judge(1), 15, clock=clock,
                 orphaned=lambda: gone["worker"])
    assert clock.now == 5 and not out["summary"]["settled"]


def test_orphan_check_fires_when_an_ancestor_is_reparented():
    parents = {100: 50, 50: 10}  # the module, its shell, the Ansible worker
    clock = Clock()
    check = orphan_check(levels=2, parent_of=parents.get, pid=100, every_s=0.5, clock=clock)
    assert not check()
    parents[50] = 1  # the worker died: the shell was reparented
    assert not check()  # read again only every_s after the last read
    clock.now += 0.5
    assert check()
    parents[50] = 10
    clock.now += 0.5
    assert check()  # once gone, always gone
    assert not orphan_check(parent_of=lambda _pid: None, pid=100)()  # no /proc: never fires


def test_orphan_check_reads_proc_at_most_every_interval():
    reads = []

    def parent_of(pid):
        reads.append(pid)
        return {100: 50, 50: 10}[pid]

    clock = Clock()
    check = orphan_check(levels=2, parent_of=parent_of, pid=100, every_s=0.5, clock=clock)
    made = len(reads)
    for _event in range(1000):  # a burst of watch events within 0.1 s
        check()
        clock.now += 0.0001
    assert len(reads) == made  # none read again yet
    clock.now += 0.5
    check()
    assert len(reads) == made + 2  # both generations, once


def test_orphan_check_on_this_process_reads_proc():
    assert orphan_check()() is False


def test_each_pod_a_watch_event_shows_ending_is_told_and_one_the_list_finds_ended_is_not():
    """probe_run reads an ended pod's log while the others are awaited (_pod_batch.LogPrefetch). A pod the list finds
    ended is not told: every later attempt of the task lists it again, and its reads there would be thrown away by
    each attempt that does not finish; the finishing attempt reads it."""
    ended = []

    def watch(_version, _timeout):
        yield {"type": "MODIFIED", "object": pod("b", "Running", 11)}
        yield {"type": "MODIFIED", "object": pod("b", "Failed", 12)}

    follow(lambda: ([pod("a", "Succeeded", 5), pod("b", "Pending", 6)], "10"), watch, judge(2), 30,
           min_interval_s=0, on_ended=ended.append)
    assert ended == ["b"]
