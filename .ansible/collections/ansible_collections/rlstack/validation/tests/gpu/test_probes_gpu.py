"""Every probe on a real GPU machine (pytest -m gpu tests/gpu). Skipped without a CUDA GPU."""
import os
import re
import sys

import pytest

from gpu_helpers import FAKE_SIMS, run_probe

pytestmark = pytest.mark.gpu

TINY_PARAMS = 1844480  # 2 layers, hidden 256, intermediate 688, vocab 512, untied head
ATTRS = ["use_proprio", "num_action_chunks"]
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+float\s+sum\s+-1\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)"
                 r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s*$")


def test_l0_node(tmp_path, gpu_count):
    run = run_probe("node", {"storage_path": str(tmp_path)})
    j = run.json
    assert run.rc == 0 and j is not None, run
    assert j["gpu_count"] == gpu_count and j["nvidia_smi"]["ok"] and j["error"] is None
    assert all(g["name"] and g["memory_mib"] > 1000 and g["uuid"].startswith("GPU-") for g in j["gpus"])
    assert re.match(r"^\d+\.\d+", j["driver"])
    assert j["storage"]["ok"] is True and os.listdir(str(tmp_path)) == []


def test_l1_runtime(gpu_count):
    run = run_probe("runtime", {"imports": ["transformers", "tokenizers", "no_such_module_xyz"]})
    j = run.json
    assert run.rc == 0 and j is not None, run
    assert j["torch"] and j["cuda"] and j["cuda_available"] is True and j["gpu_count"] == gpu_count
    assert re.match(r"^\d+\.\d+\.\d+$", j["nccl"]) and j["cudnn"] > 0 and j["cuda_smoke"]["ok"] is True
    assert len(j["gpus"]) == gpu_count and j["error"] is None
    assert j["imports"]["transformers"]["ok"] and j["imports"]["transformers"]["version"]
    assert j["imports"]["no_such_module_xyz"]["error_type"] == "ModuleNotFoundError"
    assert j["imports_ok"] is False


def test_l2_model_loads_and_runs(tiny_model):
    run = run_probe("model", {"model_path": tiny_model["ok"], "required_config_attrs": ATTRS})
    j = run.json
    assert run.rc == 0 and j is not None, run
    assert j["ok"] is True, j
    assert j["missing_config_attrs"] == [] and j["config_skew_hint"] is None
    m = j["model"]
    assert m["param_count"] == TINY_PARAMS and m["dtype"] == "torch.bfloat16" and m["device"] == "cuda:0"
    assert m["class"] == "LlamaForCausalLM" and m["load_s"] > 0 and m["gpu_memory"]["allocated_mib"] > 0
    assert j["tokenizer"]["ok"] and j["tokenizer"]["vocab_size"] > 256
    assert j["forward"]["ok"] and j["forward"]["output_shape"][-1] == 512 and j["forward"]["logits_finite"]


def test_l2_remote_code_model_loads(tiny_model):
    j = run_probe("model", {"model_path": tiny_model["ok"], "trust_remote_code": True,
                            "required_config_attrs": ATTRS}).json
    assert j["ok"] is True and j["model"]["class"] == "TinyVLAForCausalLM", j


def test_l2_config_skew_is_reported(tiny_model):
    j = run_probe("model", {"model_path": tiny_model["skew"], "required_config_attrs": ATTRS}).json
    assert j["missing_config_attrs"] == ATTRS
    assert "Model/Config Version Skew" in j["config_skew_hint"]
    assert j["model"]["ok"] is True  # the plain Llama class does not read them
    assert j["ok"] is False


def test_l2_config_skew_attributeerror_with_new_code(tiny_model):
    j = run_probe("model", {"model_path": tiny_model["skew"], "trust_remote_code": True,
                            "required_config_attrs": ATTRS}).json
    m = j["model"]
    assert m["ok"] is False and m["error_type"] == "AttributeError", j
    assert "use_proprio" in m["error"]
    assert "Model/Config Version Skew" in m["hint"]
    assert j["forward"] == {"ok": False, "error": "not attempted (model not loaded)"}


def _table_rows(stdout):
    return [ROW.match(l) for l in stdout.split("\n") if ROW.match(l)]


def test_l3_single_process(tiny_model):
    run = run_probe("multigpu", {"model_path": tiny_model["ok"], "max_bytes": 1 << 30},
                    env={"NCCL_DEBUG": "INFO"})
    j = run.json
    assert run.rc == 0 and j is not None, run
    assert j["ok"] is True, j
    assert (j["launcher"], j["world_size"]) == ("single", 1)
    assert j["fsdp"]["api"] == "fully_shard" and j["fsdp"]["loss_finite"] and j["fsdp"]["param_count"] == TINY_PARAMS
    assert j["allreduce_ok"] is True
    s = j["sweep"]
    assert s["busbw_1gib"] == 0.0 and s["algbw_1gib"] > 0 and s["note"].startswith("busbw is 0 by definition")
    rows = _table_rows(run.stdout)
    assert [int(m.group(1)) for m in rows] == [r["size"] for r in s["rows"]]
    assert "# Out of bounds values : 0 OK" in run.stdout and "# Avg bus bandwidth    : 0 " in run.stdout
    assert "NCCL INFO" in run.stdout + run.stderr
    assert j["env"]["NCCL_NVLS_ENABLE"] == "0"


def test_l3_torchrun_all_gpus(gpu_count):
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=%d" % gpu_count]
    run = run_probe("multigpu", {"max_bytes": 256 << 20}, launcher=torchrun)
    j = run.json
    assert run.rc == 0 and j is not None, run
    assert j["launcher"] == "torchrun" and j["world_size"] == gpu_count and j["rank"] == 0
    assert [r["rank"] for r in j["ranks"]] == list(range(gpu_count))
    assert j["ok"] is True, j
    rows = _table_rows(run.stdout)
    assert len(rows) == len(j["sweep"]["rows"])
    if gpu_count > 1:
        assert j["sweep"]["busbw_largest"] > 0


def test_l3_gloo_on_cpu():
    run = run_probe("multigpu", {"backend": "gloo", "max_bytes": 1 << 20, "iters": 3, "warmup_iters": 1})
    j = run.json
    assert run.rc == 0 and j is not None, run
    assert j["init"]["ok"] and j["allreduce_ok"] and j["sweep"]["ok"] and j["sweep"]["timing"] == "perf_counter"


def test_l4_prompt_forms():
    base = {"module": "fake_prompt_sim", "python_path": [FAKE_SIMS]}
    j = run_probe("sim_import", base).json
    assert j["status"] == "prompts_for_input" and not j["import_timed_out"]
    j = run_probe("sim_import", dict(base, stdin="pipe", timeout_s=3)).json
    assert j["status"] == "prompts_for_input" and j["import_timed_out"]
    assert j["message"] == "import blocked: the library waits for interactive input"


def test_l4_env_and_benchmark():
    base = {"module": "fake_env_sim", "python_path": [FAKE_SIMS], "required_env": ["FAKE_SIM_DATASET_DIR"]}
    assert run_probe("sim_import", base).json["status"] == "missing_env"
    j = run_probe("sim_import", dict(base, env={"FAKE_SIM_DATASET_DIR": "/tmp"},
                                     benchmark={"call": "fake_env_sim.get_benchmark", "name": "libero_10",
                                                "expect_tasks": 10})).json
    assert j["ok"] is True and j["benchmark"]["n_tasks"] == 10
