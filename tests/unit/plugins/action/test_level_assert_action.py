# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""level_assert judged in the controller by its action plugin: the same result as the module, through a real
ansible-playbook run (no module is sent to the host), and bad arguments refused in one sentence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _level_assert

REPO = Path(__file__).resolve().parents[4]
CHECKS = [{"name": "gpu_count", "node": "p5-node-0", "actual": 8, "expected": 8},
          {"name": "gpu_count", "node": "p5-node-1", "actual": 7, "expected": 8, "hint": "check XID errors"}]
PLAY = """
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: Judge
      rlstack.validation.level_assert:
        id: l0_infrastructure
        level: L0
        name: Infrastructure
        checks: "{{ checks }}"
        report_only: "{{ report_only }}"
      register: verdict
      ignore_errors: true
    - name: Keep it
      ansible.builtin.copy:
        content: "{{ verdict | to_json }}"
        dest: "{{ out }}"
        mode: "0644"
"""


def _ansible_playbook(tmp_path, name, play, args, **env):
    """Run `play` against localhost with `args` as extra vars; (the registered verdict or None, the process)."""
    playbook = tmp_path / name
    playbook.write_text(play)
    out = tmp_path / "verdict.json"
    args = dict(args, out=str(out), ansible_python_interpreter=sys.executable)
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default",
               **env)
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(playbook), "-i", "localhost,",
                           "-e", json.dumps(args)], cwd=str(REPO), env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    return (json.loads(out.read_text()) if out.exists() else None), proc


def _play(tmp_path, **extra):
    verdict, proc = _ansible_playbook(tmp_path, "play.yml", PLAY, dict({"checks": CHECKS, "report_only": False}, **extra),
                                      ANSIBLE_KEEP_REMOTE_FILES="1", ANSIBLE_REMOTE_TMP=str(tmp_path / "rtmp"))
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return verdict, tmp_path / "rtmp"


def test_the_action_plugin_judges_like_the_module_without_running_a_module(tmp_path):
    verdict, remote_tmp = _play(tmp_path)
    expected = _level_assert.judge({"id": "l0_infrastructure", "level": "L0", "name": "Infrastructure",
                                    "order": None, "checks": [dict(c, op="eq", tolerance=None, unit="",
                                                                   fail_msg="", evidence_missing=False,
                                                                   severity="fail", hint=c.get("hint", ""))
                                                              for c in CHECKS],
                                    "nccl": [], "skip_reason": "", "started": None, "duration_s": None,
                                    "report_only": False})
    assert verdict["failed"] is True and verdict["changed"] is False
    assert verdict["msg"] == expected["msg"] and verdict["failed_checks"] == expected["failed_checks"]
    assert verdict["result"]["status"] == "FAIL" and verdict["result"]["checks"][1]["passed"] is False
    # a module run would have left its AnsiballZ file in the kept remote tmp
    assert not list(remote_tmp.rglob("AnsiballZ_level_assert*")), list(remote_tmp.rglob("*"))


def test_checks_as_json_text_judge_as_the_list_does(tmp_path):
    # how the runner hands a level's checks over (roles/runner/tasks/finish_level.yml, filter json_text)
    (tmp_path / "list").mkdir()
    (tmp_path / "text").mkdir()
    as_list = _play(tmp_path / "list")[0]
    as_text = _play(tmp_path / "text", checks=json.dumps(CHECKS))[0]
    assert as_text["result"]["checks"] == as_list["result"]["checks"] and as_text["msg"] == as_list["msg"]


@pytest.mark.parametrize("text, said", [
    ("[{\"name\": ", "checks is text that is not JSON ("),
    ('{"name": "gpu_count"}', "checks is JSON of a dict, not of a list of checks"),
])
def test_checks_text_that_is_not_a_json_list_is_one_sentence(tmp_path, text, said):
    verdict = _play(tmp_path, checks=text)[0]
    assert verdict["failed"] is True and said in verdict["msg"] and "\n" not in verdict["msg"]


def test_report_only_records_without_failing(tmp_path):
    verdict = _play(tmp_path, report_only=True)[0]
    assert "failed" not in verdict or verdict["failed"] is False
    assert verdict["result"]["status"] == "FAIL"


