"""The replay-mode node runtime's probe shards (sim/node_runtime.py) and the size-dependent settings of the
simulated cluster (sim/simctl.py scale_settings), without starting a cluster."""
import pickle
import string
import sys

import yaml
from simload import SIM, load

simctl = load("simctl")
node_runtime = sys.modules["node_runtime"]  # simctl.py imports it from sim/


def rendered_options(p5_nodes):
    values = {"SIM_BIN": "/bin", "SIM_K8S_VERSION": "1.36.3", **simctl.scale_settings(p5_nodes),
              **dict.fromkeys(simctl.PORT_SETTINGS, "32000")}
    return yaml.safe_load(string.Template((SIM / "kwok.yaml.in").read_text()).substitute(values))["options"]


def test_small_clusters_keep_upstream_rate_limits_and_large_ones_lift_them():
    limit = simctl.REAL_HEARTBEAT_MAX_NODES
    small, large = rendered_options(limit), rendered_options(limit + 1)
    assert (small["disableQPSLimits"], small["heartbeatFactor"]) == (False, 1)
    assert (large["disableQPSLimits"], large["heartbeatFactor"]) == (True, 5)


def test_shards_default_to_half_the_cores_and_follow_the_setting(monkeypatch):
    monkeypatch.delenv("SIM_RUNTIME_SHARDS", raising=False)
    monkeypatch.setattr(node_runtime.os, "cpu_count", lambda: 16)
    assert node_runtime.probe_shard_count() == 8
    monkeypatch.setattr(node_runtime.os, "cpu_count", lambda: 2)
    assert node_runtime.probe_shard_count() == 1
    monkeypatch.setenv("SIM_RUNTIME_SHARDS", "3")
    assert node_runtime.probe_shard_count() == 3
    monkeypatch.setenv("SIM_RUNTIME_SHARDS", "0")
    assert node_runtime.probe_shard_count() == 1


