"""Drive the molecule scenarios under extensions/molecule/ against the simulated cluster.

Each scenario switches the simulated cluster (sim/scenarios.yaml), runs playbooks/validate.yml as a user
would and verifies the report, the exit code and that nothing labelled is left in the cluster. They run
one after the other: the scenario is a property of the whole cluster.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p.parent.name for p in (ROOT / "extensions" / "molecule").glob("*/molecule.yml"))

pytestmark = pytest.mark.molecule
# Scenarios whose fault another test of `make test` already judges end to end: tests/sim/test_sim_l0_health.py
# runs each L0 health fault (nvlink-down and driver-mismatch among them), tests/awx/test_awx_runner_sim.py runs
# gpu-missing through ansible-runner, continue-on-error runs efa-missing, train-mixed runs train-fails' failing
# Job beside two passing ones, and nccl-crash runs `--tags l3` alone (what tags-l3 checks on a healthy cluster)
# to a failing L3. socket-fallback and efa-nic-missing are L3 verdicts read from a launcher log, which
# tests/unit judges on the real logs (tests/unit/fixtures/nccl) through the same parser and rules.
# `make test` leaves them out to stay within its time; `make test-molecule` runs every scenario.
EXTENDED = {"row-remap-pending", "pcie-degraded", "ecc-uncorrectable", "gpu-condition", "efa-missing",
            "driver-mismatch", "gpu-missing", "nvlink-down", "train-fails", "tags-l3", "socket-fallback",
            "efa-nic-missing"}


def test_every_simulated_failure_has_a_scenario():
    import yaml
    scenarios = yaml.safe_load((ROOT / "sim" / "scenarios.yaml").read_text())
    # a scenario that needs several runs (a stored baseline) names the sim test that drives it
    driven = {name: spec["tested_by"] for name, spec in scenarios.items() if spec.get("tested_by")}
    for name, test in driven.items():
        assert name in (ROOT / test).read_text(), (name, test)
    # bad-node isolation scenarios (kind: isolate) are judged by tests/sim/test_sim_isolate.py
    simulated = {name for name, spec in scenarios.items()
                 if name not in driven and (spec or {}).get("kind") != "isolate"}
    assert simulated <= set(SCENARIOS), simulated - set(SCENARIOS)


@pytest.mark.parametrize("scenario", [pytest.param(s, marks=pytest.mark.molecule_extended) if s in EXTENDED else s
                                      for s in SCENARIOS])
def test_scenario(scenario):
    if not (ROOT / ".sim" / "kubeconfig").exists() and not os.environ.get("KUBECONFIG"):
        pytest.skip("the simulated cluster is not running (make sim-up)")
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
               KUBECONFIG=os.environ.get("KUBECONFIG", str(ROOT / ".sim" / "kubeconfig")),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    proc = subprocess.run([str(Path(sys.executable).parent / "molecule"), "test", "-s", scenario],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    tail = (proc.stdout + proc.stderr)[-6000:]
    assert proc.returncode == 0, tail
