#!/usr/bin/env bash
# validate.sh: the original harness's command line, run through the rlstack.validation playbooks.
# Users of the original keep their flags; each maps onto ansible-playbook (see --help and
# docs/local-mode.md). Exit status: ansible-playbook's (0 = every check passed), 2 for a bad flag.
set -euo pipefail

readonly LEVELS="0 1 2 3 3.5 4 5 6"

# The program name in messages and --help: rlstack-validate sets RLSTACK_VALIDATE_PROG.
prog=${RLSTACK_VALIDATE_PROG:-./validate.sh}

usage() {
  local text
  text=$(cat <<'EOF'
Usage: PROG [--mode local|cluster] [--level N] [--skip-to N] [--example NAME]
         [--continue-on-error] [-i|--inventory PATH] [--report-dir DIR]
         [--repo DIR] [--path PATH]... [--values FILE] [--set NAME=VALUE]...
         [--envsubst-vars LIST] [--with-collection] [--verbose]
         [--dry-run] [-- ANSIBLE-PLAYBOOK-ARGS...]
       rlstack-validate local [DIR] [OPTIONS]   (--mode local --repo DIR; DIR defaults to the current directory)

Validates an RL training stack with the rlstack.validation playbooks, level by level (L0-L6 and
Phase 0 = L3.5), or checks everything locally without a cluster.

  --mode local|cluster   local: playbooks/local.yml (manifests rendered and validated against the
                         Kubernetes and MPIJob schemas, the seed's pitfalls, shellcheck, yamllint,
                         terraform, reference integrity; no cluster). cluster (default):
                         playbooks/validate.yml against the inventory's clusters.
  --level N              run up to level N (0 1 2 3 3.5 4 5 6; 6 = every level).
  --skip-to N            start at level N (earlier levels are not run).
  --example NAME         run only this example of validation_examples in L5 and L6.
  --continue-on-error    run the later levels even after a level failed.
  -i, --inventory PATH   the inventory (default: inventories/sim, the simulated cluster; with --repo
                         none, only localhost).
  --repo DIR             local mode: lint exactly this repository (its manifests, found by content,
                         scripts, YAML, every Terraform root module, its own file references).
  --path PATH            local mode: also check these files or directories (repeatable).
  --values FILE          local mode: a .env file (read as the shell reads it) for the manifests' ${VAR} placeholders.
  --set NAME=VALUE       local mode: one placeholder value (repeatable; wins over --values).
  --envsubst-vars LIST   local mode: only these variables are placeholders, as envsubst '${A} ${B}'.
  --with-collection      local mode: also render and check the collection's own manifests.
  --verbose              local mode: print every finding, not only the errors.
  --report-dir DIR       write the reports there (see Outputs).
  --dry-run              print the ansible-playbook command instead of running it.
  -h, --help             print this help.
  -- ARGS                pass the rest to ansible-playbook (for example -- -vv -e key=value).

Outputs: the VALIDATION RESULTS table on the console; with --report-dir DIR also DIR/report.json,
DIR/junit.xml and DIR/report.html. Local mode adds DIR/findings.json (every finding) and
DIR/local.sarif (SARIF 2.1.0, for code scanning), and ends with its own summary: the findings per
rule and severity, where those two files are, and what the exit status means.

Exit status: 0 every check passed (warnings and notes never fail a run); 2 a check failed (local
mode: an error finding, or a check that could not run) or a flag is wrong; any other value is
ansible-playbook's (4: a cluster was unreachable).

Environment: ECR_URI sets the training image (validation_image), NCCL_TEST_IMAGE the nccl-tests
image (validation_nccl_tests_image). Local mode renders ${VAR} with your exported variables too, as
your own envsubst would (--values and --set win over them). The ansible-playbook of .venv/ is used
when it exists.

Examples:
  rlstack-validate local ~/src/my-training-repo --values ~/src/my-training-repo/.env --report-dir /tmp/lint
  PROG --mode local --repo . --set IMAGE_URI=123.dkr.ecr.us-east-1.amazonaws.com/train:v3
  PROG --mode local                              # this collection itself
  PROG --mode cluster --level 3                  # stop after NCCL/EFA
  PROG --mode cluster --skip-to 2 --level 3      # --tags from_l2 --skip-tags from_l4
  PROG --mode cluster --level 5 --example maniskill-openvlaoft
  ECR_URI=123456789.dkr.ecr.us-east-2.amazonaws.com/rlinf-on-eks/rlinf PROG --skip-to 2
EOF
)
  printf '%s\n' "${text//PROG/$prog}"
}

# One clear sentence on stderr, exit 2.
die() {
  printf '%s: %s\n' "${prog##*/}" "$1" >&2
  exit 2
}

