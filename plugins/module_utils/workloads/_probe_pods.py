# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The probe pods (split from _k8s_status.py, which reads objects): how a probe runs as its pod's entrypoint
and prints its result into the log (PROBE_ENTRYPOINT, the output markers), the pods of a level built from the one
rendered template (one per target node), and reading their results back, a pod that never started included.

Standard library only."""

from __future__ import annotations

import json

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _diagnose
from ansible_collections.rlstack.validation.plugins.module_utils._data import compact_json
from ansible_collections.rlstack.validation.plugins.module_utils._limits import LOST_NODE_TOLERATION_S
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._k8s_status import TARGET_LABEL, dns_label


RC_MARKER = "__rlstack_rc="
STDOUT_MARKER = "__rlstack_stdout__"


# A probe pod runs its probe as its entrypoint and prints everything into its log: the probe's stderr,
# a marker line, its stdout (the JSON result last), then its exit code. Reading the log needs only
# pods/log, and a pod's log is one GET, so every node's result is read in parallel (docs/architecture.md).
# $1 is the launcher (word-split on purpose: "torchrun --nproc_per_node=8"), $2 the script, $3 the JSON.
PROBE_ENTRYPOINT = ('d=$(mktemp -d 2>/dev/null || echo /tmp); $1 "$2" "$3" >"$d/out" 2>"$d/err"; rc=$?; '
                    'cat "$d/err"; echo ' + STDOUT_MARKER + '; cat "$d/out"; echo ' + RC_MARKER + '$rc')


def probe_command(launcher, script, params):
    """The container command of a probe pod: run `launcher script params-json` as PROBE_ENTRYPOINT says."""
    return ["sh", "-c", PROBE_ENTRYPOINT, "probe", str(launcher), str(script),
            json.dumps(params if params is not None else {}, sort_keys=True)]


def lost_node_tolerations(tolerations):
    """`tolerations` plus, for each of _diagnose.NOT_READY_TAINTS (the NoExecute taints the node lifecycle
    controller puts on a node that stopped reporting or reports not ready) that no toleration names, a
    NoExecute toleration of LOST_NODE_TOLERATION_S seconds. The taint eviction controller deletes a pod after the least
    tolerationSeconds of its tolerations matching the taint (getMinTolerationTime, pkg/controller/tainteviction,
    k8s v1.34.4), also when a blanket toleration matches too, so a probe pod on a lost node is gone 30 s after the
    taint instead of 300 s (the DefaultTolerationSeconds admission plugin adds 300 s only for keys the pod does
    not name). A key the user's tolerations name is left as they wrote it."""
    out = [dict(t) for t in tolerations or []]
    named = set(t.get("key") for t in out if t.get("key"))
    for key in _diagnose.NOT_READY_TAINTS:
        if key not in named:
            out.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                        "tolerationSeconds": LOST_NODE_TOLERATION_S})
    return out


def probe_pods(pod, targets, name_prefix):
    """The probe pods of a level, one per target, from the one pod roles/runner/templates/probe_pod.yml.j2
    rendered for the level: each gets its name (name_prefix-<node>), its target label, its node (a
    kubernetes.io/hostname nodeSelector), the target's GPUs and EFA devices as limits, the node in its
    probe's params (the last argument of probe_command), and short tolerations of a lost node
    (lost_node_tolerations). Rendering the template once per target cost about 0.45 s of Jinja each on the
    2-core machine: 121 s of L0's 237 s over 256 nodes (docs/fleet-scale.md)."""
    out = []
    for target in targets or []:
        node = str(target.get("node", ""))
        one = json.loads(json.dumps(pod))  # a deep copy of plain data
        meta = one.setdefault("metadata", {})
        meta["name"] = dns_label("%s-%s" % (name_prefix, dns_label(node)))
        meta.setdefault("labels", {})[TARGET_LABEL] = dns_label(node)
        spec = one.setdefault("spec", {})
        spec["nodeSelector"] = dict(spec.get("nodeSelector") or {}, **{"kubernetes.io/hostname": node})
        spec["tolerations"] = lost_node_tolerations(spec.get("tolerations"))
        container = spec["containers"][0]
        command = list(container.get("command") or [])
        if command:
            params = json.loads(command[-1])
            params["node"] = node
            command[-1] = json.dumps(params, sort_keys=True)
            container["command"] = command
        limits = {}
        if int(target.get("gpus") or 0) > 0:
            limits[_diagnose.GPU] = int(target["gpus"])
        if int(target.get("efa") or 0) > 0:
            limits[_diagnose.EFA] = int(target["efa"])
        if limits:
            container["resources"] = {"limits": limits}
        else:
            container.pop("resources", None)
        out.append(one)
    return out


