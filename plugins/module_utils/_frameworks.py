# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Framework contracts: what L5 (one training step) and L6 (evaluation only) need from each RL framework.

The one home of these facts. Each contract says how the one-step and evaluation-only overrides reach
the program (appended arguments, or an environment variable for a launcher that reads one), which
log lines count the steps (regexes with groups `step` and `total`), which lines say the step is done,
and which lines carry success metrics (groups `name` and `value`). Every fact names the file and the
version it was read in (`sources`); docs/frameworks.md explains how to add a contract.

Standard library only.
"""

from __future__ import annotations

import json
import re

# A metric value as frameworks print it: 0.69, '0.69' (transformers' log dict), array(0.69, dtype=float32)
# (numpy 0-d, RLinf), np.float64(0.5) (numpy >= 2 repr, veRL), tensor(0.5).
VALUE = r"(?:'|\"|np\.float\d+\(|numpy\.float\d+\(|array\(|tensor\()?(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"

CONTRACTS = {
    "rlinf": {
        "checked_against": "RLinf tag v0.3 (git) and the PyPI wheel rlinf 0.3.0",
        "train": {
            "command": ["python", "examples/embodiment/train_embodied_agent.py", "--config-path",
                        "examples/embodiment/config", "--config-name", "<config>"],
            "overrides": ["runner.max_steps=1", "runner.save_interval=-1", "runner.val_check_interval=-1"],
            "sources": [
                "examples/embodiment/run_embodiment.sh (v0.3): a fixed python command; it forwards no argument "
                "and reads no override variable, so the overrides must be appended to train_embodied_agent.py "
                "(HEAD reads only STEPS/SAVE_INTER/NODES)",
                "rlinf/runners/embodied_runner.py:654-659 (0.3.0): max_steps = min(steps per epoch x "
                "runner.max_epochs, runner.max_steps); maniskill_ppo_openvlaoft.yaml has max_epochs 1000, "
                "max_steps -1",
                "rlinf/utils/runner_utils.py check_progress (0.3.0): an interval <= 0 turns saving/validation off",
            ],
        },
        "eval": {
            "command": ["bash", "evaluations/run_eval.sh", "<config>"],
            "overrides": [],
            "sources": [
                "evaluations/run_eval.sh (v0.3): `run_eval.sh [benchmark] <config> [hydra_overrides...]`, the "
                "overrides are appended to eval_embodied_agent.py",
                "evaluations/eval_embodied_agent.py (v0.3): sets runner.task_type=embodied_eval and runs "
                "EmbodiedEvalRunner; train_embodied_agent.py has no only_eval branch",
            ],
        },
        "step_patterns": [
            r"Global Step:\s+(?P<step>\d+)/(?P<total>\d+)",
            r"Global Step:\s+\d+%\|[^|]*\|\s*(?P<step>\d+)/(?P<total>\d+)",
        ],
        "done_markers": [r"Global Step:\s+1/1\b", r"Global Step:\s+100%\|[^|]*\|\s*1/1\b"],
        "metric_patterns": [r"'(?P<name>eval/success_(?:once|at_end))':\s*" + VALUE],
        # The Ray cluster the run saw: a multi-node example passes only when this shows all its nodes.
        "cluster_patterns": [r"RLinf is running on a cluster with (?P<nodes>\d+) nodes? and "
                             r"(?P<gpus>\d+) accelerators?\b"],
        "sources": [
            "rlinf/scheduler/cluster/cluster.py:355-374 (0.3.0): Cluster._init_and_launch_managers waits while "
            "fewer Ray nodes are alive than cluster.num_nodes (WARNING `Waiting for N nodes to be ready, currently "
            "M nodes available.`), then logs INFO f\"{SYS_NAME} is running on a cluster with {len(self._nodes)} "
            "node{'s' if ...} and {self.num_accelerators} accelerator{'s' if ...}. The nodes' details are: \" "
            "through the `RLinf` logger, format `[%(levelname)s %(asctime)s %(name)s] %(message)s` (:213-227)",
            "rlinf/utils/metric_utils.py:301 (0.3.0): f\"Global Step: {step + 1:4d}/{total_steps}\" prints "
            "`Global Step:    1/1`",
            "rlinf/runners/reasoning_runner.py:440 (0.3.0): the math runner's tqdm bar, desc=\"Global Step\"",
            "rlinf/runners/embodied_eval_runner.py:79-83 (0.3.0): logger.info({'eval/<k>': v}); values are "
            "0-d numpy arrays (metric_utils.py compute_evaluate_metrics), printed `array(0.69, dtype=float32)`",
            "docs evaluations/reference/results.rst: eval/success_once is the task success rate; there is no "
            "success_rate metric",
        ],
    },
    "verl": {
        "checked_against": "the PyPI wheel verl 0.9.1",
        "train": {
            "command": ["python3", "-m", "verl.trainer.main_ppo"],
            "overrides": ["trainer.total_training_steps=1", "trainer.logger=[console]"],
            "sources": [
                "verl/trainer/config/ppo_trainer.yaml:147 total_training_steps: null; ray_trainer.py:437-441 it "
                "replaces the epoch-derived count and prints `Total training steps: N`",
                "ppo_trainer.yaml:156 logger: [console, wandb]: wandb needs the network, console prints the "
                "step lines (verl/utils/tracking.py:176-180)",
                "the example scripts forward \"$@\"; nothing in verl reads HYDRA_OVERRIDES",
            ],
        },
        "eval": {
            "command": ["python3", "-m", "verl.trainer.main_ppo"],
            "overrides": ["trainer.val_only=True", "trainer.val_before_train=True", "trainer.logger=[console]"],
            "sources": ["verl/trainer/ppo/ray_trainer.py:1438-1446 (0.9.1): val_only returns after the initial "
                        "validation, which runs only while val_before_train is true"],
        },
        "step_patterns": [
            r"\bstep:(?P<step>\d+) - ",
            r"Total training steps: (?P<total>\d+)",
            r"Training Progress:\s+\d+%\|[^|]*\|\s*(?P<step>\d+)/(?P<total>\d+)",
        ],
        "done_markers": [r"\bstep:1 - "],
        "metric_patterns": [r"(?P<name>val-core/\S+?/mean@\d+):" + VALUE],
        "sources": [
            "verl/utils/logger/aggregate_logger.py:26-32 (0.9.1): `step:N - key:pformat(value) - ...`; numpy "
            ">= 2 (required by verl 0.9.1) prints np.float64(0.5)",
            "verl/trainer/ppo/ray_trainer.py:721-738 (0.9.1): validation metrics are "
            "val-core|val-aux/<data_source>/<var>/<metric>; val-core is acc (or reward) mean@N",
            "verl/trainer/ppo/ray_trainer.py:1448 (0.9.1): tqdm desc=\"Training Progress\"",
        ],
    },
    "trl": {
        "checked_against": "the PyPI wheels trl 1.16.0 and transformers 5.24.0",
        "train": {
            "command": ["python", "tests/frameworks/trl_grpo_one_step.py", "train"],
            "overrides": ["--max_steps", "1", "--save_strategy", "no", "--report_to", "none"],
            "sources": [
                "trl/trainer/grpo_config.py (1.16.0): GRPOConfig extends transformers.TrainingArguments, parsed "
                "from the command line by trl's TrlParser",
                "transformers/training_args.py:779 (5.24.0): max_steps defaults to -1 (num_train_epochs, 3, "
                "decides)",
            ],
        },
        "eval": {
            "command": ["python", "tests/frameworks/trl_grpo_one_step.py", "eval"],
            "overrides": [],
            "sources": ["TRL has no evaluation-only GRPO entry point: the example's own evaluation script runs "
                        "(generation on held-out prompts) and prints eval/success_rate=<x>"],
        },
        "step_patterns": [r"^\s*\d+%\|[^|]*\|\s*(?P<step>\d+)/(?P<total>\d+) \["],
        "done_markers": [r"'train_runtime':"],
        "metric_patterns": [r"(?P<name>[\w/.-]*success_rate)\s*[:=]\s*" + VALUE],
        "sources": [
            "transformers/trainer_callback.py:645 (5.24.0): ProgressCallback's tqdm(total=state.max_steps), "
            "no description, so `1/1 [` is the step counter (datasets' bars carry a description)",
            "transformers/trainer.py:2010 (5.24.0): speed_metrics('train') logs train_runtime when train() ends",
        ],
    },
    "custom": {
        "checked_against": "the collection's own convention",
        "train": {"command": [], "overrides": [], "sources": []},
        "eval": {"command": [], "overrides": [], "sources": []},
        "step_patterns": [],
        "done_markers": [r"TRAINING_STEP_TEST_PASSED"],
        "metric_patterns": [r"(?P<name>[\w/.-]*success_rate)\s*[:=]\s*" + VALUE],
        "cluster_patterns": [],
        "sources": ["TRAINING_STEP_TEST_PASSED is echoed by a wrapper after the program exits 0 (the RLinf-on-EKS "
                    "sample's tests/manifests/training-step-test.yaml:110); no framework prints it"],
    },
}

# Simulators whose import needs a config the collection can provide (L4 checks it, L4/L5/L6 pods get it).
SIMULATORS = {
    "libero": {
        "checked_against": "PyPI libero 0.1.1 (sdist), libero/libero/__init__.py",
        "module_pattern": r"^libero(\.|$)",
        "prompt_pattern": r"specify a custom path for the dataset folder",
        "config_env": "LIBERO_CONFIG_PATH",
        "config_file": "config.yaml",
        "default_dir": "~/.libero",
        # get_default_path_dict(): every key get_libero_path() may be asked for, relative to the package.
        "config_keys": {"benchmark_root": "", "bddl_files": "bddl_files", "init_states": "init_files",
                        "datasets": "../datasets", "assets": "assets"},
        "sources": [
            "libero/libero/__init__.py:4-8 (0.1.1): config_file = $LIBERO_CONFIG_PATH/config.yaml, default "
            "~/.libero/config.yaml; LIBERO_DATASET_DIR is read nowhere",
            "libero/libero/__init__.py:101-106 (0.1.1): when that file is missing, the import asks "
            "'Do you want to specify a custom path for the dataset folder? (Y/N): ' with input()",
            "libero/libero/__init__.py:14-37,40-52 (0.1.1): the keys benchmark_root, bddl_files, init_states, "
            "datasets, assets; get_libero_path() asserts the asked key is in the file",
        ],
    },
}

# Where the collection mounts a simulator's config in L4/L5/L6 pods (the ConfigMap's directory).
SIMULATOR_CONFIG_DIR = "/etc/rlstack/libero"

MODES = {"train": "train", "eval": "eval"}


class ContractError(ValueError):
    """An example names an unknown framework or a bad pattern."""


def contract(name, extra=None):
    """The contract of framework `name` (default custom), with the example's own keys over it."""
    name = name or "custom"
    if name not in CONTRACTS:
        raise ContractError("framework '%s' has no contract; use one of %s, or custom with its own markers"
                            % (name, ", ".join(sorted(CONTRACTS))))
    out = dict(CONTRACTS[name], name=name)
    for key, value in (extra or {}).items():
        if value not in (None, "", []):
            out[key] = value
    for key in ("step_patterns", "done_markers", "metric_patterns", "cluster_patterns"):
        for pattern in out.get(key) or []:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ContractError("%s pattern %r of framework '%s' is not a regular expression: %s"
                                    % (key, pattern, name, exc)) from None
    return out


