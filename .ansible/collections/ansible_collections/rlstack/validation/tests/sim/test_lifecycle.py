"""`simctl.py down` then `up` on the running simulated cluster. Destructive and slow (a cluster start), so it
runs only with SIM_LIFECYCLE_TEST=1; conftest.py orders it after every other test of the session.

    SIM_LIFECYCLE_TEST=1 .venv/bin/pytest tests/sim -q -m sim -k lifecycle
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import simkit

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(os.environ.get("SIM_LIFECYCLE_TEST") != "1",
                       reason="stops and restarts the shared simulated cluster; set SIM_LIFECYCLE_TEST=1"),
]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"


def _descendants(pids: set) -> set:
    kids: dict = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            kids.setdefault(ppid, set()).add(int(entry.name))
    out, todo = set(), list(pids)
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo.extend(kids.get(pid, ()))
    return out


def _recorded() -> dict:
    files = sorted(simkit.STATE.glob("pids/*.pid")) + sorted(simkit.STATE.glob("kwok/clusters/*/pids/*.pid"))
    return {f.stem: int(f.read_text().strip()) for f in files}


def test_down_stops_every_process_then_up_again():
    if simkit.simctl("status", check=False).returncode != 0:
        pytest.skip("no simulated cluster is running")
    scenario = simkit.current_scenario() or "healthy"
    recorded = _recorded()
    assert {"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok-controller",
            "runtime", "apiserver-relay", "mpi-operator"} <= set(recorded), recorded
    pids = _descendants(set(recorded.values()))
    assert all(_alive(p) for p in recorded.values()), recorded

    t0 = time.monotonic()
    simkit.simctl("down", timeout=180)
    down_s = time.monotonic() - t0
    survivors = sorted(p for p in pids if _alive(p))
    assert not survivors, f"processes left after down: {[(p, _cmdline(p)) for p in survivors]}"
    assert not simkit.STATE.exists(), "down left the state directory"
    assert simkit.simctl("status", check=False).returncode == 1

    t0 = time.monotonic()
    simkit.simctl("up", "--scenario", scenario, timeout=600)
    up_s = time.monotonic() - t0
    status = simkit.simctl("status")
    assert status.stdout.count(" Ready") == 5, status.stdout
    assert "STOPPED" not in status.stdout, status.stdout
    assert simkit.current_scenario() == scenario
    assert (simkit.STATE / "ready").exists()
    new = _recorded()
    assert set(new) == set(recorded) and all(_alive(p) for p in new.values()), new
    print(f"\nsimctl down: {down_s:.1f}s, up (warm): {up_s:.1f}s")
