# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The framework contracts against the recorded and framework-printed logs (fixtures/frameworks)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils import _frameworks as fw

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "frameworks"


def read(name):
    data = (LOGS / name).read_bytes()  # logs with tqdm's carriage returns are kept gzipped
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")


@pytest.mark.parametrize("name", sorted(fw.CONTRACTS))
def test_every_contract_is_complete_and_names_its_sources(name):
    contract = fw.contract(name)
    assert contract["checked_against"]
    for mode in ("train", "eval"):
        assert isinstance(contract[mode]["overrides"], list)
        assert isinstance(contract[mode]["command"], list)
    for key in ("step_patterns", "done_markers", "metric_patterns"):
        for pattern in contract[key]:
            re.compile(pattern)
    for pattern in contract["metric_patterns"]:
        assert {"name", "value"} <= set(re.compile(pattern).groupindex)
    if name != "custom":
        assert contract["sources"] and contract["train"]["sources"] and contract["eval"]["sources"]
        assert contract["train"]["overrides"] and contract["step_patterns"]


@pytest.mark.parametrize("text,value", [("x/success_rate=0.69", 0.69), ("x/success_rate: '0.5'", 0.5),
                                        ("x/success_rate: array(0.69, dtype=float32)", 0.69),
                                        ("x/success_rate: np.float64(0.5)", 0.5), ("x/success_rate=1e-3", 0.001),
                                        ("x/success_rate = .25", 0.25), ("x/success_rate: tensor(0.75)", 0.75)])
def test_metric_values_in_every_format_frameworks_print(text, value):
    assert fw.success_metrics(text, fw.contract("custom")) == {"x/success_rate": pytest.approx(value)}


@pytest.mark.parametrize("fixture,framework,progress", [
    ("trl/trl-train-one-step.log.gz", "trl", {(0, 1), (1, 1)}),
    ("trl/trl-train-one-step-h200.log.gz", "trl", {(0, 1), (1, 1)}),
    ("rlinf/rlinf-train-one-step.log", "rlinf", {(1, 1)}),
    ("rlinf/rlinf-train-override-ignored.log", "rlinf", {(1, 1000), (2, 1000)}),
    ("verl/verl-train-one-step.log", "verl", {(0, None), (1, None)}),
    ("verl/verl-train-override-ignored.log", "verl", {(0, None), (1, None), (2, None)}),
])
def test_step_progress_of_the_real_logs(fixture, framework, progress):
    seen = fw.step_progress(read(fixture), fw.contract(framework))
    assert {(s["step"], s["total"]) for s in seen} == progress


def test_trl_step_counter_ignores_the_datasets_bars():
    text = "Map: 100%|##########| 32/32 [00:00<00:00, 1000.00 examples/s]\r 100%|####| 1/1 [00:01<00:00]\n"
    assert [(s["step"], s["total"]) for s in fw.step_progress(text, fw.contract("trl"))] == [(1, 1)]


@pytest.mark.parametrize("fixture,framework,mode", [
    ("trl/trl-train-one-step.log.gz", "trl", "train"), ("rlinf/rlinf-train-one-step.log", "rlinf", "train"),
    ("verl/verl-train-one-step.log", "verl", "train"), ("trl/trl-eval.log", "trl", "eval"),
    ("rlinf/rlinf-eval.log", "rlinf", "eval"), ("verl/verl-val-only.log", "verl", "eval"),
    ("trl/trl-train-crash.log.gz", "trl", "train"),
])
def test_no_overrun_on_good_runs(fixture, framework, mode):
    assert fw.overrun(read(fixture), fw.contract(framework), mode) is None


def test_overrun_names_the_launcher_and_the_override():
    launched = fw.launch("rlinf", "train", {"command": ["bash", "examples/embodiment/run_embodiment.sh", "cfg"]})
    found = fw.overrun(read("rlinf/rlinf-train-override-ignored.log"), fw.contract("rlinf"), "train", launched)
    assert (found["step"], found["total"], found["line"]) == (1, 1000, "Global Step:    1/1000")
    assert found["message"] == (
        "the one-step override did not take effect: bash examples/embodiment/run_embodiment.sh cfg ignored "
        "runner.max_steps=1 runner.save_interval=-1 runner.val_check_interval=-1 (passed as appended arguments); "
        "the log shows 'Global Step:    1/1000'")


