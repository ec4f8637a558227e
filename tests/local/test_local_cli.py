# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""rlstack-validate local speaks for itself (issue 28 item 6): a run with findings ends with local mode's own
summary (findings per rule and severity, where findings.json and local.sarif are, the exit code's meaning)
and exit status 2, without Ansible's error frame; variables exported in the environment render ${VAR} as
the user's own envsubst would. A real run (no --dry-run) of a small repository, no cluster."""

from __future__ import annotations

import json
import os
import subprocess

from local_helpers import ROOT, TIMEOUT_S, base_env

JOB = """apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ${NAMESPACE}
spec:
  backoffLimit: 0
  activeDeadlineSeconds: 3600
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: train
          image: ${ECR_URI}:v1
          imagePullPolicy: IfNotPresent
          command: ["python", "train.py"]
"""


def test_local_mode_ends_with_its_own_summary_and_honours_exported_variables(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "job.yaml").write_text(JOB)
    (repo / "run.sh").write_text("#!/bin/bash\nif [ \"$1\" = x ] then\n  echo x\nfi\n")  # SC1010: an error
    report = tmp_path / "report"
    env = base_env()
    env["ECR_URI"] = "123456789012.dkr.ecr.us-east-1.amazonaws.com/train"
    env.pop("NAMESPACE", None)
    env.pop("RLSTACK_VALIDATE_PROG", None)
    proc = subprocess.run([str(ROOT / "rlstack-validate"), "local", str(repo), "--report-dir", str(report)],
                          cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=TIMEOUT_S, check=False)
    out = proc.stdout
    assert proc.returncode == 2, out[-4000:]
    assert "[ERROR]" not in out and "Task failed" not in out and "Origin:" not in out, out[-4000:]
    tail = out[out.index("LOCAL MODE SUMMARY"):].splitlines()
    assert tail[0] == "LOCAL MODE SUMMARY: %s" % os.path.realpath(str(repo))
    assert out.index("VALIDATION RESULTS") < out.index("LOCAL MODE SUMMARY")  # after the table: the last word
    assert "  findings.json: %s" % (report / "findings.json") in tail
    assert any(line.startswith("  local.sarif:   %s" % (report / "local.sarif")) for line in tail)
    assert [line.split() for line in tail if line.split()[:1] == ["shellcheck"]] == [["shellcheck", "1", "0", "0"]]
    assert tail[-1].startswith("  exit code 2: Shell (shellcheck) failed")
    findings = json.loads((report / "findings.json").read_text())["findings"]
    unset = sorted(f["path"] for f in findings if f["rule"] == "unset_variable")
    assert unset == ["NAMESPACE"]  # ECR_URI came from the environment


def test_help_names_the_program_and_the_outputs():
    env = dict(os.environ)
    env.pop("RLSTACK_VALIDATE_PROG", None)
    proc = subprocess.run([str(ROOT / "rlstack-validate"), "--help"], env=env, stdout=subprocess.PIPE,
                          universal_newlines=True, timeout=60, check=False)
    assert proc.returncode == 0
    assert proc.stdout.startswith("Usage: rlstack-validate [--mode local|cluster]")
    assert "./validate.sh" not in proc.stdout
    for output in ("report.json", "junit.xml", "findings.json", "local.sarif", "Exit status:"):
        assert output in proc.stdout
    bad = subprocess.run([str(ROOT / "rlstack-validate"), "local", "--bogus"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, timeout=60, check=False)
    assert bad.returncode == 2 and bad.stderr == "rlstack-validate: unknown option '--bogus' (see rlstack-validate --help).\n"
