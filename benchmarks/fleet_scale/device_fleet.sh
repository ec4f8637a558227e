#!/usr/bin/env bash
# L0 over N simulated p5 nodes on the lent 16-core GPU machine, one or more checkouts interleaved in one `run` call
# (docs/fleet-scale.md, "Measured"). There, from the repo root:
#   PLAN="head:2 head:1024 base:2 base:1024" bash benchmarks/fleet_scale/device_fleet.sh CARRY
# CARRY (carried with the call): tests/gpu/pack_k8s_exec_carry.sh's folder (pack.tar.xz, whl/, coll/), and a git
# archive per checkout named in PLAN: wt.tar.xz for `head`, wt-NAME.tar.xz for any other NAME
# (`git archive REV | xz -T2 > CARRY/wt-NAME.tar.xz`); optionally pyspy.tar.xz, a folder pyspy/ holding py-spy
# (pip install --target pyspy py-spy), for runs marked :p.
# PLAN: NAME:NODES[:p] per run, in order; :p samples the controller's process tree and the node runtime with py-spy
# during the run (which slows it: keep those runs out of the ratios). Each run is tests/gpu/run_k8s_exec_on_gpu.sh's
# part d (benchmarks/fleet_scale/run.py on a fresh simulated cluster, replayed probes) with the task_clock callback
# of benchmarks/runner_overhead, and pod_timeline.py beside it from 256 nodes on.
# FLEET_SCENARIO names the simulated cluster's scenario for every run (default healthy; image-pull-error measures
# a fleet that fails). Everything lands in $OUT/results.tgz after each run, so a call stopped by its time limit keeps
# what had ended.
set -uo pipefail
carry=$(cd "${1:?usage: device_fleet.sh CARRY}" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
# a folder of this call's own: a warm machine keeps /var/tmp between calls
out=/var/tmp/fleet-$(date +%s)
work=/var/tmp/fleet-checkouts
mkdir -p "$out" "$work/collections"
tar -xJf "$carry/coll/kubernetes-core.tar.xz" -C "$work/collections"
pyspy=""
if [ -f "$carry/pyspy.tar.xz" ]; then tar -xJf "$carry/pyspy.tar.xz" -C "$work" && pyspy=$work/pyspy; fi
export SIM_DEVICE_WHEELS=$carry/whl SIM_DEVICE_COLLECTIONS=$work/collections FLEET_TIMEOUT_S=${FLEET_TIMEOUT_S:-200}
export ANSIBLE_CALLBACKS_ENABLED="rlstack.validation.report,rlstack.validation.interrupt_cleanup,task_clock"

checkout() {  # NAME -> its unpacked folder
  local dir=$work/co-$1 archive=$carry/wt-$1.tar.xz
  [ "$1" = head ] && archive=$carry/wt.tar.xz
  [ -f "$archive" ] || { echo "no checkout $1: $archive is missing (git archive REV | xz > it)" >&2; return 1; }
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    if ! tar -xJf "$archive" -C "$dir"; then echo "no checkout $1 ($archive)" >&2; rm -rf "$dir"; return 1; fi
  fi
  echo "$dir"
}

profile() {  # STEP: py-spy on the node runtime and the controller of the run that is starting
  local runtime playbook
  runtime=$(pgrep -f "simctl.py runtime" | head -1)
  PYTHONPATH=$pyspy "$pyspy/bin/py-spy" record -r 50 -f raw -o "$out/pyspy-runtime-$1.txt" -p "$runtime" -d 90 \
    --nonblocking > "$out/pyspy-runtime-$1.log" 2>&1 &
  for _ in $(seq 600); do playbook=$(pgrep -f "ansible-playbook.*validate.yml" | head -1); [ -n "$playbook" ] && break; sleep 0.1; done
  PYTHONPATH=$pyspy "$pyspy/bin/py-spy" record -r 100 -s -f raw -o "$out/pyspy-controller-$1.txt" -p "$playbook" \
    --nonblocking > "$out/pyspy-controller-$1.log" 2>&1 &
}

"$root/benchmarks/fleet_scale/device_machine.sh" > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
t0=$(date +%s)
step=0
for spec in ${PLAN:-head:2 head:1024}; do
  IFS=: read -r name nodes mark <<< "$spec"
  step=$((step + 1))
  tag=$step-$name-$nodes
  dir=$(checkout "$name") || continue
  cd "$dir" || exit 1
  export ANSIBLE_CALLBACK_PLUGINS=$dir/benchmarks/runner_overhead/callback_plugins TASK_CLOCK_FILE=$out/clock-$tag.jsonl
  export SIM_STATE=$out/sim-$step
  if [ "$nodes" -ge 256 ]; then  # the pods' stages, once the run's cluster is up (run.py logs its scenario then)
    ( for _ in $(seq 900); do grep -q "scenario ${FLEET_SCENARIO:-healthy}" "$out/$tag/fleet-$nodes.log" 2>/dev/null && break; sleep 0.2; done
      if [ "$mark" = p ] && [ -n "$pyspy" ]; then profile "$step"; fi
      .venv/bin/python benchmarks/fleet_scale/pod_timeline.py --kubeconfig "$SIM_STATE/kubeconfig" --seconds 60 \
        --json "$out/timeline-$tag.json" > "$out/timeline-$tag.txt" 2>&1
      wait ) &
  fi
  FLEET_NODES=$nodes bash tests/gpu/run_k8s_exec_on_gpu.sh "$out/$tag" "$carry/pack.tar.xz" d > "$out/$tag.out" 2>&1
  wait
  tail -6 "$out/timeline-$tag.txt" 2>/dev/null
  echo "[$(( $(date +%s) - t0 ))s] $spec: $(grep -h 'run 1:' "$out/$tag/fleet-$nodes.log" | cut -c1-200)"
  timeline=$out/timeline-$tag.json
  [ -f "$timeline" ] || timeline=""
  .venv/bin/python "$root/benchmarks/fleet_scale/clock_summary.py" "$out/clock-$tag.jsonl" ${timeline:+"$timeline"}
  tar -C "$out" -czf "${OUT:-/var/tmp}/results.tgz" .
done
echo "results: ${OUT:-/var/tmp}/results.tgz"
