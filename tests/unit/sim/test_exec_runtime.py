"""sim/exec_runtime.py, the exec mode of the simulated node runtime: what it does without a cluster (the cluster
side is tests/sim/test_sim_exec_host.py)."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

SIM = Path(__file__).resolve().parents[3] / "sim"
SPEC = importlib.util.spec_from_file_location("sim_exec_runtime", SIM / "exec_runtime.py")
ER = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(ER)
SYSTEM = {"kube-system", "gpu-operator"}


def pod_stage(name, exprs=None):
    return {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage", "metadata": {"name": name},
            "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"},
                     "selector": {"matchExpressions": list(exprs or [])}, "next": {}}}


def test_expand_follows_kubernetes_rules():
    env = {"A": "1", "B": "two"}
    assert ER.expand("$(A)-$(B)-$(C)-$$(A)", env) == "1-two-$(C)-$(A)"


def test_field_value_reads_the_downward_api_paths():
    pod = {"metadata": {"name": "p", "labels": {"rlstack.io/level": "l5"}}, "spec": {"nodeName": "n1"},
           "status": {"hostIP": "10.0.0.1", "podIPs": [{"ip": "10.1.0.5"}]}}
    assert ER.field_value(pod, "spec.nodeName") == "n1"
    assert ER.field_value(pod, "metadata.labels['rlstack.io/level']") == "l5"
    assert ER.field_value(pod, "status.hostIP") == "10.0.0.1"
    assert ER.field_value(pod, "status.podIPs") == "10.1.0.5"


def test_configure_records_the_mode_and_refuses_another_on_a_running_cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("SIM_EXEC_GPUS", "0, 1")
    monkeypatch.setenv("SIM_EXEC_VOLUMES", "fsx-pv=/data/fsx")
    assert ER.configure(tmp_path, "host") is None
    assert ER.settings(tmp_path) == {"mode": "host", "gpus": ["0", "1"], "volumes": {"fsx-pv": "/data/fsx"}}
    assert ER.configure(tmp_path, "host") is None
    assert "stop it first with `make sim-down`" in ER.configure(tmp_path, "replay")
    assert "must be 'replay' or 'host'" in ER.configure(tmp_path / "other", "docker")


def test_stages_are_unchanged_in_replay_mode(tmp_path):
    stage = pod_stage("sim-outcome-default")
    assert ER.adapt_stage(stage, tmp_path, SYSTEM) is stage


def test_host_mode_keeps_kwok_pod_stages_off_the_pods_it_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("SIM_EXEC_GPUS", "")
    ER.configure(tmp_path, "host")
    gate = '(.metadata.annotations["sim.rlstack.io/exec"] // .metadata.namespace)'
    outcome = ER.adapt_stage(pod_stage("sim-outcome-default", [{"key": "x", "operator": "Exists"}]), tmp_path, SYSTEM)
    want = {"key": gate, "operator": "In", "values": ["gpu-operator", "kube-system"]}
    assert outcome["spec"]["selector"]["matchExpressions"][-1] == want
    ready = ER.adapt_stage(pod_stage("pod-ready"), tmp_path, SYSTEM)
    assert ready["spec"]["selector"]["matchExpressions"][-1]["values"] == ["gpu-operator", "kube-system", "start"]
    delete = pod_stage("pod-delete")
    assert ER.adapt_stage(delete, tmp_path, SYSTEM) is delete
    node_stage = dict(pod_stage("node-initialize"), spec={"resourceRef": {"kind": "Node"}})
    assert ER.adapt_stage(node_stage, tmp_path, SYSTEM) is node_stage


def test_remove_empty_tree_leaves_what_someone_else_put_there(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "mountpoint").touch()
    ER.remove_empty_tree(tmp_path / "a")
    assert not (tmp_path / "a").exists()
    (tmp_path / "c" / "d").mkdir(parents=True)
    (tmp_path / "c" / "d" / "data").write_text("kept")
    ER.remove_empty_tree(tmp_path / "c")
    assert (tmp_path / "c" / "d" / "data").read_text() == "kept"


def _can_unshare_mounts():
    try:
        return subprocess.run(["unshare", "--mount", "--fork", "true"], capture_output=True, timeout=10,
                              check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.skipif(not _can_unshare_mounts(), reason="needs unshare --mount (root or user namespaces)")
def test_init_binds_volumes_at_their_paths_with_a_private_tmp(tmp_path):
    vol = tmp_path / "vol"
    vol.mkdir()
    (vol / "config.yaml").write_text("datasets: /fsx\n")
    (tmp_path / "podtmp").mkdir()
    spec = {"binds": [[str(vol), "/tmp/mounted-config", True]], "tmp": str(tmp_path / "podtmp"),
            "argv": ["sh", "-c", "cat /tmp/mounted-config/config.yaml; touch /tmp/mounted-config/x || echo read-only; "
                                 "echo $GREETING; pwd; exit 7"],
            "env": {"PATH": "/usr/bin:/bin", "GREETING": "hi"}, "cwd": "/tmp/work"}
    (tmp_path / "init.json").write_text(json.dumps(spec))
    proc = subprocess.run(["unshare", "--mount", "--propagation", "private", "--fork", "--", sys.executable,
                           str(SIM / "exec_runtime.py"), "init", str(tmp_path / "init.json")],
                          capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 7, proc.stderr
    assert proc.stdout.split() == ["datasets:", "/fsx", "read-only", "hi", "/tmp/work"]
    # the pod's /tmp was its own directory
    assert (tmp_path / "podtmp" / "work").is_dir() and not Path("/tmp/work").exists()