def log_lines(log):
    """The log's lines; tqdm's carriage-return updates count as lines of their own."""
    return [line for line in re.split(r"\r\n|\r|\n", log or "") if line.strip()]


def launch(framework, mode, example):
    """How one example runs in `mode`: {command, args, env, overrides, delivery}.

    The contract's overrides (plus the example's own) are appended to the command, unless the example
    says its launcher reads them from a variable (`overrides_env`, e.g. HYDRA_OVERRIDES for the
    RLinf-on-EKS sample's run_training_eks.sh)."""
    example = dict(example or {})
    part = contract(framework)[MODES[mode]]
    evaluation = example.get("evaluation") or {}
    own = example.get("overrides") if mode == "train" else evaluation.get("overrides")
    overrides = list(part.get("overrides") or []) + _words(own)
    command = list((evaluation.get("command") if mode == "eval" else None) or example.get("command") or [])
    args = list(example.get("args") or [])
    env = {}
    variable = example.get("overrides_env") or ""
    if variable:
        env[variable] = " ".join(overrides)
    else:
        args += overrides
    return {"command": command, "args": args, "env": env, "overrides": overrides,
            "delivery": ("environment variable " + variable) if variable else "appended arguments"}


def _words(value):
    if not value:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return str(value).split()


def step_progress(log, framework_contract):
    """Every step counter in the log: [{step, total, line}] (step or total None when a line has one only)."""
    seen = []
    patterns = [re.compile(p) for p in framework_contract.get("step_patterns") or []]
    for line in log_lines(log):
        for regex in patterns:
            match = regex.search(line)
            if match:
                groups = match.groupdict()
                seen.append({"step": _int(groups.get("step")), "total": _int(groups.get("total")),
                             "line": match.group(0).strip()[:200]})
                break
    return seen


