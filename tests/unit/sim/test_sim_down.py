"""`simctl.py down` ends every component its pid files name, also one that outlives kwokctl's stop (a
kube-apiserver restarted by tests/faults did, holding the API server's port for the next cluster)."""
import importlib.util
import shutil
import subprocess
import sys
import time
from pathlib import Path

SIM = Path(__file__).resolve().parents[3] / "sim"


def load_simctl(state: Path):
    spec = importlib.util.spec_from_file_location("sim_simctl_down", SIM / "simctl.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.STATE = state
    return module


def test_down_ends_a_component_that_kwokctl_left_and_spares_a_reused_pid(tmp_path, monkeypatch):
    simctl = load_simctl(tmp_path / "state")
    pids = tmp_path / "state" / "kwok" / "clusters" / simctl.CLUSTER / "pids"
    pids.mkdir(parents=True)
    # ignores SIGTERM, as a component stuck in its shutdown does
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                                 "signal.SIG_IGN); print('ready', flush=True); time.sleep(120)"],
                                start_new_session=True, stdout=subprocess.PIPE, text=True)
    assert stubborn.stdout.readline().strip() == "ready"
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    try:
        (pids / "kube-apiserver.pid").write_text(f"{stubborn.pid}\n")
        (pids / "etcd.pid").write_text(f"{other.pid}\n")

        def kwokctl_delete(*_args, **_kwargs):
            # what kwokctl does: stop signals, then the cluster's directory (its pid files) is gone
            stubborn.terminate()
            shutil.rmtree(tmp_path / "state" / "kwok")
            return subprocess.CompletedProcess([], 0, "", "")

        monkeypatch.setattr(simctl, "bin_dir", lambda: tmp_path)
        (tmp_path / "kwokctl").write_text("")
        monkeypatch.setattr(simctl, "stop_process", lambda name: None)
        monkeypatch.setattr(simctl, "kwok_env", lambda: {})
        monkeypatch.setattr(simctl.subprocess, "run", kwokctl_delete)
        # the etcd pid now names another program (a reused pid): down must leave it alone
        monkeypatch.setattr(simctl, "process_cmdline", _changing_cmdline(other.pid), raising=False)
        simctl.down(quiet=True)
        assert stubborn.wait(timeout=10) == -9
        time.sleep(0.2)
        assert other.poll() is None, "a process that only reuses a recorded pid was killed"
    finally:
        for proc in (stubborn, other):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        stubborn.stdout.close()


def _changing_cmdline(pid):
    """/proc/<pid>/cmdline, except that `pid` names another program from the second read on."""
    calls = {"n": 0}

    def cmdline(asked):
        real = Path(f"/proc/{asked}/cmdline").read_bytes()
        if asked != pid:
            return real
        calls["n"] += 1
        return real if calls["n"] == 1 else b"another-program\0"
    return cmdline
