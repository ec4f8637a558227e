# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/plugin_utils/_sarif.py: SARIF 2.1.0 of real findings, validated against the OASIS schema
(tests/local/fixtures/sarif/SOURCE.md), and the console summary."""

from __future__ import annotations

import json
import os
import sys

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.lint._manifest_lint import ManifestLinter, manifest_files
from ansible_collections.rlstack.validation.plugins.module_utils.lint._pitfall_rules import simulator_inventory_findings
from ansible_collections.rlstack.validation.plugins.plugin_utils import _sarif

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "local"))
from local_helpers import SARIF_SCHEMA, real_repos  # noqa: E402 pylint: disable=wrong-import-position

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
FIXTURES = str(real_repos())
SCHEMA = str(SARIF_SCHEMA)


@pytest.fixture(scope="module")
def findings():
    pytest.importorskip("kubernetes_validate")
    from ansible_collections.rlstack.validation.plugins.module_utils.lint._k8s_schema import SchemaValidator
    # every level: image_pull_policy raised to error, unset variables warn, kinds without a schema are info
    linter = ManifestLinter(SchemaValidator("1.34", True, {}), {"severity": {"image_pull_policy": "error"}}, "skip",
                            base=FIXTURES)
    for path in manifest_files([FIXTURES]):
        linter.lint_file(path)
    out = linter.finish() + simulator_inventory_findings("libero.libero", {})
    assert {f["severity"] for f in out} == {"error", "warning", "info"}
    return out


def test_sarif_validates_against_the_oasis_schema(findings):
    jsonschema = pytest.importorskip("jsonschema")
    with open(SCHEMA) as handle:
        schema = json.load(handle)
    log = _sarif.sarif(findings, FIXTURES, "1.0.0")
    jsonschema.Draft4Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(log), key=lambda err: list(err.path))
    assert [e.message for e in errors] == []
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-schema-2.1.0.json")


def test_sarif_results_point_at_file_line_column(findings):
    run = _sarif.sarif(findings, FIXTURES)["runs"][0]
    assert len(run["results"]) == len(findings)
    located = [res for res in run["results"] if "locations" in res]
    assert len(located) == len([f for f in findings if f["file"] != "inventory"])
    first = [res for res in located if res["ruleId"] == "image_pull_policy"][0]
    region = first["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] >= 1 and region["startColumn"] >= 1
    assert not first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("/")
    rules = dict((rule["id"], rule) for rule in run["tool"]["driver"]["rules"])
    assert rules["unset_variable"]["defaultConfiguration"]["level"] == "warning"
    assert all(res["ruleIndex"] == list(rules).index(res["ruleId"]) for res in run["results"])
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file:///")


def test_summary_counts_per_rule_and_every_error(findings):
    text = _sarif.summary(findings)
    assert text.startswith("Findings per rule (error / warning / info):")
    errors = [f for f in findings if f["severity"] == "error"]
    assert len([line for line in text.splitlines() if " ERROR [" in line]) == len(errors)
    assert "WARNING [" not in text and "not shown" in text
    verbose = _sarif.summary(findings, verbose=True)
    assert len([line for line in verbose.splitlines() if "WARNING [" in line]) == len(
        [f for f in findings if f["severity"] == "warning"])
    assert _sarif.summary([]).splitlines() == ["Findings per rule (error / warning / info):", "  none"]