def overrun(log, framework_contract, mode, launched=None):
    """The first sign that the override did not take effect, or None.

    train: a step counter with a total above one, or a step past one. eval: any training step."""
    launched = launched or {}
    for seen in step_progress(log, framework_contract):
        step, total = seen["step"], seen["total"]
        if mode == "train" and not ((total is not None and total > 1) or (step is not None and step > 1)):
            continue
        if mode == "eval" and not ((step or 0) >= 1 or (total or 0) >= 1):
            continue
        command = " ".join(launched.get("command") or []) or "the launch command"
        overrides = " ".join(launched.get("overrides") or []) or "(no override)"
        if mode == "train":
            what = "the one-step override did not take effect: %s ignored %s (passed as %s)" % (
                command, overrides, launched.get("delivery") or "appended arguments")
        else:
            what = "the evaluation started training: %s ran training steps despite %s (passed as %s)" % (
                command, overrides, launched.get("delivery") or "appended arguments")
        return {"step": step, "total": total, "line": seen["line"], "message": "%s; the log shows %r" % (
            what, seen["line"])}
    return None


def cluster_seen(log, framework_contract):
    """The last line where the framework reports its cluster: {nodes, gpus, line}, or None (no such line, or
    a contract without cluster_patterns). gpus is None when the line names the nodes only."""
    patterns = [re.compile(p) for p in framework_contract.get("cluster_patterns") or []]
    seen = None
    for line in log_lines(log):
        for regex in patterns:
            match = regex.search(line)
            if match:
                groups = match.groupdict()
                seen = {"nodes": _int(groups.get("nodes")), "gpus": _int(groups.get("gpus")),
                        "line": line.strip()[:300]}
                break
    return seen


