#!/usr/bin/env bash
# Every test of the project, as `make test` runs it: lint, ansible-test sanity, unit tests, then the
# tests that need the simulated cluster (smoke tests, ansible-runner/AWX tests, molecule scenarios, the lease-only
# interrupt; the 8-node L0 run with six bad nodes and the 8-node isolation case on a cluster of their own) and,
# beside them, the whole fault suite (tests/faults, `make test-faults`) on a simulated cluster of its own
# (SIM_STATE=.sim-faults, its own ports): its tests mostly wait on purpose (a paused API server, a restart, a
# node's grace period, a lease running out), about a third of one core each, so on 2 cores it costs the other
# sim tests little and CI its ~15 minutes; the ones marked `alone` (a wall-clock bound) run after the other sim
# tests, with the machine to themselves (tests/faults/stream.sh). `make test-molecule`, `make test-isolate`, `make test-fleet`,
# `make test-sim-extended` and `make test-html` run the rest.
# Each cluster is started for those and stopped afterwards, also when a test fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
t0=$(date +%s)
failed=()
step() {  # name, command...
  local name=$1; shift
  printf '\n==> [%4ss] %s\n' "$(( $(date +%s) - t0 ))" "$name"
  if "$@"; then printf '<== %s: ok\n' "$name"; else printf '<== %s: FAILED\n' "$name"; failed+=("$name"); fi
}
py=.venv/bin/pytest
step "lint" bash tests/lint.sh
step "ansible-test sanity" bash tests/sanity.sh
step "unit and local tests" "$py" -q -p no:cacheprovider -n 2 -m "not sim and not molecule and not gpu and not faults and not browser"
faults_log=tests/output/faults/run_all.log
sim_done=tests/output/faults/.sim-step-done
mkdir -p tests/output/faults
rm -f "$sim_done"
printf '\n==> [%4ss] fault suite: started beside the next step (output: %s)\n' "$(( $(date +%s) - t0 ))" "$faults_log"
SIM_STATE="$PWD/.sim-faults" bash tests/with_sim.sh bash tests/faults/stream.sh "$sim_done" >"$faults_log" 2>&1 &
faults_pid=$!
trap 'touch "$sim_done"; kill "$faults_pid" 2>/dev/null' EXIT  # with_sim.sh stops its cluster on TERM
step "simulated cluster: smoke, AWX runner and molecule tests" \
  bash tests/with_sim.sh "$py" -q -p no:cacheprovider --durations=40 \
  -m "(sim or molecule) and not faults and not molecule_extended and not fleet_extended and not sim_extended and not browser and not isolate_scale"
touch "$sim_done"  # the fault tests marked `alone` (a wall-clock bound) run now, with the machine to themselves
faults() { wait "$faults_pid"; local rc=$?; cat "$faults_log"; return "$rc"; }
step "fault suite (every test of tests/faults, on its own simulated cluster)" faults
printf '\n==> %s in %ss\n' "$([ ${#failed[@]} -eq 0 ] && echo "all tests passed" || echo "FAILED: ${failed[*]}")" \
  "$(( $(date +%s) - t0 ))"
[ ${#failed[@]} -eq 0 ]
