"""The simulated cluster's shape (SIM_NODES) and how scenarios target nodes, without starting it."""
import ipaddress

import pytest

from simload import load

simctl = load("simctl")
replay = load("replay")


def p5(nodes):
    return [n for n in nodes if n["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "p5.48xlarge"]


@pytest.mark.parametrize("count", [1, 2, 16, 256])
def test_cluster_grows_to_the_asked_number_of_p5_nodes(count):
    nodes = simctl.cluster_nodes(count)
    gpu = p5(nodes)
    assert [n["metadata"]["name"] for n in gpu] == [f"p5-node-{i}" for i in range(count)]
    # the Phase 0 and system nodes stay as the file has them
    assert len(nodes) - len(gpu) == 3
    for node in gpu:
        assert node["metadata"]["labels"]["kubernetes.io/hostname"] == node["metadata"]["name"]
        assert node["status"]["capacity"]["nvidia.com/gpu"] == "8"
        assert node["status"]["capacity"]["vpc.amazonaws.com/efa"] == "32"


def test_every_node_has_its_own_pod_cidr():
    nodes = simctl.cluster_nodes(1024)
    nets = [ipaddress.ip_network(n["spec"]["podCIDR"]) for n in nodes]
    assert len(set(nets)) == len(nets)
    for a in nets:
        assert not any(a != b and a.overlaps(b) for b in nets[:50])
    assert all(n["spec"]["podCIDRs"] == [n["spec"]["podCIDR"]] for n in nodes)


def test_copies_do_not_share_objects_with_the_template():
    nodes = simctl.cluster_nodes(3)
    nodes[2]["metadata"]["labels"]["x"] = "y"
    assert "x" not in nodes[0]["metadata"]["labels"]


@pytest.mark.parametrize("count", [0, -1, simctl.MAX_P5_NODES + 1])
def test_out_of_range_node_counts_are_refused(count, capsys):
    with pytest.raises(SystemExit):
        simctl.cluster_nodes(count)
    assert "SIM_NODES must be between 1 and" in capsys.readouterr().err


@pytest.mark.parametrize("per_node, node, expected", [
    ({"p5-node-1": "bad"}, "p5-node-1", "bad"),
    ({"p5-node-1": "bad"}, "p5-node-10", "healthy"),
    ({"p5-node-3,p5-node-17": "bad"}, "p5-node-17", "bad"),
    ({"p5-node-3,p5-node-17": "bad"}, "p5-node-7", "healthy"),
    ({"p5-node-1?": "bad"}, "p5-node-12", "bad"),
    ({"p5-node-1?": "bad"}, "p5-node-1", "healthy"),
    ({"*": "all", "p5-node-0": "one"}, "p5-node-0", "one"),
    ({"*": "all", "p5-node-0": "one"}, "g6-node-0", "all"),
    ({"p5-node-*": "glob", "p5-node-5": "exact"}, "p5-node-5", "exact"),
    ({}, "p5-node-0", "healthy"),
])
def test_scenarios_target_a_node_a_list_or_a_pattern(per_node, node, expected):
    assert replay.node_variant(per_node, node) == expected
