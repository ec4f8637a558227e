#!/usr/bin/env bash
# `make sim-pack`: everything the simulated cluster needs on a machine without Go or a network (the GPU machine),
# in one xz archive: the multi-call program with its component symlinks, and the module files simctl.py
# reads at `up` (kwok's stage YAMLs, the MPIJob, Trainer and JobSet CRDs of the pinned releases), laid out as a
# Go module cache. sim/device_up.sh unpacks it and starts the cluster. Usage: sim/pack.sh [OUT.tar.xz]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sim/versions.env
. "$here/versions.env"
# shellcheck source=sim/lib.sh
. "$here/lib.sh"
out=${1:-$here/../.cache/sim-pack/rlstack-sim-pack.tar.xz}
bash "$here/build.sh" >&2
bin=$(sim_bin_dir)
mods=$(go env GOMODCACHE)
GOFLAGS="" go mod download "sigs.k8s.io/kwok@v$SIM_KWOK_VERSION" "github.com/kubeflow/mpi-operator@v$SIM_MPI_OPERATOR_VERSION" \
  "github.com/kubeflow/trainer/v2@v$SIM_TRAINER_VERSION" "sigs.k8s.io/jobset@v$SIM_JOBSET_VERSION" >&2
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
b="$stage/bin/$(basename "$bin")"
mkdir -p "$b"
cp -P "$bin"/rlstack-sim "$b"/
for f in "$bin"/*; do  # the component symlinks, as build.sh made them
  [ -L "$f" ] && cp -P "$f" "$b"/
done
files=(
  "sigs.k8s.io/kwok@v$SIM_KWOK_VERSION/kustomize/stage/node/fast/node-initialize.yaml"
  "sigs.k8s.io/kwok@v$SIM_KWOK_VERSION/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml"
  "sigs.k8s.io/kwok@v$SIM_KWOK_VERSION/kustomize/stage/pod/fast/pod-ready.yaml"
  "sigs.k8s.io/kwok@v$SIM_KWOK_VERSION/kustomize/stage/pod/fast/pod-delete.yaml"
  "github.com/kubeflow/mpi-operator@v$SIM_MPI_OPERATOR_VERSION/manifests/base/kubeflow.org_mpijobs.yaml"
  "github.com/kubeflow/trainer/v2@v$SIM_TRAINER_VERSION/manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml"
  "github.com/kubeflow/trainer/v2@v$SIM_TRAINER_VERSION/manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml"
  "github.com/kubeflow/trainer/v2@v$SIM_TRAINER_VERSION/manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml"
  "sigs.k8s.io/jobset@v$SIM_JOBSET_VERSION/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"
)
for f in "${files[@]}"; do
  mkdir -p "$stage/gomod/$(dirname "$f")"
  cp "$mods/$f" "$stage/gomod/$f"
done
cp "$here/versions.env" "$stage/versions.env"
{
  echo "packed: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(go version)"
  (cd "$stage" && sha256sum "bin/$(basename "$bin")"/rlstack-* && find gomod -type f | sort | xargs sha256sum)
} > "$stage/PROVENANCE"
mkdir -p "$(dirname "$out")"
# xz -6: 24 MiB blocks, so every core compresses; -9 (one 192 MiB block) keeps one core busy for minutes
log "compressing ($(du -sh "$stage" | cut -f1) -> xz -6, all cores)"
tar -C "$stage" -cf - . | xz -6 -T0 > "$out.tmp"
mv "$out.tmp" "$out"
log "wrote $out ($(du -h "$out" | cut -f1))"
