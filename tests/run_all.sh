#!/usr/bin/env bash
# Every test of the project, as `make test` runs it: lint, ansible-test sanity, unit tests, then the
# tests that need the simulated cluster (smoke tests, ansible-runner/AWX tests, molecule scenarios, the fault
# suite's representative subset: Ctrl-C during L3 and L5, an AWX cancel, a stalled API server, the lease-only
# interrupt; the 8-node L0 run with six bad nodes and the 8-node isolation case on a cluster of their own). `make test-faults`,
# `make test-molecule`, `make test-isolate`, `make test-fleet`, `make test-sim-extended` and `make test-html`
# run the rest.
# The cluster is started for those and stopped afterwards, also when a test fails.
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
step "simulated cluster: smoke, AWX runner, molecule and fault tests" \
  bash tests/with_sim.sh "$py" -q -p no:cacheprovider --durations=40 \
  -m "(sim or molecule) and not molecule_extended and not fleet_extended and not sim_extended and not browser and not isolate_scale"
printf '\n==> %s in %ss\n' "$([ ${#failed[@]} -eq 0 ] && echo "all tests passed" || echo "FAILED: ${failed[*]}")" \
  "$(( $(date +%s) - t0 ))"
[ ${#failed[@]} -eq 0 ]
