#!/usr/bin/env bash
# The collection through Kubernetes on a lent GPU machine, pods executing for real: the simulated cluster from
# `make sim-pack` (sim/device_up.sh), exec mode, inventories/sim with tests/gpu/k8s_exec_h200.yml; docs/hardware.md.
#   tests/gpu/run_k8s_exec_on_gpu.sh OUTDIR PACK [PARTS]    PARTS: comma-separated of a,w,b,c,e,d,i (default a,w,b,c,e,d)
#     a  L0-L4 expecting the GPU this machine has (an H200, or the H100 a session may be lent instead)
#     w  L0 expecting 8 GPUs, then L0 expecting the other GPU type (both must FAIL naming the node)
#     b  L4 with the real LIBERO 0.1.1 ($SIM_CACHE/exec/libero-0.1.1): without its config, then with it
#     c  L5/L6 with TRL GRPO as Jobs
#     e  the broken L5/L6 examples (tests/gpu/k8s_exec_broken.yml) as Jobs: each must FAIL as on the host transport
#     d  benchmarks/fleet_scale/run.py (replayed probes), once per count in $FLEET_NODES (default "2 16 64 256"),
#        in scenario $FLEET_SCENARIO (default healthy)
#     i  bad-node isolation at 16 and 64 nodes (make test-isolate's cases; $ISOLATE_K picks them, pytest's -k)
# Environment: SIM_DEVICE_WHEELS, SIM_DEVICE_COLLECTIONS as for sim/device_up.sh. Every cluster it starts is
# stopped on exit, also on failure (their processes run in sessions of their own).
set -uo pipefail
out=${1:?output directory}; pack=${2:?sim pack}; parts=${3:-a,w,b,c,e,d}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
# Each exec-mode pod has a /tmp of its own (sim/README.md, "Exec mode"): the scripts and folders its commands name
# (tests/frameworks/, tests/gpu/fake_sims, LIBERO) must lie outside /tmp to be seen there.
case $root/ in /tmp/*) echo "run_k8s_exec_on_gpu.sh: this checkout is under /tmp ($root), which the pods do not see; unpack it elsewhere (e.g. /var/tmp)" >&2; exit 2 ;; esac
mkdir -p "$out"
export ANSIBLE_CONFIG=$root/ansible.cfg LANG=C.UTF-8 LC_ALL=C.UTF-8 PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 HF_HUB_OFFLINE=1
export SIM_DEVICE_ROOT=${SIM_DEVICE_ROOT:-/var/tmp/rlstack-sim-device}
down_all() { .venv/bin/python sim/simctl.py down >/dev/null 2>&1 || true; }
trap down_all EXIT
t0=$(date +%s)
note() { echo "[$(( $(date +%s) - t0 ))s] $*" | tee -a "$out/summary.txt"; }
bash sim/device_up.sh "$pack" --unpack-only > "$out/device_up.log" 2>&1 || { note "device_up failed"; exit 1; }
export SIM_CACHE=$SIM_DEVICE_ROOT/bin GOMODCACHE=$SIM_DEVICE_ROOT/gomod
{ date -u; uname -a; nproc; nvidia-smi; python3 -c 'import torch, transformers, trl, datasets, ansible, kubernetes
print("torch", torch.__version__, "transformers", transformers.__version__, "trl", trl.__version__, "datasets",
      datasets.__version__, "ansible-core", ansible.__version__ if hasattr(ansible, "__version__") else "?",
      "kubernetes", kubernetes.__version__)'; .venv/bin/ansible-playbook --version; cat "$SIM_DEVICE_ROOT/PROVENANCE"; } \
  > "$out/machine.txt" 2>&1
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
# tests/gpu/k8s_exec_h200.yml expects an H200; a lent H100 is expected as what it is, and the other type is the
# wrong expectation of part w
case $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) in
  *H100*) this_gpu='{"l0_infrastructure_expected": {"gpu_count": 1, "gpu_name_pattern": "H100", "gpu_memory_mib_min": 80000, "efa_count": 0}}'
          other_type=H200 ;;
  *) this_gpu='{}'; other_type=H100 ;;
esac
python3 tests/gpu/make_tiny_model.py /var/tmp/rlstack-tiny > "$out/make_tiny_model.log" 2>&1
mkdir -p /var/tmp/rlstack-fsx
up() {  # a fresh exec-mode cluster whose GPU node is this machine
  down_all
  SIM_EXEC_VOLUMES=fsx-pv=/var/tmp/rlstack-fsx .venv/bin/python sim/simctl.py up --exec host --nodes 1 \
    >> "$out/sim-up.log" 2>&1 || { note "sim up failed"; return 1; }
  .venv/bin/python tests/gpu/k8s_exec_node.py .sim/kubeconfig p5-node-0 "$gpus" >> "$out/sim-up.log" 2>&1
}
run() {  # name, extra args...
  local name=$1; shift
  local t; t=$(date +%s)
  # bounded: SIGINT is what a user's Ctrl-C sends (the collection cleans up on it), SIGKILL 60 s later
  timeout -s INT -k 60 "${RUN_TIMEOUT_S:-420}" .venv/bin/ansible-playbook playbooks/validate.yml \
    -i inventories/sim -e @tests/gpu/k8s_exec_h200.yml -e "validation_report_dir=$out/$name" "$@" > "$out/$name.log" 2>&1
  note "$name: rc=$? $(( $(date +%s) - t ))s"
}
case ,$parts, in *,a,*|*,w,*|*,b,*|*,c,*|*,e,*) up || exit 1 ;; esac
case ,$parts, in *,a,*) run l0-l4 --tags l0,l1,l2,l3,l4 -e "$this_gpu" ;; esac
case ,$parts, in *,w,*)
  run l0-expect-8gpus --tags l0 -e '{"l0_infrastructure_expected": {"gpu_count": 8, "gpu_name_pattern": "H", "efa_count": 0}}'
  run "l0-expect-$other_type" --tags l0 -e '{"l0_infrastructure_expected": {"gpu_count": 1, "gpu_name_pattern": "'$other_type'", "efa_count": 0}}' ;;
esac
case ,$parts, in *,b,*)
  lib=$SIM_CACHE/exec/libero-0.1.1
  libero='{"validation_simulator_module": "libero.libero", "validation_simulator_env": {}, "l4_rollout_required_env": [],
    "l4_rollout_python_path": ["'$lib'"], "l4_rollout_benchmark": {"call": "libero.libero.benchmark.get_benchmark",
    "name": "libero_10", "expect_tasks": 10}}'
  if [ -f "$lib/libero/libero/__init__.py" ]; then
    run l4-libero-no-config --tags l4 -e "$libero"
    run l4-libero-config --tags l4 -e "$libero" -e '{"validation_libero_config": {"benchmark_root": "'"$lib"'/libero/libero"}}'
  else note "b: no LIBERO source at $lib"; fi ;;
esac
case ,$parts, in *,c,*) run l5-l6-trl --tags l5,l6 ;; esac
case ,$parts, in *,e,*)
  run l5-l6-trl-broken --tags l5,l6 -e @tests/gpu/k8s_exec_broken.yml -e validation_continue_on_error=true ;;
esac
down_all
case ,$parts, in *,d,*)
  # one count at a time, each with its own JSON, so a count cut off by the machine's time keeps the others
  for n in ${FLEET_NODES:-2 16 64 256}; do
    t=$(date +%s)
    timeout -s INT -k 60 "${FLEET_TIMEOUT_S:-400}" .venv/bin/python benchmarks/fleet_scale/run.py --nodes "$n" \
      --repeat 1 --scenario "${FLEET_SCENARIO:-healthy}" --json "$out/fleet-$n.json" > "$out/fleet-$n.log" 2>&1
    note "fleet $n nodes: rc=$? $(( $(date +%s) - t ))s"
  done ;;
esac
case ,$parts, in *,i,*)
  t=$(date +%s)
  timeout -s INT -k 60 "${ISOLATE_TIMEOUT_S:-540}" .venv/bin/python -m pytest tests/sim/test_sim_isolate.py -q \
    -p no:cacheprovider -m isolate_scale -k "${ISOLATE_K:-16 or 64}" --durations=0 > "$out/isolate.log" 2>&1
  note "isolate: rc=$? $(( $(date +%s) - t ))s" ;;
esac
note "done"
