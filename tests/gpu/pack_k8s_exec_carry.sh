#!/usr/bin/env bash
# Everything tests/gpu/run_k8s_exec_on_gpu.sh needs on the lent GPU machine, in one folder that travels with a
# `run` call (an ignored folder of the repo named in `carry`; 64 MiB per call, the repo's tracked files included):
#   tests/gpu/pack_k8s_exec_carry.sh DEST
# DEST/pack.tar.xz (make sim-pack), DEST/wt.tar.xz (this checkout's HEAD), DEST/whl (ansible-core, the kubernetes
# client, trl, datasets: the versions of requirements.txt and docs/hardware.md, for Python 3.12 there),
# DEST/coll/kubernetes-core.tar.xz (from .venv), DEST/libero-0.1.1.tar.gz (make sim-exec-deps). The command there:
# sim/replay/recorded/k8s-exec-h100x1-2026-12-05/README.md (the one-call command; docs/hardware.md has the results).
set -euo pipefail
dest=${1:?destination folder}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mkdir -p "$dest/whl" "$dest/coll"
make -s sim-pack SIM_PACK="$dest/pack.tar.xz"
git archive HEAD | xz -6 -T0 > "$dest/wt.tar.xz"
# No cryptography (with cffi, pycparser): only Ansible Vault imports it, behind a guard; 4.8 MB saved. google-auth
# 2.40.3, not requirements.txt's 2.63.0: 2.63.0's google/auth/crypt/es.py imports cryptography unguarded (the
# kubernetes client imports it through google.auth.transport.requests); 2.40.3 falls back to rsa when it is missing.
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$dest/whl" \
  ansible-core==2.19.14 resolvelib==1.2.1 kubernetes==34.1.0 google-auth==2.40.3 rsa==4.9.1 cachetools==5.5.2 pyasn1==0.6.5 \
  pyasn1_modules==0.4.2 requests-oauthlib==2.0.0 oauthlib==4.0.1 websocket-client==1.9.2 durationpy==0.11 \
  jmespath==1.1.0 trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19
site=$(.venv/bin/python -c 'import ansible_collections.kubernetes.core as m, pathlib; print(pathlib.Path(list(m.__path__)[0]).parents[2])')
tar -C "$site" -cf - ansible_collections/kubernetes/core | xz -6 > "$dest/coll/kubernetes-core.tar.xz"
make -s sim-exec-deps
cp "${SIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rlstack-sim}/exec/libero-0.1.1.tar.gz" "$dest/"
du -sh "$dest"