def done(log, framework_contract):
    """The done markers found in the log."""
    found = []
    for marker in framework_contract.get("done_markers") or []:
        if any(re.search(marker, line) for line in log_lines(log)):
            found.append(marker)
    return found


def success_metrics(log, framework_contract):
    """{name: value} of every success metric in the log; a later value of a name wins."""
    metrics = {}
    patterns = [re.compile(p) for p in framework_contract.get("metric_patterns") or []]
    for line in log_lines(log):
        for regex in patterns:
            for match in regex.finditer(line):  # veRL and RLinf print several metrics on one line
                try:
                    metrics[match.group("name")] = float(match.group("value"))
                except (IndexError, ValueError):
                    continue
    return metrics


def floor_for(name, floors, default):
    """The floor of one metric: its own (exact name, or the name without a leading eval/), else default."""
    floors = floors or {}
    for key in (name, name.split("/", 1)[-1] if name.startswith("eval/") else name):
        if key in floors:
            return float(floors[key])
    return float(default)


def simulator(module):
    """The SIMULATORS entry whose module pattern matches `module`, or None."""
    for name, sim in sorted(SIMULATORS.items()):
        if re.search(sim["module_pattern"], module or ""):
            return dict(sim, name=name)
    return None


def simulator_finding(module, data):
    """A precise message and hint for a simulator import that prompted for input, or None."""
    sim = simulator(module)
    data = data or {}
    if sim is None or data.get("status") != "prompts_for_input":
        return None
    prompts = " ".join(data.get("input_prompts") or []) + " " + (data.get("stdout_tail") or "")
    if not re.search(sim["prompt_pattern"], prompts):
        return None
    path = "$%s/%s (default %s/%s)" % (sim["config_env"], sim["config_file"], sim["default_dir"], sim["config_file"])
    return {"message": "%s asks for its dataset folder at import (input(): %r) because %s is missing"
                       % (module, (data.get("input_prompts") or [""])[0].strip(), path),
            "hint": "write %s with the keys %s, or point %s at a directory that has one; with "
                    "validation_libero_config set, the collection mounts that file in the L4/L5/L6 pods"
                    % (sim["config_file"], ", ".join(sim["config_keys"]), sim["config_env"])}


def libero_config(settings, directory=None):
    """The config.yaml text (every key get_libero_path() may ask for) and the variable that points at it.

    settings: {benchmark_root (the installed libero/libero folder), datasets, ...}; keys not given follow
    LIBERO's own layout under benchmark_root (get_default_path_dict)."""
    settings = dict(settings or {})
    sim = SIMULATORS["libero"]
    unknown = sorted(set(settings) - set(sim["config_keys"]))
    if unknown:
        raise ContractError("validation_libero_config has keys LIBERO does not read: %s (it reads %s)"
                            % (", ".join(unknown), ", ".join(sim["config_keys"])))
    root = str(settings.get("benchmark_root") or "").rstrip("/")
    missing = [k for k in sim["config_keys"] if not settings.get(k) and not root]
    if missing:
        raise ContractError("validation_libero_config needs benchmark_root (the installed libero/libero folder in "
                            "the image) or every key: %s is missing" % ", ".join(missing))
    values = {}
    for key, relative in sim["config_keys"].items():
        value = str(settings.get(key) or "").rstrip("/") or (root + "/" + relative if relative else root)
        values[key] = str(value)
    # JSON strings are YAML strings: standard library only.
    text = "".join("%s: %s\n" % (key, json.dumps(values[key])) for key in sim["config_keys"])
    directory = directory or SIMULATOR_CONFIG_DIR
    return {"file": sim["config_file"], "text": text, "env": {sim["config_env"]: directory}, "dir": directory,
            "values": values}


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
