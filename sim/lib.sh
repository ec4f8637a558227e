# shellcheck shell=bash
# Shared helpers for the sim/ scripts (sourced, not run).
SIM_T0=${SIM_T0:-$(date +%s)}
log() { printf '[sim %4ss] %s\n' "$(( $(date +%s) - SIM_T0 ))" "$*" >&2; }
step() { log "== $*"; }
die() { printf 'sim: %s\n' "$*" >&2; exit 1; }
sim_cache_root() { printf '%s' "${SIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rlstack-sim}"; }
sim_bin_dir() {
  printf '%s/k%s-e%s-kwok%s-mpi%s' "$(sim_cache_root)" "$SIM_K8S_VERSION" "$SIM_ETCD_VERSION" \
    "$SIM_KWOK_VERSION" "$SIM_MPI_OPERATOR_VERSION"
}