def split_probe_log(log):
    """A probe pod's log to (stdout, stderr); a log without the marker (cut short) is all stdout."""
    text = log or ""
    head, sep, tail = text.partition(STDOUT_MARKER + "\n")
    if not sep:
        head, sep, tail = text.partition(STDOUT_MARKER)
    if not sep:
        return text, ""
    return tail, head


def probe_output(stdout, rc=None, stderr=""):
    """Read a probe's output (contract in docs/probes.md) from an exec or command result.

    Returns {status: ok|crashed|no_output, rc, data, error, stdout_tail, stderr_tail, stdout}, where stdout and its
    tail leave out the JSON line that became `data`. `rc` may be given, or is read
    from the `__rlstack_rc=N` marker that the runner appends because kwok (and some exec transports)
    lose non-zero exit codes.
    """
    text = stdout or ""
    lines = text.splitlines()
    if rc is None:
        for i in range(len(lines) - 1, -1, -1):
            if lines[i].startswith(RC_MARKER):
                try:
                    rc = int(lines[i][len(RC_MARKER):].strip())
                except ValueError:
                    rc = None
                del lines[i]
                break
    data = None
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i].strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                parsed = json.loads(line)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                data = parsed
                # the result is `data`: kept once (an L0 probe's is 16 kB, and every outcome is copied by Ansible)
                del lines[i]
        break
    tail = "\n".join(lines[-15:])
    full = "\n".join(lines)
    err_tail = "\n".join((stderr or "").splitlines()[-15:])
    if data is None:
        error = "the probe printed no JSON result (exit code %s)" % rc
        if err_tail:
            error += ": " + err_tail.splitlines()[-1]
        return {"status": "no_output", "rc": rc, "data": None, "error": error,
                "stdout_tail": tail, "stderr_tail": err_tail, "stdout": full}
    if rc not in (0, None) or data.get("crashed"):
        last = ((data.get("error") or "").strip().splitlines() or [""])[-1]
        error = "the probe crashed (exit code %s): %s" % (rc, last)
        return {"status": "crashed", "rc": rc, "data": data, "error": error, "stdout_tail": tail,
                "stderr_tail": err_tail, "stdout": full}
    return {"status": "ok", "rc": rc, "data": data, "error": None, "stdout_tail": tail, "stderr_tail": err_tail,
            "stdout": full}


# Problems of a pod that its node's state explains: a node gone NotReady leaves its pods Pending, marks them not
# ready, and after tolerationSeconds (a probe pod's 30 s, lost_node_tolerations) the taint manager deletes them.
NODE_CONSEQUENCES = ("start_timeout", "node_not_ready", "deleted", "evicted")


def probe_not_started(targets, ran, start_states, events, start_timeout_s, nodes=None, listed=True):
    """{node: outcome} for each probe target without a probe result (runner/tasks/probe_kubernetes.yml).

    `ran` holds the nodes that have a result; `start_states` are pods_summary()'s states of the probe pods
    (matched by their target label, the node's dns_label); `events` the loop results of a
    kubernetes.core.k8s_info Event read per pod that did not start (`item.pod`, `resources`); `nodes` the
    target nodes as read after the wait (a node that went NotReady or was cordoned meanwhile is the cause);
    `listed` whether the pods could be listed at all (else a missing pod proves nothing). The outcome is
    {status: not_started, data: None, error, hint, events}: the pod's own problem when one was seen (an
    eviction, an image pull error, ...), else its node's, else that its pod is gone (the probe pods all
    exist before the wait, so a missing one was deleted or evicted), else that it did not start within
    `start_timeout_s`. A NotReady node comes before what it did to the pod (see NODE_CONSEQUENCES).
    """
    messages = {}
    for result in events or []:
        pod = (result.get("item") or {}).get("pod")
        messages[pod] = [e.get("message") for e in result.get("resources") or []]
    by_name = dict(((n.get("metadata") or {}).get("name"), n) for n in nodes or [])
    states = {}
    for state in start_states or []:  # the first state of each target, as a search from the start finds it
        states.setdefault(state.get("target"), state)
    out = {}
    for target in targets or []:
        node = target.get("node")
        if node in (ran or ()):
            continue
        state = states.get(dns_label(node)) or {}
        problem = state.get("problem")
        node_problem = _diagnose.node_problem(by_name[node]) if node in by_name else None
        if problem and not (node_problem and problem.get("kind") in NODE_CONSEQUENCES):
            error = "%s: %s" % (problem.get("reason"), problem.get("message"))
            hint = problem.get("hint")
        elif node_problem:
            error = "the probe pod did not finish (%s): %s" % (state.get("phase") or "gone", node_problem[1])
            hint = _diagnose.FIXES[node_problem[0]]
        elif not state and listed:
            error = ("the probe pod is gone: it was deleted or evicted while the level waited on it (every "
                     "probe pod exists before the wait begins)")
            hint = _diagnose.FIXES["deleted"]
        else:
            error = "the probe pod did not start within %s s (%s)" % (
                start_timeout_s, state["phase"] if "phase" in state else "its state could not be read")
            hint = "the node may be out of GPUs or the image pull is slow; check the pod events"
        seen = []
        for message in messages.get(state.get("pod") or "", []):
            if message not in seen:
                seen.append(message)
        out[node] = {"status": "not_started", "data": None, "error": error, "hint": hint, "events": seen}
    return out


