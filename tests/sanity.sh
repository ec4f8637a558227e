#!/usr/bin/env bash
# ansible-test sanity must run from an ansible_collections/<namespace>/<name> path: copy the tracked files
# of the checkout there and run it with an empty tests/sanity/ignore-2.19.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${SANITY_WORKDIR:-$root/tests/output/sanity-tree}
dest=$work/ansible_collections/rlstack/validation
rm -rf "$work" && mkdir -p "$dest"
cd "$root"
git ls-files -z --cached --others --exclude-standard | python3 -c '
import os, shutil, sys
dest = sys.argv[1]
for path in sys.stdin.buffer.read().decode().split("\0"):
    if path and not path.startswith(".collections/") and os.path.isfile(path) and not os.path.islink(path):
        os.makedirs(os.path.join(dest, os.path.dirname(path)), exist_ok=True)
        shutil.copy2(path, os.path.join(dest, path))
' "$dest"
# Modules that reuse kubernetes.core's client code (pod_logs) import it: ansible-test finds collections
# beside the one under test, so put the pinned kubernetes.core (from the ansible package) there.
k8s_core=$("$root/.venv/bin/python" -c 'import ansible_collections.kubernetes.core as m; print(list(m.__path__)[0])')
mkdir -p "$work/ansible_collections/kubernetes"
cp -r "$k8s_core" "$work/ansible_collections/kubernetes/core"
cd "$dest"
git init -q . && git add -A >/dev/null   # ansible-test lists files through git
# ansible-test's --venv mode downloads its pip bootstrap from a host this machine cannot reach, so the
# sanity tools go into a virtual environment of their own (kept between runs) with --requirements.
venv=$root/.venv-sanity
if [ ! -x "$venv/bin/ansible-test" ]; then
  echo "==> creating $venv for ansible-test sanity (first run: a few minutes)"
  python3.11 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "$(grep '^ansible-core==' "$root/requirements.txt")"
fi
# Some sanity tests still build a virtual environment of their own; seed ansible-test's pip bootstrap cache.
pip_version=$("$venv/bin/python" -c 'from ansible_test._internal.python_requirements import PIP_VERSION; print(PIP_VERSION)' 2>/dev/null || echo 24.2)
mkdir -p "$HOME/.ansible/test/cache"
cp "$root/tests/sanity/get_pip_standin.py" "$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
# The shellcheck sanity test runs only where shellcheck is on PATH: put the pinned one (.venv) there, so it runs
# here as it does on a machine that has shellcheck installed (a CI run failed on it once, unseen locally).
export PATH="$root/.venv/bin:$PATH"
echo "==> ansible-test sanity"
"$venv/bin/ansible-test" sanity --local --requirements --python 3.11 --color no "$@"
