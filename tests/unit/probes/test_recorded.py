"""The outputs recorded on real H200s (sim/replay/recorded/) still match docs/probes.md."""
import glob
import json
import os

import pytest

from probe_helpers import ROOT

REC = os.path.join(ROOT, "sim", "replay", "recorded")
GIB = 1 << 30
KEYS = {
    "node": ["gpu_count", "gpus", "driver", "drivers", "nvidia_smi", "efa_count", "efa_devices", "infiniband_devices",
             "infiniband_error", "storage"],
    "runtime": ["python", "torch", "torch_error", "cuda", "cudnn", "cudnn_version", "nccl", "cuda_available",
                "gpu_count", "gpus", "devices", "cuda_smoke", "imports", "imports_ok"],
    "model": ["torch", "transformers", "missing_packages", "model_path", "model_path_exists", "files", "config",
              "required_config_attrs", "missing_config_attrs", "config_skew_hint", "tokenizer", "model", "forward",
              "ok"],
    "multigpu": ["launcher", "world_size", "rank", "backend", "torch", "nccl", "env", "env_defaulted", "init",
                 "fsdp", "allreduce", "allreduce_ok", "sweep", "ranks", "ok"],
    "sim_import": ["module", "status", "ok", "message", "hint", "evidence", "stdin", "timeout_s", "import_timed_out",
                   "blocked_on_stdin", "returncode", "elapsed_s", "error_type", "error", "input_prompts",
                   "missing_env", "env_set", "required_env", "benchmark", "stdout_tail", "stderr_tail"],
}
ENVELOPE = ["probe", "schema", "node", "duration_s", "started_at", "params", "warnings", "timed_out", "error"]


def recorded(pattern):
    files = sorted(glob.glob(os.path.join(REC, pattern)))
    if not files:
        pytest.skip("no recordings under %s" % REC)
    return files


def last_json(path):
    with open(path) as fh:
        return json.loads(fh.read().rstrip("\n").split("\n")[-1])


@pytest.mark.parametrize("path", recorded("h200x*/probe_*.out"), ids=os.path.basename)
def test_recorded_outputs_have_the_documented_fields(path):
    j = last_json(path)
    for key in ENVELOPE + KEYS[j["probe"]]:
        assert key in j, "%s lacks %s" % (os.path.basename(path), key)
    assert j["schema"] == 1 and j["timed_out"] is False
    assert os.path.basename(path).startswith("probe_" + j["probe"])


def test_recorded_numbers():
    h1 = os.path.join(REC, "h200x1")
    if not os.path.isdir(h1):
        pytest.skip("no recordings")
    model = last_json(os.path.join(h1, "probe_model.out"))
    assert model["ok"] and model["model"]["param_count"] == 1844480
    skew = last_json(os.path.join(h1, "probe_model_skew_remote_code.out"))
    assert skew["model"]["error_type"] == "AttributeError"
    mg = last_json(os.path.join(h1, "probe_multigpu.out"))
    assert mg["ok"] and mg["sweep"]["busbw_largest"] == 0.0 and mg["world_size"] == 1
    pipe = last_json(os.path.join(h1, "probe_sim_import_pipe.out"))
    assert pipe["status"] == "prompts_for_input" and pipe["blocked_on_stdin"] is True


def test_the_collections_nccl_parser_reads_the_recorded_2gpu_run():
    try:
        from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl, _nccl_results
    except ImportError:
        pytest.skip("plugins/module_utils/nccl/_nccl.py not importable here")
    path = os.path.join(REC, "h200x2", "probe_multigpu_torchrun_2gpu.out")
    if not os.path.exists(path):
        pytest.skip("no 2-GPU recording")
    text = open(path).read()
    j = last_json(path)
    result = _nccl.parse_text(text)
    assert result["nranks"] == 2 and result["wrong_total"] == 0 and result["nccl_version"] == "2.28.9"
    assert _nccl_results.busbw_at_size(result, GIB) == round(j["sweep"]["busbw_1gib"], 2)
    assert result["busbw_at_largest_size"] == round(j["sweep"]["busbw_largest"], 2)
    assert j["sweep"]["busbw_1gib"] > 300  # NVLink NV18 between the two H200s
