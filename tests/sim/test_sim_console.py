# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The console of a whole run, as a person sees it (rlstack.validation.progress, docs/console.md), and Phase 0
before the money (docs/phase0.md), against the simulated cluster.

* the demo's run (every level, Phase 0 enabled as in inventories/sim), piped: at most 40 lines from the start to
  the end of the footer, one start and one end line per level in the order they ran (Phase 0 before L3), the
  footer without a contradiction; -v brings Ansible's task output back;
* in a real terminal (tmux, 80 and 120 columns): the same lines, coloured, and not with NO_COLOR;
* the scenario phase0-socket-fallback: Phase 0 fails, so no pod reaches a p5 node (every pod the API server saw
  during the run is recorded with a watch), whatever validation_continue_on_error says, and the run says what it
  did not spend.
The assertions are on what the run did (its levels, its verdicts, the pods), never on a wait's length."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

BIN = Path(sys.executable).parent
LEVEL_ORDER = ["L0    Infrastructure", "L1    Runtime", "L2    Single GPU", "L3.5  Phase 0 EFA",
               "L3    Multi GPU / NCCL", "L4    Rollout", "L5    Training step", "L6    Evaluation"]
GATED = ("l3_multi_gpu", "l5_training_step", "l6_evaluation")


def _command(report: Path, run_id: str, *extra: str) -> list:
    return [str(BIN / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
            "-e", f"validation_kubeconfig={simkit.KUBECONFIG}", "-e", f"validation_run_id={run_id}",
            "-e", f"validation_report_dir={report}", *extra]


def _env(**extra) -> dict:
    env = dict(os.environ, ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"),
               PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    for key in ("ANSIBLE_NOCOLOR", "NO_COLOR", "ANSIBLE_FORCE_COLOR", "RLSTACK_CONSOLE_TASKS"):
        env.pop(key, None)
    env.update(extra)
    return env


def _run(tmp_path: Path, *extra: str, **env):
    run_id = "con-" + uuid.uuid4().hex[:6]
    report = tmp_path / run_id
    proc = subprocess.run(_command(report, run_id, *extra), cwd=str(simkit.ROOT), env=_env(**env),
                          capture_output=True, text=True, timeout=1500, check=False)
    report.mkdir(parents=True, exist_ok=True)
    (report / "console.txt").write_text(proc.stdout)  # what the person saw, beside the report
    doc = json.loads((report / "report.json").read_text()) if (report / "report.json").exists() else {}
    return proc, doc


def _until_footer(lines: list) -> list:
    """From the playbook's start to the end of the footer (the report files line comes after it)."""
    end = [i for i, line in enumerate(lines) if line.startswith("Validation report written to")]
    return lines[:end[0]] if end else lines


def _check_run(lines: list, doc: dict) -> None:
    text = "\n".join(lines)
    for noise in ("TASK [", "PLAY [", "PLAY RECAP", "FAILED - RETRYING", "ok: [", "included:"):
        assert noise not in text, noise
    starts = [next(i for i, line in enumerate(lines) if line.startswith(level + ": starting")) for level in LEVEL_ORDER]
    ends = [next(i for i, line in enumerate(lines) if re.match(re.escape(level) + r": PASS in \d", line))
            for level in LEVEL_ORDER]
    assert starts == sorted(starts) and ends == sorted(ends), "the levels ran in this order: %s" % LEVEL_ORDER
    assert all(s < e for s, e in zip(starts, ends))
    assert "VALIDATION RESULTS: sim-eks" in lines
    rows = dict((row["id"], row) for row in doc["clusters"][0]["levels"])
    summary = doc["clusters"][0]["summary"]
    assert "%d/%d passed in " % (summary["passed"], summary["total"]) in text
    assert summary["passed"] == summary["total"] == len([r for r in rows if not rows[r]["diagnostic"]])


@pytest.fixture(scope="module")
def demo_run(core, tmp_path_factory):
    """The run `make demo` makes, piped (stdout is not a terminal)."""
    return _run(tmp_path_factory.mktemp("demo"))


def test_the_demo_is_short_plain_and_in_run_order(demo_run):
    proc, doc = demo_run
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    lines = _until_footer(proc.stdout.splitlines())
    # a wait prints only once it has lasted 10 s, which says how busy the machine was, not what the run did
    assert len([line for line in lines if " waiting for " not in line]) <= 40, "\n".join(lines)
    assert "\x1b" not in proc.stdout and "\r" not in proc.stdout
    _check_run(lines, doc)


def test_phase0_runs_first_and_the_footer_tells_one_story(demo_run):
    proc, doc = demo_run
    gate = doc["clusters"][0]["phase0_gate"]
    assert gate["action"] == "pass" and gate["reason"] == "same_run", gate
    assert "Phase 0 gate: Phase 0 passed in this run; L3 multi-node, L5, L6 on p5.48xlarge" in proc.stdout
    assert "no Phase 0 pass was found" not in proc.stdout and "running anyway" not in proc.stdout
    assert re.search(r"^Phase 0 PASS: \$[0-9.]+ on g6\.8xlarge", proc.stdout, re.M)


def test_v_brings_the_task_output_back(core, tmp_path):
    proc, _doc = _run(tmp_path, "--tags", "l1", "-v")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "TASK [" in proc.stdout and "PLAY RECAP" in proc.stdout
    assert "L1    Runtime: PASS in " in proc.stdout


def _tmux(width: int, command: list, env: dict, timeout: float = 600) -> tuple:
    """Run the command in a detached tmux session of the given width; return (plain lines, text with escapes)."""
    session = "rlsv-%s" % uuid.uuid4().hex[:6]
    line = " ".join("'%s'" % part for part in command) + "; echo __exit=$?; sleep 600"
    exports = " ".join("%s='%s'" % (k, v) for k, v in env.items() if k in ("ANSIBLE_CONFIG", "PATH", "NO_COLOR"))
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", str(width), "-y", "50",
                    "env %s TERM=xterm-256color bash -c \"%s\"" % (exports, line.replace('"', '\\"'))],
                   cwd=str(simkit.ROOT), check=True)
    try:
        def capture(*flags):
            return subprocess.run(["tmux", "capture-pane", "-p", "-J", "-S", "-", *flags, "-t", session],
                                  capture_output=True, text=True, check=True).stdout
        simkit.wait_until(lambda: "__exit=" in capture(), timeout, "the run in tmux")
        return capture().splitlines(), capture("-e")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


