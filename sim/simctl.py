"""simctl: the simulated EKS GPU cluster used by `make demo` and the tests.

A real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) built from source,
kwok faking GPU nodes and kubelets, the real Kubeflow MPI operator running outside the cluster, and a
small node runtime that answers `exec` and `logs` with outputs recorded on real GPU machines.

    simctl.py up [--scenario NAME] [--nodes N] [--exec replay|host]   start (or reuse) the cluster with N p5 nodes,
                                       apply the scenario; --exec host runs pods' commands for real (exec_runtime.py)
    simctl.py scenario NAME            switch the scenario of a running cluster
    simctl.py down                     stop every process by its recorded pid and remove the state
    simctl.py status                   show what runs
    simctl.py runtime                  (internal) the node runtime: Exec/Logs objects per pod
    simctl.py relay ...                (internal) TCP <-> unix socket relay for the MPI operator
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import shutil
import signal
import string
import subprocess
import sys
import threading
import time
from pathlib import Path

SIM = Path(__file__).resolve().parent
if str(SIM) not in sys.path:  # the unit tests load this file by path
    sys.path.insert(0, str(SIM))
import exec_runtime  # noqa: E402  sim/exec_runtime.py: the exec mode (SIM_EXEC=host); this file keeps only its hooks

ROOT = SIM.parent
STATE = Path(os.environ.get("SIM_STATE", ROOT / ".sim"))
CLUSTER = "rlstack-sim"
MANAGED = {"app.kubernetes.io/managed-by": "rlstack.validation"}
LEVEL_LABEL = "rlstack.io/level"
ROLE_LABEL = "training.kubeflow.org/job-role"
# A TrainJob's pods carry JobSet's replicated-job name instead (launcher, node; jobset v0.12.0 jobset_types.go).
JOBSET_ROLE_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
ROLE_EXPR = f'(.metadata.labels["{ROLE_LABEL}"] // .metadata.labels["{JOBSET_ROLE_LABEL}"] // "")'
# A TrainJob's node pods run sshd until the TrainJob ends, like MPIJob workers: no outcome stage ends them.
NOT_A_TRAINJOB_NODE = {"key": f'(.metadata.labels["{JOBSET_ROLE_LABEL}"] // "")', "operator": "NotIn", "values": ["node"]}
EXAMPLE_LABEL = "rlstack.io/example"  # the L5/L6 example a Job pod runs (runner templates/job.yml.j2)
COMPONENT_LABEL = "app.kubernetes.io/component"
PROBE_DONE = "sim.rlstack.io/probe-done"
SYSTEM_NAMESPACES = {"kube-system", "kube-public", "kube-node-lease", "gpu-operator", "mpi-operator"}
T0 = time.monotonic()
MAX_P5_NODES = 1024
ISOLATE_LEVEL = "isolate"  # the level label of a bad-node isolation run's pair MPIJobs (roles/isolate)
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
PAIR_CRASH_LABEL = "sim.rlstack.io/pair-crash"  # set by the runtime on a pair launcher whose NCCL crashes
# A multi-node L5/L6 Job (Indexed, RLSTACK_NODES > 1: the runner's templates/job.yml.j2) runs until all its pods
# run, as a Ray head waits for its workers (RLinf 0.3.0 cluster.py:355-360, "Waiting for N nodes to be ready"):
# the runtime marks its pods PEERS_RUNNING then, and the default outcome ends only marked ones. A scenario's own
# outcome for the example ends its pods whether or not their peers run (a run configured for fewer nodes).
PEERS_RUNNING = "sim.rlstack.io/peers-running"
JOB_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"
NODES_EXPR = '([.spec.containers[].env[]? | select(.name == "RLSTACK_NODES") | .value][0] // "1")'
WAITS_FOR_PEERS = {"key": f'if {NODES_EXPR} == "1" then "alone" else (.metadata.annotations["{PEERS_RUNNING}"] '
                          f'// "waiting") end', "operator": "NotIn", "values": ["waiting"]}


def log(msg: str) -> None:
    print(f"[sim {time.monotonic() - T0:5.1f}s] {msg}", file=sys.stderr, flush=True)


def die(msg: str) -> None:
    print(f"sim: {msg}", file=sys.stderr)
    sys.exit(1)


def versions() -> dict:
    out = {}
    for line in (SIM / "versions.env").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
    return out


def bin_dir() -> Path:
    v = versions()
    root = os.environ.get("SIM_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "rlstack-sim")
    return Path(root) / (f"k{v['SIM_K8S_VERSION']}-e{v['SIM_ETCD_VERSION']}-kwok{v['SIM_KWOK_VERSION']}"
                         f"-mpi{v['SIM_MPI_OPERATOR_VERSION']}")


BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "etcd", "etcdctl",
            "kwok", "kwokctl", "mpi-operator")


def gomodcache() -> Path:
    # $GOMODCACHE first: on a machine without Go (the GPU machine) sim/device_up.sh points it at the module files
    # `make sim-pack` carried (the stage YAMLs and CRDs of the pinned releases).
    if os.environ.get("GOMODCACHE"):
        return Path(os.environ["GOMODCACHE"])
    return Path(subprocess.run(["go", "env", "GOMODCACHE"], check=True, capture_output=True, text=True).stdout.strip())


def module_dir(module: str, version: str) -> Path:
    path = gomodcache() / f"{module}@v{version}"
    if not path.is_dir():
        subprocess.run(["go", "mod", "download", f"{module}@v{version}"], check=True,
                       env={**os.environ, "GOFLAGS": ""}, cwd=str(STATE))
    return path


def load_yaml_docs(path: Path) -> list:
    """Objects of a YAML file: several documents, or one document holding a list of objects."""
    import yaml
    out = []
    for doc in yaml.safe_load_all(path.read_text()):
        out.extend(doc if isinstance(doc, list) else [doc] if doc else [])
    return out


def scenarios() -> dict:
    import yaml
    return yaml.safe_load((SIM / "scenarios.yaml").read_text())


# --------------------------------------------------------------------------- processes

def pid_file(name: str) -> Path:
    return STATE / "pids" / f"{name}.pid"


def alive(pid: int) -> bool:
    if pid <= 0:  # os.kill(0, ...) would signal our own process group
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def start_process(name: str, argv: list, env: dict | None = None) -> int:
    (STATE / "pids").mkdir(parents=True, exist_ok=True)
    (STATE / "logs").mkdir(parents=True, exist_ok=True)
    out = open(STATE / "logs" / f"{name}.log", "ab")
    proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, env=env or os.environ.copy(), cwd=str(STATE))
    pid_file(name).write_text(str(proc.pid))
    return proc.pid


def stop_process(name: str) -> None:
    path = pid_file(name)
    if not path.exists():
        return
    pid = int(path.read_text().strip() or 0)
    if pid and alive(pid):
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if not alive(pid):
                break
    path.unlink(missing_ok=True)


# --------------------------------------------------------------------------- Kubernetes helpers

def kubeconfig() -> Path:
    return STATE / "kubeconfig"


def clients():
    from kubernetes import client, config
    from kubernetes.dynamic import DynamicClient
    api = config.new_client_from_config(config_file=str(kubeconfig()))
    return client, api, DynamicClient(api)


def apply(dyn, obj: dict) -> None:
    obj = exec_runtime.adapt_stage(obj, STATE, SYSTEM_NAMESPACES)  # exec mode: kwok's pod stages skip the pods it runs
    resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
    meta = obj["metadata"]
    kwargs = {"body": obj, "name": meta["name"], "field_manager": "rlstack-sim", "force_conflicts": True}
    if resource.namespaced:
        kwargs["namespace"] = meta.get("namespace", "default")
    resource.server_side_apply(**kwargs)


def wait_for(what: str, predicate, timeout: float, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as exc:  # the API may still be starting
            last_error = exc
        time.sleep(interval)
    die(f"timed out after {timeout:.0f}s waiting for {what}" + (f" (last error: {last_error})" if last_error else ""))


# --------------------------------------------------------------------------- stages

def stage(name: str, selector: dict, status_template: str, delay: str | None = None, weight: int = 1,
          event: dict | None = None, scenario: bool = True) -> dict:
    spec = {"resourceRef": {"apiGroup": "v1", "kind": "Pod"}, "selector": selector, "weight": weight,
            "next": {"statusTemplate": status_template}}
    if delay:
        spec["delay"] = {"durationMilliseconds": int(go_duration_ms(delay)),
                         "durationFrom": {"expressionFrom": '.metadata.annotations["sim.rlstack.io/run-for"]'}}
    if event:
        spec["next"]["event"] = event
    labels = {"sim.rlstack.io/stage": "scenario" if scenario else "base"}
    return {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage", "metadata": {"name": name, "labels": labels},
            "spec": spec}


def go_duration_ms(text: str) -> float:
    units = {"ms": 1, "s": 1000, "m": 60000}
    for unit in ("ms", "s", "m"):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    return float(text)


TERMINATED = """{{ $now := Now }}
phase: @PHASE@
conditions:
- {type: Ready, status: "False", lastTransitionTime: {{ $now | Quote }}, reason: PodCompleted}
- {type: ContainersReady, status: "False", lastTransitionTime: {{ $now | Quote }}, reason: PodCompleted}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: false
  restartCount: 0
  started: false
  state:
    terminated:
      exitCode: @EXIT_CODE@
      reason: @REASON@
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
"""

# Deterministic (no Now): re-applying it changes nothing, and with weight 100 it keeps beating pod-ready.
IMAGE_PULL_BACKOFF = """phase: Pending
conditions:
- {type: PodScheduled, status: "True", lastTransitionTime: {{ .metadata.creationTimestamp | Quote }}}
- {type: Ready, status: "False", lastTransitionTime: {{ .metadata.creationTimestamp | Quote }}, reason: ContainersNotReady,
   message: "containers with unready status"}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: ""
  ready: false
  restartCount: 0
  started: false
  state:
    waiting:
      reason: ImagePullBackOff
      message: {{ printf "Back-off pulling image %q: ErrImagePull: failed to pull and unpack image %q: not found" .image .image | Quote }}
{{ end }}
"""


def terminated(phase: str, exit_code: int, reason: str) -> str:
    return (TERMINATED.replace("@PHASE@", phase).replace("@EXIT_CODE@", str(exit_code))
            .replace("@REASON@", reason))


def outcome_key(key: str) -> tuple:
    """A scenario key 'level[/role][@example]' as (level, role, example); '' where a part is absent."""
    level_role, _sep, example = key.partition("@")
    level, _sep, role = level_role.partition("/")
    return level, role, example


def outcome_selector(key: str, exclude_levels: list | None = None) -> dict:
    """Pods of a Job (Job pods and MPIJob launchers) that are Running, for one level (key 'level[/launcher]',
    or 'level@example' for the pods of one L5/L6 example).

    A pod belongs to a Job when the Job controller labelled it (batch.kubernetes.io/job-name); an owner
    reference of kind Job is not enough, because the collection's anchor Job owns every object of a run."""
    exprs = [{"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
             {"key": ".status.phase", "operator": "In", "values": ["Running"]},
             {"key": '.metadata.labels["batch.kubernetes.io/job-name"]', "operator": "Exists"}, NOT_A_TRAINJOB_NODE]
    labels = dict(MANAGED)
    if key:
        level, role, example = outcome_key(key)
        exprs.append({"key": f'.metadata.labels["{LEVEL_LABEL}"]', "operator": "In", "values": [level]})
        if role:
            exprs.append({"key": ROLE_EXPR, "operator": "In", "values": [role]})
        if example:
            exprs.append({"key": f'.metadata.labels["{EXAMPLE_LABEL}"]', "operator": "In", "values": [example]})
    for level in exclude_levels or []:
        exprs.append({"key": f'.metadata.labels["{LEVEL_LABEL}"]', "operator": "NotIn", "values": [level]})
    return {"matchLabels": labels, "matchExpressions": exprs}


def scenario_stages(name: str) -> list:
    spec = scenarios()[name]
    outcomes = spec.get("outcomes") or {}
    stages = []
    if spec.get("image_pull_error"):
        stages.append(stage(
            "sim-image-pull-backoff",
            {"matchLabels": dict(MANAGED), "matchExpressions": [
                {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
                {"key": ".status.phase", "operator": "In", "values": ["Pending"]},
                {"key": ".spec.nodeName", "operator": "Exists"}]},
            IMAGE_PULL_BACKOFF, weight=100,
            event={"type": "Warning", "reason": "Failed",
                   "message": "Failed to pull image: rpc error: code = NotFound desc = failed to pull and unpack "
                              "image: not found"}))
    # Keys overridden by this scenario are excluded from the default "succeeds after a few seconds" stage,
    # because kwok picks at random between two matching stages of positive weight.
    overridden_levels = sorted({key for key in outcomes if "/" not in key and "@" not in key})
    for key, outcome in sorted(outcomes.items()):
        template = terminated(outcome["phase"], int(outcome["exit_code"]), outcome.get("reason", "Error"))
        stages.append(stage("sim-outcome-" + key.replace("/", "-").replace("@", "-").replace("_", "-"), outcome_selector(key),
                            template, delay=outcome.get("after", "3s"), weight=100))
    # Default: a Job pod (training step, evaluation, MPIJob launcher) runs for a few seconds, then succeeds.
    default = stage("sim-outcome-default", outcome_selector("", overridden_levels),
                    terminated("Succeeded", 0, "Completed"), delay="3s", weight=10)
    default["spec"]["selector"]["matchExpressions"].append(WAITS_FOR_PEERS)
    # Launcher keys overridden (e.g. "l3_multi_gpu/launcher") and example keys ("l5_training_step@one")
    # must be excluded from the default too.
    for key in outcomes:
        level, role, example = outcome_key(key)
        if example:
            default["spec"]["selector"]["matchExpressions"].append(
                {"key": f'.metadata.labels["{LEVEL_LABEL}"] + "@" + (.metadata.labels["{EXAMPLE_LABEL}"] // "")',
                 "operator": "NotIn", "values": [f"{level}@{example}"]})
        elif role:
            default["spec"]["selector"]["matchExpressions"].append(
                {"key": f'.metadata.labels["{LEVEL_LABEL}"] + "/" + {ROLE_EXPR}',
                 "operator": "NotIn", "values": [key]})
    if any(isinstance(e, dict) and e.get("crash") for e in (spec.get("pairs") or {}).values()):
        # A pair launcher the runtime marked (a pair with a node whose NCCL crashes) fails like nccl-crash's.
        crash = outcome_selector("")
        crash["matchExpressions"].append({"key": f'.metadata.labels["{PAIR_CRASH_LABEL}"]', "operator": "Exists"})
        stages.append(stage("sim-outcome-pair-crash", crash, terminated("Failed", 139, "Error"), delay="3s",
                            weight=100))
        default["spec"]["selector"]["matchExpressions"].append(
            {"key": f'.metadata.labels["{PAIR_CRASH_LABEL}"]', "operator": "DoesNotExist"})
    stages.append(default)
    return stages


def apply_scenario(name: str, dyn=None, core=None) -> None:
    table = scenarios()
    if name not in table:
        die(f"unknown scenario {name!r}; known: {', '.join(table)}")
    if dyn is None:
        client, api, dyn = clients()
        core = client.CoreV1Api(api)
    stages_api = dyn.resources.get(api_version="kwok.x-k8s.io/v1alpha1", kind="Stage")
    wanted = scenario_stages(name)
    wanted_names = {s["metadata"]["name"] for s in wanted}
    for item in stages_api.get(label_selector="sim.rlstack.io/stage=scenario").items:
        if item.metadata.name not in wanted_names:
            stages_api.delete(name=item.metadata.name)
    for obj in wanted:
        apply(dyn, obj)
    cordon = (table[name].get("cordon") or {})
    for node in core.list_node().items:
        labels = node.metadata.labels or {}
        should = bool(cordon) and all(labels.get(k) == v for k, v in cordon.items())
        if bool(node.spec.unschedulable) != should:
            core.patch_node(node.metadata.name, {"spec": {"unschedulable": should}})
    apply_node_health(table, name, core)
    # What replay.py needs of the scenario, as JSON: it runs once per probe pod (256 at 256 nodes), and
    # parsing scenarios.yaml there cost each one a YAML import and parse.
    (STATE / "replay.json").write_text(json.dumps({
        "scenario": name, "replay": table[name].get("replay") or {},
        "probe_duration_s": table[name].get("probe_duration_s") or {}}) + "\n")
    (STATE / "scenario").write_text(name + "\n")
    log(f"scenario {name}: {table[name]['description'].strip()}")


def apply_node_health(table: dict, name: str, core) -> None:
    """A scenario's node_conditions / node_labels ({node: [condition]} / {node: {label: value}}): set them on
    the nodes; the conditions and labels other scenarios set are removed first."""
    owned_types = {c["type"] for spec in table.values() for conds in (spec.get("node_conditions") or {}).values()
                   for c in conds}
    owned_labels = {k for spec in table.values() for labels in (spec.get("node_labels") or {}).values() for k in labels}
    conditions = table[name].get("node_conditions") or {}
    labels = table[name].get("node_labels") or {}
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for node in core.list_node().items:
        nname = node.metadata.name
        body = core.api_client.sanitize_for_serialization(node)  # camelCase, RFC 3339 times
        current = body["status"].get("conditions") or []
        wanted = [c for c in current if c["type"] not in owned_types]
        wanted += [dict(c, lastHeartbeatTime=now, lastTransitionTime=now) for c in conditions.get(nname, [])]
        if wanted != current:
            body["status"]["conditions"] = wanted
            core.replace_node_status(nname, body)
        have = node.metadata.labels or {}
        patch = {k: None for k in owned_labels if k in have and k not in labels.get(nname, {})}
        patch.update({k: v for k, v in labels.get(nname, {}).items() if have.get(k) != v})
        if patch:
            core.patch_node(nname, {"metadata": {"labels": patch}})


# --------------------------------------------------------------------------- up / down / status

def kwok_env() -> dict:
    # kwokctl edits the kubeconfig $KUBECONFIG names (delete cluster removes its context there): never
    # another cluster's, such as the shared sim's while a test runs a cluster of its own beside it.
    return {**os.environ, "KWOK_WORKDIR": str(STATE / "kwok"), "KWOK_RUNTIME": "binary",
            "KUBECONFIG": str(STATE / "kwok" / "kwokctl-kubeconfig")}


# Up to this many p5 nodes the simulated nodes heartbeat as a kubelet does (sim/kwok.yaml.in says why).
REAL_HEARTBEAT_MAX_NODES = 32


def heartbeat_settings(p5_nodes: int) -> dict:
    """kwokctl's heartbeatFactor for a cluster of `p5_nodes`, and the node status period it is applied to: the
    kubelet's timing (factor 1, status every 50 s) up to REAL_HEARTBEAT_MAX_NODES, kwokctl's default factor 5 on
    status every 10 s (also 50 s) beyond."""
    if p5_nodes <= REAL_HEARTBEAT_MAX_NODES:
        return {"SIM_HEARTBEAT_FACTOR": "1", "SIM_NODE_STATUS_MS": "50000"}
    return {"SIM_HEARTBEAT_FACTOR": "5", "SIM_NODE_STATUS_MS": "10000"}


def render(template: Path, out: Path, extra: dict) -> None:
    text = string.Template(template.read_text()).substitute({**os.environ, **extra})
    out.write_text(text)


def cluster_running() -> bool:
    if not kubeconfig().exists():
        return False
    try:
        client, api, _dyn = clients()
        client.VersionApi(api).get_code(_request_timeout=3)
        return True
    except Exception:
        return False


def ensure_built() -> Path:
    bins = bin_dir()
    missing = [b for b in BINARIES if not (bins / b).exists()]
    if missing:
        log(f"building {', '.join(missing)} (first run on this machine; cached in {bins})")
        subprocess.run(["bash", str(SIM / "build.sh")], check=True)
    return bins


def cluster_nodes(p5_nodes: int) -> list:
    """The cluster's Node objects: sim/cluster/nodes.yaml, its p5.48xlarge nodes grown to `p5_nodes`.

    Extra p5 nodes are copies of p5-node-0 named p5-node-<i>, each with its own /24 pod CIDR out of
    10.65.0.0/16 and up (the file's own nodes keep 10.64.x.0/24); the probe replay finds their
    recordings by instance type, so every copy answers like a healthy p5 unless a scenario names it.
    """
    if not 1 <= p5_nodes <= MAX_P5_NODES:
        die(f"SIM_NODES must be between 1 and {MAX_P5_NODES}, not {p5_nodes}")
    objs = load_yaml_docs(SIM / "cluster" / "nodes.yaml")
    p5 = [o for o in objs if o["metadata"]["labels"].get("node.kubernetes.io/instance-type") == "p5.48xlarge"]
    rest = [o for o in objs if o not in p5]
    template = p5[0]
    out = p5[:p5_nodes]
    for i in range(len(out), p5_nodes):
        node = json.loads(json.dumps(template))
        name = f"p5-node-{i}"
        cidr = f"10.{65 + i // 256}.{i % 256}.0/24"
        node["metadata"]["name"] = name
        node["metadata"]["labels"]["kubernetes.io/hostname"] = name
        node["spec"]["podCIDR"] = cidr
        node["spec"]["podCIDRs"] = [cidr]
        out.append(node)
    return out + rest


def all_nodes_ready(core, count: int | None = None) -> bool:
    """Every node Ready, and `count` of them when given."""
    got = core.list_node(_request_timeout=10).items
    return (count is None or len(got) == count) and all(
        any(c.type == "Ready" and c.status == "True" for c in (n.status.conditions or [])) for n in got)


def daemonsets_settled(apps, core, timeout: float) -> None:
    """Wait until the DaemonSet controller has placed a pod on every node it counts and kwok has started them:
    each DaemonSet's counts alike three lists in a row, scheduled as desired, no DaemonSet pod Pending. At 256
    nodes that takes tens of seconds after the add-ons are applied, and an L0 run earlier rightly failed ("130 of
    133 pods ready", 2026-12-04). Readiness is not required: a scenario may make a plugin's pod not ready."""
    seen = []

    def settled():
        counts = sorted((d.metadata.namespace, d.metadata.name, d.status.desired_number_scheduled or 0,
                         d.status.current_number_scheduled or 0, d.status.number_ready or 0)
                        for d in apps.list_daemon_set_for_all_namespaces(_request_timeout=30).items)
        pending = [p for p in core.list_pod_for_all_namespaces(field_selector="status.phase=Pending",
                                                               _request_timeout=30).items
                   if any(o.kind == "DaemonSet" for o in p.metadata.owner_references or [])]
        seen[:] = (seen + [counts])[-3:]
        return (not pending and all(c[2] == c[3] for c in counts)
                and len(seen) == 3 and seen[0] == seen[1] == seen[2])
    wait_for("every DaemonSet's pods placed and started", settled, timeout, interval=1.0)


def resync_pod_readiness(core) -> int:
    """Mark Ready again the running pods that the node lifecycle controller marked not ready while their node was
    lost (MarkPodsNotReady: Ready False, ContainersReady still True). A kubelet that reconnects reports its pods'
    status again and they are Ready; kwok sets a pod's conditions once, when it starts it, so a node lost past the
    50 s grace period (tests/faults) would leave the DaemonSets' pods not ready for every later test."""
    fixed = 0
    for pod in core.list_pod_for_all_namespaces(_request_timeout=30).items:
        conditions = {c.type: c for c in pod.status.conditions or []}
        ready, containers = conditions.get("Ready"), conditions.get("ContainersReady")
        if pod.status.phase != "Running" or not ready or ready.status != "False" or not containers \
                or containers.status != "True":
            continue
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body = {"status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}]}}
        try:
            core.patch_namespaced_pod_status(pod.metadata.name, pod.metadata.namespace, body, _request_timeout=10)
            fixed += 1
        except Exception as exc:  # a pod deleted meanwhile
            log(f"could not mark {pod.metadata.namespace}/{pod.metadata.name} Ready again: {exc}")
    if fixed:
        log(f"{fixed} pod(s) marked not ready while their node was lost are Ready again (the kubelet's resync)")
    return fixed


def up(scenario: str, p5_nodes: int = 2, exec_mode: str = "replay") -> None:
    bins = ensure_built()
    if cluster_running() and (STATE / "ready").exists():
        problem = exec_runtime.configure(STATE, exec_mode)
        if problem:
            die(problem)
        running = int((STATE / "nodes").read_text()) if (STATE / "nodes").exists() else 2
        if running != p5_nodes:
            die(f"the running simulated cluster has {running} p5 nodes, not {p5_nodes}; "
                "stop it first with `make sim-down`")
        log("cluster already running; reusing it")
        ensure_processes(bins)
        # A fault test may have paused the nodes' agent or the API server past the node-monitor grace period
        # (50 s): the nodes are NotReady until their next lease renewal, at most 10 s after it resumed.
        client, api, _dyn = clients()
        core = client.CoreV1Api(api)
        wait_for("every node Ready", lambda: all_nodes_ready(core), 60)
        # without an address the API server cannot reach a node's logs (sim/kwok.yaml.in: kwok-controller's node-ip)
        lost = [n.metadata.name for n in core.list_node(_request_timeout=10).items if not n.status.addresses]
        if lost:
            die(f"nodes without an address (their logs cannot be read): {', '.join(lost)}; restart the simulated "
                "cluster with `make sim-down sim-up`")
        resync_pod_readiness(core)
        apply_scenario(scenario)
        print_usage()
        return
    if STATE.exists():
        down(quiet=True)
    for sub in ("kwok", "logs", "exec", "pids", "podlogs"):
        (STATE / sub).mkdir(parents=True, exist_ok=True)
    problem = exec_runtime.configure(STATE, exec_mode)
    if problem:
        die(problem)
    v = versions()
    cfg = STATE / "kwok.yaml"
    render(SIM / "kwok.yaml.in", cfg, {"SIM_BIN": str(bins), "SIM_K8S_VERSION": v["SIM_K8S_VERSION"],
                                       **heartbeat_settings(p5_nodes)})
    kwokctl = str(bins / "kwokctl")
    log("checking that kwokctl would download nothing (dry run)")
    dry = subprocess.run([kwokctl, "-c", str(cfg), "--dry-run", "create", "cluster", "--name", CLUSTER],
                         env=kwok_env(), capture_output=True, text=True, timeout=120, check=False)
    urls = [line for line in dry.stdout.splitlines() if line.startswith("# Download http")]
    if dry.returncode != 0 or urls:
        die("kwokctl dry run failed or would download: " + ("; ".join(urls) or dry.stderr.strip()))
    log("starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok-controller")
    created = subprocess.run([kwokctl, "-c", str(cfg), "create", "cluster", "--name", CLUSTER, "--kubeconfig", "",
                              "--wait", "120s"], env=kwok_env(), capture_output=True, text=True, timeout=300,
                             check=False)
    if created.returncode != 0:
        die("kwokctl create cluster failed:\n" + created.stdout[-2000:] + created.stderr[-2000:])
    shutil.copy(STATE / "kwok" / "clusters" / CLUSTER / "kubeconfig.yaml", kubeconfig())
    client, api, dyn = clients()
    core = client.CoreV1Api(api)
    wait_for("the API server", lambda: client.VersionApi(api).get_code(), 60)

    log("applying kwok's default stages and the MPIJob CRD")
    kwok_dir = module_dir("sigs.k8s.io/kwok", v["SIM_KWOK_VERSION"])
    for rel in ("node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
                "pod/fast/pod-ready.yaml", "pod/fast/pod-delete.yaml"):
        for obj in load_yaml_docs(kwok_dir / "kustomize" / "stage" / rel):
            apply(dyn, obj)
    mpi_dir = module_dir("github.com/kubeflow/mpi-operator", v["SIM_MPI_OPERATOR_VERSION"])
    crd = load_yaml_docs(mpi_dir / "manifests" / "base" / "kubeflow.org_mpijobs.yaml")[0]
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition(crd)
    # Kubeflow Trainer v2's CRDs (TrainJob, ClusterTrainingRuntime, TrainingRuntime) and JobSet's, the real
    # YAML of the pinned releases from the Go module cache; sim/trainer_sim.py acts on TrainJobs.
    trainer_dir = module_dir("github.com/kubeflow/trainer/v2", v["SIM_TRAINER_VERSION"])
    jobset_dir = module_dir("sigs.k8s.io/jobset", v["SIM_JOBSET_VERSION"])
    extra_crds = [trainer_dir / "manifests" / "base" / "crds" / f"trainer.kubeflow.org_{kind}.yaml"
                  for kind in ("trainjobs", "clustertrainingruntimes", "trainingruntimes")]
    extra_crds.append(jobset_dir / "config" / "components" / "crd" / "bases" / "jobset.x-k8s.io_jobsets.yaml")
    for path in extra_crds:
        ext.create_custom_resource_definition(load_yaml_docs(path)[0])

    nodes = cluster_nodes(p5_nodes)
    log(f"creating nodes: {p5_nodes} x p5.48xlarge, 2 x g6.8xlarge, 1 system node")
    for obj in nodes:
        apply(dyn, obj)
    (STATE / "nodes").write_text(f"{p5_nodes}\n")

    wait_for(f"{len(nodes)} Ready nodes", lambda: all_nodes_ready(core, len(nodes)), 60 + len(nodes) // 2)

    def crd_established():
        got = ext.read_custom_resource_definition("mpijobs.kubeflow.org")
        return any(c.type == "Established" and c.status == "True" for c in (got.status.conditions or []))
    wait_for("the MPIJob CRD", crd_established, 60)

    def trainer_crds_established():
        names = ("trainjobs.trainer.kubeflow.org", "clustertrainingruntimes.trainer.kubeflow.org")
        return all(any(c.type == "Established" and c.status == "True"
                       for c in (ext.read_custom_resource_definition(n).status.conditions or [])) for n in names)
    wait_for("the Trainer CRDs", trainer_crds_established, 60)
    # The MPI runtime the collection's TrainJobs reference, as an administrator would apply it.
    for obj in load_yaml_docs(ROOT / "trainer" / "nccl-tests-runtime.yml"):
        client.CustomObjectsApi(api).create_cluster_custom_object("trainer.kubeflow.org", "v1alpha1",
                                                                  "clustertrainingruntimes", obj)
    core.create_namespace({"metadata": {"name": "mpi-operator"}})
    wait_for("the default service account", lambda: core.read_namespaced_service_account("default", "default"), 60)
    log("adding the GPU Operator, the EFA device plugin and FSx storage")
    for obj in load_yaml_docs(SIM / "cluster" / "addons.yaml"):
        apply(dyn, obj)
    # kwok's pod-complete stage finishes every pod with an owner reference of kind Job; this one keys on
    # the Job controller's label instead, for pods the collection does not manage (weight 0, as kwok's). A pod
    # of a multi-node Job waits for its peers here too: kwok falls back to this stage when the default outcome
    # leaves the pod out, and the head then ended at once, its worker later on the same node.
    apply(dyn, stage("sim-pod-complete", {"matchExpressions": [
        {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
        {"key": ".status.phase", "operator": "In", "values": ["Running"]},
        {"key": '.metadata.labels["batch.kubernetes.io/job-name"]', "operator": "Exists"}, NOT_A_TRAINJOB_NODE,
        WAITS_FOR_PEERS]},
        terminated("Succeeded", 0, "Completed"), weight=0, scenario=False))
    # A probe pod ends once the node runtime has run its command and written its log (probe-as-entrypoint).
    apply(dyn, stage("sim-probe-complete", {"matchExpressions": [
        {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
        {"key": ".status.phase", "operator": "In", "values": ["Running"]},
        {"key": f'.metadata.annotations["{PROBE_DONE}"]', "operator": "In", "values": ["true"]}]},
        terminated("Succeeded", 0, "Completed"), weight=0, scenario=False))
    apply_scenario(scenario, dyn, core)
    ensure_processes(bins)

    def pvc_bound():
        return core.read_namespaced_persistent_volume_claim("fsx-claim", "default").status.phase == "Bound"
    wait_for("fsx-claim to be Bound", pvc_bound, 60)
    daemonsets_settled(client.AppsV1Api(api), core, 60 + len(nodes) // 2)
    (STATE / "ready").write_text(datetime.datetime.now(datetime.timezone.utc).isoformat() + "\n")
    print_usage()


def ensure_processes(bins: Path) -> None:
    py = sys.executable
    if not alive_named("runtime"):
        write_fakebin()
        start_process("runtime", [py, str(SIM / "simctl.py"), "runtime"], env={**os.environ, "SIM_STATE": str(STATE)})
    from urllib.parse import urlparse
    import yaml
    server = yaml.safe_load(kubeconfig().read_text())["clusters"][0]["cluster"]["server"]
    port = urlparse(server).port
    sock = STATE / "apiserver.sock"
    if not alive_named("apiserver-relay"):
        sock.unlink(missing_ok=True)
        start_process("apiserver-relay", [py, str(SIM / "simctl.py"), "relay", "unix", str(sock), f"127.0.0.1:{port}"])
        wait_for("the API relay socket", sock.exists, 10, 0.1)
    if not alive_named("mpi-operator"):
        # The operator's health server is hard-wired to :8080 on every interface. Running it in a network
        # namespace of its own keeps that port off the host; it reaches the API server through the relay.
        # It exits when it loses its leader lease (an API server stall, tests/faults); its Deployment would
        # restart it on a real cluster, the loop does here.
        operator = (f'{bins / "mpi-operator"} --kubeConfig={kubeconfig()} --lock-namespace=mpi-operator '
                    f'--threadiness=2 --monitoring-port=0 -v=2')
        script = (f'ip link set lo up && {py} {SIM / "simctl.py"} relay tcp 127.0.0.1:{port} {sock} & '
                  f'sleep 0.5; while :; do {operator}; echo "sim: mpi-operator exited ($?), restarting"; sleep 1; done')
        start_process("mpi-operator", ["unshare", "--net", "--fork", "--kill-child", "sh", "-c", script],
                      env={k: v for k, v in os.environ.items() if k != "KUBECONFIG"})
    if not alive_named("trainer"):
        start_process("trainer", [py, str(SIM / "simctl.py"), "trainer"], env={**os.environ, "SIM_STATE": str(STATE)})
    time.sleep(1.0)
    for name in ("runtime", "apiserver-relay", "mpi-operator", "trainer"):
        if not alive_named(name):
            die(f"{name} exited at start; see {STATE / 'logs' / (name + '.log')}")


def alive_named(name: str) -> bool:
    path = pid_file(name)
    return path.exists() and alive(int(path.read_text().strip() or 0))


def print_usage() -> None:
    print(f"\nSimulated EKS cluster is up (scenario: {(STATE / 'scenario').read_text().strip()}).")
    print(f"kubeconfig: {kubeconfig()}")
    print(f"Use it with: export KUBECONFIG={kubeconfig()}   (then the kubernetes.core modules or any client)")


def process_cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def component_processes() -> list:
    """(pid, command line) of every live process a pid file of the kwokctl cluster names."""
    found = []
    for pidfile in (STATE / "kwok").glob("clusters/*/pids/*.pid"):
        try:
            pid = int(pidfile.read_text().strip())
        except (ValueError, OSError):
            continue
        if alive(pid):
            found.append((pid, process_cmdline(pid)))
    return found


def down(quiet: bool = False) -> None:
    for name in ("trainer", "mpi-operator", "apiserver-relay", "runtime"):
        stop_process(name)
    bins = bin_dir()
    # The components as their pid files name them now (a fault test may have restarted one), read before kwokctl
    # removes the files: kwokctl moves on when a component outlives its stop signal (a kube-apiserver restarted by
    # tests/faults once did, for 11 minutes, holding the API server's port).
    components = component_processes()
    if (STATE / "kwok" / "clusters" / CLUSTER).exists() and (bins / "kwokctl").exists():
        subprocess.run([str(bins / "kwokctl"), "delete", "cluster", "--name", CLUSTER,
                        "--kubeconfig", str(STATE / "kwok" / "kwokctl-kubeconfig")], env=kwok_env(),
                       capture_output=True, text=True, timeout=120, check=False)
    for pid, cmdline in components:
        if alive(pid) and process_cmdline(pid) == cmdline:  # still that process, not a reused pid
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    if STATE.exists():
        shutil.rmtree(STATE, ignore_errors=True)
    if not quiet:
        log("simulated cluster stopped and its state removed")


def status() -> int:
    if not STATE.exists():
        print("simulated cluster: not running (no .sim state)")
        return 1
    print(f"state: {STATE}")
    print(f"scenario: {(STATE / 'scenario').read_text().strip() if (STATE / 'scenario').exists() else '?'}")
    for pidfile in sorted((STATE / "kwok").glob("clusters/*/pids/*.pid")) + sorted((STATE / "pids").glob("*.pid")):
        pid = int(pidfile.read_text().strip() or 0)
        print(f"  {pidfile.stem:28s} pid {pid:<8d} {'running' if alive(pid) else 'STOPPED'}")
    if cluster_running():
        client, api, _dyn = clients()
        for node in client.CoreV1Api(api).list_node().items:
            ready = any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])
            cap = node.status.capacity or {}
            print(f"  node {node.metadata.name:14s} {node.metadata.labels.get('node.kubernetes.io/instance-type', ''):12s}"
                  f" gpu={cap.get('nvidia.com/gpu', '0'):2s} efa={cap.get('vpc.amazonaws.com/efa', '0'):3s}"
                  f" {'Ready' if ready else 'NotReady'}{' (cordoned)' if node.spec.unschedulable else ''}")
        return 0
    print("API server: not answering")
    return 1


# --------------------------------------------------------------------------- node runtime

def write_fakebin() -> None:
    """python3 inside a simulated pod is the replayer: it prints what the real probe printed on a GPU machine."""
    fakebin = STATE / "fakebin"
    fakebin.mkdir(parents=True, exist_ok=True)
    real = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or sys.executable
    script = fakebin / "python3"
    script.write_text(f'#!/bin/sh\nexec {real} {SIM / "replay.py"} "$@"\n')
    script.chmod(0o755)
    for alias in ("python", "torchrun"):
        (fakebin / alias).unlink(missing_ok=True)
        (fakebin / alias).symlink_to(script)


def cri_log(source: Path, dest: Path) -> None:
    """Write a recorded log in the CRI format kwok's log server requires."""
    now = datetime.datetime.now(datetime.timezone.utc)
    with open(source, "rb") as src, open(dest, "w", encoding="utf-8") as out:
        for i, raw in enumerate(src.read().decode("utf-8", errors="replace").splitlines()):
            ts = (now + datetime.timedelta(microseconds=i)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            out.write(f"{ts} stdout F {raw}\n")


def log_source(pod, scenario: str) -> Path | None:
    labels = pod.metadata.labels or {}
    level = labels.get(LEVEL_LABEL)
    if not level:
        return None
    role = labels.get(ROLE_LABEL) or labels.get(JOBSET_ROLE_LABEL) or ""
    spec = scenarios().get(scenario) or {}
    overrides = spec.get("logs") or {}
    key = f"{level}/{role}" if role else level
    example = labels.get(EXAMPLE_LABEL, "")
    nodes = pod_nodes(pod)
    if nodes > 1 and labels.get(JOB_INDEX_LABEL) not in (None, "0"):
        return None  # a multi-node Job's worker (ray start --block) prints nothing the collection reads
    name = (overrides.get(f"{level}@{example}") if example else None) or overrides.get(key) or overrides.get(level)
    if not name:
        defaults = {"l3_multi_gpu/launcher": "l3-efa-healthy.log", "phase0_efa/launcher": "phase0-g6-efa.log",
                    "l5_training_step": "l5-train-step.log", "l6_evaluation": "l6-eval.log"}
        name = defaults.get(key)
        # A multi-node head's log reports its N-node cluster where a recording exists (l5-train-step-2node.log).
        if name and nodes > 1 and (SIM / "replay" / "logs" / name.replace(".log", f"-{nodes}node.log")).exists():
            name = name.replace(".log", f"-{nodes}node.log")
    return SIM / "replay" / "logs" / name if name else None


def pod_nodes(pod) -> int:
    """RLSTACK_NODES of a pod's container (the nodes of its multi-node Job), 1 without it."""
    for container in pod.spec.containers or []:
        for env in container.env or []:
            if env.name == "RLSTACK_NODES" and (env.value or "").isdigit():
                return int(env.value)
    return 1


def mark_peers(core, pod) -> None:
    """Mark every pod of a multi-node Job as soon as all of them run (WAITS_FOR_PEERS)."""
    job = (pod.metadata.labels or {}).get("batch.kubernetes.io/job-name")
    nodes = pod_nodes(pod)
    if not job or nodes < 2 or pod.status.phase != "Running" or PEERS_RUNNING in (pod.metadata.annotations or {}):
        return
    peers = core.list_namespaced_pod(pod.metadata.namespace, label_selector=f"batch.kubernetes.io/job-name={job}")
    running = [p for p in peers.items if p.status.phase == "Running" and not p.metadata.deletion_timestamp]
    if len(running) >= nodes:
        for peer in running:
            core.patch_namespaced_pod(peer.metadata.name, peer.metadata.namespace,
                                      {"metadata": {"annotations": {PEERS_RUNNING: "true"}}})


def _load_sim_module(name: str, path: Path):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pair_launcher_log(core, pod, scenario: str, dest: Path) -> None:
    """A bad-node isolation pair's launcher log: the real 2-node log scaled to the pair's bandwidth
    (sim/replay/pairlog.py, docs/isolation.md). The pair is where the MPIJob's workers run."""
    labels = pod.metadata.labels or {}
    pairlog = _load_sim_module("sim_pairlog", SIM / "replay" / "pairlog.py")
    replay = _load_sim_module("sim_replay", SIM / "replay.py")
    workers = core.list_namespaced_pod(pod.metadata.namespace,
                                       label_selector=f"{JOB_NAME_LABEL}={labels.get(JOB_NAME_LABEL, '')},"
                                                      f"{ROLE_LABEL}=worker").items
    nodes = sorted(w.spec.node_name for w in workers if w.spec.node_name)
    text, crashed = pairlog.pair_log((scenarios().get(scenario) or {}).get("pairs") or {}, nodes, replay.node_variant)
    raw = dest.with_suffix(".raw")
    raw.write_text(text, encoding="utf-8")
    cri_log(raw, dest)
    if crashed:
        core.patch_namespaced_pod(pod.metadata.name, pod.metadata.namespace,
                                  {"metadata": {"labels": {PAIR_CRASH_LABEL: "true"}}})


def is_probe_pod(pod) -> bool:
    containers = pod.spec.containers or []
    return ((pod.metadata.labels or {}).get(COMPONENT_LABEL) == "probe" and bool(containers)
            and (containers[0].command or [])[:1] == ["sh"])


def logs_object(dyn, ns: str, name: str, owner: list, dest: Path) -> None:
    apply(dyn, {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs",
                "metadata": {"name": name, "namespace": ns, "ownerReferences": owner},
                "spec": {"logs": [{"logsFile": str(dest), "previousLogsFile": str(dest)}]}})


_PROBE_THREAD = threading.local()


def thread_core():
    """A CoreV1Api per probe thread, made once: clients() runs API discovery, too dear once per pod at 256 nodes."""
    core = getattr(_PROBE_THREAD, "core", None)
    if core is None:
        from kubernetes import client, config
        core = _PROBE_THREAD.core = client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig())))
    return core


def run_probe_pod(pod, envs: list, dest: Path, dyn, owner: list) -> None:
    """Run a probe pod's command as a kubelet would (replayed python3 on PATH); its output is the pod's log."""
    ns, name = pod.metadata.namespace, pod.metadata.name
    container = pod.spec.containers[0]
    env = {"HOME": str(STATE / "exec"), "LANG": "C.UTF-8"}
    env.update({e["name"]: e["value"] for e in envs})
    env.update({e.name: e.value for e in (container.env or []) if e.value is not None})
    env["NODE_NAME"] = pod.spec.node_name
    env["PATH"] = next(e["value"] for e in envs if e["name"] == "PATH")
    try:
        proc = subprocess.run(list(container.command or []) + list(container.args or []), env=env,
                              cwd=STATE / "exec", capture_output=True, timeout=120, check=False)
        text = proc.stdout.decode("utf-8", errors="replace") + proc.stderr.decode("utf-8", errors="replace")
    except subprocess.TimeoutExpired:
        text = "sim: the probe command ran past 120 s\n"
    raw = dest.with_suffix(".raw")
    raw.write_text(text)
    cri_log(raw, dest)
    logs_object(dyn, ns, name, owner, dest)
    try:  # the sim-probe-complete stage ends pods marked so
        thread_core().patch_namespaced_pod(name, ns, {"metadata": {"annotations": {PROBE_DONE: "true"}}})
    except Exception as exc:  # the pod may be gone already
        print(f"runtime: marking {ns}/{name} done: {type(exc).__name__}: {exc}", flush=True)


def runtime() -> None:
    """Give every pod on a simulated node an Exec (replayed probes) and a Logs object (recorded logs)."""
    if exec_runtime.enabled(STATE):  # SIM_EXEC=host: every pod's command runs for real instead
        return exec_runtime.run(clients, STATE, SYSTEM_NAMESPACES)
    import concurrent.futures
    from kubernetes import watch
    probes = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="probe-pod")
    client, api, dyn = clients()
    core = client.CoreV1Api(api)
    node_types = {}
    done = set()
    path_env = f"{STATE / 'fakebin'}:/usr/local/bin:/usr/bin:/bin"
    while True:
        try:
            for event in watch.Watch().stream(core.list_pod_for_all_namespaces, timeout_seconds=60):
                pod = event["object"]
                ns, name, node = pod.metadata.namespace, pod.metadata.name, pod.spec.node_name
                key = (ns, name, pod.metadata.uid)
                if event["type"] != "DELETED" and node and ns not in SYSTEM_NAMESPACES:
                    try:
                        mark_peers(core, pod)
                    except Exception as exc:  # a peer deleted meanwhile: the next event of the Job tries again
                        print(f"runtime: marking the peers of {ns}/{name}: {type(exc).__name__}: {exc}", flush=True)
                if event["type"] == "DELETED" or not node or ns in SYSTEM_NAMESPACES or key in done:
                    continue
                if node not in node_types:
                    n = core.read_node(node)
                    node_types[node] = (n.metadata.labels or {}).get("node.kubernetes.io/instance-type", "")
                owner = [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": pod.metadata.uid}]
                scenario = (STATE / "scenario").read_text().strip()
                envs = [{"name": "PATH", "value": path_env}, {"name": "SIM_NODE", "value": node},
                        {"name": "SIM_INSTANCE_TYPE", "value": node_types[node]},
                        {"name": "SIM_POD", "value": f"{ns}/{name}"}, {"name": "SIM_STATE", "value": str(STATE)},
                        {"name": "SIM_LEVEL", "value": (pod.metadata.labels or {}).get(LEVEL_LABEL, "")}]
                dest = STATE / "podlogs" / f"{ns}_{name}.log"
                if is_probe_pod(pod):
                    # A probe pod's entrypoint is its probe: run that command here (python3 is the
                    # replayer), make its output the pod's log, then let the sim-probe-complete stage end it.
                    # Nothing execs into it (the runner reads its log), so it gets no Exec object.
                    probes.submit(run_probe_pod, pod, envs, dest, dyn, owner)
                    done.add(key)
                    continue
                apply(dyn, {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Exec",
                            "metadata": {"name": name, "namespace": ns, "ownerReferences": owner},
                            "spec": {"execs": [{"local": {"workDir": str(STATE / "exec"), "envs": envs}}]}})
                labels = pod.metadata.labels or {}
                source = log_source(pod, scenario)
                if labels.get(LEVEL_LABEL) == ISOLATE_LEVEL and labels.get(ROLE_LABEL) == "launcher":
                    pair_launcher_log(core, pod, scenario, dest)
                elif source is not None:
                    cri_log(source, dest)
                else:
                    dest.write_text("")
                logs_object(dyn, ns, name, owner, dest)
                done.add(key)
        except Exception as exc:  # keep serving: the API server may restart or a watch may expire
            print(f"runtime: {type(exc).__name__}: {exc}", flush=True)
            time.sleep(1)


# --------------------------------------------------------------------------- relay

async def _pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


def relay(mode: str, listen: str, target: str) -> None:
    """mode unix: listen on a unix socket, forward to host:port; mode tcp: listen on host:port, forward to a socket."""
    async def handle(reader, writer):
        try:
            if mode == "unix":
                host, port = target.rsplit(":", 1)
                up_r, up_w = await asyncio.open_connection(host, int(port))
            else:
                up_r, up_w = await asyncio.open_unix_connection(target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_w), _pipe(up_r, writer))

    async def main():
        if mode == "unix":
            server = await asyncio.start_unix_server(handle, path=listen)
        else:
            host, port = listen.rsplit(":", 1)
            server = await asyncio.start_server(handle, host, int(port))
        async with server:
            await server.serve_forever()
    asyncio.run(main())


def main() -> int:
    parser = argparse.ArgumentParser(prog="simctl.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_up = sub.add_parser("up")
    p_up.add_argument("--scenario", default=os.environ.get("SIM_SCENARIO") or "healthy")
    p_up.add_argument("--nodes", type=int, default=int(os.environ.get("SIM_NODES") or 2),
                      help="number of p5.48xlarge nodes (default 2, or $SIM_NODES)")
    p_up.add_argument("--exec", dest="exec_mode", choices=["replay", "host"],
                      default=os.environ.get("SIM_EXEC") or "replay",
                      help="replay recorded outputs (default) or run each pod's command on this machine ($SIM_EXEC)")
    p_sc = sub.add_parser("scenario")
    p_sc.add_argument("name")
    sub.add_parser("down")
    sub.add_parser("status")
    sub.add_parser("runtime")
    sub.add_parser("trainer")
    p_relay = sub.add_parser("relay")
    p_relay.add_argument("mode", choices=["unix", "tcp"])
    p_relay.add_argument("listen")
    p_relay.add_argument("target")
    args = parser.parse_args()
    if args.cmd in ("up", "scenario"):
        name = args.scenario if args.cmd == "up" else args.name
        if name not in scenarios():
            die(f"unknown scenario {name!r}; known: {', '.join(scenarios())}")
    if args.cmd == "up":
        up(args.scenario, args.nodes, args.exec_mode)
    elif args.cmd == "scenario":
        if not cluster_running():
            die("the simulated cluster is not running; start it with `make sim-up`")
        apply_scenario(args.name)
    elif args.cmd == "down":
        down()
    elif args.cmd == "status":
        return status()
    elif args.cmd == "runtime":
        runtime()
    elif args.cmd == "trainer":
        import trainer_sim
        trainer_sim.run(clients, lambda msg: print(msg, flush=True))
    elif args.cmd == "relay":
        relay(args.mode, args.listen, args.target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
