"""Probe pods run the probe as their entrypoint: the command, its log, and the outcome per target."""
import json
import subprocess
import sys

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _k8s_status as k8s
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _probe_pods


def run_entrypoint(tmp_path, body, params=None, launcher=sys.executable):
    script = tmp_path / "probe_x.py"
    script.write_text(body)
    cmd = _probe_pods.probe_command(launcher, str(script), {"node": "n1"} if params is None else params)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    # a pod's log holds stdout and stderr of the container together
    return proc.returncode, proc.stdout + proc.stderr


def outcome(log):
    stdout, stderr = _probe_pods.split_probe_log(log)
    return _probe_pods.probe_output(stdout, stderr=stderr)


def test_the_command_runs_the_probe_with_its_params_and_reports_its_exit_code(tmp_path):
    rc, log = run_entrypoint(tmp_path, (
        "import json, sys\n"
        "params = json.loads(sys.argv[1])\n"
        "print('warming up', file=sys.stderr)\n"
        "print(json.dumps({'node': params['node'], 'ok': True}))\n"
        "print('late noise on stderr', file=sys.stderr)\n"
        "sys.exit(3)\n"), {"node": "p5-node-7"})
    assert rc == 0  # the pod itself ends cleanly; the probe's code travels in the log
    stdout, stderr = _probe_pods.split_probe_log(log)
    assert "warming up" in stderr and "late noise on stderr" in stderr
    out = _probe_pods.probe_output(stdout, stderr=stderr)
    assert out["rc"] == 3
    assert out["data"] == {"node": "p5-node-7", "ok": True}
    assert out["status"] == "crashed"


def test_a_healthy_probe_is_ok(tmp_path):
    _rc, log = run_entrypoint(tmp_path, "import json\nprint(json.dumps({'gpus': 8}))\n")
    stdout, stderr = _probe_pods.split_probe_log(log)
    out = _probe_pods.probe_output(stdout, stderr=stderr)
    assert out["status"] == "ok" and out["rc"] == 0 and out["data"] == {"gpus": 8}


def test_a_launcher_of_several_words_is_split_into_arguments(tmp_path):
    _rc, log = run_entrypoint(tmp_path, "import json, sys\nprint(json.dumps({'argv': sys.argv[1:]}))\n",
                              params={"a": 1}, launcher=sys.executable + " -X utf8")
    out = outcome(log)
    assert out["data"]["argv"] == [json.dumps({"a": 1})]


def test_a_log_cut_short_before_the_marker_is_all_stdout():
    assert _probe_pods.split_probe_log("partial line") == ("partial line", "")
    assert _probe_pods.split_probe_log("") == ("", "")
    assert _probe_pods.split_probe_log(None) == ("", "")


def pod_log(target, phase="Succeeded", log=None, error=""):
    if log is None:
        log = "noise\n%s\n%s\n%s0\n" % (_probe_pods.STDOUT_MARKER, json.dumps({"node": target}), _probe_pods.RC_MARKER)
    return {"name": "rlsv-x-" + target, "labels": {k8s.TARGET_LABEL: k8s.dns_label(target)}, "phase": phase,
            "log": log, "error": error, "exit_code": 0}


def start(*states):
    return {"states": [dict({"problem": None, "pod": "rlsv-x-" + s["target"]}, **s) for s in states]}


TARGETS = [{"node": "p5-node-0"}, {"node": "p5-node-1"}, {"node": "P5_Node.2"}]


def test_every_target_gets_an_outcome():
    logs = [pod_log("p5-node-0"), pod_log("p5-node-1", phase="Running", log=""),
            pod_log("P5_Node.2")]
    res = _probe_pods.probe_results(logs, TARGETS, start({"target": "p5-node-0", "phase": "Succeeded"}), [], 900, 1000)
    assert res["p5-node-0"]["status"] == "ok" and res["p5-node-0"]["data"] == {"node": "p5-node-0"}
    assert res["p5-node-1"]["status"] == "timed_out"
    assert "still running after 1000 s" in res["p5-node-1"]["error"]
    # the target label is the node name as a DNS label; the outcome is keyed by the inventory's name
    assert res["P5_Node.2"]["status"] == "ok"


