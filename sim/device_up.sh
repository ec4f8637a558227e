#!/usr/bin/env bash
# Start the simulated cluster on a machine without Go or a network (the lent GPU machine) from `make sim-pack`'s
# archive, pods executing for real by default (exec mode, sim/README.md "Exec mode", "On the GPU machine").
#   sim/device_up.sh PACK.tar.xz [simctl.py up arguments; default: --exec host --nodes 1]
#   sim/device_up.sh PACK.tar.xz --unpack-only    (then: export SIM_CACHE=$SIM_DEVICE_ROOT/bin
#                                                  GOMODCACHE=$SIM_DEVICE_ROOT/gomod; simctl.py up ... as usual)
# Environment:
#   SIM_DEVICE_WHEELS       a folder of wheels to install first (--no-index --no-deps) into python3's own
#                           environment, so the pods' python3 has them too (ansible-core, kubernetes, trl, ...)
#   SIM_DEVICE_COLLECTIONS  a folder holding ansible_collections/ (kubernetes.core), linked into .collections/
#   SIM_DEVICE_ROOT         where the archive is unpacked (default /var/tmp/rlstack-sim-device: not under /tmp,
#                           which each exec-mode pod has of its own, so what is there is invisible to pods)
# Stop it with `python3 sim/simctl.py down`: its processes run in sessions of their own (as with `make sim-up`),
# so a caller that must leave nothing behind runs down on exit (tests/gpu/run_k8s_exec_on_gpu.sh does).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=sim/lib.sh
. "$root/sim/lib.sh"
pack=${1:?usage: sim/device_up.sh PACK.tar.xz [simctl.py up arguments]}; shift
[ $# -gt 0 ] || set -- --exec host --nodes 1
dest=${SIM_DEVICE_ROOT:-/var/tmp/rlstack-sim-device}
[ -f "$pack" ] || die "no archive at $pack: make it with \`make sim-pack\` where Go is installed"
step "unpacking $pack into $dest"
mkdir -p "$dest"
tar -xJf "$pack" -C "$dest"
# The pack's versions must be this checkout's: a stale archive would start other binaries than sim/build.sh's.
cmp -s "$dest/versions.env" "$root/sim/versions.env" || die "$pack was packed from other sim/versions.env pins than this checkout's; run \`make sim-pack\` again"
export SIM_CACHE=$dest/bin GOMODCACHE=$dest/gomod
if [ -n "${SIM_DEVICE_WHEELS:-}" ]; then
  step "installing $(find "$SIM_DEVICE_WHEELS" -name '*.whl' | wc -l) wheels from $SIM_DEVICE_WHEELS into $(command -v python3)"
  # compiled as they are installed: every module run imports the kubernetes client in a process of its own, and
  # the GPU image's python3 keeps no bytecode it compiles on import, so without this each module run compiled it
  # again (1.5-2.6 s of CPU each, seen in py-spy on 2026-12-07; docs/fleet-scale.md)
  python3 -m pip install -q --no-index --no-deps --no-cache-dir --disable-pip-version-check "$SIM_DEVICE_WHEELS"/*.whl
fi
if [ -n "${SIM_DEVICE_COLLECTIONS:-}" ]; then
  for c in "$SIM_DEVICE_COLLECTIONS"/ansible_collections/*/*; do
    ns=$(basename "$(dirname "$c")")
    [ "$ns" = rlstack ] && continue
    mkdir -p "$root/.collections/ansible_collections/$ns"
    ln -sfn "$c" "$root/.collections/ansible_collections/$ns/$(basename "$c")"
  done
  python3 -m compileall -q -j 0 "$SIM_DEVICE_COLLECTIONS" >/dev/null
fi
# the controller's plugins too, for the same reason (a user's first run leaves their bytecode in the clone)
python3 -m compileall -q -j 0 "$root/plugins" "$root/sim" >/dev/null
# The Makefile, tests/with_sim.sh and benchmarks/ run .venv/bin/python and .venv/bin/ansible-playbook: without a
# virtual environment here (nothing can be installed from an index), they are python3's own.
# python is a wrapper, not a link: a link to a virtual environment's python, started by another path, finds no
# pyvenv.cfg beside it and runs the base interpreter without the environment's packages (seen on the GPU image,
# whose python3 is /opt/torch/.venv/bin/python3: "No module named 'yaml'").
if [ ! -e "$root/.venv/bin/python" ]; then
  py=$(command -v python3)
  mkdir -p "$root/.venv/bin"
  printf '#!/bin/sh\nexec %q "$@"\n' "$py" > "$root/.venv/bin/python"
  chmod +x "$root/.venv/bin/python"
  for t in ansible-playbook ansible pytest; do
    if [ -x "$(dirname "$py")/$t" ]; then ln -sfn "$(dirname "$py")/$t" "$root/.venv/bin/$t"; fi
  done
fi
if [ "${1:-}" = --unpack-only ]; then
  log "unpacked; export SIM_CACHE=$SIM_CACHE GOMODCACHE=$GOMODCACHE before sim/simctl.py"
  exit 0
fi
step "starting the simulated cluster: simctl.py up $*"
cd "$root"
"$root/.venv/bin/python" sim/simctl.py up "$@"
