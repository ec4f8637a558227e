# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""validate.yml through ansible-runner against the simulated cluster, as an AWX job runs it: the
awx_display stdout callback, extra vars exactly as the survey sends them (strings for multiplechoice and
text, an integer for integer questions, a list for multiselect), artifacts from the playbook_on_stats
event. Each run selects L0 only (job tags, or the survey once validate.yml reads it), ~20-30 s."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import runner_helpers as rh

pytestmark = pytest.mark.sim
ROOT = Path(__file__).resolve().parents[2]
CLUSTER = "sim-eks"
LEVEL_KEYS = {"id", "level", "name", "order", "status", "reason", "duration_s", "checks", "nodes", "summary"}
# Survey answers of "Validate level" as AWX sends them (awx/surveys.yml).
SURVEY = {"validation_continue_on_error": "false", "validation_example": "", "validation_start_timeout_s": 120}


@pytest.fixture(scope="module", autouse=True)
def _sim():
    if not rh.sim_running():
        pytest.skip("simulated cluster not running; start it with `make sim-up`")
    yield
    if rh.current_scenario() not in ("", "healthy"):
        rh.switch_scenario("healthy")


def _run(tmp_path, scenario, extravars, tags="l0"):
    """Run under `scenario`; the cluster is shared, so run again (once) if someone switched it meanwhile."""
    result = None
    for attempt in range(2):
        rh.switch_scenario(scenario)
        result = rh.run_validate(tmp_path / f"try{attempt}", extravars, tags=tags)
        if result.scenario_before == result.scenario_after == scenario:
            return result
    pytest.skip(f"the scenario was switched by someone else during both runs:\n{result.describe()}")


def _l0(result):
    data = result.artifacts.get("rlstack_validation", {}).get(CLUSTER)
    assert data, f"no rlstack_validation artifacts for {CLUSTER}\n{result.describe()}"
    return data, data["levels"]["l0_infrastructure"]


def _table_status(stdout: str, level: str) -> str:
    match = re.search(rf"^{re.escape(level)}\s+\S.*?\s(PASS|FAIL|SKIPPED)\s", stdout, re.M)
    return match.group(1) if match else ""


def test_healthy_l0_artifacts_and_table(tmp_path):
    """The survey path (no job tags, validation_levels as AWX sends a multiselect answer: a list); the
    job-tags path is test_gpu_missing_fails_l0_on_p5_node_1's."""
    result = _run(tmp_path, "healthy", dict(SURVEY, validation_levels=["l0"]), tags="")
    assert result.env["ANSIBLE_STDOUT_CALLBACK"] == "awx_display"  # what AWX forces
    data, l0 = _l0(result)
    # The stable shape: run id, the plan (every level, only L0 selected), one level result.
    assert re.match(r"^\d{8}-\d{6}-[0-9a-f]{4}$", data["run_id"])
    plan = {row["id"]: row for row in data["plan"]}
    assert plan["l0_infrastructure"]["selected"] is True
    assert [row_id for row_id, row in plan.items() if row["selected"]] == ["l0_infrastructure"]
    assert set(data["levels"]) == {"l0_infrastructure"}
    assert LEVEL_KEYS <= set(l0)
    assert l0["level"] == "L0" and l0["status"] in ("PASS", "FAIL")
    assert all({"name", "node", "passed"} <= set(check) for check in l0["checks"])
    assert {"p5-node-0", "p5-node-1"} <= set(l0["nodes"])
    # The report callback prints the same verdict in the job's stdout, under awx_display.
    assert f"VALIDATION RESULTS: {CLUSTER}" in result.stdout, result.describe()
    assert _table_status(result.stdout, "L0") == l0["status"]
    assert _table_status(result.stdout, "L1") == "SKIPPED"
    if l0["status"] != "PASS":
        failed = [c for c in l0["checks"] if not c["passed"]]
        if failed and all("no recording" in str(c.get("message", "")) for c in failed):
            pytest.xfail("healthy replay data for probe_node not recorded yet")
    assert l0["status"] == "PASS", result.describe()
    assert l0["summary"]["failed"] == 0
    assert result.status == "successful" and result.rc == 0


def test_gpu_missing_fails_l0_on_p5_node_1(tmp_path):
    answers = dict(SURVEY, validation_continue_on_error="true")  # the other answer; still one level
    try:
        result = _run(tmp_path, "gpu-missing", answers)
    finally:
        rh.switch_scenario("healthy")
    data, l0 = _l0(result)
    assert l0["status"] == "FAIL", result.describe()
    node = l0["nodes"]["p5-node-1"]
    assert node["status"] == "FAIL" and "gpu_count" in node["failed_checks"]
    gpu = [c for c in l0["checks"] if c["name"] == "gpu_count" and c["node"] == "p5-node-1"]
    assert gpu and gpu[0]["passed"] is False
    assert l0["summary"]["failed"] >= 1
    # A FAIL fails the job: AWX marks it failed, and a workflow takes the failure edge.
    assert result.status == "failed" and result.rc != 0
    assert _table_status(result.stdout, "L0") == "FAIL"
    assert "p5-node-1" in result.stdout