def probe_pod():
    """A probe pod as the runtime's watch hands it over: the API server's JSON, not a V1Pod."""
    container = {"name": "probe", "image": "x", "command": ["sh", "-c"],
                 "args": ['echo "probe on $NODE_NAME at $SIM_LEVEL with $EXTRA"; exit 3'],
                 "env": [{"name": "EXTRA", "value": "value"},
                         {"name": "FROM_FIELD", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}
    return {"metadata": {"name": "l0-probe-0", "namespace": "rlsv", "uid": "u-1",
                         "labels": {node_runtime.COMPONENT_LABEL: "probe"}},
            "spec": {"containers": [container], "nodeName": "p5-node-0"}}


class FakeCore:
    def __init__(self):
        self.patched = []

    def patch_namespaced_pod(self, name, ns, body, **kwargs):
        self.patched.append((ns, name, body))
        return type("Response", (), {"data": b"{}"})()


def test_a_probe_item_crosses_processes_and_its_command_becomes_the_pods_log(monkeypatch, tmp_path):
    envs = [{"name": "PATH", "value": "/usr/bin:/bin"}, {"name": "SIM_LEVEL", "value": "l0_infrastructure"}]
    item = pickle.loads(pickle.dumps(node_runtime.probe_item(probe_pod(), envs, tmp_path / "rlsv_l0-probe-0.log")))
    assert item["argv"][:2] == ["sh", "-c"] and item["env"] == {"EXTRA": "value"}
    applied, core = [], FakeCore()
    (tmp_path / "exec").mkdir()
    monkeypatch.setattr(node_runtime, "STATE", tmp_path)
    monkeypatch.setattr(node_runtime, "thread_apis", lambda: (core, "custom"))
    monkeypatch.setattr(node_runtime, "logs_object", lambda *args: applied.append(args))
    node_runtime.run_probe_pod(item)
    log = (tmp_path / "rlsv_l0-probe-0.log").read_text()
    assert log.endswith(" stdout F probe on p5-node-0 at l0_infrastructure with value\n")
    (custom, ns, name, owner, dest), = applied
    assert (custom, ns, name, owner[0]["uid"]) == ("custom", "rlsv", "l0-probe-0", "u-1")
    assert dest == tmp_path / "rlsv_l0-probe-0.log"
    assert core.patched == [("rlsv", "l0-probe-0", {"metadata": {"annotations": {node_runtime.PROBE_DONE: "true"}}})]


def test_the_watchs_json_pods_are_read_as_they_come():
    pod = probe_pod()
    assert node_runtime.is_probe_pod(pod) and node_runtime.pod_nodes(pod) == 1
    pod["spec"]["containers"][0]["command"] = ["python3"]
    assert not node_runtime.is_probe_pod(pod)
    pod["spec"]["containers"][0]["env"].append({"name": "RLSTACK_NODES", "value": "2"})
    assert node_runtime.pod_nodes(pod) == 2
    pod["metadata"]["labels"].update({node_runtime.LEVEL_LABEL: "l5_training_step", node_runtime.JOB_INDEX_LABEL: "1"})
    assert node_runtime.log_source(pod, "healthy") is None  # a multi-node Job's worker prints nothing read
    pod["metadata"]["labels"][node_runtime.JOB_INDEX_LABEL] = "0"
    assert node_runtime.log_source(pod, "healthy").name.startswith("l5-train-step")


def test_peers_are_not_listed_for_a_pod_of_one_node():
    class NoCalls:
        def __getattr__(self, name):
            raise AssertionError(f"{name} called")
    pod = probe_pod()
    pod["metadata"]["labels"]["batch.kubernetes.io/job-name"] = "l5"
    pod["status"] = {"phase": "Running"}
    node_runtime.mark_peers(NoCalls(), pod)


def test_a_logs_object_left_by_an_earlier_pod_of_the_same_name_becomes_this_pods():
    from kubernetes.client.exceptions import ApiException

    class Custom:
        def __init__(self):
            self.calls = []

        def create_namespaced_custom_object(self, group, version, ns, plural, body):
            self.calls.append(("create", plural, body["metadata"]["name"]))
            raise ApiException(status=409, reason="AlreadyExists")

        def patch_namespaced_custom_object(self, group, version, ns, plural, name, body):
            self.calls.append(("patch", plural, name, body["metadata"]["ownerReferences"][0]["uid"]))

    custom = Custom()
    node_runtime.logs_object(custom, "rlsv", "p", [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u-2"}],
                             node_runtime.Path("/x.log"))
    assert custom.calls == [("create", "logs", "p"), ("patch", "logs", "p", "u-2")]


def test_a_replayed_probe_pods_log_is_what_its_command_prints(monkeypatch, tmp_path):
    """Answered in the runtime's process, a probe entrypoint's log is byte for byte what running the pod's command
    prints with fakebin's python3 (the replayer) on PATH: the collection's own entrypoint, recorded output."""
    from ansible_collections.rlstack.validation.plugins.module_utils.workloads._probe_pods import probe_command
    import subprocess
    (tmp_path / "exec").mkdir()
    (tmp_path / "fakebin").mkdir()
    (tmp_path / "fakebin" / "python3").write_text(f'#!/bin/sh\nexec {sys.executable} {SIM / "replay.py"} "$@"\n')
    (tmp_path / "fakebin" / "python3").chmod(0o755)
    monkeypatch.setattr(node_runtime, "STATE", tmp_path)
    env = {"PATH": f"{tmp_path / 'fakebin'}:/usr/bin:/bin", "SIM_NODE": "p5-node-0",
           "SIM_INSTANCE_TYPE": "p5.48xlarge", "SIM_STATE": str(tmp_path)}
    for script, rc in (("probe_node.py", 0), ("probe_nothing_recorded.py", 127)):
        argv = probe_command("python3", script, {"node": "p5-node-0"})
        ran = subprocess.run(argv, env=env, cwd=tmp_path / "exec", capture_output=True, check=False)
        answered = node_runtime.replayed({"argv": argv}, env)
        assert answered == (ran.stdout + ran.stderr).decode()
        assert answered.rstrip().endswith("__rlstack_rc=%d" % rc)
    assert node_runtime.replayed({"argv": probe_command("bash", "x.sh", {})}, env) is None  # not replayed: it runs
