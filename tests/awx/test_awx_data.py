# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Consistency of awx/ with the repository (inventories, playbooks, tags) and with awx_configure.yml."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

import awx_data

ROOT = Path(__file__).resolve().parents[2]
DATA = awx_data.load()
# Playbooks a job template may name before they exist in this checkout (awx_configure.yml skips such a
# template and says so): playbooks/local.yml is being written.
NOT_YET_WRITTEN = {"playbooks/local.yml"}
ASK = {"inventory", "credential", "limit", "tags", "skip_tags", "variables", "verbosity"}
WORKFLOW_ASK = {"inventory", "limit", "variables"}


def _validate_tags() -> set:
    play = yaml.safe_load((ROOT / "playbooks" / "validate.yml").read_text())[0]
    tasks = play["tasks"] + [task for block in play["tasks"] for task in block.get("block", [])]
    return {tag for task in tasks for tag in task.get("tags", [])} - {"always"}


def test_one_awx_inventory_per_cluster_inventory():
    on_disk = sorted(p.parent.name for p in (ROOT / "inventories").glob("*/hosts.yml"))
    clusters = DATA["awx_clusters"]
    assert sorted(c["name"] for c in clusters) == on_disk
    for cluster in clusters:
        assert cluster["source_path"] in (f"inventories/{cluster['name']}/hosts.yml",
                                          f"awx/inventories/{cluster['name']}/hosts.yml")
        assert (ROOT / cluster["source_path"]).is_file()
        assert isinstance(cluster["credentials"], list)
        if cluster["credentials"]:  # the credential gives access: the inventory must not (docs/awx.md)
            hosts = yaml.safe_load((ROOT / cluster["source_path"]).read_text())["clusters"]["hosts"]
            assert all("validation_kubeconfig" not in (hvars or {}) for hvars in hosts.values()), cluster["name"]
    assert DATA["awx_default_cluster"] in on_disk


def test_job_templates():
    names = [jt["name"] for jt in DATA["awx_job_templates"]]
    assert names == ["Validate cluster", "Validate level", "Phase 0 EFA", "Local checks"]
    tags = _validate_tags()
    for jt in DATA["awx_job_templates"]:
        assert set(jt["ask"]) <= ASK, jt["name"]
        assert (ROOT / jt["playbook"]).is_file() or jt["playbook"] in NOT_YET_WRITTEN, jt["playbook"]
        for tag in filter(None, jt.get("job_tags", "").split(",")):
            assert tag in tags, (jt["name"], tag)
        assert "\n" not in jt["description"] and jt["description"] == jt["description"].strip()
    by_name = {jt["name"]: jt for jt in DATA["awx_job_templates"]}
    assert by_name["Phase 0 EFA"]["job_tags"] == "phase0"
    assert by_name["Local checks"]["playbook"] == "playbooks/local.yml"
    assert "job_tags" not in by_name["Validate cluster"] and "survey" not in by_name["Validate cluster"]
    # The survey cannot set job tags; the API/CLI path can.
    assert "tags" in by_name["Validate level"]["ask"] and by_name["Validate level"]["survey"] == "validate_level"
    # One inventory per cluster: every template serves every cluster through the prompts.
    for jt in DATA["awx_job_templates"]:
        assert {"inventory", "credential"} <= set(jt["ask"]), jt["name"]


def test_workflow_phase0_then_validate():
    workflows = {wf["name"]: wf for wf in DATA["awx_workflows"]}
    wf = workflows["Phase 0 then validate"]
    assert set(wf["ask"]) <= WORKFLOW_ASK
    jts = {jt["name"] for jt in DATA["awx_job_templates"]}
    seen = set()
    for node in wf["nodes"]:
        assert node["unified_job_template"] in jts
        for edge in ("success_nodes", "failure_nodes", "always_nodes"):
            assert set(node.get(edge, [])) <= seen, f"{node['identifier']}: create {edge} first"
        assert not node.get("approval_node")
        seen.add(node["identifier"])
    nodes = {n["identifier"]: n for n in wf["nodes"]}
    roots = set(nodes) - {c for n in wf["nodes"] for e in ("success_nodes", "failure_nodes", "always_nodes")
                          for c in n.get(e, [])}
    assert [nodes[r]["unified_job_template"] for r in roots] == ["Phase 0 EFA"]
    (root,) = roots
    assert [nodes[c]["unified_job_template"] for c in nodes[root]["success_nodes"]] == ["Validate cluster"]
    assert not nodes[root].get("failure_nodes") and not nodes[root].get("always_nodes")


def test_names_are_unique_among_unified_job_templates():
    """Workflow nodes look job templates up among all unified job templates (projects, inventory sources,
    job templates, workflows) by name."""
    names = [DATA["awx_project"]["name"]]
    names += [jt["name"] for jt in DATA["awx_job_templates"]] + [wf["name"] for wf in DATA["awx_workflows"]]
    names += [f"{c['name']} from {c['source_path']}" for c in DATA["awx_clusters"]]
    assert len(names) == len(set(names))


def test_the_playbook_loads_every_data_file_and_takes_auth_from_the_environment():
    play = yaml.safe_load(awx_data.PLAYBOOK.read_text())[0]
    assert sorted(Path(p).name for p in play["vars_files"]) == sorted(p.name for p in awx_data.AWX_DIR.glob("*.yml"))
    auth = play["module_defaults"]["group/awx.awx.controller"]
    for option, env in (("controller_host", "CONTROLLER_HOST"), ("controller_oauthtoken", "CONTROLLER_OAUTH_TOKEN"),
                        ("controller_username", "CONTROLLER_USERNAME"), ("controller_password", "CONTROLLER_PASSWORD"),
                        ("validate_certs", "CONTROLLER_VERIFY_SSL")):
        assert f"'{env}'" in auth[option] and "default(omit, true)" in auth[option], option
    for task in play["tasks"]:
        # The task that sends credential inputs (the secrets) must not log them; the only other task that
        # reads the secret variables keeps just the names of the missing ones.
        if "awx.awx.credential" in task:
            assert task.get("no_log") is True, task["name"]
        elif "ansible.builtin.env" in str(task.get("vars", {})):
            assert list(task["ansible.builtin.set_fact"]) == ["__awx_credentials_missing"], task["name"]
            assert "map(attribute='0')" in task["vars"]["__awx_missing"]
    modules = {next((k for k in task if k.startswith("awx.awx.")), None) for task in play["tasks"]} - {None}
    assert modules == {f"awx.awx.{m}" for m in awx_data.MODULES}


def test_no_secret_in_the_data():
    text = "\n".join(p.read_text() for p in awx_data.AWX_DIR.glob("*.yml"))
    assert not re.search(r"AKIA[0-9A-Z]{12,}", text)
    assert not re.search(r"(?i)(password|token|secret)[a-z_]*:\s*['\"]?[A-Za-z0-9/+=]{16,}", text)
