# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/workloads/_probe_pods.py: a probe's output as the runner reads it
(on the real recorded probe output) and the probe pods that did not start."""

from __future__ import annotations

import json

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _diagnose
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _probe_pods
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s

from k8s_kit import IMAGE_MSG, NOT_READY_NODE, NOW, RECORDED, REPO, SIM_PROBES, image_pod, make_pod, ready_pod


# -------------------------------------------------------------------------------------------- probe_output


def _last_json(path):
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return json.loads(lines[-1])


RECORDED_PROBES = sorted(RECORDED.glob("probe_*.out")) + sorted(SIM_PROBES.glob("**/*.out"))


def test_recorded_probe_files_exist():
    names = {p.name for p in RECORDED_PROBES}
    assert {"probe_node.out", "probe_runtime.out", "probe_model.out", "probe_multigpu.out", "probe_sim_import.out"} <= names
    assert len(RECORDED_PROBES) >= 20


@pytest.mark.parametrize("path", RECORDED_PROBES, ids=[str(p.relative_to(REPO)) for p in RECORDED_PROBES])
def test_probe_output_reads_every_recorded_probe(path):
    out = _probe_pods.probe_output(path.read_text(encoding="utf-8"))
    assert out["status"] == "ok", out["error"]
    assert out["rc"] is None
    assert out["error"] is None
    assert out["data"] == _last_json(path)
    assert out["stderr_tail"] == ""


def test_probe_output_node_probe_with_leading_blank_line():
    text = (RECORDED / "probe_node.out").read_text(encoding="utf-8")
    assert text.startswith("\n")
    out = _probe_pods.probe_output(text)
    assert out["data"]["probe"] == "node"
    assert out["data"]["gpu_count"] == 1
    assert out["data"]["gpus"][0]["name"] == "NVIDIA H200"


def test_probe_output_tail_is_15_lines_of_a_long_log():
    text = (RECORDED / "probe_multigpu.out").read_text(encoding="utf-8")
    assert len(text.splitlines()) > 100
    out = _probe_pods.probe_output(text)
    # the JSON result is `data`, not repeated in stdout and its tail (its 15 lines are those before it)
    lines = text.splitlines()
    assert json.loads(lines[-1])["probe"] == "multigpu"
    assert out["stdout_tail"] == "\n".join(lines[-16:-1])
    assert out["stdout"] == "\n".join(lines[:-1])
    assert out["data"]["world_size"] == 1


def test_probe_output_rc_marker_is_read_and_removed():
    body = (RECORDED / "probe_runtime.out").read_text(encoding="utf-8")
    out = _probe_pods.probe_output(body + "__rlstack_rc=0\n")
    assert out["status"] == "ok"
    assert out["rc"] == 0
    assert "__rlstack_rc" not in out["stdout"]
    assert "__rlstack_rc" not in out["stdout_tail"]
    assert out["data"]["torch"] == "2.11.0+cu130"


@pytest.mark.parametrize("code", [1, 2, 124, 137, 139, -9])
def test_probe_output_rc_marker_with_a_crash_exit_code(code):
    text = '{"probe": "runtime", "schema": 1, "error": "Traceback (most recent call last):\\nImportError: libcudart.so.13"}\n'
    out = _probe_pods.probe_output(text + "__rlstack_rc=%d\n" % code)
    assert out["status"] == "crashed"
    assert out["rc"] == code
    assert out["error"] == "the probe crashed (exit code %d): ImportError: libcudart.so.13" % code
    assert out["data"]["probe"] == "runtime"


def test_probe_output_explicit_rc_wins():
    out = _probe_pods.probe_output('{"probe": "node"}\n', rc=1)
    assert (out["status"], out["rc"]) == ("crashed", 1)
    assert out["error"] == "the probe crashed (exit code 1): "
    assert _probe_pods.probe_output('{"probe": "node"}\n', rc=0)["status"] == "ok"


def test_probe_output_last_marker_counts():
    out = _probe_pods.probe_output('__rlstack_rc=5\n{"probe": "node"}\n__rlstack_rc=0\n')
    assert out["rc"] == 0
    assert out["status"] == "ok"
    assert out["stdout"] == '__rlstack_rc=5'
    assert out["data"] == {"probe": "node"}


def test_probe_output_unreadable_marker():
    out = _probe_pods.probe_output('{"probe": "node"}\n__rlstack_rc=oops\n')
    assert out["rc"] is None
    assert out["status"] == "ok"
    assert "__rlstack_rc" not in out["stdout"]


def test_probe_output_crashed_flag_without_exit_code():
    error = "Traceback (most recent call last):\n  File \"probe.py\", line 3\nRuntimeError: CUDA error: no kernel image is available\n"
    out = _probe_pods.probe_output(json.dumps({"probe": "runtime", "crashed": True, "error": error}) + "\n__rlstack_rc=0\n")
    assert out["status"] == "crashed"
    assert out["rc"] == 0
    assert out["error"] == "the probe crashed (exit code 0): RuntimeError: CUDA error: no kernel image is available"


def test_probe_output_trailing_blank_lines_are_skipped():
    out = _probe_pods.probe_output('NCCL INFO x\n{"probe": "smoke", "ok": true}\n\n   \n\n')
    assert out["status"] == "ok"
    assert out["data"] == {"probe": "smoke", "ok": True}


def test_probe_output_without_json_names_the_last_stderr_line():
    stdout = "Traceback (most recent call last):\n  File \"/probe/probe_runtime.py\", line 1\n__rlstack_rc=1\n"
    stderr = "\n".join("warning %d" % i for i in range(20)) + "\nModuleNotFoundError: No module named 'torch'\n"
    out = _probe_pods.probe_output(stdout, stderr=stderr)
    assert out["status"] == "no_output"
    assert out["rc"] == 1
    assert out["data"] is None
    assert out["error"] == "the probe printed no JSON result (exit code 1): ModuleNotFoundError: No module named 'torch'"
    assert len(out["stderr_tail"].splitlines()) == 15
    assert out["stderr_tail"].endswith("No module named 'torch'")
    assert out["stdout_tail"].startswith("Traceback")


@pytest.mark.parametrize("stdout", ["", None, "\n\n", "Segmentation fault (core dumped)\n", '{"probe": "node"}\nKilled\n',
                                    '{"probe": "node", "truncated\n', "[1, 2, 3]\n", '{"a": 1} trailing\n'])
def test_probe_output_no_json_result(stdout):
    out = _probe_pods.probe_output(stdout)
    assert out["status"] == "no_output"
    assert out["data"] is None
    assert out["error"] == "the probe printed no JSON result (exit code None)"


def test_probe_output_stderr_is_ignored_when_json_is_there():
    out = _probe_pods.probe_output('{"probe": "node"}\n', rc=0, stderr="NCCL WARN something\n")
    assert out["status"] == "ok"
    assert out["stderr_tail"] == "NCCL WARN something"


# --------------------------------------------------------------------------------------------- probe_not_started


def test_probe_not_started_reports_the_pod_problem_with_its_events():
    pods = [image_pod("rlsv-r-l1-a", labels={"rlstack.io/target": "p5-node-1"}),
            ready_pod("rlsv-r-l1-b", labels={"rlstack.io/target": "p5-node-0"})]
    states = k8s.pods_summary(pods, expected=2, now=NOW)["states"]
    messages = [{"message": IMAGE_MSG}, {"message": IMAGE_MSG}, {"message": "Pulling image"}]
    events = [{"item": {"pod": "rlsv-r-l1-a"}, "resources": messages}]
    targets = [{"node": "p5-node-0"}, {"node": "p5-node-1"}]
    out = _probe_pods.probe_not_started(targets, {"p5-node-0": {"status": "ok"}}, states, events, 900)
    assert list(out) == ["p5-node-1"]
    outcome = out["p5-node-1"]
    assert outcome["status"] == "not_started" and outcome["data"] is None
    assert outcome["error"].startswith("ImagePullBackOff: ")
    assert outcome["hint"] == k8s.HINTS["image"]
    assert outcome["events"] == [IMAGE_MSG, "Pulling image"]


def test_probe_not_started_without_a_problem_names_the_timeout_and_phase():
    states = k8s.pods_summary([make_pod("rlsv-r-l1-a", "Pending", age_s=5.0, labels={"rlstack.io/target": "n-1"})],
                              expected=1, now=NOW)["states"]
    out = _probe_pods.probe_not_started([{"node": "N_1"}, {"node": "n-2"}], {}, states, [], "900")
    assert out["N_1"]["error"] == "the probe pod did not start within 900 s (Pending)"
    assert "image pull is slow" in out["N_1"]["hint"]
    # every probe pod exists before the wait: a target without one had its pod deleted or evicted
    assert out["n-2"]["error"].startswith("the probe pod is gone: it was deleted or evicted")
    assert out["n-2"]["events"] == [] and out["n-2"]["hint"] == _diagnose.FIXES["deleted"]
    assert _probe_pods.probe_not_started([{"node": "n"}], {"n": {}}, [], [], 900) == {}


def test_probe_not_started_when_the_pods_could_not_be_listed_claims_nothing():
    out = _probe_pods.probe_not_started([{"node": "n-2"}], {}, [], [], 900, listed=False)
    assert out["n-2"]["error"] == "the probe pod did not start within 900 s (its state could not be read)"


def test_probe_not_started_names_the_node_that_went_not_ready():
    pods = [make_pod("rlsv-r-l1-a", "Pending", age_s=200.0, node="p5-node-1",
                     labels={"rlstack.io/target": "p5-node-1"})]
    states = k8s.pods_summary(pods, expected=1, want="probes", now=NOW)["states"]
    healthy = {"metadata": {"name": "p5-node-0"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    out = _probe_pods.probe_not_started([{"node": "p5-node-1"}], {}, states, [], 60, nodes=[healthy, NOT_READY_NODE])
    assert out["p5-node-1"]["error"] == ("the probe pod did not finish (Pending): node p5-node-1 is NotReady "
                                         "(Kubelet stopped posting node status.)")
    assert out["p5-node-1"]["hint"] == _diagnose.FIXES["node_not_ready"]
    # an eviction on a Ready node is the cause; on a NotReady node, the node is (it is what evicts)
    evicted = make_pod("rlsv-r-l1-a", "Running", node="p5-node-1", labels={"rlstack.io/target": "p5-node-1"},
                       conditions=[{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                                    "message": "Eviction API: evicting"}])
    states = k8s.pods_summary([evicted], expected=1, want="probes", now=NOW)["states"]
    out = _probe_pods.probe_not_started([{"node": "p5-node-1"}], {}, states, [], 60, nodes=[healthy])
    assert out["p5-node-1"]["error"].startswith("Evicted: pod rlsv-r-l1-a was evicted")
    out = _probe_pods.probe_not_started([{"node": "p5-node-1"}], {}, states, [], 60, nodes=[NOT_READY_NODE])
    assert "node p5-node-1 is NotReady" in out["p5-node-1"]["error"]