@pytest.mark.parametrize("width", [80, 120])
def test_in_a_terminal(core, tmp_path, width):
    if not shutil.which("tmux"):
        pytest.skip("tmux is not installed (make test installs it with apt-get on Debian)")
    run_id = "tty-" + uuid.uuid4().hex[:6]
    command = _command(tmp_path / run_id, run_id, "--tags", "l1")
    lines, escaped = _tmux(width, command, _env())
    assert "__exit=0" in lines, "\n".join(lines)
    lines = [line.rstrip() for line in lines]
    assert "L1    Runtime: starting (probe pods on the GPU nodes)" in lines
    assert [line for line in lines if re.match(r"L1    Runtime: PASS in \d+.* \(\d+ checks\)$", line)]
    assert "VALIDATION RESULTS: sim-eks" in lines and "TASK [" not in "\n".join(lines)
    # the level lines, the table and its footer fit the terminal, wrapped at spaces by the console (capture-pane -J
    # joins what the terminal itself wrapped)
    table = lines[lines.index("VALIDATION RESULTS: sim-eks"):]
    table = table[:next((i for i, line in enumerate(table) if line.startswith("Validation report written")), None)]
    shown = [line for line in lines if line.startswith("L1 ")] + table
    assert all(len(line) <= width for line in shown), "\n".join(shown)
    assert "\x1b[" in escaped, "colour on a terminal"
    if width == 80:
        plain, escaped = _tmux(width, command, _env(NO_COLOR="1"))
        assert "__exit=0" in plain and "\x1b[0;32m" not in escaped and "\x1b[32m" not in escaped


class PodWatch:
    """Every pod the API server reports while the run lasts (a watch from the current resourceVersion)."""

    def __init__(self, core):
        from kubernetes import watch
        self.core, self.watch, self.pods = core, watch.Watch(), {}
        self.version = core.list_pod_for_all_namespaces(limit=1).metadata.resource_version
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        for event in self.watch.stream(self.core.list_pod_for_all_namespaces, resource_version=self.version,
                                       timeout_seconds=900):
            pod = event["object"]
            seen = self.pods.setdefault(pod.metadata.uid, {"name": pod.metadata.name, "nodes": set(),
                                                           "labels": dict(pod.metadata.labels or {}),
                                                           "selector": dict(pod.spec.node_selector or {})})
            if pod.spec.node_name:
                seen["nodes"].add(pod.spec.node_name)

    def stop(self):
        time.sleep(1.0)  # the last events of the run reach the watch
        self.watch.stop()
        self.thread.join(timeout=30)
        return list(self.pods.values())


def test_phase0_failure_keeps_the_run_off_the_p5_nodes_and_says_what_it_saved(core, tmp_path, scenario):
    scenario("phase0-socket-fallback")
    p5 = {n.metadata.name for n in core.list_node(label_selector=f"{simkit.INSTANCE_TYPE}=p5.48xlarge").items}
    assert p5
    watch = PodWatch(core)
    try:
        proc, doc = _run(tmp_path, "--tags", "phase0,l3,l5", "-e", "validation_continue_on_error=true",
                         "-e", "validation_phase0_gate=fail")
    finally:
        pods = watch.stop()
    assert proc.returncode != 0, proc.stdout[-3000:]
    run_id = doc["clusters"][0]["run_id"]
    ours = [p for p in pods if p["labels"].get("rlstack.io/run-id") == run_id]
    assert [p for p in ours if p["labels"].get(simkit.LEVEL_LABEL) == "phase0_efa"], "Phase 0 ran"
    on_p5 = [p["name"] for p in ours if p["nodes"] & p5 or p["selector"].get(simkit.INSTANCE_TYPE) == "p5.48xlarge"]
    assert on_p5 == [], "pods on the p5 nodes although Phase 0 failed: %s" % on_p5
    assert not [p for p in ours if p["labels"].get(simkit.LEVEL_LABEL) in GATED]
    rows = dict((row["id"], row) for row in doc["clusters"][0]["levels"])
    assert rows["phase0_efa"]["status"] == "FAIL"
    for level_id, row in rows.items():
        if level_id.partition("/")[0] in GATED and row["selected"]:
            assert row["status"] == "SKIPPED" and "not spent" in row["reason"], row
            assert re.search(r"2 x p5\.48xlarge, \$[0-9.]+/h not spent", row["reason"]), row["reason"]
    gate = doc["clusters"][0]["phase0_gate"]
    assert gate["action"] == "fail" and gate["reason"] == "same_run_failed"
    assert "L3.5  Phase 0 EFA: FAIL in " in proc.stdout
    assert re.search(r"^Phase 0 gate: Phase 0 FAIL in this run, so L3 multi-node, L5 did not start: "
                     r"2 x p5\.48xlarge, \$[0-9.]+/h not spent", proc.stdout, re.M), proc.stdout[-3000:]
    assert "L3    Multi GPU / NCCL: starting" not in proc.stdout
