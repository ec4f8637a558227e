#!/usr/bin/env bash
# The fault suite as tests/run_all.sh runs it, on the cluster SIM_STATE names (tests/with_sim.sh starts it):
# every fault test beside the other simulated-cluster tests, then, once those are done ($1, a file that
# run_all.sh creates when its sim step ends), the tests marked `alone` (a wall-clock bound) with the machine to
# themselves. Further arguments go to both pytest runs.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
done_file=$1; shift
py=.venv/bin/pytest
rc=0
"$py" -q -p no:cacheprovider --durations=30 -m "faults and not alone" tests/faults "$@" || rc=1
echo "==> waiting for the other sim tests to end before the fault tests marked alone"
while [ ! -e "$done_file" ]; do sleep 5; done
"$py" -q -p no:cacheprovider --durations=5 -m "faults and alone" tests/faults "$@" || rc=1
exit "$rc"
