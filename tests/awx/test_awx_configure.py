# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/awx_configure.yml without an AWX server: syntax check, ansible-lint (production profile),
and a run against a stand-in awx.awx collection whose modules only record what they are given, to
check what the playbook sends each module (and that every parameter exists in the real awx.awx)."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import awx_data

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
REAL_AWX = Path(__import__("ansible_collections.awx.awx", fromlist=["x"]).__path__[0])
MODULES = awx_data.MODULES
AUTH = {"controller_host", "controller_username", "controller_password", "controller_oauthtoken", "validate_certs",
        "request_timeout", "controller_config_file"}
DATA = awx_data.load()


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONTROLLER_", "RLSTACK_", "ANSIBLE_"))}
    env.update(PATH=f"{BIN}:{env.get('PATH', '')}", ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_FORCE_COLOR="0", **extra)
    return env


def test_syntax_check():
    proc = subprocess.run([str(BIN / "ansible-playbook"), "--syntax-check", "playbooks/awx_configure.yml"],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ansible_lint_production():
    proc = subprocess.run([str(BIN / "ansible-lint"), "--profile", "production", "--offline", "playbooks/awx_configure.yml",
                           "awx/", "ee/execution-environment.yml", "meta/execution-environment.yml"],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]


def _real_options(module: str) -> set:
    """The option names of the real awx.awx module (its argument_spec = dict(...) in main())."""
    tree = ast.parse((REAL_AWX / "plugins" / "modules" / f"{module}.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "argument_spec" \
                and isinstance(node.value, ast.Call):
            return {kw.arg for kw in node.value.keywords}
    raise AssertionError(f"no argument_spec in awx.awx {module}")


STUB = '''#!/usr/bin/python
# WANT_JSON
import json, os, sys
with open(sys.argv[1]) as handle:
    args = json.load(handle)
with open(os.environ["AWX_STUB_LOG"], "a") as log:
    log.write(json.dumps({"module": "%s", "args": {k: v for k, v in args.items() if not k.startswith("_ansible")}}) + "\\n")
# What AWX would answer, where the test says (a source created, an import that ended): else nothing changed.
print(json.dumps(json.loads(os.environ.get("AWX_STUB_RESULTS", "{}")).get("%s", {"changed": False})))
'''


def _run_with_stubs(tmp, results):
    """awx_configure.yml against stand-in awx.awx modules answering `results` (module -> result): (proc, calls)."""
    coll = tmp / "ansible_collections" / "awx" / "awx"
    (coll / "plugins" / "modules").mkdir(parents=True)
    (coll / "meta").mkdir()
    (coll / "meta" / "runtime.yml").write_text(
        "requires_ansible: '>=2.15.0'\naction_groups:\n  controller:\n" + "".join(f"    - {m}\n" for m in MODULES))
    for module in MODULES:
        (coll / "plugins" / "modules" / f"{module}.py").write_text(STUB % (module, module))
    log = tmp / "calls.jsonl"
    env = _env(
        ANSIBLE_COLLECTIONS_PATH=f"{tmp}:{ROOT / '.collections'}",
        AWX_STUB_LOG=str(log), AWX_STUB_RESULTS=json.dumps(results),
        CONTROLLER_HOST="https://awx.invalid", CONTROLLER_OAUTH_TOKEN="stub-controller-token-0001",
        CONTROLLER_VERIFY_SSL="false",
        # The bearer token credential is complete, the EKS one is not.
        RLSTACK_K8S_HOST="https://k8s.invalid:6443", RLSTACK_K8S_BEARER_TOKEN="stub-bearer-secret-0002",
        RLSTACK_EKS_CLUSTER_NAME="rlinf-use2", RLSTACK_EKS_REGION="us-east-2",
        RLSTACK_EKS_AWS_SECRET_ACCESS_KEY="stub-aws-secret-0003",
    )
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-v", "playbooks/awx_configure.yml"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return proc, calls


# Every inventory source is new, as on a fresh AWX: each imports its hosts, and the import succeeds.
NEW_SOURCES = {"inventory_source": {"changed": True}}


@pytest.fixture(scope="module")
def stub_run(tmp_path_factory):
    return _run_with_stubs(tmp_path_factory.mktemp("awx_stub"), dict(
        NEW_SOURCES, inventory_source_update={"changed": True, "id": 7, "status": "successful"}))


def _calls(calls, module):
    return [c["args"] for c in calls if c["module"] == module]


def test_the_playbook_runs_and_logs_no_secret(stub_run):
    proc, calls = stub_run
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    for secret in ("stub-controller-token-0001", "stub-bearer-secret-0002", "stub-aws-secret-0003"):
        assert secret not in proc.stdout + proc.stderr
    assert {c["module"] for c in calls} == set(MODULES)


def test_every_parameter_exists_in_awx_awx(stub_run):
    calls = stub_run[1]
    for call in calls:
        unknown = set(call["args"]) - _real_options(call["module"]) - AUTH
        assert not unknown, (call["module"], unknown)


def test_controller_auth_comes_from_the_environment(stub_run):
    calls = stub_run[1]
    for call in calls:
        assert call["args"]["controller_host"] == "https://awx.invalid"
        assert call["args"]["controller_oauthtoken"] == "stub-controller-token-0001"
        assert call["args"]["validate_certs"] == "false"
        assert "controller_username" not in call["args"] and "controller_password" not in call["args"]


def _shown(stdout):
    """A message as the YAML result format prints it, unwrapped: single quotes doubled, lines folded."""
    return " ".join(stdout.replace("''", "'").split())


def test_credentials_only_with_their_environment(stub_run):
    proc, calls = stub_run
    creds = _calls(calls, "credential")
    assert [c["name"] for c in creds] == ["rlstack Kubernetes bearer token"]
    assert creds[0]["inputs"] == {"verify_ssl": True, "host": "https://k8s.invalid:6443",
                                  "bearer_token": "stub-bearer-secret-0002"}
    assert creds[0]["update_secrets"] is False
    assert creds[0]["credential_type"] == "OpenShift or Kubernetes API Bearer Token"
    assert ("Credential 'rlstack EKS' not created or updated: set RLSTACK_EKS_ENDPOINT, RLSTACK_EKS_CA_DATA, "
            "RLSTACK_EKS_AWS_ACCESS_KEY_ID") in _shown(proc.stdout)


def test_credential_type_templates_reach_awx_untemplated(stub_run):
    calls = stub_run[1]
    sent_types = _calls(calls, "credential_type")
    assert [t["name"] for t in sent_types] == [t["name"] for t in DATA["awx_credential_types"]]
    for sent, data in zip(sent_types, DATA["awx_credential_types"]):
        assert sent["injectors"] == data["injectors"]
        assert sent["injectors"]["env"]["K8S_AUTH_KUBECONFIG"] == "{{ tower.filename.kubeconfig }}"
        assert sent["inputs"] == data["inputs"] and sent["kind"] == "cloud"


def test_project_inventories_and_sources(stub_run):
    calls = stub_run[1]
    (project,) = _calls(calls, "project")
    assert project["scm_url"] == DATA["awx_scm_url"] and project["scm_branch"] == DATA["awx_scm_branch"]
    assert project["wait"] is True and project["default_environment"] == DATA["awx_execution_environment"]["name"]
    assert [i["name"] for i in _calls(calls, "inventory")] == [c["name"] for c in DATA["awx_clusters"]]
    for source, cluster in zip(_calls(calls, "inventory_source"), DATA["awx_clusters"]):
        assert source["source"] == "scm" and source["source_path"] == cluster["source_path"]
        assert source["source_project"] == project["name"] and source["inventory"] == cluster["name"]
        assert source["update_on_launch"] is True and source["overwrite_vars"] is True
    (ee,) = _calls(calls, "execution_environment")
    assert ee["image"] == DATA["awx_ee_image"]
    assert project["timeout"] == DATA["awx_sync_timeout_s"]


def test_a_new_source_imports_its_hosts_at_once(stub_run):
    calls = stub_run[1]
    imports = _calls(calls, "inventory_source_update")
    assert [(i["inventory"], i["name"]) for i in imports] == [
        (c["name"], f"{c['name']} from {c['source_path']}") for c in DATA["awx_clusters"]]
    assert all(i["wait"] is True and i["timeout"] == DATA["awx_sync_timeout_s"] for i in imports)


def test_a_failed_import_stops_the_playbook_naming_the_inventory(tmp_path):
    # As awx.awx's wait answers an inventory update that failed (controller_api.wait_on_url), here not failing the
    # task: the playbook's own sentence follows.
    proc, calls = _run_with_stubs(tmp_path, dict(NEW_SOURCES, inventory_source_update={
        "changed": True, "id": 12, "status": "failed", "msg": "The inventory_update - sim, failed"}))
    assert proc.returncode == 2
    first = DATA["awx_clusters"][0]
    assert (f"Inventory '{first['name']}' could not import its hosts from {first['source_path']} "
            f"of project '{DATA['awx_project']['name']}': AWX inventory update 12 ended with status failed; read its "
            f"output at /api/v2/inventory_updates/12/stdout/ on the controller. Check that the file is in branch "
            f"{DATA['awx_scm_branch']} and parses as an inventory.") in _shown(proc.stdout)
    assert not _calls(calls, "job_template")


def test_job_templates_as_sent(stub_run):
    proc, calls = stub_run
    sent = {jt["name"]: jt for jt in _calls(calls, "job_template")}
    for jt in DATA["awx_job_templates"]:
        if not (ROOT / jt["playbook"]).is_file():
            assert jt["name"] not in sent
            assert f"Job template '{jt['name']}' not created or updated" in _shown(proc.stdout)
            continue
        args = sent[jt["name"]]
        assert args["playbook"] == jt["playbook"] and args["inventory"] == DATA["awx_default_cluster"]
        assert args["credentials"] == [] and args["job_tags"] == jt.get("job_tags", "")
        for ask in ("inventory", "credential", "limit", "tags", "skip_tags", "variables", "verbosity"):
            assert args[f"ask_{ask}_on_launch"] is (ask in jt["ask"]), (jt["name"], ask)
        assert args["survey_enabled"] is ("survey" in jt)
        if "survey" in jt:
            assert args["survey_spec"] == DATA["awx_surveys"][jt["survey"]]
        else:
            assert "survey_spec" not in args
    assert sent["Phase 0 EFA"]["job_tags"] == "phase0"


def test_workflow_and_nodes(stub_run):
    calls = stub_run[1]
    (wf,) = _calls(calls, "workflow_job_template")
    assert wf["name"] == "Phase 0 then validate" and wf["ask_inventory_on_launch"] is True
    nodes = _calls(calls, "workflow_job_template_node")
    assert [(n["identifier"], n["unified_job_template"], n.get("success_nodes")) for n in nodes] == [
        ("validate-cluster", "Validate cluster", None), ("phase0-efa", "Phase 0 EFA", ["validate-cluster"])]
    assert all(n["workflow_job_template"] == wf["name"] for n in nodes)