# The value of an option that needs one: "$1" is the option, "$2" the next argument.
value_of() {
  if [ $# -lt 2 ] || [ -z "$2" ] || [ "${2#--}" != "$2" ]; then
    die "$1 needs a value (see $prog --help)."
  fi
  printf '%s' "$2"
}

check_level() {
  local option=$1 value=$2 known
  for known in $LEVELS; do
    [ "$value" = "$known" ] && return 0
  done
  die "$option must be one of ${LEVELS// /, }, not '$value'."
}

# Position of a level in LEVELS (0 for 0, 4 for 3.5, 7 for 6).
level_index() {
  local index=0 known
  for known in $LEVELS; do
    [ "$1" = "$known" ] && { printf '%s' "$index"; return 0; }
    index=$((index + 1))
  done
  return 1
}

# A JSON string (for extra vars that may hold spaces or quotes).
json_string() {
  local text=$1
  text=${text//\\/\\\\}
  text=${text//\"/\\\"}
  text=${text//$'\t'/\\t}
  text=${text//$'\n'/\\n}
  printf '"%s"' "$text"
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=cluster
level=""
skip_to=""
example=""
continue_on_error=false
inventory=""
report_dir=""
dry_run=false
paths=()
passthrough=()
repo=""
values_file=""
values=()
envsubst_vars=""
with_collection=false
verbose=false

while [ $# -gt 0 ]; do
  case $1 in
    -h | --help)
      usage
      exit 0
      ;;
    --mode) mode=$(value_of "$@"); shift 2 ;;
    --mode=*) mode=${1#*=}; shift ;;
    --level) level=$(value_of "$@"); shift 2 ;;
    --level=*) level=${1#*=}; shift ;;
    --skip-to) skip_to=$(value_of "$@"); shift 2 ;;
    --skip-to=*) skip_to=${1#*=}; shift ;;
    --example) example=$(value_of "$@"); shift 2 ;;
    --example=*) example=${1#*=}; shift ;;
    --continue-on-error) continue_on_error=true; shift ;;
    -i | --inventory) inventory=$(value_of "$@"); shift 2 ;;
    --inventory=*) inventory=${1#*=}; shift ;;
    --path) paths+=("$(value_of "$@")"); shift 2 ;;
    --path=*) paths+=("${1#*=}"); shift ;;
    --repo) repo=$(value_of "$@"); shift 2 ;;
    --repo=*) repo=${1#*=}; shift ;;
    --values) values_file=$(value_of "$@"); shift 2 ;;
    --values=*) values_file=${1#*=}; shift ;;
    --set) values+=("$(value_of "$@")"); shift 2 ;;
    --set=*) values+=("${1#*=}"); shift ;;
    --envsubst-vars) envsubst_vars=$(value_of "$@"); shift 2 ;;
    --envsubst-vars=*) envsubst_vars=${1#*=}; shift ;;
    --with-collection) with_collection=true; shift ;;
    --verbose) verbose=true; shift ;;
    --report-dir) report_dir=$(value_of "$@"); shift 2 ;;
    --report-dir=*) report_dir=${1#*=}; shift ;;
    --dry-run) dry_run=true; shift ;;
    --)
      shift
      passthrough=("$@")
      break
      ;;
    -*) die "unknown option '$1' (see $prog --help)." ;;
    *) die "unexpected argument '$1': every setting is an option (see $prog --help)." ;;
  esac
done

case $mode in
  local | cluster) ;;
  *) die "--mode must be local or cluster, not '$mode'." ;;
esac
[ -z "$level" ] || check_level --level "$level"
[ -z "$skip_to" ] || check_level --skip-to "$skip_to"
if [ "$mode" = local ]; then
  if [ -n "$level" ] || [ -n "$skip_to" ]; then
    die "--level and --skip-to choose cluster levels; they do not apply to --mode local."
  fi
elif [ ${#paths[@]} -gt 0 ] || [ -n "$repo" ] || [ -n "$values_file" ] || [ ${#values[@]} -gt 0 ] \
  || [ -n "$envsubst_vars" ] || [ "$with_collection" = true ] || [ "$verbose" = true ]; then
  die "--repo, --path, --values, --set, --envsubst-vars, --with-collection and --verbose only apply to --mode local."
fi
if [ -n "$repo" ]; then
  [ -d "$repo" ] || die "--repo $repo is not a directory."
  repo=$(cd "$repo" && pwd)
fi
if [ -n "$values_file" ]; then
  [ -f "$values_file" ] || die "--values $values_file is not a file."
  values_file=$(cd "$(dirname "$values_file")" && pwd)/$(basename "$values_file")
fi
for pair in ${values[@]+"${values[@]}"}; do
  case $pair in
    [A-Za-z_]*=*) ;;
    *) die "--set needs NAME=VALUE, not '$pair'." ;;
  esac
