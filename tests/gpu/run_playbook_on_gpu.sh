#!/usr/bin/env bash
# Run the collection itself (playbooks/validate.yml, host transport) on a GPU machine, as in docs/hardware.md.
# Usage: tests/gpu/run_playbook_on_gpu.sh OUTDIR [GPUS]   (needs ansible-core importable; see the doc)
set -uo pipefail
out=${1:?output directory}; gpus=${2:-1}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
mkdir -p "$out" /tmp/rlstack-storage
export ANSIBLE_CONFIG=$root/ansible.cfg LANG=C.UTF-8 LC_ALL=C.UTF-8 RLSTACK_GPUS=$gpus
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 HF_HUB_OFFLINE=1
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
python3 tests/gpu/make_tiny_model.py /tmp/rlstack-tiny > "$out/make_tiny_model.log" 2>&1
run() {  # name, extra args...
  local name=$1; shift
  local t0; t0=$(date +%s)
  ansible-playbook playbooks/validate.yml -i inventories/gpu-host -e "validation_report_dir=$out/$name" "$@" \
    > "$out/$name.log" 2>&1
  echo "$name: rc=$? $(( $(date +%s) - t0 ))s" | tee -a "$out/summary.txt"
}
if [ "$gpus" -gt 1 ]; then
  run l3-2gpu --tags l3
else
  run l0-l4 --tags l0,l1,l2,l3,l4
  run l0-efa32 --tags l0 -e '{"l0_infrastructure_expected": {"gpu_count": 1, "efa_count": 32, "gpu_name_pattern": "H200"}}'
  RLSTACK_MODEL=/tmp/rlstack-tiny/skew run l2-skew --tags l2 \
    -e '{"l2_single_gpu_required_config_attrs": ["use_proprio", "num_action_chunks"]}'
fi
