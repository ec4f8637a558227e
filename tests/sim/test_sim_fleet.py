# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""L0 over a fleet with several bad nodes: on a simulated cluster of 8 p5 nodes of its own (the sized_cluster
fixture; the 8-node isolation case reuses it), six nodes carry one GPU fault each (scenario fleet-gpu-health-8:
the faults of the six single-node health scenarios). `validate.yml --tags l0` probes every GPU node at once,
names each bad node with exactly its scenario's checks and fix, passes the others, and leaves nothing behind.
The level time is printed for the record (how it grows with the node count is benchmarks/fleet_scale/run.py's
job, not a timed test)."""
from __future__ import annotations


import pytest

import simkit

pytestmark = pytest.mark.sim
SCENARIO = "fleet-gpu-health-8"


def _expected(spec):
    """{node: (scenario, its failing checks)} from the scenario's replays and node conditions."""
    faults = dict((spec["replay"] or {})["probe_node"])
    faults.update({node: "gpu-condition" for node in spec.get("node_conditions") or {}})
    return {node: (name, simkit.HEALTH_SCENARIOS[name][0]) for node, name in faults.items()}


def test_l0_names_each_bad_node_with_its_own_check_and_fix(sized_cluster, tmp_path):
    spec = simkit.scenario_table()[SCENARIO]
    nodes = int(spec["nodes"])
    expected = _expected(spec)
    # the scenario's own summary agrees with the faults it sets
    assert dict(zip(spec["fails"]["node"].split(","), spec["fails"]["check"].split(","))) == \
        {node: checks[0] for node, (_name, checks) in expected.items()}
    assert set(expected) != {f"p5-node-{i}" for i in range(nodes)}, "some node must stay healthy"
    state = sized_cluster(nodes)
    proc, cluster = simkit.validate_at(state, SCENARIO, "l0", tmp_path, timeout=600)
    out = proc.stdout[-4000:] + proc.stderr[-2000:]
    l0 = next(level for level in cluster["levels"] if level["id"] == "l0_infrastructure")
    print(f"L0 over {nodes} p5 nodes: {l0['status']} in {l0.get('duration_s')} s of level time")
    assert proc.returncode != 0 and l0["status"] == "FAIL", out
    p5 = {f"p5-node-{i}" for i in range(nodes)}
    checks = l0["checks"]
    probed = {c["node"] for c in checks if c.get("node") in p5}
    assert probed == p5, sorted(p5 - probed)
    failed = sorted((c["node"], c["name"]) for c in checks if not c["passed"])
    assert failed == sorted((node, check) for node, (_name, names) in expected.items() for check in names), failed
    for node, (name, names) in expected.items():
        first = next(c for c in checks if c["node"] == node and c["name"] == names[0])
        assert simkit.HEALTH_SCENARIOS[name][1] in first["hint"], (node, first)
    selector = f"rlstack.io/run-id={cluster['run_id']}"
    from kubernetes import client, config
    api = config.new_client_from_config(config_file=str(state / "kubeconfig"))
    left = client.CoreV1Api(api).list_pod_for_all_namespaces(label_selector=selector).items
    assert not left, [p.metadata.name for p in left]
