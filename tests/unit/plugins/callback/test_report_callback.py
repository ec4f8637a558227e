# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from unittest.mock import MagicMock

import pytest
import yaml
from ansible import constants as C

from ansible_collections.rlstack.validation.plugins.callback import report

NAME = "rlstack.validation.report"


class FakeStats:
    def __init__(self, custom=None, processed=(), failures=(), dark=()):
        self.custom = custom or {}
        self.processed = dict((h, 1) for h in processed)
        self.failures = dict((h, 1) for h in failures)
        self.dark = dict((h, 1) for h in dark)


class FakePlaybook:
    def __init__(self, name):
        self._file_name = name


def make_callback(monkeypatch, **options):
    monkeypatch.delenv("RLSTACK_REPORT_DIR", raising=False)
    monkeypatch.delenv("RLSTACK_REPORT_HTML", raising=False)
    docs = yaml.safe_load(report.DOCUMENTATION)["options"]
    C.config.initialize_plugin_configuration_definitions("callback", NAME, docs)
    cb = report.CallbackModule()
    cb._load_name = NAME
    cb.set_options(direct=options)
    cb._display = MagicMock()
    return cb


def shown(cb):
    return [call.args[0] for call in cb._display.display.call_args_list]


CHECK_FAIL = {"name": "nccl_network", "node": "", "op": "in", "expected": ["efa"], "actual": "socket", "unit": "",
              "passed": False, "message": "nccl_network expected 'efa', saw 'socket'",
              "hint": "NCCL fell back to TCP sockets", "evidence_missing": False}


def run_data(report_dir=None):
    data = {"rlstack_validation": {"eks-g6": {
        "run_id": "r1",
        "plan": [
            {"id": "l0_infrastructure", "level": "L0", "name": "Infrastructure", "order": 0, "selected": True},
            {"id": "l3_5_efa", "level": "L3.5", "name": "EFA Validation", "order": 3.5, "selected": True},
            {"id": "l4_rollout", "level": "L4", "name": "Rollout", "order": 4, "selected": True},
        ],
        "levels": {
            "l0_infrastructure": {"id": "l0_infrastructure", "level": "L0", "name": "Infrastructure", "order": 0.0,
                                  "status": "PASS", "reason": "", "duration_s": 12.0, "checks": [], "nodes": {},
                                  "summary": {"passed": 3, "failed": 0}},
            "l3_5_efa": {"id": "l3_5_efa", "level": "L3.5", "name": "EFA Validation", "order": 3.5, "status": "FAIL",
                         "reason": CHECK_FAIL["message"], "duration_s": 180.0, "checks": [CHECK_FAIL], "nodes": {},
                         "summary": {"passed": 4, "failed": 1}},
        },
    }}}
    if report_dir:
        data["rlstack_validation_meta"] = {"report_dir": report_dir}
    return {"_run": data}


def test_prints_the_table_and_writes_files(monkeypatch, tmp_path):
    cb = make_callback(monkeypatch, report_dir=str(tmp_path))
    cb.v2_playbook_on_start(FakePlaybook("/x/playbooks/validate.yml"))
    cb.v2_playbook_on_stats(FakeStats(run_data(), processed=["eks-g6"], failures=["eks-g6"]))
    lines = shown(cb)
    assert lines[:7] == [
        "=" * 40, "VALIDATION RESULTS: eks-g6", "=" * 40,
        "Level   Name                     Status   Time",
        "-----   ------------------------ ------   ----",
        "L0      Infrastructure           PASS     12s",
        "L3.5    EFA Validation           FAIL     180s",
    ]
    assert lines[7] == "        cluster: nccl_network expected 'efa', saw 'socket'"
    assert lines[8] == "          -> NCCL fell back to TCP sockets"
    assert lines[9] == "L4      Rollout                  SKIPPED  -     not run: L3.5 failed"
    assert "1/3 passed, 1 failed, 1 skipped in 192s" in lines
    assert lines[-1].startswith("Validation report written to ")
    colors = dict((c.args[0], c.kwargs.get("color")) for c in cb._display.display.call_args_list)
    assert colors["L3.5    EFA Validation           FAIL     180s"] == C.COLOR_ERROR
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["clusters"][0]["cluster"] == "eks-g6" and doc["status"] == "FAIL"
    assert doc["start"] is not None and doc["duration_s"] >= 0
    ET.parse(str(tmp_path / "junit.xml"))
    assert "<h2>eks-g6 " in (tmp_path / "report.html").read_text()


