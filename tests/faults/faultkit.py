# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fault injection against the simulated cluster: run validate.yml, break something real while it runs
(pause or restart kube-apiserver or etcd, stop the MPI operator, delete a Job, evict a pod, send a
signal), and measure what the run says, how long it takes to say it and what it leaves behind.

Each measurement is appended to tests/output/faults/results.jsonl (docs/reliability.md is written from it).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import simkit

ROOT = simkit.ROOT
RUN_LABEL = "rlstack.io/run-id"
NAMESPACE = "default"
RESULTS = ROOT / "tests" / "output" / "faults" / "results.jsonl"
KWOK_PIDS = simkit.STATE / "kwok" / "clusters"
# Phase 0 records and baselines of the cluster the suite runs on, with its state (SIM_STATE): the fault suite may run
# on a cluster of its own beside the other sim tests (tests/run_all.sh), which must not read its records.
EVIDENCE = simkit.STATE / "evidence"


def component_pid_file(name: str) -> Path:
    """The pid file kwokctl (binary runtime) keeps for a control-plane component (kube-apiserver, etcd, ...)."""
    found = sorted(KWOK_PIDS.glob(f"*/pids/{name}.pid"))
    if not found:
        raise AssertionError(f"no pid file for {name} under {KWOK_PIDS}")
    return found[0]


def component_pid(name: str) -> int:
    return int(component_pid_file(name).read_text().strip())


def sim_pid(name: str) -> int:
    """A process simctl.py started itself (mpi-operator, runtime, apiserver-relay)."""
    return int((simkit.STATE / "pids" / f"{name}.pid").read_text().strip())


def pause(pid: int) -> None:
    os.kill(pid, signal.SIGSTOP)


def resume(pid: int) -> None:
    os.kill(pid, signal.SIGCONT)


