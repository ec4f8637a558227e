# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/runner/files/run_example.py (host transport L5/L6): it stops a run whose log shows the override
did not take effect, on the recorded logs, and its result becomes the same checks as a Kubernetes Job."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks as checks
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads

REPO = Path(__file__).resolve().parents[3]
RUN_EXAMPLE = REPO / "roles" / "runner" / "files" / "run_example.py"
LOGS = REPO / "tests" / "unit" / "fixtures" / "frameworks"


def run_example(params, timeout=60):
    out = subprocess.run([sys.executable, str(RUN_EXAMPLE), json.dumps(params)], capture_output=True, text=True,
                         timeout=timeout, check=True)
    return {"stdout": out.stdout, "rc": out.returncode}


def replay(fixture, then_sleep_s=0, rc=0):
    """A command that prints a recorded log, then keeps running (as the real run would) and exits with rc."""
    opener = "gzip.open(%r, 'rt')" % str(LOGS / fixture) if fixture.endswith(".gz") else "open(%r)" % str(LOGS / fixture)
    code = ("import gzip, sys, time; sys.stdout.write(%s.read()); sys.stdout.flush(); time.sleep(%d); sys.exit(%d)"
            % (opener, then_sleep_s, rc))
    return [sys.executable, "-c", code]


def test_a_run_that_ignores_the_override_is_stopped_at_once():
    launched = {"command": ["bash", "examples/embodiment/run_embodiment.sh", "cfg"],
                "overrides": ["runner.max_steps=1"], "delivery": "appended arguments"}
    result = run_example({"command": replay("rlinf/rlinf-train-override-ignored.log", 120), "deadline_s": 100,
                          "mode": "train", "framework": "rlinf", "launched": launched})
    run = json.loads(result["stdout"].strip().splitlines()[-1])
    assert run["stopped"]["line"] == "Global Step:    1/1000"
    assert run["stopped"]["stopped_after_s"] < 6 and run["duration_s"] < 30 and run["rc"] < 0
    judged = checks.log_checks(**_as_log_checks(result, "rlinf", launched))
    assert [c["name"] for c in judged] == ["override"]
    assert "bash examples/embodiment/run_embodiment.sh cfg ignored runner.max_steps=1" in judged[0]["fail_msg"]


def test_a_good_run_passes_and_a_crash_fails():
    good = run_example({"command": replay("trl/trl-train-one-step.log.gz"), "deadline_s": 60, "framework": "trl"})
    assert [c["name"] for c in checks.log_checks(**_as_log_checks(good, "trl")) if c["actual"] != c["expected"]] == []
    crash = run_example({"command": replay("trl/trl-train-crash.log.gz", rc=1), "deadline_s": 60, "framework": "trl"})
    failing = [c["name"] for c in checks.log_checks(**_as_log_checks(crash, "trl")) if c["actual"] != c["expected"]]
    assert failing == ["job", "completion_marker", "log_errors"]


def test_deadline_and_bad_params():
    slow = run_example({"command": [sys.executable, "-c", "import time; time.sleep(30)"], "deadline_s": 1})
    run = json.loads(slow["stdout"].strip().splitlines()[-1])
    assert run["timed_out"] is True and run["duration_s"] < 15
    assert _workloads.host_job_result(slow)["state"]["reason"] == "DeadlineExceeded"
    bad = run_example({"command": []})
    assert _workloads.host_job_result(bad)["state"]["reason"] == "NotRun"
    assert _workloads.host_job_result({"msg": "async task did not finish"})["log_error"] == "async task did not finish"


def test_exit_code_becomes_the_job_state():
    failed = run_example({"command": [sys.executable, "-c", "import sys; print('x'); sys.exit(3)"], "deadline_s": 30})
    result = _workloads.host_job_result(failed)
    assert (result["state"]["failed"], result["state"]["pods"], result["log"].strip()) == (True, [
        {"pod": "host", "exit_code": 3}], "x")
    assert result["state"]["message"] == "the command exited with 3"


def _as_log_checks(result, framework, launched=None):
    host = _workloads.host_job_result(result)
    return {"log": host["log"], "state": host["state"], "node": "host",
            "expect": {"framework": framework, "mode": "train", "launched": launched,
                       "error_patterns": [r"^Traceback \(most recent call last\)"]}}


def test_the_log_leaves_the_host_redacted_and_its_failure_carries_the_cause():
    script = REPO / "tests" / "frameworks" / "raise_in_step.py"
    secret = "hf_" + "Q" * 34
    result = run_example({"command": [sys.executable, str(script)], "deadline_s": 60, "mode": "train",
                          "framework": "custom", "env": {"HF_TOKEN": secret, "MY_DB_PASSWORD": "hunter2hunter2"}})
    run = json.loads(result["stdout"].strip().splitlines()[-1])
    assert run["rc"] == 1 and secret not in run["log"]
    assert "config: steps=1 hf_token=[redacted]" in run["log"]
    judged = checks.log_checks(run["log"], _workloads.host_job_result(result)["state"], "host",
                               {"framework": "custom", "mode": "train"})
    job = [c for c in judged if c["name"] == "job"][0]
    assert job["excerpt"][2] == "ValueError: reward model returned NaN at step 1 (--crash_in_step)"
