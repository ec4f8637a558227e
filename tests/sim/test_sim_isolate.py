# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Bad-node isolation on the simulated cluster (sim/scenarios.yaml, `kind: isolate`): `validate.yml --tags
isolate` names exactly the scenario's bad node(s) within ceil(log2 N) + 2 rounds, none on a healthy cluster,
and leaves nothing behind. Each node count gets a cluster of its own (SIM_STATE under the test's temporary
directory, the sized_cluster fixture of conftest.py), so the shared 2-node cluster is not touched. The pair logs are sim/replay/pairlog.py's.

`make test` runs the 8-node case only; `make test-isolate` runs them all (16 and 64 nodes: marked
isolate_scale)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

SCENARIOS = {name: spec for name, spec in simkit.scenario_table().items() if (spec or {}).get("kind") == "isolate"}
DEFAULT_RUN = {"isolate-efa-degraded-8"}  # the one small case of `make test`


def _param(name):
    marks = [] if name in DEFAULT_RUN else [pytest.mark.isolate_scale]
    return pytest.param(name, marks=marks, id=name)


def _leftovers(kubeconfig: Path, run_id: str) -> list:
    from kubernetes import client, config
    api = config.new_client_from_config(config_file=str(kubeconfig))
    selector = f"rlstack.io/run-id={run_id}"
    core = client.CoreV1Api(api)
    custom = client.CustomObjectsApi(api)
    left = [f"pod/{p.metadata.name}" for p in core.list_pod_for_all_namespaces(label_selector=selector).items]
    left += [f"configmap/{c.metadata.name}" for c in
             core.list_config_map_for_all_namespaces(label_selector=selector).items]
    left += [f"mpijob/{m['metadata']['name']}" for m in custom.list_cluster_custom_object(
        "kubeflow.org", "v2beta1", "mpijobs", label_selector=selector)["items"]]
    return left


@pytest.mark.parametrize("name", [_param(n) for n in sorted(SCENARIOS)])
def test_isolation_names_exactly_the_bad_nodes(name, sized_cluster, tmp_path):
    spec = SCENARIOS[name]
    nodes = int(spec["nodes"])
    state = sized_cluster(nodes)
    proc, cluster = simkit.validate_at(state, name, "isolate", tmp_path)
    out = proc.stdout[-4000:] + proc.stderr[-2000:]
    isolation = cluster["isolation"]
    assert isolation, out
    want = set(spec["fails"]["node"].split(",")) if spec.get("fails") else set()
    assert {s["node"] for s in isolation["suspects"]} == want, (isolation["suspects"], isolation["note"], out)
    assert all(s["confidence"] == "high" for s in isolation["suspects"])
    bound = math.ceil(math.log2(nodes)) + 2
    assert isolation["round_bound"] == bound and isolation["rounds"] <= bound
    assert isolation["nodes"] == nodes
    # the evidence: every ring pair with its busbw in the matrix, a slow pair for each suspect
    ring = [p for p in isolation["pairs"] if p["phase"] == "ring"]
    assert len(ring) == nodes
    for suspect in want:
        mine = [p for p in isolation["pairs"] if suspect in p["nodes"]]
        assert mine and all(p["slow"] for p in mine), mine
    crash = any(e.get("crash") for e in (spec.get("pairs") or {}).values())
    if crash:
        assert all(p["crashed"] for p in isolation["pairs"] if set(p["nodes"]) & want)
    assert isolation["gpu_minutes"] > 0 and isolation["estimate"]["gpu_minutes_expected"] > 0
    assert (proc.returncode != 0) == bool(want), out
    if want:
        assert cluster["status"] == "FAIL"
    assert _leftovers(state / "kubeconfig", cluster["run_id"]) == []