def _default_sighup() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def restart_component(name: str, down_s: float) -> float:
    """Kill a control-plane component and start it again with the same command line, environment and
    directory after down_s seconds (what a crashed static pod's restart looks like). Returns the seconds
    until it serves again (kube-apiserver: /readyz; others: its process is up)."""
    pid_file = component_pid_file(name)
    pid = int(pid_file.read_text().strip())
    proc = Path(f"/proc/{pid}")
    argv = [a for a in (proc / "cmdline").read_bytes().decode().split("\0") if a]
    env = dict(item.split("=", 1) for item in (proc / "environ").read_bytes().decode().split("\0") if "=" in item)
    cwd = os.readlink(proc / "cwd")
    log_path = simkit.STATE / "logs" / f"{name}-restarted.log"
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    started = time.monotonic()
    time.sleep(down_s)
    with open(log_path, "ab") as log:
        new = subprocess.Popen(argv, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    pid_file.write_text(f"{new.pid}\n")
    if name == "kube-apiserver":
        from kubernetes import client, config
        api = config.new_client_from_config(config_file=str(simkit.KUBECONFIG))
        simkit.wait_until(lambda: client.VersionApi(api).get_code(_request_timeout=2), 90, "kube-apiserver back")
        api.close()
    return time.monotonic() - started


def objects(core, batch, custom, run_id: str, namespace: str = NAMESPACE) -> list:
    """Every object of the run that the runner may create (its label), with a bounded client."""
    selector = f"{RUN_LABEL}={run_id}"
    found = []
    for kind, lister in (("Job", batch.list_namespaced_job), ("Pod", core.list_namespaced_pod),
                         ("Service", core.list_namespaced_service), ("ConfigMap", core.list_namespaced_config_map)):
        listed = lister(namespace, label_selector=selector, _request_timeout=10).items
        found += [f"{kind}/{o.metadata.name}" for o in listed]
    mpijobs = custom.list_namespaced_custom_object("kubeflow.org", "v2beta1", namespace, "mpijobs",
                                                   label_selector=selector, _request_timeout=10)
    found += [f"MPIJob/{o['metadata']['name']}" for o in mpijobs.get("items", [])]
    return found


def wait_gone(core, batch, custom, run_id: str, within_s: float) -> tuple[list, float]:
    """(objects left, seconds) once none is left, or after within_s."""
    started = time.monotonic()
    left = objects(core, batch, custom, run_id)
    while left and time.monotonic() - started < within_s:
        time.sleep(0.5)
        left = objects(core, batch, custom, run_id)
    return left, time.monotonic() - started


def runner_envvars(**extra) -> dict:
    """The environment an ansible-runner run (what AWX runs) gets: this project's ansible.cfg, and the venv's
    tools first on PATH, as in an execution environment (ansible-runner looks up ansible-playbook there)."""
    return dict({"ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
                 "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}, **extra)


class Run:
    """One validate.yml run in a session of its own (signals go to it alone), output in a log file."""

    def __init__(self, tmp_path: Path, tags: str, extra: dict | None = None, run_id: str = "", via: str = ""):
        self.run_id = run_id or "fault-" + uuid.uuid4().hex[:6]
        self.report_dir = tmp_path / "report"
        self.log_path = tmp_path / "playbook.log"
        self.env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), RLSTACK_REPORT_DIR=str(self.report_dir),
                        PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
                        ANSIBLE_NOCOLOR="1", PYTHONFAULTHANDLER="1")
        self.cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i",
                    "inventories/sim", "--tags", tags, "-e", f"validation_kubeconfig={simkit.KUBECONFIG}",
                    "-e", f"validation_run_id={self.run_id}", "-e", f"validation_evidence_dir={EVIDENCE}"]
        for key, value in (extra or {}).items():
            self.cmd += ["-e", json.dumps({key: value})]
        if via == "validate.sh":  # the original harness's command line: ./validate.sh --skip-to N --level N
            level = tags.lstrip("l")
            self.cmd = [str(ROOT / "validate.sh"), "--skip-to", level, "--level", level, "--"] + self.cmd[6:]
        self.proc = None
        self.started = None
        self.ended = None

    def start(self):
        self._log = self.log_path.open("w")
        self.started = time.monotonic()
        # A run started from a terminal has SIGHUP's default action; a suite started under nohup (or by a CI agent
        # that ignores SIGHUP) would pass SIG_IGN on, and the SIGHUP test would see a run that ignores its signal.
        self.proc = subprocess.Popen(self.cmd, cwd=str(ROOT), env=self.env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True,
                                     preexec_fn=_default_sighup)  # pylint: disable=subprocess-popen-preexec-fn
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_for_log(self, text: str, timeout: float) -> float:
        """Seconds since start when `text` appeared in the output."""
        simkit.wait_until(lambda: text in self.log() or self.proc.poll() is not None, timeout,
                          f"'{text}' in the playbook output")
        assert text in self.log(), f"the run ended before '{text}':\n{self.log()[-3000:]}"
        return time.monotonic() - self.started

    def wait(self, timeout: float) -> int:
        try:
            rc = self.proc.wait(timeout=timeout)
        finally:
            self.ended = time.monotonic()
            if self.proc.poll() is None:
                # where it hangs: SIGABRT makes the controller's faulthandler (PYTHONFAULTHANDLER, set at start) print
                # every thread's stack into the run's log before the kill
                os.kill(self.proc.pid, signal.SIGABRT)
                time.sleep(2)
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
            self._log.close()
        return rc

    def signal(self, signum: int, group: bool = True) -> float:
        """Send signum (to the process group, as a terminal does, or to ansible-playbook alone); the time."""
        if group:
            os.killpg(self.proc.pid, signum)
        else:
            os.kill(self.proc.pid, signum)
        return time.monotonic()

    def kill_everything(self) -> float:
        """SIGKILL the run and every process it started, wherever their session (the interrupt watchdog has its
        own): what `podman kill` of an AWX job's sandbox does. The time."""
        pids = [self.proc.pid] + descendants(self.proc.pid)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return time.monotonic()

    def report(self) -> dict:
        path = self.report_dir / "report.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def level(self, level_id: str) -> dict:
        """The row of a level (an L5/L6 row per example: l5_training_step/<example>; the first one)."""
        for cluster in self.report().get("clusters", []):
            for level in cluster.get("levels", []):
                if level.get("id") == level_id or str(level.get("id", "")).startswith(level_id + "/"):
                    return level
        return {}

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def watchdogs_alive() -> list:
    """The interrupt watchdogs (plugins/plugin_utils/_run_guard.py) running now: pid, seconds alive, parent pid
    they watch. For a failure message: a watchdog still alive long after its run ended is waiting on something."""
    found = []
    ticks, boot = os.sysconf("SC_CLK_TCK"), time.time() - float(Path("/proc/uptime").read_text().split()[0])
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            if not entry.name.isdigit() or not any(a.endswith("_run_guard.py") for a in argv):
                continue
            started = boot + int((entry / "stat").read_text().rsplit(")", 1)[1].split()[19]) / ticks
        except OSError:
            continue
        found.append({"pid": int(entry.name), "alive_s": round(time.time() - started, 1), "watches": argv[-2:-1]})
    return found


def descendants(pid: int) -> list:
    """Every process below pid (from /proc: parent links), children first."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def record(fault: str, **row) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    row = {"fault": fault, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **row}
    with RESULTS.open("a") as handle:
        handle.write(json.dumps(row) + "\n")