def test_bad_arguments_are_one_sentence(tmp_path):
    verdict = _play(tmp_path, checks=[{"node": "x"}])[0]
    assert verdict["failed"] is True
    assert verdict["msg"].startswith("level_assert: ") and "name" in verdict["msg"] and "\n" not in verdict["msg"]


PUBLISH_PLAY = """
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    # the run's plan first, as roles/runner/tasks/plan.yml publishes it: set_stats stores tagged values, and
    # ansible-core merges a later statistic only into a value of the same type
    - name: Publish the plan
      ansible.builtin.set_stats:
        per_host: false
        data:
          rlstack_validation: "{{ {'sim-eks': {'run_id': 'r1'}} }}"
    - name: Judge and publish L1
      rlstack.validation.level_assert:
        id: l1_runtime
        level: L1
        name: Runtime
        order: 1
        checks: [{name: torch, actual: true, expected: true}]
        publish_host: sim-eks
    - name: Judge and publish L0
      rlstack.validation.level_assert:
        id: l0_infrastructure
        level: L0
        name: Infrastructure
        order: 0
        checks: "{{ checks }}"
        report_only: true
        node_names: [p5-node-0, p5-node-1]
        attach: "{{ attach }}"
        publish_host: sim-eks
      register: verdict
      ignore_errors: true
    - name: Keep it
      ansible.builtin.copy:
        content: "{{ verdict | to_json }}"
        dest: "{{ out }}"
        mode: "0644"
"""


def _publish(tmp_path, attach):
    report = tmp_path / "report"
    verdict, proc = _ansible_playbook(tmp_path, "validate_publish.yml", PUBLISH_PLAY, {"checks": CHECKS, "attach": attach},
                                      RLSTACK_REPORT_DIR=str(report), RLSTACK_REPORT_HTML="false")
    assert verdict is not None, (proc.stdout + proc.stderr)[-3000:]
    return verdict, report, proc


def test_a_published_result_reaches_the_report_whole_and_the_task_keeps_the_verdict(tmp_path):
    gpu = [{"pods": 1, "gpu_seconds": 16.0, "gpu_minutes": 0.27,
            "by_instance_type": {"p5.48xlarge": {"gpu_seconds": 16.0, "gpu_minutes": 0.27, "nodes": ["p5-node-1"]}}}]
    verdict, report, proc = _publish(tmp_path, {"gpu": gpu, "fingerprint": {"nccl": "2.27.7"}})
    assert "result" not in verdict and "ansible_stats" in verdict
    # the verdict: the failed check only, the failed node only, the attached fields; the findings name the node
    assert [c["node"] for c in verdict["verdict"]["checks"]] == ["p5-node-1"]
    assert list(verdict["verdict"]["nodes"]) == ["p5-node-1"] and verdict["verdict"]["fingerprint"]["nccl"] == "2.27.7"
    assert [(f["node"], f["check"]) for f in verdict["findings"]] == [("p5-node-1", "gpu_count")]
    # the report callback read the whole result from the run's statistics, passing check included
    rows = dict((level["id"], level) for cluster in json.loads((report / "report.json").read_text())["clusters"]
                for level in cluster["levels"])
    assert rows["l1_runtime"]["status"] == "PASS", proc.stdout[-2000:]
    row = rows["l0_infrastructure"]
    assert row["status"] == "FAIL" and [c["passed"] for c in row["checks"]] == [True, False], proc.stdout[-2000:]
    assert row["gpu"]["gpu_seconds"] == 16.0  # the report's sum of the attached GPU time


def test_attach_may_not_replace_a_field_of_the_result(tmp_path):
    verdict = _publish(tmp_path, {"status": "PASS"})[0]
    assert verdict["failed"] is True and "ansible_stats" not in verdict
    assert verdict["msg"] == "level_assert: attach may not replace the result's own fields (status)"


