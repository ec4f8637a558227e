"""The node runtime (split from simctl.py): what kwok's fake kubelets do not, answering pod logs and exec with the
outputs recorded on real GPU machines (sim/replay), running probe pods' entrypoints, and marking a multi-node
Job's pods once their peers run; in exec mode (SIM_EXEC=host) exec_runtime.py runs every pod's command instead."""

from __future__ import annotations

import datetime
import os
import subprocess
import threading
import time
from pathlib import Path

import exec_runtime

from simcommon import (
    COMPONENT_LABEL,
    EXAMPLE_LABEL,
    ISOLATE_LEVEL,
    JOBSET_ROLE_LABEL,
    JOB_INDEX_LABEL,
    JOB_NAME_LABEL,
    LEVEL_LABEL,
    PAIR_CRASH_LABEL,
    PEERS_RUNNING,
    PROBE_DONE,
    ROLE_LABEL,
    STATE,
    SYSTEM_NAMESPACES,
    apply,
    clients,
    kubeconfig,
    scenarios,
)


SIM = Path(__file__).resolve().parent


def cri_log(source: Path, dest: Path) -> None:
    """Write a recorded log in the CRI format kwok's log server requires."""
    now = datetime.datetime.now(datetime.timezone.utc)
    with open(source, "rb") as src, open(dest, "w", encoding="utf-8") as out:
        for i, raw in enumerate(src.read().decode("utf-8", errors="replace").splitlines()):
            ts = (now + datetime.timedelta(microseconds=i)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            out.write(f"{ts} stdout F {raw}\n")


# The watch hands each pod over as the API server's JSON (a dict): turning every event into a V1Pod model was 70 %
# of the runtime's CPU at 256 nodes (3.5 ms an event, a Configuration() made per nested model), and with seven
# events a pod, the watch fell behind the pods it starts (docs/fleet-scale.md).
def meta(pod: dict) -> dict:
    return pod.get("metadata") or {}


def labels_of(pod: dict) -> dict:
    return meta(pod).get("labels") or {}


def log_source(pod: dict, scenario: str) -> Path | None:
    labels = labels_of(pod)
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


def pod_nodes(pod: dict) -> int:
    """RLSTACK_NODES of a pod's container (the nodes of its multi-node Job), 1 without it."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        for env in container.get("env") or []:
            if env.get("name") == "RLSTACK_NODES" and str(env.get("value") or "").isdigit():
                return int(env["value"])
    return 1


def mark_peers(core, pod: dict) -> None:
    """Mark every pod of a multi-node Job as soon as all of them run (WAITS_FOR_PEERS)."""
    job = labels_of(pod).get("batch.kubernetes.io/job-name")
    is_running = (pod.get("status") or {}).get("phase") == "Running"
    if not job or not is_running or PEERS_RUNNING in (meta(pod).get("annotations") or {}):
        return
    nodes = pod_nodes(pod)
    if nodes < 2:
        return
    peers = core.list_namespaced_pod(meta(pod)["namespace"], label_selector=f"batch.kubernetes.io/job-name={job}")
    running = [p for p in peers.items if p.status.phase == "Running" and not p.metadata.deletion_timestamp]
    if len(running) >= nodes:
        for peer in running:
            core.patch_namespaced_pod(peer.metadata.name, peer.metadata.namespace,
                                      {"metadata": {"annotations": {PEERS_RUNNING: "true"}}})


def _load_sim_module(name: str, path: Path):
    """A file of sim/ as module `name`, loaded once per process (a probe shard answers every replayed pod with it)."""
    import importlib.util
    import sys
    if name not in sys.modules:  # two threads may both load it: the same module, one kept
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def pair_launcher_log(core, pod: dict, scenario: str, dest: Path) -> None:
    """A bad-node isolation pair's launcher log: the real 2-node log scaled to the pair's bandwidth
    (sim/replay/pairlog.py, docs/isolation.md). The pair is where the MPIJob's workers run."""
    labels = labels_of(pod)
    ns, name = meta(pod)["namespace"], meta(pod)["name"]
    pairlog = _load_sim_module("sim_pairlog", SIM / "replay" / "pairlog.py")
    replay = _load_sim_module("sim_replay", SIM / "replay.py")
    workers = core.list_namespaced_pod(ns,
                                       label_selector=f"{JOB_NAME_LABEL}={labels.get(JOB_NAME_LABEL, '')},"
                                                      f"{ROLE_LABEL}=worker").items
    nodes = sorted(w.spec.node_name for w in workers if w.spec.node_name)
    text, crashed = pairlog.pair_log((scenarios().get(scenario) or {}).get("pairs") or {}, nodes, replay.node_variant)
    raw = dest.with_suffix(".raw")
    raw.write_text(text, encoding="utf-8")
    cri_log(raw, dest)
    if crashed:
        core.patch_namespaced_pod(name, ns, {"metadata": {"labels": {PAIR_CRASH_LABEL: "true"}}})


def is_probe_pod(pod: dict) -> bool:
    containers = (pod.get("spec") or {}).get("containers") or []
    return (labels_of(pod).get(COMPONENT_LABEL) == "probe" and bool(containers)
            and (containers[0].get("command") or [])[:1] == ["sh"])


def logs_object(custom, ns: str, name: str, owner: list, dest: Path) -> None:
    """kwok's Logs object for a pod (its log file), through a CustomObjectsApi: no API discovery, which a
    dynamic client makes once per process (about 1 CPU-s in each of 8 probe shards at the start of a run)."""
    from kubernetes.client.exceptions import ApiException
    body = {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs",
            "metadata": {"name": name, "namespace": ns, "ownerReferences": owner},
            "spec": {"logs": [{"logsFile": str(dest), "previousLogsFile": str(dest)}]}}
    try:
        custom.create_namespaced_custom_object("kwok.x-k8s.io", "v1alpha1", ns, "logs", body)
    except ApiException as exc:  # one left by an earlier pod of the same name: now this pod's
        if exc.status != 409:
            raise
        custom.patch_namespaced_custom_object("kwok.x-k8s.io", "v1alpha1", ns, "logs", name,
                                              {"metadata": {"ownerReferences": owner}, "spec": body["spec"]})


_PROBE_THREAD = threading.local()
# Probe pods run in shards of nodes, each shard a process of its own with PROBE_THREADS threads, as each node has
# a kubelet of its own, so the watch keeps its own interpreter. On 16 cores at 1,024 nodes, 8 shards and 1 finished
# the probes alike (9.7 vs 9.4 s, docs/fleet-scale.md): the watch's V1Pod models set the pace then (see meta()).
PROBE_THREADS = 8


def probe_shard_count() -> int:
    """SIM_RUNTIME_SHARDS, else half the cores (one shard on 2 cores: the watch still has its own process)."""
    value = os.environ.get("SIM_RUNTIME_SHARDS", "")
    return int(value) if value.isdigit() and int(value) > 0 else max(1, (os.cpu_count() or 2) // 2)


def thread_apis():
    """(CoreV1Api, CustomObjectsApi) of one API client per probe thread, made once (clients() runs API discovery,
    too dear once per pod at 256 nodes)."""
    apis = getattr(_PROBE_THREAD, "apis", None)
    if apis is None:
        from kubernetes import client, config
        api = config.new_client_from_config(config_file=str(kubeconfig()))
        apis = _PROBE_THREAD.apis = (client.CoreV1Api(api), client.CustomObjectsApi(api))
    return apis


def probe_item(pod: dict, envs: list, dest: Path) -> dict:
    """What a shard needs to run a probe pod, as plain values (it crosses to another process)."""
    container = pod["spec"]["containers"][0]
    return {"ns": meta(pod)["namespace"], "name": meta(pod)["name"], "uid": meta(pod)["uid"],
            "node": pod["spec"]["nodeName"],
            "argv": list(container.get("command") or []) + list(container.get("args") or []),
            "env": {e["name"]: e["value"] for e in (container.get("env") or []) if e.get("value") is not None},
            "envs": envs, "dest": str(dest)}


# Launchers a probe entrypoint may name that fakebin replays (sim/simctl.py write_fakebin).
REPLAYED_LAUNCHERS = ("python3", "python", "torchrun")
# Stand-ins for the replayed launcher's output in a probe entrypoint's own output (entrypoint_output).
STDOUT_MARK, STDERR_MARK = "@@sim-replayed-stdout@@", "@@sim-replayed-stderr@@"
_ENTRYPOINTS: dict = {}
_ENTRYPOINTS_LOCK = threading.Lock()


def replayed(item: dict, env: dict):
    """The pod's log when its command is a probe entrypoint (`sh -c SCRIPT probe LAUNCHER SCRIPT.py PARAMS`) whose
    launcher fakebin replays: the replay answered here, in this process (sim/replay.py answer()), and the
    entrypoint's own output around it (entrypoint_output). None for any other command, which then runs as it is.
    A Python and a shell per pod were most of the runtime's CPU at 1,024 nodes (docs/fleet-scale.md)."""
    argv = item["argv"]
    launcher = argv[4].split() if len(argv) == 7 and argv[:2] == ["sh", "-c"] else []
    if not launcher or launcher[0] not in REPLAYED_LAUNCHERS:
        return None
    replay = _load_sim_module("sim_replay", SIM / "replay.py")
    stdout, stderr, rc = replay.answer(launcher[1:] + argv[5:], env)
    return entrypoint_output(argv[2], env, rc).replace(STDERR_MARK, stderr).replace(STDOUT_MARK, stdout)


def entrypoint_output(script: str, env: dict, rc: int) -> str:
    """What the entrypoint SCRIPT prints around a launcher that printed STDOUT_MARK and STDERR_MARK and exited with
    `rc`: the script itself run once per shard, script and exit code, with a stand-in for the launcher, so the
    collection's own entrypoint (its markers, its order) makes every replayed pod's log. It holds for a script whose
    output depends only on what its launcher prints and its exit code, as the probe entrypoint's does
    (PROBE_ENTRYPOINT in plugins/module_utils/workloads/_probe_pods.py; the unit test compares the two)."""
    key = (script, rc)
    with _ENTRYPOINTS_LOCK:
        if key not in _ENTRYPOINTS:
            stand_in = f"printf '%s' '{STDOUT_MARK}'; printf '%s' '{STDERR_MARK}' >&2; exit {int(rc)}"
            proc = subprocess.run(["sh", "-c", script, "probe", "sh -c", stand_in, "{}"], env=env,
                                  cwd=STATE / "exec", capture_output=True, timeout=30, check=False)
            _ENTRYPOINTS[key] = (proc.stdout + proc.stderr).decode("utf-8", errors="replace")
        return _ENTRYPOINTS[key]


def run_probe_pod(item: dict) -> None:
    """Run a probe pod's command as a kubelet would (replayed python3 on PATH, answered in this process: replayed());
    its output is the pod's log."""
    ns, name, dest = item["ns"], item["name"], Path(item["dest"])
    env = {"HOME": str(STATE / "exec"), "LANG": "C.UTF-8"}
    env.update({e["name"]: e["value"] for e in item["envs"]})
    env.update(item["env"])
    env["NODE_NAME"] = item["node"]
    env["PATH"] = next(e["value"] for e in item["envs"] if e["name"] == "PATH")
    try:
        text = replayed(item, env)
        if text is None:
            proc = subprocess.run(item["argv"], env=env, cwd=STATE / "exec", capture_output=True, timeout=120,
                                  check=False)
            text = proc.stdout.decode("utf-8", errors="replace") + proc.stderr.decode("utf-8", errors="replace")
    except subprocess.TimeoutExpired:
        text = "sim: the probe command ran past 120 s\n"
    raw = dest.with_suffix(".raw")
    raw.write_text(text)
    cri_log(raw, dest)
    try:  # the sim-probe-complete stage ends pods marked so
        core, custom = thread_apis()
        logs_object(custom, ns, name, [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": item["uid"]}], dest)
        # the response read as bytes: a V1Pod model of it cost 3.5 ms of CPU, per pod (see meta())
        core.patch_namespaced_pod(name, ns, {"metadata": {"annotations": {PROBE_DONE: "true"}}},
                                  _preload_content=False).data
    except Exception as exc:  # the pod may be gone already
        print(f"runtime: marking {ns}/{name} done: {type(exc).__name__}: {exc}", flush=True)


def probe_shard(queue) -> None:
    """One shard's kubelet: run each probe pod it is handed, PROBE_THREADS at a time, until it is handed None."""
    import concurrent.futures
    import kubernetes.client  # noqa: F401  imported before the first pod comes, not while it waits
    import kubernetes.config  # noqa: F401
    with concurrent.futures.ThreadPoolExecutor(max_workers=PROBE_THREADS, thread_name_prefix="probe-pod") as pool:
        for item in iter(queue.get, None):
            pool.submit(run_probe_pod, item)


def start_probe_shards() -> list:
    """A queue per shard, each read by its own process (spawned: the watch's threads are not forked with it)."""
    import multiprocessing
    context = multiprocessing.get_context("spawn")
    queues = []
    for index in range(probe_shard_count()):
        queue = context.Queue()
        context.Process(target=probe_shard, args=(queue,), name=f"probe-shard-{index}", daemon=True).start()
        queues.append(queue)
    return queues


def runtime() -> None:
    """Give every pod on a simulated node an Exec (replayed probes) and a Logs object (recorded logs)."""
    if exec_runtime.enabled(STATE):  # SIM_EXEC=host: every pod's command runs for real instead
        return exec_runtime.run(clients, STATE, SYSTEM_NAMESPACES)
    import zlib
    from kubernetes import watch
    shards = start_probe_shards()
    client, api, dyn = clients()
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    node_types = {}
    done = set()
    path_env = f"{STATE / 'fakebin'}:/usr/local/bin:/usr/bin:/bin"
    while True:
        try:
            for event in watch.Watch().stream(core.list_pod_for_all_namespaces, timeout_seconds=60,
                                              deserialize=False):
                pod = event["object"]
                ns, name = meta(pod).get("namespace"), meta(pod).get("name")
                node = (pod.get("spec") or {}).get("nodeName")
                key = (ns, name, meta(pod).get("uid"))
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
                owner = [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": meta(pod)["uid"]}]
                scenario = (STATE / "scenario").read_text().strip()
                envs = [{"name": "PATH", "value": path_env}, {"name": "SIM_NODE", "value": node},
                        {"name": "SIM_INSTANCE_TYPE", "value": node_types[node]},
                        {"name": "SIM_POD", "value": f"{ns}/{name}"}, {"name": "SIM_STATE", "value": str(STATE)},
                        {"name": "SIM_LEVEL", "value": labels_of(pod).get(LEVEL_LABEL, "")}]
                dest = STATE / "podlogs" / f"{ns}_{name}.log"
                if is_probe_pod(pod):
                    # A probe pod's entrypoint is its probe: run that command here (python3 is the
                    # replayer), make its output the pod's log, then let the sim-probe-complete stage end it.
                    # Nothing execs into it (the runner reads its log), so it gets no Exec object.
                    shards[zlib.crc32(node.encode()) % len(shards)].put(probe_item(pod, envs, dest))
                    done.add(key)
                    continue
                apply(dyn, {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Exec",
                            "metadata": {"name": name, "namespace": ns, "ownerReferences": owner},
                            "spec": {"execs": [{"local": {"workDir": str(STATE / "exec"), "envs": envs}}]}})
                labels = labels_of(pod)
                source = log_source(pod, scenario)
                if labels.get(LEVEL_LABEL) == ISOLATE_LEVEL and labels.get(ROLE_LABEL) == "launcher":
                    pair_launcher_log(core, pod, scenario, dest)
                elif source is not None:
                    cri_log(source, dest)
                else:
                    dest.write_text("")
                logs_object(custom, ns, name, owner, dest)
                done.add(key)
        except Exception as exc:  # keep serving: the API server may restart or a watch may expire
            print(f"runtime: {type(exc).__name__}: {exc}", flush=True)
            time.sleep(1)
