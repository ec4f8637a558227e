# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""L0 over a fleet: on a simulated cluster of 32 p5 nodes of its own (the sized_cluster fixture), with one
bad node (scenario fleet-nvlink-down-32), `validate.yml --tags l0` probes every GPU node, names exactly that
node and check, passes every other node, and leaves nothing behind. The level time is printed for the
record (how it grows with the node count is benchmarks/fleet_scale/run.py's job, not a timed test)."""
from __future__ import annotations


import pytest

import simkit

pytestmark = pytest.mark.sim
SCENARIO = "fleet-nvlink-down-32"


def test_l0_over_32_nodes_names_the_one_bad_node(sized_cluster, tmp_path):
    spec = simkit.scenario_table()[SCENARIO]
    nodes = int(spec["nodes"])
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
    failed = {(c["node"], c["name"]) for c in checks if not c["passed"]}
    assert failed == {(spec["fails"]["node"], spec["fails"]["check"])}, failed
    selector = f"rlstack.io/run-id={cluster['run_id']}"
    from kubernetes import client, config
    api = config.new_client_from_config(config_file=str(state / "kubeconfig"))
    left = client.CoreV1Api(api).list_pod_for_all_namespaces(label_selector=selector).items
    assert not left, [p.metadata.name for p in left]