CANONICAL = [
    {"name": "gpu_count", "node": "p5-node-0", "op": "eq", "actual": 8, "expected": 8},
    {"name": "busbw", "op": "ge", "actual": 350.0, "expected": 400, "tolerance": 0, "unit": "GB/s",
     "hint": "h", "fail_msg": "f", "severity": "warn", "excerpt": ["line 1"], "evidence_missing": True},
    {"name": "only_a_name"},
    {"name": "listed", "op": "in", "actual": "a", "expected": ["a"], "tolerance": 0.05},
]


def test_canonical_checks_are_what_the_spec_makes_of_them():
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    spec = {"checks": _level_assert.argument_spec()["checks"]}
    expected = ArgumentSpecValidator(spec).validate({"checks": CANONICAL}).validated_parameters["checks"]
    got = _level_assert.canonical_checks(CANONICAL)
    assert got == expected
    assert [type(c["tolerance"]) for c in got] == [type(None), float, type(None), float]


@pytest.mark.parametrize("check", [
    {"name": "n", "node": 3},                      # a number where the spec wants a string: the spec converts it
    {"name": "n", "op": "nearly"},                 # not a choice: the spec says so
    {"name": "n", "tolerance": "0.1"},             # a string the spec converts
    {"name": "n", "unknown": 1},                   # an option the spec does not have
    {"node": "p5-node-0"},                         # no name
    {"name": "n", "excerpt": "one line"},          # a string where the spec wants a list
    {"name": "n", "evidence_missing": "yes"},      # a string the spec makes a bool
    {"name": "n", "hint": None},                   # none: the spec decides
])
def test_any_other_check_goes_through_the_spec(check):
    assert _level_assert.canonical_checks(CANONICAL + [check]) is None


def test_a_check_whose_evidence_is_missing_stays_canonical():
    # actual none (the evidence did not come) is a raw value the spec keeps as it is
    check = {"name": "gpu_count", "node": "p5-node-0", "actual": None, "expected": 8, "evidence_missing": True}
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
    spec = {"checks": _level_assert.argument_spec()["checks"]}
    assert _level_assert.canonical_checks([check]) == \
        ArgumentSpecValidator(spec).validate({"checks": [check]}).validated_parameters["checks"]


@pytest.mark.parametrize("given, expected", [
    (json.dumps(CHECKS), CHECKS),
    ("[]", []),
    (CHECKS, CHECKS),  # a list as it came
    (None, None),
])
def test_decoded_checks_reads_json_text_of_a_list(given, expected):
    assert _level_assert.decoded_checks(given) == expected


@pytest.mark.parametrize("text", ["", "not json", "{\"a\": 1}", "3"])
def test_decoded_checks_refuses_other_text_in_one_sentence(text):
    with pytest.raises(_level_assert.ChecksTextError, match=r"^level_assert: checks is (text that is not JSON|JSON of a)"):
        _level_assert.decoded_checks(text)


def test_published_lists_pass_through_ansible_cores_copies_whole():
    # ansible-core copies a result for each callback and for register with these two; a tuple must come out as the
    # same object (copied_once relies on it: a later ansible-core that copies tuples makes the judging slow again)
    from ansible.vars.clean import module_response_deepcopy, strip_internal_keys
    from ansible_collections.rlstack.validation.plugins.action.level_assert import copied_once
    result = {"id": "l0_infrastructure", "status": "FAIL", "checks": list(CHECKS), "nodes": ["p5-node-1"],
              "summary": {"passed": 1, "failed": 1}}
    published = copied_once({"rlstack_validation": {"sim-eks": {"run_id": "r1", "levels": {"l0_infrastructure": result}}}})
    entry = published["rlstack_validation"]["sim-eks"]
    level = entry["levels"]["l0_infrastructure"]
    assert entry["run_id"] == "r1" and level["checks"] == tuple(CHECKS) and level["nodes"] == ("p5-node-1",)
    assert level["summary"] == result["summary"] and isinstance(result["checks"], list)  # the judged result unchanged
    copied = strip_internal_keys(module_response_deepcopy({"ansible_stats": {"data": published}, "_ansible_no_log": False}))
    assert copied["ansible_stats"]["data"]["rlstack_validation"]["sim-eks"]["levels"]["l0_infrastructure"]["checks"] \
        is level["checks"]
