#!/usr/bin/env bash
# Static checks: ansible-lint (production profile), yamllint, shellcheck on every shell script.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin
echo "==> ansible-lint (production profile)"
"$bin/ansible-lint" --nocolor
echo "==> yamllint"
"$bin/yamllint" -s .
echo "==> shellcheck"
git ls-files -z --cached --others --exclude-standard -- '*.sh' validate.sh .ci/run | sort -zu \
  | xargs -0 -r sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' sh | xargs -0 -r "$bin/shellcheck" -x
echo "lint: ok"
