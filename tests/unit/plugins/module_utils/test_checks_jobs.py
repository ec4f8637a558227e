# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/verdicts/_checks.py (L5/L6: a Job's state and log turned into checks, on
real and framework-printed logs) and workloads/_workloads.py's example_job (the Job an example becomes)."""

from __future__ import annotations

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks as checks
from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _verdict
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads

from checks_kit import L5_ERROR_PATTERNS, failing, find, fw_log, names, passed


# ---------------------------------------------------------------------------------------- log_checks, l6


def _job_state(*conditions, pods=None):
    job = {"metadata": {"name": "rlsv-run1-l5-libero"}, "status": {"conditions": list(conditions)}}
    return k8s.job_state(job, pods or [], now=2.0e9)


def _pod(phase, exit_code=None, waiting=None):
    statuses = []
    if exit_code is not None:
        statuses.append({"name": "main", "state": {"terminated": {"exitCode": exit_code}}})
    if waiting:
        statuses.append({"name": "main", "state": {"waiting": waiting}})
    return {"metadata": {"name": "rlsv-run1-l5-libero-x7k2p", "creationTimestamp": "2026-11-30T02:00:00Z"},
            "spec": {"nodeName": "p5-node-1"}, "status": {"phase": phase, "containerStatuses": statuses}}


COMPLETE = {"type": "Complete", "status": "True"}
FAILED = {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}


@pytest.mark.parametrize("fixture", ["trl/trl-train-one-step.log.gz", "trl/trl-train-one-step-h200.log.gz"])
def test_log_checks_recorded_trl_one_step_passes(fixture):
    state = _job_state(COMPLETE, pods=[_pod("Succeeded", 0)])
    expect = {"framework": "trl", "mode": "train", "error_patterns": L5_ERROR_PATTERNS}
    result = checks.log_checks(fw_log(fixture), state, "cpu-host", expect)
    assert names(result) == ["job", "completion_marker", "log_errors"]
    assert failing(result) == []
    assert find(result, "completion_marker")["fail_msg"] == "looked for \"'train_runtime':\""


@pytest.mark.parametrize("fixture,framework", [("rlinf/rlinf-train-one-step.log", "rlinf"),
                                               ("verl/verl-train-one-step.log", "verl")])
def test_log_checks_framework_printed_one_step_passes(fixture, framework):
    result = checks.log_checks(fw_log(fixture), _job_state(COMPLETE), "n", {"framework": framework, "mode": "train"})
    assert failing(result) == []
    assert find(result, "completion_marker")["actual"] is True


def test_log_checks_recorded_crash_fails_with_the_traceback():
    state = _job_state(FAILED, pods=[_pod("Failed", 1)])
    expect = {"framework": "trl", "mode": "train", "error_patterns": L5_ERROR_PATTERNS}
    result = checks.log_checks(fw_log("trl/trl-train-crash.log.gz"), state, "cpu-host", expect)
    job = find(result, "job")
    assert (job["actual"], job["expected"]) == ("Failed", "Complete")
    assert job["fail_msg"] == "BackoffLimitExceeded: Job has reached the specified backoff limit (exit code 1)"
    assert find(result, "completion_marker")["actual"] is False
    traceback = [c for c in result if c["name"] == "log_errors"][0]
    assert traceback["actual"] == ["Traceback (most recent call last):"]
    assert [n for n, node in failing(result)] == ["job", "completion_marker", "log_errors"]


@pytest.mark.parametrize("fixture,framework,seen", [
    ("trl/trl-train-no-max-steps.log.gz", "trl", "0%|          | 0/96 ["),
    ("rlinf/rlinf-train-override-ignored.log", "rlinf", "Global Step:    1/1000"),
    ("verl/verl-train-override-ignored.log", "verl", "'step:2 -'"),
])
def test_log_checks_override_ignored_fails_on_the_real_log(fixture, framework, seen):
    launched = {"command": ["bash", "examples/embodiment/run_embodiment.sh", "maniskill_ppo_openvlaoft"],
                "overrides": ["runner.max_steps=1"], "delivery": "environment variable HYDRA_OVERRIDES"}
    state = _job_state(pods=[_pod("Running")])  # deleted while it ran
    result = checks.log_checks(fw_log(fixture), state, "n", {"framework": framework, "mode": "train",
                                                             "launched": launched})
    assert names(result) == ["override"]
    check = result[0]
    assert check["actual"] is False and seen in check["fail_msg"]
    assert check["fail_msg"].startswith("the one-step override did not take effect: bash examples/embodiment/"
                                        "run_embodiment.sh maniskill_ppo_openvlaoft ignored runner.max_steps=1 "
                                        "(passed as environment variable HYDRA_OVERRIDES)")
    assert "overrides_env" in check["hint"]