done
if [ -n "$level" ] && [ -n "$skip_to" ] && [ "$(level_index "$skip_to")" -gt "$(level_index "$level")" ]; then
  die "--skip-to $skip_to comes after --level $level, so no level would run."
fi
if [ -z "$inventory" ] && [ -n "$repo" ]; then
  inventory=localhost,  # another repository: no cluster inventory needed, its values come from --values/--set
elif [ -z "$inventory" ]; then
  inventory=$root/inventories/sim
elif [ ! -e "$inventory" ] && [ "${inventory#*,}" = "$inventory" ]; then
  die "the inventory '$inventory' does not exist."
fi

if [ -x "$root/.venv/bin/ansible-playbook" ]; then
  ansible_playbook=$root/.venv/bin/ansible-playbook
elif command -v ansible-playbook >/dev/null 2>&1; then
  ansible_playbook=$(command -v ansible-playbook)
elif [ "$dry_run" = true ]; then
  ansible_playbook=ansible-playbook
else
  die "ansible-playbook was not found: run 'make venv', or put ansible-playbook on PATH."
fi

if [ "$mode" = local ]; then
  command=("$ansible_playbook" "$root/playbooks/local.yml" -i "$inventory")
else
  command=("$ansible_playbook" "$root/playbooks/validate.yml" -i "$inventory")
fi

# --skip-to N: the levels from N on (every level has the tag from_lN of itself and of each level before
# it; Phase 0 = L3.5 has phase0 and the from_ tags of L0-L3). --level N: not the levels after N.
case $skip_to in
  "" | 0) tags="" ;;
  3.5) tags="phase0,from_l4" ;;
  *) tags="from_l$skip_to" ;;
esac
case $level in
  "" | 6) skip_tags="" ;;
  3 | 3.5) skip_tags="from_l4" ;;
  *) skip_tags="from_l$((${level%%.*} + 1))" ;;
esac
[ -z "$tags" ] || command+=(--tags "$tags")
[ -z "$skip_tags" ] || command+=(--skip-tags "$skip_tags")
[ -z "$example" ] || command+=(-e "validation_example=$example")
[ "$continue_on_error" = false ] || command+=(-e validation_continue_on_error=true)
[ -z "${ECR_URI:-}" ] || command+=(-e "validation_image=$ECR_URI")
[ -z "${NCCL_TEST_IMAGE:-}" ] || command+=(-e "validation_nccl_tests_image=$NCCL_TEST_IMAGE")
[ -z "$report_dir" ] || command+=(-e "{\"validation_report_dir\": $(json_string "$report_dir")}")
if [ ${#paths[@]} -gt 0 ]; then
  list=""
  for path in "${paths[@]}"; do
    list="${list:+$list, }$(json_string "$path")"
  done
  command+=(-e "{\"local_checks_paths\": [$list]}")
fi
[ -z "$repo" ] || command+=(-e "{\"local_checks_path\": $(json_string "$repo")}")
[ -z "$values_file" ] || command+=(-e "{\"local_checks_env_file\": $(json_string "$values_file")}")
if [ ${#values[@]} -gt 0 ]; then
  list=""
  for pair in "${values[@]}"; do
    list="${list:+$list, }$(json_string "${pair%%=*}"): $(json_string "${pair#*=}")"
  done
  command+=(-e "{\"local_checks_values\": {$list}}")
fi
[ -z "$envsubst_vars" ] || command+=(-e "{\"local_checks_envsubst_vars\": $(json_string "$envsubst_vars")}")
[ "$with_collection" = false ] || command+=(-e local_checks_render=true)
[ "$verbose" = false ] || command+=(-e local_checks_verbose=true)
if [ ${#passthrough[@]} -gt 0 ]; then
  command+=("${passthrough[@]}")
fi

# The collection's ansible.cfg resolves its FQCNs (.collections/) and enables the results table.
export ANSIBLE_CONFIG=${ANSIBLE_CONFIG:-$root/ansible.cfg}

if [ "$dry_run" = true ]; then
  printf 'ANSIBLE_CONFIG=%q' "$ANSIBLE_CONFIG"
  printf ' %q' "${command[@]}"
  printf '\n'
  exit 0
fi
if [ "$mode" = cluster ]; then
  exec "${command[@]}"
fi

# Local mode: the role writes its closing summary (exit code on the first line) instead of failing the
# play; it is printed after the results table, and its code is the exit status.
summary=$(mktemp "${TMPDIR:-/tmp}/rlstack-local-summary.XXXXXX")
trap 'rm -f "$summary"' EXIT
status=0
"${command[@]}" -e "{\"local_checks_summary_file\": $(json_string "$summary")}" || status=$?
if [ "$status" -eq 0 ] && [ -s "$summary" ]; then
  read -r status <"$summary"
  printf '\n'
  tail -n +2 "$summary"
fi
exit "$status"
