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

build_kubernetes() {
  local w; w=$(mktemp -d); trap 'rm -rf "$w"' RETURN
  cd "$w"
  go mod init simk8s-build >/dev/null 2>&1
  # Kubernetes 1.33/1.34 declare go 1.24: keep upstream's runtime behaviour.
  go mod edit -godebug=default=go1.24
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@v$K" | python3 -c 'import json,sys;print(json.load(sys.stdin)["GoMod"])')
  # k8s.io/kubernetes requires its staging modules at v0.0.0; map each to its published v0.<minor>.<patch>.
  local m
  while read -r m; do
    go mod edit -replace="$m=$m@v0.${K#1.}"
  done < <(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$gomod")
  step "resolving k8s.io/kubernetes v$K modules"
  go get "k8s.io/kubernetes@v$K" >/dev/null 2>&1 || go get "k8s.io/kubernetes@v$K"
  local ldf="-s -w" p date; date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=v$K -X $p.gitMajor=1 -X $p.gitMinor=$MINOR"
    ldf+=" -X $p.gitTreeState=clean -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=$date"
  done
  local c
  for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
    [ -x "$bin/$c" ] && continue
    step "building $c v$K (cold: several minutes on 2 cores)"
    go build -trimpath -ldflags "$ldf" -o "$bin/$c.tmp" "k8s.io/kubernetes/cmd/$c"
    mv "$bin/$c.tmp" "$bin/$c"
  done
}

build_etcd() {
  local w; w=$(mktemp -d); trap 'rm -rf "$w"' RETURN
  cd "$w"
  go mod init simetcd-build >/dev/null 2>&1
  step "resolving etcd v$SIM_ETCD_VERSION modules"
  go get "go.etcd.io/etcd/server/v3@v$SIM_ETCD_VERSION" "go.etcd.io/etcd/etcdctl/v3@v$SIM_ETCD_VERSION" >/dev/null 2>&1 \
    || go get "go.etcd.io/etcd/server/v3@v$SIM_ETCD_VERSION" "go.etcd.io/etcd/etcdctl/v3@v$SIM_ETCD_VERSION"
  step "building etcd v$SIM_ETCD_VERSION"
  go build -trimpath -ldflags "-s -w" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3 && mv "$bin/etcd.tmp" "$bin/etcd"
  go build -trimpath -ldflags "-s -w" -o "$bin/etcdctl.tmp" go.etcd.io/etcd/etcdctl/v3 && mv "$bin/etcdctl.tmp" "$bin/etcdctl"
}

build_go_install() {  # name module@version
  local name=$1 target=$2
  [ -x "$bin/$name" ] && return 0
  step "building $name ($target)"
  GOBIN="$bin" go install -trimpath -ldflags "-s -w" "$target"
}

if [ ! -x "$bin/kube-apiserver" ] || [ ! -x "$bin/kube-controller-manager" ] || [ ! -x "$bin/kube-scheduler" ] || [ ! -x "$bin/kubectl" ]; then
  (build_kubernetes)
fi
if [ ! -x "$bin/etcd" ] || [ ! -x "$bin/etcdctl" ]; then (build_etcd); fi
build_go_install kwok "sigs.k8s.io/kwok/cmd/kwok@v$SIM_KWOK_VERSION"
build_go_install kwokctl "sigs.k8s.io/kwok/cmd/kwokctl@v$SIM_KWOK_VERSION"
# `go install mpi-operator@version` asks the proxy for the module's version list (a deprecation check),
# which the proxy refuses for this module; a wrapper module resolves the exact version without it.
build_mpi_operator() {
  local w; w=$(mktemp -d); trap 'rm -rf "$w"' RETURN
  cd "$w"
  go mod init simmpi-build >/dev/null 2>&1
  step "resolving mpi-operator v$SIM_MPI_OPERATOR_VERSION (needs sigs.k8s.io/scheduler-plugins and volcano.sh/apis)"
  go get "github.com/kubeflow/mpi-operator@v$SIM_MPI_OPERATOR_VERSION" >/dev/null 2>&1 \
    || go get "github.com/kubeflow/mpi-operator@v$SIM_MPI_OPERATOR_VERSION"
  go list -m sigs.k8s.io/scheduler-plugins volcano.sh/apis | sed 's/^/    /' >&2
  step "building mpi-operator v$SIM_MPI_OPERATOR_VERSION"
  go build -trimpath -ldflags "-s -w" -o "$bin/mpi-operator.tmp" github.com/kubeflow/mpi-operator/cmd/mpi-operator
  mv "$bin/mpi-operator.tmp" "$bin/mpi-operator"
}
[ -x "$bin/mpi-operator" ] || (build_mpi_operator)
# The stage YAMLs and the MPIJob CRD come from the same module downloads (never copied into the repo).
GOFLAGS="" go mod download "sigs.k8s.io/kwok@v$SIM_KWOK_VERSION" "github.com/kubeflow/mpi-operator@v$SIM_MPI_OPERATOR_VERSION"

step "versions"
"$bin/kube-apiserver" --version
# The first line only; read all of it, so etcd never dies of SIGPIPE under pipefail (CI exit 141).
etcd_version=$("$bin/etcd" --version)
echo "${etcd_version%%$'\n'*}"
"$bin/kwokctl" --version
step "done"
