"""The host transport's L5 on this machine: a training script that prints its secrets and raises.

validate.yml --tags l5 with inventories/gpu-host runs tests/frameworks/raise_in_step.py (a real Python run: it
prints an HF token and a password from its environment, then raises three frames deep). The failed row of
report.json, junit.xml and report.html shows the exception's message, the frame above it and the log's last
lines, and no secret value appears anywhere the run wrote or printed. No cluster, no GPU needed.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "frameworks" / "raise_in_step.py"
HF_TOKEN = "hf_FAKEhostTOKEN0123456789abcdefghijk"
PASSWORD = "Tr0ub4dor-and-3-host"  # no known token shape: only its variable's name gives it away


def test_a_raising_training_script_shows_its_cause_redacted(tmp_path):
    extra = tmp_path / "examples.yml"
    extra.write_text(yaml.safe_dump({"validation_examples": [{
        "name": "raise-in-step", "framework": "custom", "command": [sys.executable, str(SCRIPT)],
        "env": {"HF_TOKEN": HF_TOKEN, "STORE_PASSWORD": PASSWORD}}]}))
    report = tmp_path / "report"
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(report),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml",
                           "-i", "inventories/gpu-host", "--tags", "l5", "-e", "@%s" % extra,
                           "-e", "validation_report_dir=%s" % report],
                          cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output[-3000:]
    row = [lv for lv in json.loads((report / "report.json").read_text())["clusters"][0]["levels"]
           if lv["id"] == "l5_training_step/raise-in-step"][0]
    assert row["status"] == "FAIL"
    job = [c for c in row["checks"] if c["name"] == "job"][0]
    excerpt = job["excerpt"]
    assert excerpt[0].endswith('raise_in_step.py", line 15, in reward')
    assert excerpt[2] == "ValueError: reward model returned NaN at step 1 (--crash_in_step)"
    last = excerpt.index([line for line in excerpt if line.startswith("last ")][0])
    assert excerpt[last + 1:last + 4] == ["config: steps=1 hf_token=[redacted]", "config: wandb_api_key=",
                                          "connecting to the dataset store as trainer/[redacted]"]
    assert excerpt[-1] == excerpt[2]
    junit = (report / "junit.xml").read_text()
    html = (report / "report.html").read_text()
    assert "ValueError: reward model returned NaN at step 1 (--crash_in_step)" in junit
    assert "ValueError: reward model returned NaN at step 1 (--crash_in_step)" in html
    assert "trainer/[redacted]" in junit and "trainer/[redacted]" in html
    for where, text in (("console", output), ("report.json", (report / "report.json").read_text()),
                        ("junit.xml", junit), ("report.html", html)):
        assert HF_TOKEN not in text and PASSWORD not in text, where