def test_the_runs_report_html_setting_wins_over_the_option(monkeypatch, tmp_path):
    data = run_data(str(tmp_path / "off"))
    data["_run"]["rlstack_validation_meta"]["report_html"] = False
    make_callback(monkeypatch).v2_playbook_on_stats(FakeStats(data, processed=["eks-g6"]))
    assert (tmp_path / "off" / "report.json").exists() and not (tmp_path / "off" / "report.html").exists()
    cb = make_callback(monkeypatch, report_html=False)
    cb.v2_playbook_on_stats(FakeStats(run_data(str(tmp_path / "option")), processed=["eks-g6"]))
    assert not (tmp_path / "option" / "report.html").exists()
    data["_run"]["rlstack_validation_meta"].update(report_dir=str(tmp_path / "on"), report_html=True)
    make_callback(monkeypatch, report_html=False).v2_playbook_on_stats(FakeStats(data, processed=["eks-g6"]))
    assert (tmp_path / "on" / "report.html").exists()


def test_the_runs_setting_wins_over_the_option(monkeypatch, tmp_path):
    """-e validation_report_dir (published as stats meta) wins over ansible.cfg / RLSTACK_REPORT_DIR."""
    option_dir, meta_dir = tmp_path / "option", tmp_path / "meta"
    cb = make_callback(monkeypatch, report_dir=str(option_dir))
    cb.v2_playbook_on_stats(FakeStats(run_data(str(meta_dir)), processed=["eks-g6"]))
    assert (meta_dir / "report.json").exists() and not option_dir.exists()


def test_the_runs_setting_wins_over_the_environment(monkeypatch, tmp_path):
    cb = make_callback(monkeypatch)
    monkeypatch.setenv("RLSTACK_REPORT_DIR", str(tmp_path / "env"))
    cb.set_options()
    cb.v2_playbook_on_stats(FakeStats(run_data(str(tmp_path / "meta")), processed=["eks-g6"]))
    assert (tmp_path / "meta" / "report.json").exists() and not (tmp_path / "env").exists()


def test_stats_meta_used_without_option(monkeypatch, tmp_path):
    cb = make_callback(monkeypatch)
    cb.v2_playbook_on_stats(FakeStats(run_data(str(tmp_path / "meta")), processed=["eks-g6"]))
    assert (tmp_path / "meta" / "junit.xml").exists()


def test_env_var_sets_the_report_dir(monkeypatch, tmp_path):
    cb = make_callback(monkeypatch)
    monkeypatch.setenv("RLSTACK_REPORT_DIR", str(tmp_path / "env"))
    cb.set_options()
    cb.v2_playbook_on_stats(FakeStats(run_data(), processed=["eks-g6"]))
    assert (tmp_path / "env" / "report.json").exists()


def test_cluster_without_data_is_reported(monkeypatch):
    cb = make_callback(monkeypatch)
    cb.v2_playbook_on_stats(FakeStats(run_data(), processed=["eks-g6", "eks-p5"], failures=["eks-p5"]))
    lines = shown(cb)
    assert "VALIDATION RESULTS: eks-p5" in lines
    assert any(line.startswith("no validation results were recorded for this cluster") for line in lines)


def test_validate_playbook_failing_before_planning(monkeypatch, tmp_path):
    cb = make_callback(monkeypatch, report_dir=str(tmp_path))
    cb.v2_playbook_on_start(FakePlaybook("playbooks/validate.yml"))
    cb.v2_playbook_on_stats(FakeStats({}, processed=["eks-p5"], dark=["eks-p5"]))
    assert "VALIDATION RESULTS: eks-p5" in shown(cb)
    assert json.loads((tmp_path / "report.json").read_text())["clusters"][0]["has_data"] is False


def test_other_playbooks_stay_quiet(monkeypatch, tmp_path):
    cb = make_callback(monkeypatch, report_dir=str(tmp_path))
    cb.v2_playbook_on_start(FakePlaybook("playbooks/cleanup.yml"))
    cb.v2_playbook_on_stats(FakeStats({}, processed=["eks-p5"], failures=["eks-p5"]))
    assert shown(cb) == []
    assert not (tmp_path / "report.json").exists()


def test_unwritable_report_dir_warns(monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cb = make_callback(monkeypatch, report_dir=str(blocker / "sub"))
    cb.v2_playbook_on_stats(FakeStats(run_data(), processed=["eks-g6"]))
    assert cb._display.warning.called
    assert "could not write the report" in cb._display.warning.call_args.args[0]


@pytest.mark.parametrize("attr", ["v2_on_any", "runner_on_ok", "playbook_on_stats"])
def test_no_deprecated_hooks_overridden(attr):
    assert attr not in report.CallbackModule.__dict__