def test_overrun_in_eval_is_any_training_step():
    found = fw.overrun(read("trl/trl-train-one-step.log.gz"), fw.contract("trl"), "eval")
    assert found["message"].startswith("the evaluation started training: the launch command ran training steps")


def test_done_markers_of_the_real_logs():
    assert fw.done(read("rlinf/rlinf-train-one-step.log"), fw.contract("rlinf")) == [r"Global Step:\s+1/1\b"]
    assert fw.done(read("rlinf/rlinf-train-override-ignored.log"), fw.contract("rlinf")) == []
    assert fw.done(read("trl/trl-train-crash.log.gz"), fw.contract("trl")) == []


def test_rlinf_eval_metrics_are_the_numpy_reprs():
    metrics = fw.success_metrics(read("rlinf/rlinf-eval.log"), fw.contract("rlinf"))
    assert metrics == {"eval/success_once": 0.6875, "eval/success_at_end": 0.640625}


def test_verl_metrics_are_the_val_core_ones_only():
    metrics = fw.success_metrics(read("verl/verl-val-only.log"), fw.contract("verl"))
    assert metrics == {"val-core/openai/gsm8k/acc/mean@1": 0.75}


def test_launch_appends_or_uses_the_variable():
    appended = fw.launch("trl", "train", {"command": ["python", "x.py", "train"], "overrides": "--seed 3"})
    assert appended["args"] == ["--max_steps", "1", "--save_strategy", "no", "--report_to", "none", "--seed", "3"]
    assert appended["env"] == {}
    env = fw.launch("verl", "eval", {"command": ["bash", "run.sh"], "overrides_env": "HYDRA_OVERRIDES"})
    assert env["args"] == [] and env["env"] == {
        "HYDRA_OVERRIDES": "trainer.val_only=True trainer.val_before_train=True trainer.logger=[console]"}


def test_contract_errors_are_one_sentence():
    with pytest.raises(fw.ContractError, match="framework 'deepspeed' has no contract"):
        fw.contract("deepspeed")
    with pytest.raises(fw.ContractError, match="metric_patterns pattern '\\(' of framework 'custom' is not a regular"):
        fw.contract("custom", {"metric_patterns": ["("]})


def test_floor_for_a_metric():
    assert fw.floor_for("eval/success_once", {"success_once": 0.7}, 0.5) == 0.7
    assert fw.floor_for("eval/success_once", {"eval/success_once": 0.8}, 0.5) == 0.8
    assert fw.floor_for("val-core/x/acc/mean@1", {"success_once": 0.7}, 0.5) == 0.5


def test_libero_config_follows_libero_layout_and_points_the_variable_at_it():
    cfg = fw.libero_config({"benchmark_root": "/opt/LIBERO/libero/libero/", "datasets": "/fsx/datasets/libero"})
    assert cfg["text"] == ('benchmark_root: "/opt/LIBERO/libero/libero"\n'
                           'bddl_files: "/opt/LIBERO/libero/libero/bddl_files"\n'
                           'init_states: "/opt/LIBERO/libero/libero/init_files"\n'
                           'datasets: "/fsx/datasets/libero"\n'
                           'assets: "/opt/LIBERO/libero/libero/assets"\n')
    assert cfg["env"] == {"LIBERO_CONFIG_PATH": "/etc/rlstack/libero"} and cfg["file"] == "config.yaml"


def test_libero_config_bad_input_is_one_sentence():
    with pytest.raises(fw.ContractError, match="keys LIBERO does not read: dataset_dir"):
        fw.libero_config({"dataset_dir": "/x"})
    with pytest.raises(fw.ContractError, match="needs benchmark_root .* bddl_files, init_states, assets is missing"):
        fw.libero_config({"datasets": "/x", "benchmark_root": ""})


def test_simulator_finding_only_for_the_libero_prompt():
    data = {"status": "prompts_for_input", "input_prompts": ["Continue? "]}
    assert fw.simulator_finding("libero.libero", data) is None
    assert fw.simulator_finding("fake_prompt_sim", dict(data, input_prompts=[
        "Do you want to specify a custom path for the dataset folder? (Y/N): "])) is None
    assert fw.simulator_finding("libero.libero", {"status": "ok"}) is None
