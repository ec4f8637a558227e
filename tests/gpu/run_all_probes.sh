#!/usr/bin/env bash
# Run every probe on a GPU machine and record what it printed, for sim/replay/recorded/.
#
#   tests/gpu/run_all_probes.sh RECORD_DIR        (python3 there must have torch + transformers)
#
# RECORD_DIR/<name>.out is the full stdout of one run, <name>.err its stderr (kept when not empty),
# commands.txt every exact command with its exit code and wall time, versions.txt the machine.
# Then runs `pytest -m gpu tests/gpu` and the CPU unit tests of the probes on that machine.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and friends) for everything started here.
set -u
cd "$(dirname "$0")/../.." || exit 1
REC=${1:?usage: tests/gpu/run_all_probes.sh RECORD_DIR}
mkdir -p "$REC"
REC=$(cd "$REC" && pwd)
PY=${PYTHON:-python3}
TINY=${TINY:-/tmp/rlstack-tiny}
STORE=${STORE:-/tmp/rlstack-storage}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
# Run from their role directories, the probes import roles/runner/files/probe_common.py through the
# repository-layout fallback (docs/probes.md "Files"); a probe copied elsewhere needs probe_common.py beside it.
L0=roles/l0_infrastructure/files/probe_node.py
L1=roles/l1_runtime/files/probe_runtime.py
L2=roles/l2_single_gpu/files/probe_model.py
L3=roles/l3_multi_gpu/files/probe_multigpu.py
L4=roles/l4_rollout/files/probe_sim_import.py
FAKE=tests/gpu/fake_sims
: > "$REC/commands.txt"

rec() {  # rec NAME CMD...   (prefix CMD with `env VAR=value` for per-run variables)
  local name=$1; shift
  local t0 t1 rc
  printf '[%s] %s:\n  $' "$name" "$(date -u +%H:%M:%SZ)" >> "$REC/commands.txt"
  printf ' %q' "$@" >> "$REC/commands.txt"
  t0=$(date +%s.%N)
  "$@" < /dev/null > "$REC/$name.out" 2> "$REC/$name.err"
  rc=$?
  t1=$(date +%s.%N)
  printf '\n  -> exit %s, %s s\n' "$rc" "$(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")" >> "$REC/commands.txt"
  [ -s "$REC/$name.err" ] || rm -f "$REC/$name.err"
  echo "$name: exit $rc"
}

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "uname: $(uname -a)"
  echo "python: $($PY -c 'import sys; print(sys.version.split()[0], sys.executable)')"
  $PY - <<'EOF'
import importlib
for n in ("torch", "transformers", "tokenizers", "accelerate", "pytest"):
    try:
        print("%s: %s" % (n, importlib.import_module(n).__version__))
    except Exception as e:
        print("%s: %s" % (n, e))
import torch
print("torch.version.cuda: %s  cudnn: %s  nccl: %s" % (torch.version.cuda, torch.backends.cudnn.version(),
      ".".join(map(str, torch.cuda.nccl.version()))))
EOF
  env | grep -E '^(NCCL_|TORCH_SYMM|NVSHMEM_)' | sort
  nvidia-smi --query-gpu=index,name,memory.total,uuid,pci.bus_id,driver_version --format=csv
  nvidia-smi
} > "$REC/versions.txt" 2>&1
NGPU=$($PY -c 'import torch; print(torch.cuda.device_count())')
echo "GPUs: $NGPU"

mkdir -p "$STORE"
rec probe_node "$PY" $L0 "{\"storage_path\": \"$STORE\"}"
rec probe_runtime "$PY" $L1 '{"imports": ["transformers", "accelerate", "tokenizers", "numpy", "flash_attn", "verl", "ray", "mujoco", "libero"]}'

rec make_tiny_model "$PY" tests/gpu/make_tiny_model.py "$TINY"
ATTRS='"required_config_attrs": ["use_proprio", "num_action_chunks"]'
rec probe_model "$PY" $L2 "{\"model_path\": \"$TINY/ok\", $ATTRS}"
rec probe_model_skew "$PY" $L2 "{\"model_path\": \"$TINY/skew\", $ATTRS}"
rec probe_model_skew_remote_code "$PY" $L2 "{\"model_path\": \"$TINY/skew\", \"trust_remote_code\": true, $ATTRS}"

rec probe_multigpu env NCCL_DEBUG=INFO "$PY" $L3 "{\"model_path\": \"$TINY/ok\", \"max_bytes\": 4294967296}"
rec probe_multigpu_torchrun env NCCL_DEBUG=INFO "$PY" -m torch.distributed.run --standalone --nproc-per-node="$NGPU" \
  $L3 '{"max_bytes": 4294967296}'

rec probe_sim_import "$PY" $L4 "{\"module\": \"fake_prompt_sim\", \"python_path\": [\"$FAKE\"]}"
rec probe_sim_import_pipe "$PY" $L4 "{\"module\": \"fake_prompt_sim\", \"python_path\": [\"$FAKE\"], \"stdin\": \"pipe\", \"timeout_s\": 5}"
rec probe_sim_import_missing_env "$PY" $L4 "{\"module\": \"fake_env_sim\", \"python_path\": [\"$FAKE\"], \"required_env\": [\"FAKE_SIM_DATASET_DIR\"]}"
rec probe_sim_import_ok "$PY" $L4 "{\"module\": \"fake_env_sim\", \"python_path\": [\"$FAKE\"], \"env\": {\"FAKE_SIM_DATASET_DIR\": \"/tmp\"}, \"required_env\": [\"FAKE_SIM_DATASET_DIR\"], \"benchmark\": {\"call\": \"fake_env_sim.get_benchmark\", \"name\": \"libero_10\", \"expect_tasks\": 10}}"

rec pytest_gpu env RLSTACK_TINY_MODEL_DIR="$TINY" "$PY" -m pytest -m gpu tests/gpu -v -p no:cacheprovider
rec pytest_unit_probes "$PY" -m pytest tests/unit/probes -q -p no:cacheprovider -n 8
cat "$REC/commands.txt"
