# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.plugin_utils import _progress as p


def pod(role=None, component=None, phase="Running", waiting=None, unschedulable=False):
    labels = {}
    if role:
        labels[p.ROLE_LABEL] = role
    if component:
        labels[p.COMPONENT_LABEL] = component
    status = {"phase": phase}
    if waiting:
        status["containerStatuses"] = [{"state": {"waiting": {"reason": waiting}}}]
    if unschedulable:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    return {"metadata": {"labels": labels}, "status": status}


def test_mpijob_workers_without_launcher():
    pods = [pod("worker"), pod("worker")]
    assert p.pods_progress(pods) == "2/2 workers running, launcher not created yet"


def test_mpijob_with_launcher_and_a_pulling_worker():
    pods = [pod("worker"), pod("worker", phase="Pending", waiting="ContainerCreating"), pod("launcher", phase="Pending")]
    assert p.pods_progress(pods) == "1/2 workers running, 1 pending (ContainerCreating), launcher pending"


def test_probe_pods_named_by_component_and_reasons_counted():
    pods = [pod(component="probe", phase="Pending", waiting="ImagePullBackOff"),
            pod(component="probe", phase="Pending", waiting="ImagePullBackOff"),
            pod(component="probe", phase="Pending", unschedulable=True)]
    assert p.pods_progress(pods) == "0/3 probe pods running, 3 pending (2 ImagePullBackOff, Unschedulable)"


def test_no_pods():
    assert p.pods_progress([]) == "no pods yet"


def test_describe_a_wait_from_its_registered_result():
    result = {"attempts": 21, "retries": 901, "resources": [pod("worker"), pod("worker")]}
    line, detail = p.describe(result, "the nccl-tests launcher", "L3", elapsed_s=42.4, delay_s=2)
    assert line == ("L3    waiting for the nccl-tests launcher: 42 s of at most 30 min 00 s "
                    "(2/2 workers running, launcher not created yet)")
    assert detail == "2/2 workers running, launcher not created yet"


def test_describe_without_resources_counts_attempts_and_estimates_elapsed():
    line = p.describe({"attempts": 2, "retries": 6}, "the launcher's log", "", delay_s="2")[0]
    assert line == "waiting for the launcher's log: 4 s of at most 10 s (attempt 2 of 6)"


def test_seconds_reads_well():
    assert [p.seconds(x) for x in (0, 42.6, 125, 3725)] == ["0 s", "43 s", "2 min 05 s", "1 h 02 min"]


def test_no_terminal_control_codes():
    line = p.describe({"attempts": 1, "retries": 3, "resources": [pod("worker")]}, "x", "L3", 1, 1)[0]
    assert all(ch.isprintable() for ch in line)


def test_throttle_prints_on_change_or_after_the_interval():
    throttle = p.Throttle(30)
    assert throttle.due("k", "a", 0.0)
    assert not throttle.due("k", "a", 10.0)
    assert throttle.due("k", "b", 11.0)
    assert not throttle.due("k", "b", 40.0)
    assert throttle.due("k", "b", 41.0)
    throttle.forget("k")
    assert throttle.due("k", "b", 42.0)


def test_stopped_line():
    assert p.stopped_line("L2", "the probe pods to finish", 900) == (
        "L2    stopped waiting for the probe pods to finish after 15 min 00 s (its bound); the level reports what it saw")
