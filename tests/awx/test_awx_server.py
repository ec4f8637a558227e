# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The collection on a real AWX (make awx-up: AWX 24.6.1 from source, tools/awx/), as an operator uses it:
playbooks/awx_configure.yml creates the objects through the API (the sim's credential of the "Kubernetes
kubeconfig" type, the project cloned from a snapshot of this checkout, the inventory imported from
awx/inventories/sim without validation_kubeconfig), then jobs are launched through the API with survey
answers and read back through it (status, events, stdout, artifacts), and cancelled mid-L3 and mid-L5.

Run by `make test-awx` (which starts the simulated cluster); skipped elsewhere (RLSTACK_AWX_TEST unset)."""
from __future__ import annotations

import json
import os
import re
import time
import xml.etree.ElementTree as ET

import pytest

import awx_server as aws

pytestmark = [pytest.mark.awx_server, pytest.mark.skipif(
    os.environ.get("RLSTACK_AWX_TEST") != "1", reason="needs a running AWX and the sim: make awx-up && make test-awx")]

CLUSTER = "sim-eks"
RUN_LABEL = "rlstack.io/run-id"
REPORTS = aws.STATE / "test" / "reports"
# Survey answers of "Validate level" as AWX's UI sends them (awx/surveys.yml).
# validation_example is left unanswered: an empty answer reaches the play as null (docs/awx.md, section 7).
SURVEY = {"validation_continue_on_error": "false", "validation_start_timeout_s": 120}
ALL_LEVELS = ["l0", "l1", "l2", "l3", "phase0", "l4", "l5", "l6"]


@pytest.fixture(scope="module")
def awx():
    client = aws.AWX.from_env()
    status, body = client.request("GET", "/api/v2/ping/", timeout=10)
    assert status == 200, f"AWX at {client.host} does not answer /api/v2/ping/ (HTTP {status}): run `make awx-up`"
    return client


@pytest.fixture(scope="module")
def k8s():
    from kubernetes import client, config
    api = config.new_client_from_config(config_file=str(aws.SIM_KUBECONFIG))
    yield client.CoreV1Api(api), client.BatchV1Api(api), client.CustomObjectsApi(api)
    api.close()


@pytest.fixture(scope="module")
def configured(awx):
    """awx_configure.yml against the server, twice (the second run must change nothing)."""
    commit = aws.snapshot_repository(aws.STATE / "test" / "project.git")
    env = {"CONTROLLER_HOST": awx.host, "CONTROLLER_USERNAME": os.environ.get("CONTROLLER_USERNAME", "admin"),
           "CONTROLLER_PASSWORD": os.environ.get("CONTROLLER_PASSWORD", ""),
           "RLSTACK_KUBECONFIG_DATA": aws.self_contained_kubeconfig()}
    extra = {"awx_scm_url": f"file://{aws.STATE / 'test' / 'project.git'}", "awx_scm_branch": "awx-test",
             "awx_ee_image": "localhost/rlstack/validation-ee:1.0.0"}
    started = time.monotonic()
    # Each session's sim has its own port and certificates, and awx_configure.yml writes a credential's
    # secrets only when it creates it: the first run rotates them (awx_update_secrets=true), or the jobs would
    # reach for the sim of an earlier session (connection refused); the second run leaves them alone.
    first = aws.run_configure(env, dict(extra, awx_update_secrets=True))
    first_s = time.monotonic() - started
    assert first.returncode == 0, first.stdout[-6000:] + first.stderr[-3000:]
    started = time.monotonic()
    second = aws.run_configure(env, extra)
    second_s = time.monotonic() - started
    # Reports where make test-awx keeps report.json and junit.xml: exposed to jobs (AWX's "Paths to expose to
    # isolated jobs") and named to the report callback (RLSTACK_REPORT_DIR through "Extra Environment Variables").
    REPORTS.mkdir(parents=True, exist_ok=True)
    status, body = awx.request("PATCH", "/api/v2/settings/jobs/", {
        "AWX_ISOLATION_SHOW_PATHS": [f"{REPORTS}:{REPORTS}:z"], "AWX_TASK_ENV": {"RLSTACK_REPORT_DIR": str(REPORTS)}})
    assert status == 200, body
    print(f"\nawx_configure.yml: first run {first_s:.0f} s, second run {second_s:.0f} s (commit {commit[:12]})")
    return {"first": first, "second": second, "commit": commit}


def _recap(stdout: str) -> dict:
    match = re.search(r"localhost\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", stdout)
    assert match, stdout[-3000:]
    return dict(zip(("ok", "changed", "unreachable", "failed"), map(int, match.groups())))


def test_configure_creates_the_objects_and_a_second_run_changes_nothing(awx, configured):
    assert _recap(configured["first"].stdout)["failed"] == 0
    second = _recap(configured["second"].stdout)
    assert second["changed"] == 0 and second["failed"] == 0, configured["second"].stdout[-6000:]
    ctype = awx.one("credential_types", "Kubernetes kubeconfig")
    assert ctype["injectors"]["env"] == {"K8S_AUTH_KUBECONFIG": "{{ tower.filename.kubeconfig }}"}
    cred = awx.one("credentials", "rlstack sim kubeconfig")
    assert cred["credential_type"] == ctype["id"] and cred["inputs"]["kubeconfig"] == "$encrypted$"
    project = awx.one("projects", "rlstack.validation")
    assert project["status"] == "successful" and project["scm_update_on_launch"] is True, project
    inventory = awx.one("inventories", "sim")
    hosts = awx.all(f"/api/v2/inventories/{inventory['id']}/hosts/")
    assert [h["name"] for h in hosts] == [CLUSTER]
    assert "validation_kubeconfig" not in hosts[0]["variables"]
    template = awx.one("job_templates", "Validate level")
    assert template["survey_enabled"] is True
    assert [c["name"] for c in template["summary_fields"]["credentials"]] == ["rlstack sim kubeconfig"]


def _launch(awx, template: str, body: dict) -> tuple[int, dict]:
    jt = awx.one("job_templates", template)
    return awx.post(f"/api/v2/job_templates/{jt['id']}/launch/", body)


def test_an_out_of_range_survey_answer_is_refused_before_anything_is_created(awx, configured, k8s):
    jt = awx.one("job_templates", "Validate level")
    jobs_before = awx.get(f"/api/v2/job_templates/{jt['id']}/jobs/")["count"]
    core = k8s[0]
    objects_before = len(core.list_namespaced_pod("default", label_selector=RUN_LABEL, _request_timeout=10).items)
    status, body = _launch(awx, "Validate level", {"extra_vars": dict(SURVEY, validation_start_timeout_s=5)})
    assert status == 400, body
    assert "validation_start_timeout_s" in json.dumps(body) and "30" in json.dumps(body), body
    status, body = _launch(awx, "Validate level", {"extra_vars": dict(SURVEY, validation_levels=["l9"])})
    assert status == 400 and "validation_levels" in json.dumps(body), body
    assert awx.get(f"/api/v2/job_templates/{jt['id']}/jobs/")["count"] == jobs_before
    assert len(core.list_namespaced_pod("default", label_selector=RUN_LABEL, _request_timeout=10).items) \
        == objects_before


def _levels(job: dict) -> dict:
    return job["artifacts"].get("rlstack_validation", {}).get(CLUSTER, {}).get("levels", {})


def test_a_survey_launch_passes_every_level_and_is_read_back_through_the_api(awx, configured):
    for name in ("report.json", "junit.xml"):
        (REPORTS / name).unlink(missing_ok=True)
    status, body = _launch(awx, "Validate level", {"extra_vars": dict(SURVEY, validation_levels=ALL_LEVELS)})
    assert status == 201, body
    started = time.monotonic()
    job = awx.wait_job(body["job"], within_s=1800)
    seconds = time.monotonic() - started
    stdout = awx.stdout(job["id"])
    events = awx.events(job["id"])
    print(f"\njob {job['id']}: {job['status']} in {seconds:.0f} s (AWX elapsed {job['elapsed']} s), "
          f"{len(events)} events\n{stdout[-5000:]}")
    (aws.STATE / "test" / f"job-{job['id']}.txt").write_text(stdout)
    assert job["scm_revision"] == configured["commit"]  # the project updated on launch: this checkout ran
    assert job["status"] == "successful", job.get("job_explanation") or stdout[-8000:]
    # The credential, not a variable, gave access: AWX injected K8S_AUTH_KUBECONFIG.
    assert "validation_kubeconfig" not in job["extra_vars"]
    assert "K8S_AUTH_KUBECONFIG" in job["job_env"], sorted(job["job_env"])
    # Artifacts: every selected level PASS, L5 and L6 included.
    levels = _levels(job)
    statuses = {level_id: level["status"] for level_id, level in levels.items()}
    assert statuses and set(statuses.values()) == {"PASS"}, statuses
    for prefix in ("l0", "l1", "l2", "l3", "l4", "l5", "l6"):
        assert any(level_id.startswith(prefix) for level_id in statuses), (prefix, statuses)
    # Events: the stats event carries the artifacts; no task failed.
    kinds = [e["event"] for e in events]
    assert "playbook_on_stats" in kinds and "runner_on_failed" not in kinds
    assert f"VALIDATION RESULTS: {CLUSTER}" in stdout
    # report.json and junit.xml, written by the job into the exposed directory.
    report = json.loads((REPORTS / "report.json").read_text())
    (cluster,) = [c for c in report["clusters"] if c.get("name", c.get("cluster")) == CLUSTER] or report["clusters"]
    assert {level["id"]: level["status"] for level in cluster["levels"]} == statuses
    suites = ET.parse(REPORTS / "junit.xml").getroot()
    assert int(suites.get("failures", 0)) == 0 and int(suites.get("errors", 0)) == 0
    assert int(suites.get("tests", 0)) >= len(statuses)


def _run_objects(k8s, run_id: str) -> list:
    core, batch, custom = k8s
    selector = f"{RUN_LABEL}={run_id}"
    found = []
    for kind, lister in (("Job", batch.list_namespaced_job), ("Pod", core.list_namespaced_pod),
                         ("ConfigMap", core.list_namespaced_config_map)):
        found += [f"{kind}/{o.metadata.name}" for o in lister("default", label_selector=selector,
                                                              _request_timeout=10).items]
    mpijobs = custom.list_namespaced_custom_object("kubeflow.org", "v2beta1", "default", "mpijobs",
                                                   label_selector=selector, _request_timeout=10)
    return found + [f"MPIJob/{o['metadata']['name']}" for o in mpijobs.get("items", [])]


def _new_run_id(k8s, known: set) -> str:
    jobs = k8s[1].list_namespaced_job("default", label_selector=RUN_LABEL, _request_timeout=10).items
    new = {j.metadata.labels[RUN_LABEL] for j in jobs} - known
    return sorted(new)[0] if new else ""


@pytest.mark.parametrize("level,kind", [("l3", "MPIJob/"), ("l5", "Pod/")])
def test_a_cancel_leaves_no_object_of_the_run_within_30_s(awx, configured, k8s, level, kind):
    known = {j.metadata.labels[RUN_LABEL] for j in
             k8s[1].list_namespaced_job("default", label_selector=RUN_LABEL, _request_timeout=10).items}
    status, body = _launch(awx, "Validate level", {"extra_vars": dict(SURVEY, validation_levels=[level])})
    assert status == 201, body
    job_id = body["job"]
    deadline = time.monotonic() + 600
    run_id, objects = "", []
    while time.monotonic() < deadline:  # the level's workload exists: the run is in its wait
        run_id = run_id or _new_run_id(k8s, known)
        objects = _run_objects(k8s, run_id) if run_id else []
        if any(o.startswith(kind) for o in objects) or awx.get(f"/api/v2/jobs/{job_id}/")["status"] in aws.FINISHED:
            break
        time.sleep(1)
    assert any(o.startswith(kind) for o in objects), (run_id, objects, awx.stdout(job_id)[-4000:])
    status, body = awx.post(f"/api/v2/jobs/{job_id}/cancel/", {})
    assert status == 202, body
    cancelled = time.monotonic()
    left = objects
    while left and time.monotonic() - cancelled < 30:
        time.sleep(0.5)
        left = _run_objects(k8s, run_id)
    gone_s = time.monotonic() - cancelled
    job = awx.wait_job(job_id, within_s=120)
    print(f"\ncancel during {level}: job {job_id} {job['status']}; {len(objects)} object(s) of run {run_id} "
          f"before, {len(left)} left {gone_s:.1f} s after the cancel: {left}")
    assert job["status"] == "canceled", job["status"]
    assert left == [], (f"{len(left)} object(s) of run {run_id} still there {gone_s:.0f} s after AWX's cancel: "
                        f"{left}\n{awx.stdout(job_id)[-3000:]}")
