#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: nccl_log_info
short_description: Parse nccl-tests results and NCCL_DEBUG=INFO logs into structured facts
description:
  - Reads an NCCL log on the host where the module runs (O(path)) or given inline (O(content)) and returns
    every nccl-tests results table, facts from C(NCCL_DEBUG=INFO) lines (NCCL version, network, ranks, nodes,
    hosts) and failure signatures with a remediation hint each.
  - "Understands tables of every nccl-tests collective and header generation (NCCL 1 C(bytes N type op),
    old C(redop)/C(error) columns, current C(redop root ... #wrong)), C(N/A) values, several tables per log,
    tables interleaved by several processes, missing footers, Open MPI C([1,0]<stdout>:) and srun C(13: )
    prefixes, timestamps, indentation and unrelated output around the tables."
  - The log is read line by line in blocks, so memory use does not depend on its size; bytes that are not
    UTF-8 are replaced. The raw log is never returned.
  - Bandwidths are in GB/s (10^9 bytes per second), as nccl-tests prints them.
  - Read-only; always returns C(changed=false).
author:
  - rlstack.validation maintainers (@rlstack)
extends_documentation_fragment:
  - rlstack.validation._attributes
  - rlstack.validation._attributes.info_module
options:
  path:
    description:
      - Path of the log file on the host where the module runs.
      - A file that starts with C({"version":) is read as the JSON file nccl-tests writes with C(-J results.json)
        (C(--output_file), nccl-tests 2.17.3 and later); its table is the one the text output of the same run prints.
      - A directory is read as a set of such JSON files (every C(*.json) in it, in name order, one table each).
      - A missing, empty, unreadable or binary file, a cut-short JSON file or a directory without C(*.json) files
        makes the module fail with a one-sentence message.
      - Mutually exclusive with O(content); one of them is required.
    type: path
  content:
    description:
      - The log text itself, for example the registered C(stdout) of the command that ran nccl-tests.
      - Ansible echoes module arguments in the task result (C(invocation)), so prefer O(path) for big logs.
      - Mutually exclusive with O(path); one of them is required.
    type: str
notes:
  - The failure signature catalog (ids, meaning, hints) is documented in the collection's C(docs/nccl-parser.md).
  - RV(signatures) keeps the first 20 entries per id; RV(signature_counts) counts all of them.
seealso:
  - name: nccl-tests performance notes
    description: What algbw and busbw mean.
    link: https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
"""

EXAMPLES = r"""
- name: Parse the launcher log of an nccl-tests MPIJob copied to the node
  rlstack.validation.nccl_log_info:
    path: /var/tmp/nccl-allreduce.log
  register: nccl

- name: Show the one-line summary
  ansible.builtin.debug:
    msg: "{{ nccl.summary }}"

- name: Parse the output of a command run earlier
  rlstack.validation.nccl_log_info:
    content: "{{ all_reduce_run.stdout }}"
  register: nccl_inline

- name: Fail when NCCL fell back to TCP sockets
  ansible.builtin.assert:
    that:
      - "'socket_fallback' not in nccl.signature_ids"
      - nccl.network == 'efa'
    fail_msg: "{{ nccl.summary }}"
"""

RETURN = r"""
tables:
  description:
    - One entry per nccl-tests results table, in log order (at most the last 256 tables and 8192 rows).
  returned: always
  type: list
  elements: dict
  contains:
    test:
      description:
        - nccl-tests binary of the table, for example V(all_reduce_perf); from the command line, a
          C(# Collective test starting) banner or a C(===begin) marker, else inferred from the columns.
        - V(null) when it cannot be told.
      type: str
      returned: always
      sample: all_reduce_perf
    test_inferred:
      description: V(true) when RV(tables[].test) was inferred from the columns and the busbw/algbw ratio.
      type: bool
      returned: always
      sample: false
    rows:
      description: Data rows in the order printed.
      type: list
      elements: dict
      returned: always
      contains:
        size:
          description: Message size in bytes.
          type: int
          returned: always
          sample: 17179869184
        count:
          description: Element count.
          type: int
          returned: always
          sample: 4294967296
        type:
          description: Data type.
          type: str
          returned: always
          sample: float
        redop:
          description: Reduction operation (V(none) for collectives without one); V(null) when the table has no such column.
          type: str
          returned: always
          sample: sum
        root:
          description: Root rank (V(-1) when not applicable); V(null) when the table has no such column.
          type: int
          returned: always
          sample: -1
        out_of_place:
          description: Out-of-place measurement.
          type: dict
          returned: always
          contains:
            time_us:
              description: Time in microseconds (NCCL 1 tables printed milliseconds and are converted).
              type: float
              returned: always
              sample: 62239.0
            algbw:
              description: Algorithm bandwidth in GB/s.
              type: float
              returned: always
              sample: 276.03
            busbw:
              description: Bus bandwidth in GB/s.
              type: float
              returned: always
              sample: 483.05
            wrong:
              description: The C(#wrong) count; V(null) for V(N/A) and for tables with an C(error) column.
              type: int
              returned: always
              sample: 0
            error:
              description: Maximum error of older tables (C(error)/C(res) column); V(null) otherwise.
              type: float
              returned: always
              sample: null
        in_place:
          description: In-place measurement, same keys as RV(tables[].rows[].out_of_place); V(null) if not printed.
          type: dict
          returned: always
    avg_busbw:
      description: Value of the C(Avg bus bandwidth) footer in GB/s, V(null) when missing.
      type: float
      returned: always
      sample: 156.742
    oob_values:
      description: Count from the C(Out of bounds values) footer, V(null) when missing.
      type: int
      returned: always
      sample: 0
    oob_status:
      description: V(OK) or V(FAILED) from the C(Out of bounds values) footer, V(null) when missing.
      type: str
      returned: always
      sample: OK
    complete:
      description: V(true) when the table ended with its footer; a truncated or crashed run gives V(false).
      type: bool
      returned: always
      sample: true
    line_no:
      description: Line number of the table header.
      type: int
      returned: always
      sample: 42
    rows_omitted:
      description: Rows beyond the 4096 kept for this table.
      type: int
      returned: always
      sample: 0
tables_omitted:
  description: Older tables dropped to bound memory (more than 256 tables, or more than 8192 rows in all).
  returned: always
  type: int
  sample: 0
peak_busbw:
  description: Highest busbw of any row (out-of-place or in-place, any table) in GB/s; V(null) without rows.
  returned: always
  type: float
  sample: 487.12
busbw_at_largest_size:
  description: Out-of-place busbw (GB/s) of the row with the largest size in the last table; V(null) without rows.
  returned: always
  type: float
  sample: 487.12
largest_size:
  description: Size in bytes of the row behind RV(busbw_at_largest_size).
  returned: always
  type: int
  sample: 17179869184
avg_busbw_reported:
  description: C(Avg bus bandwidth) footer of the last table in GB/s; V(null) when missing.
  returned: always
  type: float
  sample: 52.98
wrong_total:
  description:
    - Sum of the C(#wrong) counts of all rows; tables with an C(error) column add their C(Out of bounds values)
      count instead. V(null) when no table reports either.
  returned: always
  type: int
  sample: 0
complete:
  description: V(true) when every table has its footer, V(false) when one does not, V(null) without tables.
  returned: always
  type: bool
  sample: true
network:
  description:
    - Network NCCL used, in a stable vocabulary for checks and expectations (see C(docs/nccl-parser.md)),
      V(socket), V(ib) (also C(IBext_v8)), V(ucx) (C(UCX), C(UCX_RMA) of nccl-rdma-sharp-plugins),
      V(efa) (aws-ofi-nccl with the efa provider), V(ofi:<provider>) for another libfabric provider
      (V(ofi:cxi), V(ofi:tcp)), V(ofi) when the log does not name the provider; any other plugin's name
      lowercased. RV(network_raw) keeps the name as printed.
    - V(null) without C(NCCL_DEBUG=INFO) lines that tell.
  returned: always
  type: str
  sample: efa
network_raw:
  description: The network name as NCCL printed it (V(Socket), V(IB), V(IBext_v8), V(AWS Libfabric)), or V(null).
  returned: always
  type: str
  sample: AWS Libfabric
ofi_provider:
  description: Provider from C(NET/OFI Selected Provider is ...), V(null) when not printed.
  returned: always
  type: str
  sample: efa
ofi_fabric:
  description: Libfabric fabric from aws-ofi-nccl 1.14+ C(Selected provider is efa, fabric is efa-direct ...).
  returned: always
  type: str
  sample: efa-direct
ofi_nics:
  description: Smallest C((found N nics)) count aws-ofi-nccl printed, V(null) when not printed.
  returned: always
  type: int
  sample: 32
ofi_nics_by_host:
  description: Smallest C((found N nics)) count per host, so a node with a missing EFA device stands out.
  returned: always
  type: dict
  sample: {p5-worker-0: 32, p5-worker-1: 31}
ofi_protocol:
  description: aws-ofi-nccl transport protocol from C(Using transport protocol ...) (V(RDMA), V(SENDRECV)).
  returned: always
  type: str
  sample: RDMA
ofi_protocol_source:
  description: Who chose the protocol, V(platform) or V(user) (the parenthesis of that line), or V(null).
  returned: always
  type: str
  sample: platform
ofi_no_eligible_providers:
  description: How often aws-ofi-nccl printed C(No eligible providers were found).
  returned: always
  type: int
  sample: 0
gdrdma:
  description:
    - V(true) when every C(Channel ... via NET/...) line uses GPUDirect RDMA (C(/GDRDMA)), V(false) when one
      does not, V(null) without such lines.
  returned: always
  type: bool
  sample: true
hosts_without_gdrdma:
  description: Hosts with a NET channel line without C(/GDRDMA).
  returned: always
  type: list
  elements: str
  sample: []
results_source:
  description:
    - V(json) when the tables come from nccl-tests JSON (C(-J)), either a JSON file or directory given as
      O(path) or the JSON the MPIJob launcher printed into the log, whose tables then replace the text tables;
      V(text) otherwise; V(null) without tables.
  returned: always
  type: str
  sample: json
nccl_tests_json:
  description:
    - Facts of the nccl-tests JSON (version, nccl_version, start_time, end_time, args, env, env_omitted,
      config, devices, errors, line_no), V(null) without one. Credentials in C(env) and C(args) are
      replaced by C(<redacted>) before they are returned.
  returned: always
  type: dict
nccl_tests_json_error:
  description: Why a JSON line of the log could not be used (cut short, not JSON), V(null) otherwise.
  returned: always
  type: str
json_text_mismatch:
  description:
    - Sizes whose busbw differs between the JSON and the text table of the same run beyond the text's
      printing precision; V([]) when they agree, V(null) when the log does not hold both.
  returned: always
  type: list
  elements: int
  sample: []
json_files:
  description: Names of the C(*.json) files read, in the order of RV(tables), when O(path) is a directory.
  returned: when O(path) is a directory
  type: list
  elements: str
  sample: [allgather.json, allreduce.json]
nccl_version:
  description:
    - NCCL version (V(major.minor.patch)) from C(NCCL version ...), or from the C(nccl-library=) code of the
      nccl-tests banner. V(null) when not printed.
  returned: always
  type: str
  sample: 2.27.3
nccl_tests_version:
  description: nccl-tests version from its banner, V(null) when not printed.
  returned: always
  type: str
  sample: 2.17.8
nranks:
  description:
    - Number of ranks; the largest of NCCL's own C(nranks) count, the nccl-tests rank list and the launcher's
      C(-np) (times GPUs per process). V(null) when nothing tells.
  returned: always
  type: int
  sample: 16
nnodes:
  description:
    - Number of nodes from NCCL's C(nNodes), or the hosts of a complete nccl-tests rank list; V(null) otherwise.
  returned: always
  type: int
  sample: 2
hosts:
  description: Host names seen in the rank list and in NCCL INFO/WARN line prefixes, sorted (at most 1024).
  returned: always
  type: list
  elements: str
  sample: [p5-node-0, p5-node-1]
signatures:
  description: Failure signatures found, in line order (at most 20 per id).
  returned: always
  type: list
  elements: dict
  contains:
    id:
      description: Signature id, see RV(signature_ids).
      type: str
      returned: always
      sample: socket_fallback
    line_no:
      description: Line number (1-based) in the log.
      type: int
      returned: always
      sample: 96
    line:
      description: The line, stripped and cut to 400 characters.
      type: str
      returned: always
      sample: "ip-172-31-3-153:35113:35467 [0] NCCL INFO Using network Socket"
    hint:
      description: What to check or change.
      type: str
      returned: always
    time:
      description: NCCL 2.26+ timestamp of a C(NCCL WARN) line (C(YYYY-MM-DD HH:MM:SS)), V(null) otherwise.
      type: str
      returned: always
    source:
      description:
        - Code location of a C(NCCL WARN) line, C(file:line), C(file:line (function)) (NCCL 2.30.7+) or
          C(function():line) (aws-ofi-nccl), V(null) otherwise.
      type: str
      returned: always
signature_counts:
  description: Number of lines found per signature id (not capped).
  returned: always
  type: dict
  sample: {nccl_warn: 12, ofi_init_failed: 12, socket_fallback: 8}
signature_ids:
  description:
    - Ids found, in catalog order. Possible ids are V(segfault), V(process_aborted), V(efa_cm_error),
      V(nccl_warn), V(unhandled_system_error), V(unhandled_cuda_error), V(internal_error), V(test_failure),
      V(wrong_results), V(watchdog_timeout), V(mpi_abnormal_exit), V(ofi_init_failed), V(ofi_av_error),
      V(ofi_libfabric_too_old), V(ib_fatal), V(cuda_device_busy), V(reg_mr_error), V(efa_rx_buf_post),
      V(socket_fallback), V(invalid_argument), V(invalid_usage), V(remote_error), V(in_progress), V(nccl_timeout),
      V(nccl_async_error), V(comm_aborted), V(socket_error), V(ofi_completion_error) and V(sharp_error).
    - Every C(ncclResult_t) code of NCCL 2.21 to 2.30 has one; C(docs/verdicts.md) lists each id with the source
      line it comes from and its test fixture.
  returned: always
  type: list
  elements: str
  sample: [nccl_warn, ofi_init_failed, socket_fallback]
lines:
  description: Number of lines read.
  returned: always
  type: int
  sample: 569
bytes:
  description: Number of bytes read.
  returned: always
  type: int
  sample: 54891
summary:
  description: One human-readable line.
  returned: always
  type: str
  sample: "all_reduce_perf: 16 ranks on 2 nodes over efa, peak busbw 487.1 GB/s, busbw at 16 GiB 487.1 GB/s, #wrong 0, complete"
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path"),
            content=dict(type="str"),
        ),
        mutually_exclusive=[("path", "content")],
        required_one_of=[("path", "content")],
        supports_check_mode=True,
    )
    try:
        if module.params["path"] is not None:
            result = _nccl.parse_file(module.params["path"])
        else:
            content = module.params["content"]
            _nccl.check_content(content)
            result = _nccl.parse_text(content)
    except _nccl.NcclLogError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
