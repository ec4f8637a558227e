"""`simctl.py up` waits for its nodes Ready, names the ones that are not with kwok-controller's state halfway, touches
them once (a new event for kwok's node controller), and on the bound says what it saw instead of only "timed out"; and it
picks its ports past those other simulated clusters registered (one restarting frees its port for a moment)."""
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from test_sim_down import load_simctl


def node(name, ready):
    return SimpleNamespace(metadata=SimpleNamespace(name=name),
                           status=SimpleNamespace(conditions=[SimpleNamespace(type="Ready", status=ready)]))


class FakeCore:
    """list_node answers with the nodes; a patched node turns Ready when `ready_on_patch`."""

    def __init__(self, nodes, ready_on_patch):
        self.nodes, self.ready_on_patch, self.patched = nodes, ready_on_patch, []

    def list_node(self, _request_timeout):
        return SimpleNamespace(items=list(self.nodes.values()))

    def patch_node(self, name, body, _request_timeout):
        self.patched.append((name, body))
        if self.ready_on_patch:
            self.nodes[name] = node(name, "True")


def write_kwok_state(simctl, state, pid):
    cluster = state / "kwok" / "clusters" / simctl.CLUSTER
    (cluster / "pids").mkdir(parents=True)
    (cluster / "logs").mkdir()
    (cluster / "pids" / "kwok-controller.pid").write_text(f"{pid}\n")
    # a real kwok-controller's lines (fixtures/SOURCES.md), and a line that is not JSON
    real = (Path(__file__).parent / "fixtures" / "kwok-controller-api-down.log").read_text()
    (cluster / "logs" / "kwok-controller.log").write_text(real + "not json\n")


def test_a_node_not_ready_halfway_is_named_and_touched_once(tmp_path, monkeypatch):
    simctl = load_simctl(tmp_path)
    write_kwok_state(simctl, tmp_path, os.getpid())
    said = []
    monkeypatch.setattr(simctl, "log", said.append)
    monkeypatch.setattr(simctl.time, "sleep", lambda _s: None)
    core = FakeCore({"p5-node-0": node("p5-node-0", "True"), "g6-node-0": node("g6-node-0", "False")}, True)
    simctl.wait_nodes_ready(core, 2, 0.2)
    assert [name for name, _body in core.patched] == ["g6-node-0"]
    assert len(said) == 1 and "g6-node-0" in said[0] and "kwok-controller runs" in said[0]
    assert "Failed to sync lease: failed to update lease using lease: Put" in said[0]


def test_nodes_that_stay_not_ready_end_it_with_what_was_seen(tmp_path, monkeypatch, capsys):
    simctl = load_simctl(tmp_path)
    write_kwok_state(simctl, tmp_path, 0)
    monkeypatch.setattr(simctl, "log", lambda _msg: None)
    monkeypatch.setattr(simctl.time, "sleep", lambda _s: None)
    core = FakeCore({"p5-node-0": node("p5-node-0", "False")}, False)
    with pytest.raises(SystemExit):
        simctl.wait_nodes_ready(core, 2, 0.1)
    err = capsys.readouterr().err
    assert "waiting for 2 Ready nodes; not Ready: p5-node-0" in err
    assert "kwok-controller is not running" in err and "kwok-controller.log" in err
    assert len(core.patched) == 1


def test_a_cluster_takes_no_port_another_holds_even_one_free_for_a_moment(tmp_path, monkeypatch):
    """Another cluster's registered ports are skipped although bindable (its API server restarting); an entry whose
    cluster state is gone is dropped; this cluster's entry is written, and `down` removes it."""
    bins = tmp_path / "bins"
    bins.mkdir()
    other = load_simctl(tmp_path / "other")
    (tmp_path / "other" / "kwok" / "clusters" / other.CLUSTER).mkdir(parents=True)
    other.port_entry(bins, tmp_path / "other").parent.mkdir()
    record = {"state": str(tmp_path / "other"), "ports": [32766, 32764]}
    other.port_entry(bins, tmp_path / "other").write_text(json.dumps(record))
    gone = bins / "ports" / "gone.json"
    gone.write_text(json.dumps({"state": str(tmp_path / "gone"), "ports": [32765]}))
    simctl = load_simctl(tmp_path / "mine")
    monkeypatch.setattr(simctl, "port_free", lambda port: port != 32763)
    ports = simctl.pick_ports(bins)
    assert [int(ports[k]) for k in simctl.PORT_SETTINGS] == [32765, 32762, 32761, 32760, 32759, 32758]
    assert not gone.exists()
    mine = json.loads(simctl.port_entry(bins, tmp_path / "mine").read_text())
    assert mine == {"state": str(tmp_path / "mine"), "ports": [32765, 32762, 32761, 32760, 32759, 32758]}
    assert simctl.ports_of_other_clusters(bins) == {32766, 32764}
