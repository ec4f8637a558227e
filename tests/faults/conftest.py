# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures of the fault-injection suite: the simulated cluster's clients (tests/sim/conftest.py's), and a
fault that is always undone (a paused process resumed, a stopped operator started) even when a test fails."""
from __future__ import annotations

import importlib.util
import os
import signal
import sys
from pathlib import Path

import pytest

SIM_TESTS = Path(__file__).resolve().parents[1] / "sim"
sys.path.insert(0, str(SIM_TESTS))

import simkit  # noqa: E402


def _sim_fixtures():
    """tests/sim/conftest.py, loaded under a name of its own: its client fixtures are shared, not copied."""
    spec = importlib.util.spec_from_file_location("sim_conftest", SIM_TESTS / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SIM = _sim_fixtures()
api_client, core, batch, custom = _SIM.api_client, _SIM.core, _SIM.batch, _SIM.custom


_RESTORED = {"after_last_test": False}


@pytest.fixture(autouse=True)
def _healthy():
    """Each fault test starts from the healthy scenario, with every process of the sim up (a fault before it
    may have ended one: the MPI operator exits when its leader lease lapses during an API server stall), and
    leaves it so, every node Ready again (a pause past the 50 s node-monitor grace period leaves the nodes
    NotReady until their next lease renewal), for the tests that follow. `simctl up` on a running cluster
    takes about 6 s; after a fault test restored the sim, the next one does not restore it again."""
    if not _RESTORED["after_last_test"]:
        simkit.simctl("up", "--scenario", "healthy")
    _RESTORED["after_last_test"] = False
    yield
    simkit.simctl("up", "--scenario", "healthy")
    _RESTORED["after_last_test"] = True


@pytest.fixture
def paused():
    """pause(pid): SIGSTOP pid for this test; every paused pid gets SIGCONT afterwards."""
    pids = []

    def pause(pid):
        pids.append(pid)
        os.kill(pid, signal.SIGSTOP)

    yield pause
    for pid in pids:
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass


@pytest.fixture
def runs():
    """Runs of this test; any still running at the end is killed."""
    started = []
    yield started
    for run in started:
        run.stop()
