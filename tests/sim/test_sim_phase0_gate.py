"""The Phase 0 gate against the simulated cluster (2 x p5.48xlarge + 2 x g6.8xlarge): pass, missing, stale and
mismatched. The expensive L3 MPIJob runs only after a matching Phase 0 pass; without one the run fails before it
creates anything, naming what differs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import NamedTuple

import pytest

import simkit

pytestmark = pytest.mark.sim

IMAGE = "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"
NEWER = "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.30.4-1-testsv2.16.9"


class Run(NamedTuple):
    proc: subprocess.CompletedProcess
    doc: dict
    run_id: str
    seconds: float


def _run(tmp_path, evidence, tags, *extra) -> Run:
    run_id = "gate-" + uuid.uuid4().hex[:6]
    report = tmp_path / run_id
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(report),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
           "--tags", tags, "-e", f"validation_kubeconfig={simkit.KUBECONFIG}", "-e", f"validation_run_id={run_id}",
           "-e", f"validation_evidence_dir={evidence}", "-e", "validation_phase0_gate=fail", *extra]
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=900, check=False)
    seconds = time.monotonic() - started
    doc = json.loads((report / "report.json").read_text()) if (report / "report.json").exists() else {}
    return Run(proc, doc, run_id, seconds)


def _rows(doc):
    return {row["id"]: row for row in doc["clusters"][0]["levels"]}


def _pod_events(core, run_id):
    return [e for e in core.list_namespaced_event("default").items
            if e.involved_object.kind == "Pod" and run_id in (e.involved_object.name or "")]


@pytest.fixture(scope="module")
def phase0_pass(tmp_path_factory):
    """One real Phase 0 run on the g6 nodes, recorded in a fresh evidence directory."""
    tmp = tmp_path_factory.mktemp("phase0")
    evidence = tmp / "evidence"
    run = _run(tmp, evidence, "phase0")
    assert run.proc.returncode == 0, run.proc.stdout[-4000:]
    (record_path,) = (evidence / "phase0").glob("*.json")
    return {"evidence": evidence, "record": json.loads(record_path.read_text())}


def _gate_failed(run, core, reason_text):
    proc, doc, run_id = run.proc, run.doc, run.run_id
    assert proc.returncode != 0, proc.stdout[-3000:]
    rows = _rows(doc)
    assert rows["phase0_gate"]["status"] == "FAIL", rows
    assert reason_text in rows["phase0_gate"]["reason"], rows["phase0_gate"]["reason"]
    assert rows["l3_multi_gpu"]["status"] == "SKIPPED" and rows["l3_multi_gpu"]["reason"] == "not run: GATE failed"
    assert not _pod_events(core, run_id), "the gate let the run create pods"
    assert doc["clusters"][0]["phase0_gate"]["action"] == "fail"


def test_pass_lets_the_expensive_level_run(core, phase0_pass, tmp_path):
    evidence, record = phase0_pass["evidence"], phase0_pass["record"]
    assert record["status"] == "PASS" and record["fingerprint"]["instance_type"] == "g6.8xlarge"
    assert record["fingerprint"]["nodes"] == 2 and record["fingerprint"]["declared"]["nccl"] == "2.27.7-1"
    assert record["fingerprint"]["observed"]["network"] and record["fingerprint"]["busbw"]
    run = _run(tmp_path, evidence, "l3")
    proc, doc = run.proc, run.doc
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert _rows(doc)["l3_multi_gpu"]["status"] == "PASS"
    gate = doc["clusters"][0]["phase0_gate"]
    assert gate["action"] == "pass" and gate["record"]["run_id"] == record["run_id"]
    assert "Phase 0 gate: Phase 0 passed" in proc.stdout
    assert "FAILED - RETRYING" not in proc.stdout
    # what the run did, not whether a wait lasted long enough to print a line (the console's own test:
    # tests/sim/test_sim_console.py)
    assert "L3    Multi GPU / NCCL: PASS in " in proc.stdout
    assert "GPU time: " in proc.stdout


def test_missing(core, tmp_path):
    run = _run(tmp_path, tmp_path / "empty", "l3")
    _gate_failed(run, core, "no Phase 0 pass was found")
    print("gate failed the run in %.1f s" % run.seconds)


def test_stale(core, phase0_pass, tmp_path):
    old = dict(phase0_pass["record"], passed_at="2026-01-01T00:00:00Z")
    (tmp_path / "stale" / "phase0").mkdir(parents=True)
    (tmp_path / "stale" / "phase0" / "old.json").write_text(json.dumps(old))
    _gate_failed(_run(tmp_path, tmp_path / "stale", "l3"), core, "more than the 7.0 days allowed")


def test_mismatched_image_names_the_nccl_difference(core, phase0_pass, tmp_path):
    run = _run(tmp_path, phase0_pass["evidence"], "l3", "-e", f"validation_nccl_tests_image={NEWER}")
    _gate_failed(run, core, "Phase 0 passed with NCCL 2.27.7-1, this image declares 2.30.4-1")