def test_log_checks_problem_before_start():
    waiting = {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "rlinf/rlinf:agentic-v0.2"'}
    state = _job_state(pods=[_pod("Pending", waiting=waiting)])
    assert state["settled"] is True
    result = checks.log_checks("", state, "p5-node-1", {"success_markers": ["x"], "error_patterns": L5_ERROR_PATTERNS})
    assert len(result) == 1
    check = result[0]
    assert (check["name"], check["node"], check["actual"], check["expected"]) == ("job", "p5-node-1", "ImagePullBackOff", "Complete")
    assert check["fail_msg"] == 'pod rlsv-run1-l5-libero-x7k2p cannot run: Back-off pulling image "rlinf/rlinf:agentic-v0.2"'
    assert check["hint"] == k8s.HINTS["image"]


def test_log_checks_still_running():
    state = _job_state(pods=[_pod("Running")])
    assert state["settled"] is False
    result = checks.log_checks("step 0 ...", state, "n", {})
    assert [(c["name"], c["actual"], c["fail_msg"]) for c in result] == [("job", "still running", "the Job did not finish within the wait")]


@pytest.mark.parametrize("log_error,message", [(None, "the Job's log is empty"),
                                               ('pods "rlsv-run1-l5-libero-x7k2p" not found', 'pods "rlsv-run1-l5-libero-x7k2p" not found')])
def test_log_checks_empty_log_is_missing_evidence(log_error, message):
    result = checks.log_checks("", _job_state(COMPLETE), "n", {"success_markers": ["x"], "log_error": log_error})
    assert names(result) == ["job", "log"]
    check = find(result, "log")
    assert (check["actual"], check["evidence_missing"], check["fail_msg"]) == (None, True, message)
    assert _verdict.evaluate_check(check)["evidence_missing"] is True


def test_log_checks_without_state():
    result = checks.log_checks("", None, "", None)
    assert (find(result, "job")["actual"], find(result, "job")["fail_msg"]) == ("unknown", "")
    assert find(result, "log")["evidence_missing"] is True


def test_log_checks_error_hits_are_capped_at_three():
    text = "\n".join("  ERROR: worker %d lost" % i for i in range(6))
    result = checks.log_checks(text, _job_state(COMPLETE), "n", {"error_patterns": [r"(^|\s)ERROR:"]})
    assert find(result, "log_errors")["actual"] == ["ERROR: worker 0 lost", "ERROR: worker 1 lost", "ERROR: worker 2 lost"]


def test_log_checks_give_one_log_errors_check_for_every_pattern():
    # Two checks of one name hid each other in the report's grid (the passing one was shown, the failing one lost).
    text = "step 1\nTraceback (most recent call last):\nValueError: boom\n"
    result = checks.log_checks(text, _job_state(COMPLETE), "n", {"error_patterns": L5_ERROR_PATTERNS})
    assert names(result).count("log_errors") == 1
    assert find(result, "log_errors")["actual"] == ["Traceback (most recent call last):"]
    assert passed(find(result, "log_errors")) is False


def test_log_checks_marker_is_any_of_and_a_regex():
    result = checks.log_checks(fw_log("trl/trl-train-one-step.log.gz"), _job_state(COMPLETE), "n",
                               {"success_markers": [r"Global Step:\s+1/1\b", "TRAINING_STEP_TEST_PASSED"]})
    assert find(result, "completion_marker")["actual"] is True
    result = checks.log_checks(fw_log("rlinf/rlinf-train-one-step.log"), _job_state(COMPLETE), "n",
                               {"success_markers": ["Global Step: 1/1"]})  # the old substring never matched
    assert find(result, "completion_marker")["actual"] is False


def test_success_rates_accepts_a_pattern_or_a_list():
    pattern = r"(?P<name>[\w/.-]*success_rate)\s*[:=]\s*(?P<value>[0-9.]+)"
    assert checks.success_rates("success_rate=0.2\nsuccess_rate=0.4\n", pattern) == {"success_rate": 0.4}
    assert checks.success_rates("success_rate: 1.2.3\n", [pattern]) == {}
    assert checks.success_rates(None, pattern) == {}
    assert checks.success_rates("success_rate: 0.5", r"success_rate:\s*([0-9.]+)") == {}


@pytest.mark.parametrize("fixture,framework,metrics", [
    ("trl/trl-eval.log", "trl", {"eval/success_rate": 0.4375}),
    ("rlinf/rlinf-eval.log", "rlinf", {"eval/success_once": 0.6875, "eval/success_at_end": 0.640625}),
    ("verl/verl-val-only.log", "verl", {"val-core/openai/gsm8k/acc/mean@1": 0.75}),
])
def test_l6_reads_every_success_metric_of_the_real_log(fixture, framework, metrics):
    expect = {"framework": framework, "floor": 0.4, "error_patterns": L5_ERROR_PATTERNS}
    result = checks.l6_checks(fw_log(fixture), _job_state(COMPLETE), "n", expect)
    assert "completion_marker" not in names(result)
    assert {c["name"][len("success_rate:"):]: c["actual"] for c in result if c["name"].startswith("success_rate:")} \
        == pytest.approx(metrics)
    assert failing(result) == []


@pytest.mark.parametrize("fixture,framework,name,value", [
    ("trl/trl-eval-low.log", "trl", "eval/success_rate", 0.0),
    ("rlinf/rlinf-eval-low.log", "rlinf", "eval/success_once", 0.203125),
    ("verl/verl-val-only-low.log", "verl", "val-core/openai/gsm8k/acc/mean@1", 0.25),
])
def test_l6_below_the_floor_fails_on_the_real_log(fixture, framework, name, value):
    result = checks.l6_checks(fw_log(fixture), _job_state(COMPLETE), "n", {"framework": framework, "floor": 0.5})
    check = find(result, "success_rate:" + name)
    assert (check["actual"], check["expected"], check["op"]) == (pytest.approx(value), 0.5, "ge")
    assert not passed(check) and "floor" in check["hint"]


def test_l6_floor_per_metric_over_the_default():
    expect = {"framework": "rlinf", "floor": 0.9, "floors": {"success_once": 0.6, "eval/success_at_end": 0.6}}
    result = checks.l6_checks(fw_log("rlinf/rlinf-eval.log"), _job_state(COMPLETE), "n", expect)
    assert [(c["name"], c["expected"]) for c in result if c["name"].startswith("success_rate:")] == [
        ("success_rate:eval/success_at_end", 0.6), ("success_rate:eval/success_once", 0.6)]
    assert failing(result) == []


def test_l6_evaluation_that_trains_fails():
    launched = {"command": ["python3", "-m", "verl.trainer.main_ppo"], "overrides": ["trainer.val_only=True"]}
    result = checks.l6_checks(fw_log("verl/verl-train-one-step.log"), _job_state(COMPLETE), "n",
                              {"framework": "verl", "launched": launched})
    assert names(result) == ["override"]
    assert result[0]["fail_msg"].startswith("the evaluation started training: python3 -m verl.trainer.main_ppo ran "
                                            "training steps despite trainer.val_only=True")


def test_l6_default_floor_is_zero_and_default_pattern():
    result = checks.l6_checks("libero_spatial/success_rate = 0.0\n", _job_state(COMPLETE), "n", {})
    check = find(result, "success_rate:libero_spatial/success_rate")
    assert (check["actual"], check["expected"]) == (0.0, 0.0)
    assert passed(check)


def test_l6_no_metric_is_missing_evidence():
    result = checks.l6_checks(fw_log("trl/trl-train-one-step.log.gz"), _job_state(COMPLETE), "n", {"framework": "rlinf"})
    check = find(result, "success_rate")
    assert (check["actual"], check["evidence_missing"]) == (None, True)
    assert check["fail_msg"].startswith("no success metric in the log (patterns '(?P<name>eval/success_")
    assert "evaluation.pattern" in check["hint"]


def test_l6_failed_job_stops_before_rates():
    result = checks.l6_checks(fw_log("trl/trl-eval.log"), _job_state(FAILED, pods=[_pod("Failed", 137)]), "n",
                              {"floor": 0.5})
    assert names(result) == ["job"]
    assert find(result, "job")["fail_msg"] == "BackoffLimitExceeded: Job has reached the specified backoff limit (exit code 137)"


def test_l6_empty_log_stops_before_rates():
    result = checks.l6_checks("", _job_state(COMPLETE), "n", {"floor": 0.5})
    assert names(result) == ["job", "log"]


def test_l6_error_lines_do_not_hide_the_rates():
    text = fw_log("trl/trl-eval.log") + "\nERROR: env worker 3 restarted\n"
    expect = {"error_patterns": [r"(^|\s)ERROR:"], "floor": 0.4, "framework": "trl"}
    result = checks.l6_checks(text, _job_state(COMPLETE), "n", expect)
    assert failing(result) == [("log_errors", "n")]
    assert len([c for c in result if c["name"].startswith("success_rate:")]) == 1


def test_l6_problem_before_start():
    waiting = {"reason": "CreateContainerConfigError", "message": 'secret "wandb" not found'}
    result = checks.l6_checks("", _job_state(pods=[_pod("Pending", waiting=waiting)]), "n", {})
    assert [(c["name"], c["actual"]) for c in result] == [("job", "CreateContainerConfigError")]


# ------------------------------------------------------------------------------------------ example_job


def test_example_job_train_appends_the_contract_overrides_and_keeps_the_simulator_env():
    example = {"name": "maniskill", "framework": "rlinf", "command": ["python", "train.py"], "overrides": "data.n=2",
               "env": {"A": "1"}}
    job = _workloads.example_job(example, "train", [{"node": "n0", "gpus": 8, "efa": 32}], "img:1", 3600,
                                 {"LIBERO_CONFIG_PATH": "/etc/libero", "A": "0"})
    assert job["name"] == "train-maniskill" and job["image"] == "img:1"
    assert job["env"] == {"LIBERO_CONFIG_PATH": "/etc/libero", "A": "1"}
    assert job["command"] == ["python", "train.py"]
    assert job["args"] == ["runner.max_steps=1", "runner.save_interval=-1", "runner.val_check_interval=-1", "data.n=2"]
    assert job["launched"]["delivery"] == "appended arguments"
    assert (job["gpus"], job["efa"], job["nodes"], job["deadline_s"]) == (8, 32, 1, 3600)


def test_example_job_is_kept_to_the_instance_type_of_the_runs_gpu_nodes():
    """Seen on a lent GPU machine (2026-12-05): without it, two L5 Jobs ran on the simulated g6 (Phase 0) nodes."""
    nodes = [{"node": "p5-node-0", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32}]
    example = {"name": "e", "framework": "trl", "command": ["python3", "t.py"]}
    assert _workloads.example_job(example, "train", nodes, "img", 60)["node_selector"] == {
        "node.kubernetes.io/instance-type": "p5.48xlarge"}
    own = dict(example, node_selector={"pool": "big"})
    assert _workloads.example_job(own, "eval", nodes, "img", 60)["node_selector"] == {"pool": "big"}
    assert _workloads.example_job(example, "train", [{"node": "n0", "gpus": 1}], "img", 60)["node_selector"] == {}


def test_example_job_overrides_in_the_variable_the_launcher_reads():
    example = {"name": "eks", "framework": "rlinf", "command": ["bash", "run_training_eks.sh"],
               "overrides_env": "HYDRA_OVERRIDES"}
    job = _workloads.example_job(example, "train", [], "img", 60)
    assert job["args"] == []
    assert job["env"]["HYDRA_OVERRIDES"] == "runner.max_steps=1 runner.save_interval=-1 runner.val_check_interval=-1"
    assert job["launched"]["delivery"] == "environment variable HYDRA_OVERRIDES"


def test_example_job_eval_uses_the_evaluation_command_and_overrides():
    example = {"name": "x", "framework": "verl", "command": ["train"], "gpus": 1, "nodes": 2,
               "evaluation": {"command": ["python3", "-m", "verl.trainer.main_ppo"], "overrides": ["data.val=1"]}}
    job = _workloads.example_job(example, "eval", [], "img:2", 600)
    assert job["command"] == ["python3", "-m", "verl.trainer.main_ppo"]
    assert job["args"] == ["trainer.val_only=True", "trainer.val_before_train=True", "trainer.logger=[console]",
                           "data.val=1"]
    assert (job["name"], job["gpus"], job["efa"], job["nodes"]) == ("eval-x", 1, 0, 2)


def test_example_job_unknown_framework_is_one_sentence():
    with pytest.raises(ValueError, match="framework 'nope' has no contract; use one of custom, rlinf, trl, verl"):
        _workloads.example_job({"name": "x", "framework": "nope"}, "train", [], "img", 60)
