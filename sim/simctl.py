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

This file is the process supervisor and the command line; the scenario engine (kwok stages and node health
from scenarios.yaml) is scenario_engine.py, the node runtime node_runtime.py, and what they share simcommon.py.
"""
from __future__ import annotations

import argparse
import asyncio
import datetime
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import string
import subprocess
import sys
import time
from pathlib import Path

SIM = Path(__file__).resolve().parent
if str(SIM) not in sys.path:  # the unit tests load this file by path
    sys.path.insert(0, str(SIM))
import exec_runtime  # noqa: E402  sim/exec_runtime.py: the exec mode (SIM_EXEC=host); this file keeps only its hooks
from simcommon import (
    NOT_A_TRAINJOB_NODE,
    PROBE_DONE,
    ROOT,
    STATE,
    WAITS_FOR_PEERS,
    apply,
    clients,
    die,
    kubeconfig,
    load_yaml_docs,
    log,
    scenarios,
    wait_for,
)
from scenario_engine import apply_scenario, stage, terminated
from node_runtime import runtime

CLUSTER = "rlstack-sim"
MAX_P5_NODES = 1024


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


# --------------------------------------------------------------------------- stages


# --------------------------------------------------------------------------- up / down / status

def kwok_env() -> dict:
    # kwokctl edits the kubeconfig $KUBECONFIG names (delete cluster removes its context there): never
    # another cluster's, such as the shared sim's while a test runs a cluster of its own beside it.
    return {**os.environ, "KWOK_WORKDIR": str(STATE / "kwok"), "KWOK_RUNTIME": "binary",
            "KUBECONFIG": str(STATE / "kwok" / "kwokctl-kubeconfig")}


# Up to this many p5 nodes the simulated cluster behaves as a small real one (sim/kwok.yaml.in says why); beyond,
# it is a scale measurement's.
REAL_HEARTBEAT_MAX_NODES = 32


def scale_settings(p5_nodes: int) -> dict:
    """kwokctl's settings that depend on the cluster's size: up to REAL_HEARTBEAT_MAX_NODES p5 nodes the kubelet's
    heartbeat (factor 1, status every 50 s) and upstream's client rate limits; beyond, kwokctl's default factor 5
    on status every 10 s (also 50 s) and no client rate limits (disableQPSLimits)."""
    if p5_nodes <= REAL_HEARTBEAT_MAX_NODES:
        return {"SIM_HEARTBEAT_FACTOR": "1", "SIM_NODE_STATUS_MS": "50000", "SIM_DISABLE_QPS_LIMITS": "false"}
    return {"SIM_HEARTBEAT_FACTOR": "5", "SIM_NODE_STATUS_MS": "10000", "SIM_DISABLE_QPS_LIMITS": "true"}


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
    return (count is None or len(got) == count) and not not_ready(got)


def not_ready(nodes: list) -> list:
    return [n.metadata.name for n in nodes
            if not any(c.type == "Ready" and c.status == "True" for c in (n.status.conditions or []))]


def kwok_controller_state() -> str:
    """Whether kwok-controller (which makes the nodes Ready, kwok's node-initialize stage) runs, and its last errors."""
    cluster = STATE / "kwok" / "clusters" / CLUSTER
    pid_path = cluster / "pids" / "kwok-controller.pid"
    pid = int(pid_path.read_text().strip() or 0) if pid_path.exists() else 0
    errors = []
    log_path = cluster / "logs" / "kwok-controller.log"
    for line in (log_path.read_text(errors="replace").splitlines() if log_path.exists() else []):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("level") == "ERROR":
            errors.append(f"{entry.get('msg')}: {str(entry.get('err', ''))[:160]}")
    return (f"kwok-controller {'runs' if alive(pid) else 'is not running'} (pid {pid or 'unknown'}); "
            f"its last errors: {'; '.join(errors[-3:]) or 'none'} (log: {log_path})")


def wait_nodes_ready(core, count: int, timeout: float) -> None:
    """Wait for `count` Ready nodes. Halfway, nodes still not Ready are named with kwok-controller's state and touched
    once (an annotation: a new event for kwok's node controller): in CI, 2026-12-06, an exec-mode cluster created
    beside two others waited 62 s for its nodes and nothing said why."""
    deadline, nudged, names = time.monotonic() + timeout, False, ["?"]
    while time.monotonic() < deadline:
        try:
            got = core.list_node(_request_timeout=10).items
            names = not_ready(got) or ([] if len(got) == count else [f"{count - len(got)} node(s) not created"])
        except Exception as exc:  # the API may be slow to answer while the cluster settles
            names = [f"(list failed: {exc})"]
        if not names:
            return
        if not nudged and time.monotonic() > deadline - timeout / 2:
            nudged = True
            log(f"{len(names)} node(s) not Ready after {timeout / 2:.0f} s ({', '.join(names[:5])}): "
                f"{kwok_controller_state()}; touching them once")
            for name in names:
                try:
                    core.patch_node(name, {"metadata": {"annotations": {"sim.rlstack.io/nudged": str(time.time())}}},
                                    _request_timeout=10)
                except Exception:  # reported by the final message if it stays not Ready
                    pass
        time.sleep(0.5)
    die(f"timed out after {timeout:.0f}s waiting for {count} Ready nodes; not Ready: {', '.join(names[:10])}; "
        f"{kwok_controller_state()}")


def daemonsets_settled(apps, core, timeout: float) -> None:
    """Wait until the DaemonSet controller has placed a pod on every node it counts and kwok has started them:
    each DaemonSet's counts alike three lists in a row, scheduled as desired, as many as the nodes its nodeSelector
    matches, no DaemonSet pod Pending. At 256 nodes that takes tens of seconds after the add-ons are applied, and an
    L0 run earlier rightly failed ("130 of 133 pods ready", 2026-12-04). At 1,024 nodes the controller creates pods
    for minutes (kube-controller-manager's 20 requests/s) and its status can stand still for three lists while it
    does: L0 then judged "268 of 269 pods ready" (2026-12-05), hence the count against the nodes. Readiness is not
    required: a scenario may make a plugin's pod not ready."""
    seen = []

    # listed on every poll: listed once at the start, the nodes' taints of that moment made the count too low and
    # the check weak again (1,024 nodes, 2026-12-05: "354 of 355 pods ready")
    def surely_placed(spec, nodes):
        """The nodes the DaemonSet must have a pod on: its nodeSelector matches and every taint is tolerated
        (a scenario's tainted node may or may not get one, so it is not counted)."""
        tolerated = {tol.key for tol in spec.tolerations or []}
        return sum(1 for labels, taints in nodes
                   if all(labels.get(k) == v for k, v in (spec.node_selector or {}).items())
                   and all(taint.key in tolerated for taint in taints))

    def settled():
        nodes = [(n.metadata.labels or {}, n.spec.taints or []) for n in core.list_node(_request_timeout=30).items]
        counts = sorted((d.metadata.namespace, d.metadata.name, d.status.desired_number_scheduled or 0,
                         d.status.current_number_scheduled or 0, surely_placed(d.spec.template.spec, nodes))
                        for d in apps.list_daemon_set_for_all_namespaces(_request_timeout=30).items)
        pending = [p for p in core.list_pod_for_all_namespaces(field_selector="status.phase=Pending",
                                                               _request_timeout=30).items
                   if any(o.kind == "DaemonSet" for o in p.metadata.owner_references or [])]
        seen[:] = (seen + [counts])[-3:]
        return (not pending and all(c[2] == c[3] >= c[4] for c in counts)
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


# The ports kwokctl would pick itself by counting down from 32767 to the first one free (kwok v0.8.0,
# pkg/utils/net/unused_port.go GetUnusedPort): a port is free there while its component is down, so a cluster
# created while tests/faults restarted another cluster's etcd or API server took that port, or lost its own
# kwok-controller to the restarted component (its nodes never Ready: CI, 2026-12-06). simctl picks them instead,
# past every port another simulated cluster of this machine holds (its entry in the ports registry, kept while its
# state exists; `down` removes it).
PORT_SETTINGS = ("SIM_ETCD_PEER_PORT", "SIM_ETCD_PORT", "SIM_APISERVER_PORT", "SIM_CONTROLLER_MANAGER_PORT",
                 "SIM_SCHEDULER_PORT", "SIM_KWOK_CONTROLLER_PORT")


def port_entry(bins: Path, state: Path) -> Path:
    return bins / "ports" / (hashlib.sha1(str(state.resolve()).encode()).hexdigest()[:16] + ".json")


def ports_of_other_clusters(bins: Path) -> set:
    """The ports the registry's other clusters hold; an entry whose cluster state is gone is removed."""
    taken, own = set(), port_entry(bins, STATE)
    for entry in sorted((bins / "ports").glob("*.json")):
        try:
            record = json.loads(entry.read_text())
            state = Path(record["state"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if entry == own:
            continue  # written again by pick_ports
        if not (state / "kwok" / "clusters" / CLUSTER).exists():
            entry.unlink(missing_ok=True)
            continue
        taken.update(record.get("ports") or [])
    return taken


def port_free(port: int) -> bool:
    """Bindable on the loopback and every address, as kwokctl's own probe asks."""
    for host in ("127.0.0.1", ""):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                return False
    return True


def pick_ports(bins: Path) -> dict:
    """Ports for this cluster's etcd (peer, client), API server, controller manager, scheduler and kwok-controller
    (every port kwokctl's binary runtime gives out), registered for the others."""
    taken, chosen, port = ports_of_other_clusters(bins), [], 32767
    while len(chosen) < len(PORT_SETTINGS):
        port -= 1
        if port <= 10000:
            die("no free port between 10000 and 32767 for the simulated cluster")
        if port not in taken and port_free(port):
            chosen.append(port)
    entry = port_entry(bins, STATE)
    entry.parent.mkdir(exist_ok=True)
    entry.write_text(json.dumps({"state": str(STATE), "ports": chosen}) + "\n")
    return dict(zip(PORT_SETTINGS, map(str, chosen)))


def create_cluster(bins: Path, settings: dict) -> None:
    """kwokctl create cluster from sim/kwok.yaml.in with `settings` and this cluster's ports, after a dry run proves
    it downloads nothing. One creation at a time on this machine (the lock is released when the components listen)."""
    kwokctl, cfg = str(bins / "kwokctl"), STATE / "kwok.yaml"
    with open(bins / ".create-cluster.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        render(SIM / "kwok.yaml.in", cfg, {**settings, **pick_ports(bins)})
        log("checking that kwokctl would download nothing (dry run)")
        dry = subprocess.run([kwokctl, "-c", str(cfg), "--dry-run", "create", "cluster", "--name", CLUSTER],
                             env=kwok_env(), capture_output=True, text=True, timeout=120, check=False)
        urls = [line for line in dry.stdout.splitlines() if line.startswith("# Download http")]
        if dry.returncode != 0 or urls:
            die("kwokctl dry run failed or would download: " + ("; ".join(urls) or dry.stderr.strip()))
        log("starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok-controller")
        created = subprocess.run([kwokctl, "-c", str(cfg), "create", "cluster", "--name", CLUSTER, "--kubeconfig",
                                  "", "--wait", "120s"], env=kwok_env(), capture_output=True, text=True, timeout=300,
                                 check=False)
    if created.returncode != 0:
        die("kwokctl create cluster failed:\n" + created.stdout[-2000:] + created.stderr[-2000:])


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
    create_cluster(bins, {"SIM_BIN": str(bins), "SIM_K8S_VERSION": v["SIM_K8S_VERSION"], **scale_settings(p5_nodes)})
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

    wait_nodes_ready(core, len(nodes), 60 + len(nodes) // 2)

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
        script = (f'{py} {SIM / "simctl.py"} relay --loopback-up tcp 127.0.0.1:{port} {sock} & '
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
    port_entry(bins, STATE).unlink(missing_ok=True)
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


def loopback_up() -> None:
    """Bring the loopback interface of this network namespace up (what `ip link set lo up` does) with the kernel's
    SIOCGIFFLAGS/SIOCSIFFLAGS ioctls: the GPU machine's image has no `ip` (iproute2), and without loopback the MPI
    operator in its own namespace could not reach the relay, so no MPIJob ever got pods there."""
    import fcntl
    import socket
    import struct
    siocgifflags, siocsifflags, iff_up, iff_running = 0x8913, 0x8914, 0x1, 0x40
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        flags = struct.unpack("16sH", fcntl.ioctl(sock, siocgifflags, struct.pack("16sH", b"lo", 0))[:18])[1]
        fcntl.ioctl(sock, siocsifflags, struct.pack("16sH", b"lo", flags | iff_up | iff_running))


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
    p_relay.add_argument("--loopback-up", action="store_true",
                         help="bring this network namespace's loopback up first (the MPI operator's namespace)")
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
        if args.loopback_up:
            loopback_up()
        relay(args.mode, args.listen, args.target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