def outcomes_text(outcomes):
    """Probe outcomes ({node: outcome}, probe_results) as the compact JSON text rlstack.validation.probe_run returns."""
    return compact_json(outcomes)


def outcomes_of(value):
    """Probe outcomes as a dict: from probe_run's JSON text (outcomes_text), or a dict as it is (the host transport
    builds one, tasks/probe_host.yml); none is no outcome. Raises ValueError for text that is not a JSON object."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        value = json.loads(value)
        if not isinstance(value, dict):
            raise ValueError("probe outcomes are JSON of a %s, not of an object {node: outcome}" % type(value).__name__)
    return value


def probe_results(logs, targets, start, events=None, start_timeout_s=900, finish_timeout_s=None, nodes=None,
                  listed=True):
    """Every target's probe outcome, from the probe pods' logs (rlstack.validation.pod_logs) and states.

    logs: pod_logs' `pods`; targets: [{node, ...}]; start: pods_summary() of the wait (its `states` say
    which pods never ran and why); events: the loop results of a kubernetes.core.k8s_info Event read per
    pod that did not run; nodes: the target nodes read after the wait; listed: whether the wait could list
    the pods (see probe_not_started). Returns {node: outcome} with outcome = {status:
    ok|crashed|no_output|timed_out|not_started, data, error, hint, ...}; the contract is in docs/probes.md.
    """
    by_name = dict(((n.get("metadata") or {}).get("name"), n) for n in nodes or [])
    states = {s.get("target"): s for s in (start or {}).get("states") or []}
    read = {}
    for entry in logs or []:
        read[(entry.get("labels") or {}).get(TARGET_LABEL, "")] = entry
    results = {}
    for target in targets or []:
        node = target.get("node", "")
        label = dns_label(node)
        state = states.get(label) or {}
        entry = read.get(label)
        if entry is None:
            continue
        phase = entry.get("phase") or state.get("phase") or ""
        if phase in ("Succeeded", "Failed", "Running") and (entry.get("log") or not entry.get("error")):
            stdout, stderr = split_probe_log(entry.get("log") or "")
            out = probe_output(stdout, stderr=stderr)
            node_problem = _diagnose.node_problem(by_name[node]) if node in by_name else None
            if phase == "Running" and node_problem:
                out.update(status="timed_out", error="the probe did not finish within %s s: %s" % (
                    finish_timeout_s or "the", node_problem[1]), hint=_diagnose.FIXES[node_problem[0]])
            elif phase == "Running":
                out.update(status="timed_out", error="the probe was still running after %s s; its watchdog did "
                           "not stop it" % (finish_timeout_s or "the"), hint="read the probe pod's log; the node "
                           "may hang on a GPU or storage call")
            elif phase == "Failed" and out["status"] == "ok":
                problem = state.get("problem") or {}
                out.update(status="crashed", error="the probe pod failed (%s)" % (
                    problem.get("message") or problem.get("reason") or "exit code %s" % entry.get("exit_code")))
            results[node] = out
        elif entry.get("error") and phase in ("Succeeded", "Failed"):
            cause, why = _diagnose.log_read_cause(entry["error"], entry.get("node") or node)
            results[node] = {"status": "no_output", "data": None, "rc": None,
                             "error": "the probe pod's log could not be read: %s" % why,
                             "hint": _diagnose.FIXES[cause], "events": []}
    results.update(probe_not_started(targets, results, (start or {}).get("states") or [], events or [],
                                     start_timeout_s, nodes=nodes, listed=listed))
    return results