def test_pods_that_never_ran_are_not_started_with_the_problem_and_events():
    problem = {"kind": "image", "reason": "ImagePullBackOff", "message": "not found", "hint": "check the image"}
    st = start({"target": "p5-node-0", "phase": "Pending", "problem": problem},
               {"target": "p5-node-1", "phase": "Pending"})
    events = [{"item": {"pod": "rlsv-x-p5-node-0"},
               "resources": [{"message": "Back-off pulling"}, {"message": "Back-off pulling"}]}]
    res = _probe_pods.probe_results([], TARGETS[:2], st, events, 900)
    assert res["p5-node-0"] == {"status": "not_started", "data": None, "error": "ImagePullBackOff: not found",
                                "hint": "check the image", "events": ["Back-off pulling"]}
    assert res["p5-node-1"]["error"] == "the probe pod did not start within 900 s (Pending)"
    assert "out of GPUs" in res["p5-node-1"]["hint"]


def test_a_probe_still_running_on_a_node_gone_not_ready_names_the_node():
    node = {"metadata": {"name": "p5-node-0"}, "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "Unknown", "message": "Kubelet stopped posting"}]}}
    running = pod_log("p5-node-0", phase="Running", log="")
    res = _probe_pods.probe_results([running], TARGETS[:1], start({"target": "p5-node-0", "phase": "Running"}), [], 60, 150,
                                    nodes=[node])
    assert res["p5-node-0"]["status"] == "timed_out"
    assert res["p5-node-0"]["error"] == ("the probe did not finish within 150 s: node p5-node-0 is NotReady "
                                         "(Kubelet stopped posting)")
    # its log could not be read either (the node's agent serves it): the node is still the cause
    unread = pod_log("p5-node-0", phase="Running", log="", error="ReadTimeoutError")
    res = _probe_pods.probe_results([unread], TARGETS[:1], start({"target": "p5-node-0", "phase": "Running"}), [], 60, 150,
                                    nodes=[node])
    assert res["p5-node-0"]["status"] == "not_started"
    assert "node p5-node-0 is NotReady" in res["p5-node-0"]["error"]


def test_a_log_that_could_not_be_read_says_so_and_names_the_permission():
    denied = 'HTTP 403: pods "rlsv-x-p5-node-0" is forbidden: cannot get resource "pods/log"'
    res = _probe_pods.probe_results([pod_log("p5-node-0", log="", error=denied)], TARGETS[:1],
                                    start({"target": "p5-node-0", "phase": "Succeeded"}), [], 900)
    assert res["p5-node-0"]["status"] == "no_output"
    assert "403" in res["p5-node-0"]["error"] and "pods/log" in res["p5-node-0"]["hint"]
    # a kubelet that does not answer is not a permission problem (tests/unit/fixtures/k8s/kubelet_unreachable_log.json)
    unreachable = ('HTTP 500: Get "https://localhost:32763/containerLogs/default/rlsv-x-p5-node-0/probe": '
                   'net/http: TLS handshake timeout')
    res = _probe_pods.probe_results([pod_log("p5-node-0", log="", error=unreachable)], TARGETS[:1],
                                    start({"target": "p5-node-0", "phase": "Succeeded"}), [], 900)
    assert "could not reach the kubelet" in res["p5-node-0"]["error"], res
    assert "port 10250" in res["p5-node-0"]["hint"] and "pods/log" not in res["p5-node-0"]["hint"]


def test_a_pod_killed_before_its_probe_printed_is_crashed_or_no_output():
    killed = pod_log("p5-node-0", phase="Failed", log="Killed\n")
    st = start({"target": "p5-node-0", "phase": "Failed",
                "problem": {"kind": "failed", "reason": "OOMKilled", "message": "container exited with code 137"}})
    res = _probe_pods.probe_results([killed], TARGETS[:1], st, [], 900)
    assert res["p5-node-0"]["status"] == "no_output"
    printed = pod_log("p5-node-0", phase="Failed")
    res = _probe_pods.probe_results([printed], TARGETS[:1], st, [], 900)
    assert res["p5-node-0"]["status"] == "crashed"
    assert "container exited with code 137" in res["p5-node-0"]["error"]


@pytest.mark.parametrize("params", [{}, {"node": "a b", "quote": "it's \"x\""}])
def test_params_survive_the_shell(tmp_path, params):
    _rc, log = run_entrypoint(tmp_path, "import json, sys\nprint(json.dumps(json.loads(sys.argv[1])))\n", params)
    assert outcome(log)["data"] == params


def test_probe_pods_makes_one_pod_per_target_from_the_rendered_one():
    base = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "rlsv-run-l0", "labels": {"app.kubernetes.io/component": "probe"}},
            "spec": {"tolerations": [], "containers": [{
                "name": "probe", "command": _probe_pods.probe_command("python3", "/opt/p.py", {"timeout_s": 5}),
                "resources": {"limits": {"cpu": "1"}}}]}}
    targets = [{"node": "P5_Node.2", "gpus": 8, "efa": 32}, {"node": "g6-node-0", "gpus": 1}, {"node": "cpu-0"}]
    pods = _probe_pods.probe_pods(base, targets, "rlsv-run-l0")
    assert [p["metadata"]["name"] for p in pods] == ["rlsv-run-l0-p5-node-2", "rlsv-run-l0-g6-node-0",
                                                     "rlsv-run-l0-cpu-0"]
    assert [p["metadata"]["labels"][k8s.TARGET_LABEL] for p in pods] == ["p5-node-2", "g6-node-0", "cpu-0"]
    assert pods[0]["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "P5_Node.2"}
    limits = {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}
    assert pods[0]["spec"]["containers"][0]["resources"] == {"limits": limits}
    assert pods[1]["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 1}}
    assert "resources" not in pods[2]["spec"]["containers"][0]
    # the node reaches the probe as it did when the template was rendered per target
    assert pods[0]["spec"]["containers"][0]["command"] == _probe_pods.probe_command(
        "python3", "/opt/p.py", {"timeout_s": 5, "node": "P5_Node.2"})
    assert json.loads(pods[2]["spec"]["containers"][0]["command"][-1]) == {"node": "cpu-0", "timeout_s": 5}
    # the rendered pod is not changed, and every pod is its own copy
    assert base["metadata"]["name"] == "rlsv-run-l0" and "nodeSelector" not in base["spec"]
    assert pods[0]["spec"]["tolerations"] is not pods[1]["spec"]["tolerations"]
    lost = [t for t in pods[0]["spec"]["tolerations"] if t["key"] in k8s._diagnose.NOT_READY_TAINTS]
    assert [t["tolerationSeconds"] for t in lost] == [30, 30]


def test_a_probe_pod_tolerates_a_lost_node_for_30_s_unless_the_user_said_otherwise():
    gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    assert _probe_pods.lost_node_tolerations([gpu]) == [gpu] + [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 30}]
    # A blanket toleration (no key) matches the taints too, but the least tolerationSeconds among the matching
    # ones wins (getMinTolerationTime), so ours still bound it.
    blanket = {"operator": "Exists"}
    assert [t.get("key") for t in _probe_pods.lost_node_tolerations([blanket])] == [None] + list(k8s._diagnose.NOT_READY_TAINTS)
    # The user's own toleration of a lost node stays as written, and only the other key is added.
    theirs = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
              "tolerationSeconds": 600}
    out = _probe_pods.lost_node_tolerations([theirs])
    assert out[0] == theirs
    assert [t["key"] for t in out] == ["node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready"]
    assert _probe_pods.lost_node_tolerations(None)[0]["tolerationSeconds"] == 30


OUTCOMES = {"p5-node-0": {"status": "ok", "data": {"gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}]},
                          "error": None},
            "p5-node-1": {"status": "not_started", "error": "0/2 nodes are available: Insufficient nvidia.com/gpu",
                          "hint": "é"}}


def test_outcomes_travel_as_compact_json_text_and_read_back():
    text = _probe_pods.outcomes_text(OUTCOMES)
    assert isinstance(text, str) and ", " not in text and "é" in text
    assert _probe_pods.outcomes_of(text) == OUTCOMES
    assert _probe_pods.outcomes_of(OUTCOMES) is OUTCOMES  # the host transport's dict, as it is
    assert _probe_pods.outcomes_of(None) == {} and _probe_pods.outcomes_of("") == {}


@pytest.mark.parametrize("text", ["[1]", "3", "not json"])
def test_outcomes_that_are_no_json_object_raise(text):
    with pytest.raises(ValueError):
        _probe_pods.outcomes_of(text)
