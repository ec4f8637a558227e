# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The level registry: the one list of the validation levels, in run order.

Everything that names levels reads this list (the runner through the `rlstack.validation.levels` lookup, the
plan and the report through `_plan`) or is tested against it (playbooks/validate.yml's entries and tags, the
role argument specs' choices, awx/surveys.yml, validate.sh, local mode's list of level roles).

Fields of a level:
  id        the level's role (roles/<id>) and the key of its row in report.json
  level     what the results table shows (L0 ... L6; Phase 0 is L3.5)
  name      the level's name in the results table
  order     sort key of its rows (3.5 puts Phase 0 between L3 and L4)
  tags      tags that select it (the first is its own; from_<first tag> selects it and every level after)
  skip_to   what validate.sh's --level/--skip-to call it (a number)
  kind      how the level runs: probe (a probe pod per target: runner tasks/probe_level.yml), jobs (one Job per
            example of validation_examples: runner tasks/example_jobs.yml) or mpijob (nccl-tests as an MPIJob,
            the level role's own steps, roles/<id>/tasks/steps.yml)
  probe     the probe script in roles/<id>/files/ (kind probe), else None
  per_example  whether the level has one row per example (L5, L6 with an evaluation)
  local     what local mode renders for the level: the kinds of objects it would create
  only_when_enabled  the level runs only when validation_phase0_enabled or its own tag asks for it
  runs_before  the level that it runs right before (None: its place in this list). Phase 0 runs before L3, the
            first level that needs many expensive nodes, so that its pass or failure decides whether they are
            used (docs/phase0.md); its row, tags and number stay L3.5 (from_l3 still selects it).
What the runner decides by these fields (never by a level's id; tests/unit/plugins/module_utils/test_levels.py
greps the runner's task files and _plan.py for ids):
  example_needs  (per_example levels) the key an example of validation_examples must set to get a row here
            (L6: evaluation), else None: every example
  judge_without_targets  the level's <id>_checks count even when no node matched (L0 judges the cluster itself)
  preflight the runner's plan runs roles/<id>/tasks/preflight.yml before anything is created, when the plan
            runs the level (L3: can the cluster run its launcher)
  isolate_from  a failed multi-node NCCL result of the level is where bad-node isolation starts (roles/isolate);
            'instance_type': its command narrows the nodes to the instance type the level ran on (Phase 0 runs
            on the cheap nodes), 'all': every GPU node; None: the level offers no isolation
  opens_phase0_gate  the level's pass in this run opens the Phase 0 gate (docs/phase0.md): its verdict settles a gate
            that waited for it (runner tasks/finish_level.yml), and the run's end hands its record, the <id>_result
            its steps set, to the next job of an AWX workflow (runner tasks/finish_run.yml)
  after_probe  (kind probe) the role's task file that gathers the rest of the evidence after the probe (L3:
            nccl-tests across nodes, evidence.yml), else None
  asks_efa  the level's pods may ask for EFA (nccl-tests across nodes, an example with efa): when the plan runs such a
            level, it reads the cluster's DeviceClasses once (tasks/device_classes.yml), and runner_efa_request says
            how every pod asks (the EFA DRA driver's claim or the extended resource) without a task of the level's
  node_selector_setting  the level runs on the nodes its own setting of that name selects (a dict of labels; Phase
            0: phase0_efa_node_selector, the cheap EFA nodes), not on validation_gpu_node_selector's; None: the GPU
            nodes. The plan reads the nodes of every selector of the levels it runs in one module run
            (runner tasks/nodes.yml), so such a level has no node read of its own
  phase0_gated  the Phase 0 gate keeps the level from starting on expensive nodes without a Phase 0 pass:
            'always' (L5, L6), 'multi_node' (L3: only with two nodes or more, one never crosses the network), None
Every level has every field (LEVEL_DEFAULTS fills what a row leaves out); the runner defaults one only where
a row of the results is no level (the Phase 0 gate, the baseline, the bad nodes).
"""

from __future__ import annotations

import copy

LEVELS = (
    {"id": "l0_infrastructure", "level": "L0", "name": "Infrastructure", "order": 0, "tags": ["l0", "dcgm"], "skip_to": "0",
     "kind": "probe", "probe": "probe_node.py", "per_example": False, "local": ["probe_pod"],
     "only_when_enabled": False, "judge_without_targets": True},
    {"id": "l1_runtime", "level": "L1", "name": "Runtime", "order": 1, "tags": ["l1"], "skip_to": "1",
     "kind": "probe", "probe": "probe_runtime.py", "per_example": False, "local": ["probe_pod"],
     "only_when_enabled": False},
    {"id": "l2_single_gpu", "level": "L2", "name": "Single GPU", "order": 2, "tags": ["l2"], "skip_to": "2",
     "kind": "probe", "probe": "probe_model.py", "per_example": False, "local": ["probe_pod"],
     "only_when_enabled": False},
    {"id": "l3_multi_gpu", "level": "L3", "name": "Multi GPU / NCCL", "order": 3, "tags": ["l3"], "skip_to": "3",
     "kind": "probe", "probe": "probe_multigpu.py", "per_example": False, "local": ["probe_pod", "mpijob"],
     "only_when_enabled": False, "preflight": True, "isolate_from": "all", "phase0_gated": "multi_node",
     "after_probe": "evidence.yml", "asks_efa": True},
    {"id": "phase0_efa", "level": "L3.5", "name": "Phase 0 EFA", "order": 3.5, "tags": ["phase0", "l3_5"],
     "skip_to": "3.5", "kind": "mpijob", "probe": None, "per_example": False, "local": ["mpijob"],
     "only_when_enabled": True, "runs_before": "l3_multi_gpu", "isolate_from": "instance_type",
     "opens_phase0_gate": True, "asks_efa": True, "node_selector_setting": "phase0_efa_node_selector"},
    {"id": "l4_rollout", "level": "L4", "name": "Rollout", "order": 4, "tags": ["l4"], "skip_to": "4",
     "kind": "probe", "probe": "probe_sim_import.py", "per_example": False, "local": ["probe_pod"],
     "only_when_enabled": False},
    {"id": "l5_training_step", "level": "L5", "name": "Training step", "order": 5, "tags": ["l5"], "skip_to": "5",
     "kind": "jobs", "probe": None, "per_example": True, "local": ["job"], "only_when_enabled": False,
     "phase0_gated": "always", "asks_efa": True},
    {"id": "l6_evaluation", "level": "L6", "name": "Evaluation", "order": 6, "tags": ["l6"], "skip_to": "6",
     "kind": "jobs", "probe": None, "per_example": True, "local": ["job"], "only_when_enabled": False,
     "example_needs": "evaluation", "phase0_gated": "always", "asks_efa": True},
)

KINDS = ("probe", "jobs", "mpijob")

# What a row that leaves a field out means (levels() and by_id() return every row with all of them).
LEVEL_DEFAULTS = {"probe": None, "per_example": False, "only_when_enabled": False, "runs_before": None,
                  "example_needs": None, "judge_without_targets": False, "preflight": False, "isolate_from": None,
                  "opens_phase0_gate": False, "phase0_gated": None, "after_probe": None, "asks_efa": False,
                  "node_selector_setting": None}

# Roles playbooks/validate.yml runs that are not levels: they name bad nodes rather than judge the stack,
# have no row in the results table and no place in the run order (docs/isolation.md). Their settings are
# checked with the levels' (the setting_errors lookup).
DIAGNOSTICS = (
    {"id": "isolate", "tags": ["isolate"], "after": ["phase0_efa", "l3_multi_gpu"]},
)


# Rows of the results that are not levels: the baseline comparison's (roles/runner/tasks/baseline.yml). The report
# prints them on their own line and does not count them. (The Phase 0 gate's row, GATE, stays in the table: it
# decides whether any level runs.)
DIAGNOSTIC_ROWS = ("baseline",)


def diagnostic_ids():
    return [d["id"] for d in DIAGNOSTICS]


def playbook_tags():
    """Every tag that selects something in playbooks/validate.yml, in the registry's order: each level's tags and
    from_<its own tag> (it and every level after it), each diagnostic's tags."""
    tags = []
    for index in range(len(LEVELS)):
        tags += [tag for tag in cumulative_tags(index) if tag not in tags]
    return tags + [tag for diagnostic in DIAGNOSTICS for tag in diagnostic["tags"] if tag not in tags]


def _full(level):
    return dict(copy.deepcopy(LEVEL_DEFAULTS), **copy.deepcopy(level))


def levels():
    """A copy of the registry, every field filled (callers may change what they get)."""
    return [_full(level) for level in LEVELS]


def ids():
    return [level["id"] for level in LEVELS]


def own_tags():
    """The first tag of each level, in order: the names surveys, validate.sh and argument specs offer."""
    return [level["tags"][0] for level in LEVELS]


def row_level(row_id):
    """The level a result row belongs to: a row id such as l5_training_step/<example> (one row per example) names
    its level before the slash."""
    return str(row_id).partition("/")[0]


def by_id(level_id):
    """The registry entry of one level (a copy); a row id such as l5_training_step/<example> names its level."""
    base = row_level(level_id)
    for level in LEVELS:
        if level["id"] == base:
            return _full(level)
    raise KeyError("%r is not a level; the levels are %s" % (level_id, ", ".join(ids())))


def info(level_id):
    """What a verdict needs to name a level: {id, level, name, order}."""
    level = by_id(level_id)
    return {"id": level["id"], "level": level["level"], "name": level["name"], "order": level["order"]}


def run_order():
    """The level ids in the order playbooks/validate.yml runs them: the registry's, with each level that names
    ``runs_before`` moved right before that level."""
    out = [level["id"] for level in LEVELS if not level.get("runs_before")]
    for level in LEVELS:
        if level.get("runs_before"):
            out.insert(out.index(level["runs_before"]), level["id"])
    return out


def cumulative_tags(index):
    """Tags that select the level at `index`: its own plus from_<first tag> of it and of every level before."""
    own = list(LEVELS[index]["tags"])
    return own + ["from_" + LEVELS[i]["tags"][0] for i in range(index + 1)]
