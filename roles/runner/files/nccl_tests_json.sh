#!/bin/sh
# Runs one nccl-tests binary on every rank of the MPIJob (templates/mpijob.yml.j2): "$1" is the binary, the
# rest its arguments. nccl-tests 2.17.3 and later (their -h lists output_file) also write the results as
# JSON with -J; only rank 0 writes the file, and this script prints it on one line after the marker that
# plugins/module_utils/nccl/_nccl_json.py (JSON_MARKER) reads from the launcher's log. Older nccl-tests run
# without -J: the text table is read either way. The exit status is nccl-tests' own.
test_binary="$1"
shift
json_file="/tmp/rlsv-nccl-tests.$$.json"
if "$test_binary" -h 2>&1 | grep -q output_file; then
  "$test_binary" "$@" -J "$json_file"
else
  "$test_binary" "$@"
fi
status=$?
if [ -s "$json_file" ]; then
  printf '%s' '# rlstack nccl-tests JSON: '
  tr -d '\n' < "$json_file"
  echo
  rm -f "$json_file"
fi
exit "$status"
