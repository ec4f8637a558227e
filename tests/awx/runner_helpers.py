# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run playbooks/validate.yml through ansible-runner, the way AWX runs a job template: the awx_display
stdout callback, extra vars as a survey sends them, job tags, artifacts read from the playbook_on_stats
event (AWX stores that event's artifact_data as the job's artifacts)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOK = ROOT / "playbooks" / "validate.yml"
SIM_INVENTORY = ROOT / "inventories" / "sim"
SIM_STATE = Path(os.environ.get("SIM_STATE", ROOT / ".sim"))
KUBECONFIG = SIM_STATE / "kubeconfig"


def sim_running() -> bool:
    if not KUBECONFIG.exists():
        return False
    proc = subprocess.run([sys.executable, str(ROOT / "sim" / "simctl.py"), "status"], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=60, check=False)
    return proc.returncode == 0


def current_scenario() -> str:
    path = SIM_STATE / "scenario"
    return path.read_text().strip() if path.exists() else ""


def switch_scenario(name: str) -> None:
    if current_scenario() == name:
        return
    proc = subprocess.run([sys.executable, str(ROOT / "sim" / "simctl.py"), "scenario", name], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=180, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"simctl.py scenario {name} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    time.sleep(1.0)  # kwok-controller picks up the new Stage objects


class RunResult:
    def __init__(self, runner, stdout: str, seconds: float, scenario_before: str, scenario_after: str):
        self.runner = runner
        self.stdout = stdout
        self.seconds = seconds
        self.status = runner.status
        self.rc = runner.rc
        self.env = dict(runner.config.env)
        self.scenario_before = scenario_before
        self.scenario_after = scenario_after
        self.events = list(runner.events)
        stats = [e for e in self.events if e.get("event") == "playbook_on_stats"]
        self.stats_event = stats[-1] if stats else None

    @property
    def artifacts(self) -> dict:
        """What AWX would store as the job's artifacts."""
        if not self.stats_event:
            return {}
        return self.stats_event.get("event_data", {}).get("artifact_data") or {}

    def describe(self) -> str:
        return (f"ansible-runner status={self.status} rc={self.rc} in {self.seconds:.1f}s, scenario "
                f"{self.scenario_before!r} -> {self.scenario_after!r}\n--- stdout (tail) ---\n{self.stdout[-6000:]}")


def run_validate(tmp_path: Path, extravars: dict, tags: str = "", skip_tags: str = "",
                 timeout: int = 600) -> RunResult:
    """One validate.yml job against the simulated cluster, as AWX would launch it."""
    import ansible_runner

    private = tmp_path / "runner"
    private.mkdir(parents=True, exist_ok=True)
    envvars = {
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_COLLECTIONS_PATH": f"{ROOT / '.collections'}:{os.path.expanduser('~/.ansible/collections')}",
        "ANSIBLE_ROLES_PATH": str(ROOT / "roles"),
        "ANSIBLE_FORCE_COLOR": "0",
        "ANSIBLE_NOCOLOR": "1",
        # Where the venv's tools (ansible-playbook, python) come from, as in an execution environment.
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    before = current_scenario()
    started = time.monotonic()
    runner = ansible_runner.run(
        private_data_dir=str(private),
        project_dir=str(ROOT),
        playbook=str(PLAYBOOK),
        inventory=str(SIM_INVENTORY),
        extravars=extravars,
        tags=tags or None,
        skip_tags=skip_tags or None,
        envvars=envvars,
        quiet=True,
        timeout=timeout,
    )
    seconds = time.monotonic() - started
    stdout = runner.stdout.read() if runner.stdout else ""
    return RunResult(runner, stdout, seconds, before, current_scenario())
