"""What the simulated cluster's parts share (split from simctl.py): its paths and state directory, the labels and
annotations the collection's objects and the sim's stages use, logging, the cluster's clients, server-side apply
and a bounded wait."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import exec_runtime  # sim/exec_runtime.py: apply() adapts kwok's stages to the exec mode


SIM = Path(__file__).resolve().parent


ROOT = SIM.parent
STATE = Path(os.environ.get("SIM_STATE", ROOT / ".sim"))


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
