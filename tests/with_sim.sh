#!/usr/bin/env bash
# Run a command against the simulated cluster: start it (unless one is already up), run, and stop it
# afterwards only if this script started it — also when the command fails or is interrupted. SIM_STATE picks
# the cluster (its state directory; default .sim): tests/run_all.sh runs the fault suite on one of its own.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
py=.venv/bin/python
started=0
if ! $py sim/simctl.py status >/dev/null 2>&1; then
  $py sim/simctl.py up --scenario healthy || exit 1
  started=1
fi
cleanup() { if [ "$started" = 1 ]; then $py sim/simctl.py down; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM
export KUBECONFIG="${SIM_STATE:-$PWD/.sim}/kubeconfig"
"$@"
