"""The scenario engine (split from simctl.py): a scenario of sim/scenarios.yaml as kwok stages (how each pod of
each level ends: its exit code, its termination message, an image that never pulls) and as node health
(conditions, labels, taints), applied to the running cluster."""

from __future__ import annotations

import datetime
import json

from simcommon import (
    EXAMPLE_LABEL,
    LEVEL_LABEL,
    MANAGED,
    NOT_A_TRAINJOB_NODE,
    PAIR_CRASH_LABEL,
    ROLE_EXPR,
    STATE,
    WAITS_FOR_PEERS,
    apply,
    clients,
    die,
    log,
    scenarios,
)


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
