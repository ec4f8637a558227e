#!/usr/bin/env bash
# Build the simulated cluster's binaries from the Go module proxy into a cache outside the repo.
# Rebuilds only what is missing. Prints each step with its elapsed time.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sim/versions.env
. "$here/versions.env"
# shellcheck source=sim/lib.sh
. "$here/lib.sh"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
command -v go >/dev/null || die "Go is not installed; the simulated cluster is built with Go >= 1.26 from the Go module proxy."
bin=$(sim_bin_dir)
mkdir -p "$bin"
log "binary cache: $bin"

K=$SIM_K8S_VERSION
MINOR=${K#1.}; MINOR=${MINOR%%.*}

# One multi-call program instead of nine binaries (sim/multicall/, docs/performance.md): each component is a
# symlink to it, and it picks the component by the name it is run as. One program builds each library once: the
# control plane's minor is the one whose libraries kwok needs (kwok v0.8.0 asks for the Kubernetes libraries at
# v0.36 and runs Kubernetes 1.36 by default), so k8s.io/kubernetes' staging modules and kwok's libraries are the
# same modules at one version. (Until 2026-12-06 two programs, a 1.34 control plane and kwok at v0.36, compiled
# about 57 MB of the same library source twice.)
COMPONENTS="kube-apiserver kube-controller-manager kube-scheduler kubectl kwok kwokctl etcd mpi-operator"

# `go install mpi-operator@version` asks the proxy for the module's version list (a deprecation check), which
# the proxy refuses for this module; a wrapper module resolves exact versions without it.
build_multicall() {
  local w; w=$(mktemp -d); trap 'rm -rf "$w"' RETURN
  cd "$w"
  go mod init rlstack-sim-build >/dev/null 2>&1
  local gomod godebug
  gomod=$(go mod download -json "k8s.io/kubernetes@v$K" | python3 -c 'import json,sys;print(json.load(sys.stdin)["GoMod"])')
  # upstream's runtime behaviour: k8s.io/kubernetes' own godebug default (v1.36.3: default=go1.26)
  godebug=$(awk '$1 == "godebug" {print $2; exit}' "$gomod")
  if [ -n "$godebug" ]; then go mod edit -godebug="$godebug"; fi
  # k8s.io/kubernetes requires its staging modules at v0.0.0; map each to its published v0.<minor>.<patch>.
  local m
  while read -r m; do
    go mod edit -replace="$m=$m@v0.${K#1.}"
  done < <(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$gomod")
  step "resolving k8s.io/kubernetes v$K, kwok v$SIM_KWOK_VERSION, etcd v$SIM_ETCD_VERSION, mpi-operator v$SIM_MPI_OPERATOR_VERSION modules"
  local mods=("k8s.io/kubernetes@v$K" "sigs.k8s.io/kwok@v$SIM_KWOK_VERSION" "go.etcd.io/etcd/server/v3@v$SIM_ETCD_VERSION"
              "github.com/kubeflow/mpi-operator@v$SIM_MPI_OPERATOR_VERSION")
  go get "${mods[@]}" >/dev/null 2>&1 || go get "${mods[@]}"
  go list -m k8s.io/client-go google.golang.org/grpc sigs.k8s.io/controller-runtime | sed 's/^/    /' >&2
  local ldf="-s -w" p date; date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=v$K -X $p.gitMajor=1 -X $p.gitMinor=$MINOR"
    ldf+=" -X $p.gitTreeState=clean -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=$date"
  done
  cp "$here/multicall/main.go" "$here/multicall/dispatch.go" .
  step "building rlstack-sim ($COMPONENTS; cold: about 7 minutes on 2 cores)"
  go build -trimpath -ldflags "$ldf" -o "$bin/rlstack-sim.tmp" .
  mv "$bin/rlstack-sim.tmp" "$bin/rlstack-sim"
}

link_components() {  # program, components...: a symlink per component, replacing an older per-binary build
  local prog=$1 c; shift
  for c in "$@"; do
    if [ "$(readlink "$bin/$c" 2>/dev/null)" != "$prog" ]; then ln -sfn "$prog" "$bin/$c"; fi
  done
}

[ -x "$bin/rlstack-sim" ] || (build_multicall)
# shellcheck disable=SC2086
link_components rlstack-sim $COMPONENTS
# etcdctl: kwokctl's binary runtime runs it only for `kwokctl snapshot` (kwok v0.8.0
# pkg/kwokctl/runtime/binary/cluster_snapshot.go), which nothing here uses; the name stays so kwokctl's
# configuration (sim/kwok.yaml.in) and simctl.py find every binary, and running it says it is not built in.
link_components rlstack-sim etcdctl
# The stage YAMLs and the MPIJob CRD come from the same module downloads (never copied into the repo).
GOFLAGS="" go mod download "sigs.k8s.io/kwok@v$SIM_KWOK_VERSION" "github.com/kubeflow/mpi-operator@v$SIM_MPI_OPERATOR_VERSION"

step "versions"
"$bin/kube-apiserver" --version
# The first line only; read all of it, so etcd never dies of SIGPIPE under pipefail (CI exit 141).
etcd_version=$("$bin/etcd" --version)
echo "${etcd_version%%$'\n'*}"
"$bin/kwokctl" --version
step "done"
