#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: level_assert
short_description: Judge one validation level, one entry per check, and return the level result
version_added: 1.0.0
description:
  - Compares the evidence of one validation level (probe output, parsed NCCL facts, per-node data) with
    the expectations and returns the level result of C(docs/architecture.md) (id, level, name, order,
    status, reason, duration_s, checks, nodes, summary), ready for M(ansible.builtin.set_stats).
  - Every check gives one entry (name, node, op, expected, actual, unit, passed, message, hint,
    evidence_missing). Values that arrive as strings (extra vars, AWX survey answers) are coerced for
    numeric and boolean comparisons; a value that cannot be compared fails its check with a message
    saying what to fix, it never crashes the module.
  - When any check fails the task fails with a message that names the level and lists every failed
    check on its own line (node, expected, seen, hint), unless O(report_only=true).
  - A level with no checks and no O(skip_reason) fails, because nothing checked is not a pass.
  - The logic lives in C(plugins/module_utils/verdicts/_verdict.py); see C(docs/verdicts.md).
author:
  - rlstack.validation maintainers (@rlstack)
extends_documentation_fragment:
  - rlstack.validation._attributes
  - rlstack.validation._attributes.info_module
options:
  id:
    description:
      - Unique id of the row in the results table, for example V(l0_infrastructure) or
        V(l5_training_step/libero-pi0). Used as the key under C(levels) in the statistics.
    type: str
    required: true
  level:
    description:
      - Display id of the level, for example V(L0), V(L3.5), V(L5), V(LOCAL).
      - Derived from O(id) when omitted (V(l3_5_efa) gives V(L3.5)).
    type: str
  name:
    description:
      - Display name of the level, for example V(Infrastructure). Defaults to O(id).
    type: str
  order:
    description:
      - Sort key in the results table. Derived from O(level) when omitted (V(L3.5) gives V(3.5),
        V(LOCAL) gives V(-1)).
    type: float
  checks:
    description:
      - The generic checks, evaluated in order.
      - The action also takes the list as JSON text, which it reads back first. The runner hands over a level's
        checks so, since over 256 nodes ansible-core's finalizing of a list argument of 8,196 checks costs about
        0.5 s of the controller's CPU (filter P(rlstack.validation.json_text#filter) says more).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Short check name, for example V(gpu_count).
        type: str
        required: true
      node:
        description: Node the check is about; empty for a cluster-wide check.
        type: str
        default: ""
      op:
        description:
          - How O(checks[].actual) is compared with O(checks[].expected).
          - V(eq), V(ne) compare loosely (V("8") equals V(8), V("true") equals V(true)).
          - V(ge), V(gt), V(le), V(lt) compare numbers; numeric strings are converted.
          - V(in), V(not_in) test membership in a list (a string is split on commas).
          - V(contains), V(not_contains) test a substring, a list item or a dict key of the actual value.
          - V(matches) searches the regular expression O(checks[].expected) in the actual value.
          - V(version_ge) compares dotted versions (V(2.11.0+cu130) >= V(2.4)).
          - V(true), V(false) test a boolean (V(yes), V(1), V("true") are true); O(checks[].expected) is ignored.
          - V(info) records an observation that is not judged; it always passes and its message is
            O(checks[].fail_msg).
        type: str
        default: eq
        choices: [eq, ne, ge, gt, le, lt, in, not_in, contains, not_contains, matches, version_ge, "true", "false", info]
      actual:
        description:
          - The value seen. When it is null the check fails as "could not collect the evidence".
        type: raw
      expected:
        description: The value expected (a list for V(in) and V(not_in), a regex for V(matches)).
        type: raw
      tolerance:
        description:
          - Fraction, only for V(ge), V(gt) (the limit becomes expected * (1 - tolerance)) and V(le),
            V(lt) (expected * (1 + tolerance)). V(0.1) means 10%.
        type: float
      unit:
        description: Unit shown after numbers in messages, for example V(GB/s).
        type: str
        default: ""
      hint:
        description: What to do when the check fails; appended to the failure line.
        type: str
        default: ""
      fail_msg:
        description:
          - Custom failure text. The expected and seen values are still appended.
          - With O(checks[].evidence_missing=true), the reason why the evidence is missing.
        type: str
        default: ""
      evidence_missing:
        description:
          - The evidence could not be collected (the probe crashed, the log was empty). The check fails
            with the words "could not collect the evidence", which says nothing about the workload itself;
            O(checks[].fail_msg) says why.
        type: bool
        default: false
      severity:
        description:
          - V(fail) (default) fails the level when the check does not hold. V(warn) keeps the check in the
            result with C(warning=true) and a message starting with C(WARNING), but counts it as passed.
        type: str
        default: fail
        choices: [fail, warn]
      excerpt:
        description:
          - Lines of a log that show why the check failed (an L5/L6 run's traceback, first CUDA/NCCL/OOM line and
            last lines, secrets redacted). Kept in the result (report.json, JUnit, HTML) when the check fails.
        type: list
        elements: str
  nccl:
    description:
      - NCCL results to judge. C(plugins/module_utils/verdicts/_checks.py) (C(nccl_checks)) turns each item into
        generic checks, judged like O(checks), named
        C(<name>_network), C(<name>_nranks), C(<name>_nnodes), C(<name>_complete), C(<name>_wrong),
        C(<name>_busbw_<size>), C(<name>_signature_<id>) or C(<name>_signatures).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Prefix of the generated check names.
        type: str
        default: nccl
      node:
        description: Node or node pair the result is about; empty for cluster-wide.
        type: str
        default: ""
      instance_type:
        description:
          - Instance type of the node(s), for the physical busbw limit the HTML report draws above RV(result.sweeps);
            judges nothing. Empty, the transport expectation's instance type is used.
        type: str
        default: ""
        version_added: 1.1.0
      hosts:
        description:
          - The node of each host name the log prints (the P(rlstack.validation.pod_hosts#filter) of the job's pods).
            A check per host (C(<name>_efa_nics)) is then about that node, in the report's node matrix and the
            bad-node findings; a host it does not name stays as the log printed it.
        type: dict
        default: {}
      facts:
        description:
          - The registered result of M(rlstack.validation.nccl_log_info) (keys tables, network, nranks,
            nnodes, complete, wrong_total, signatures, ...).
          - When null, failed or skipped, the level fails as "could not collect the evidence".
        type: dict
      expect:
        description: What the result must show.
        type: dict
        default: {}
        suboptions:
          network:
            description:
              - Allowed networks, for example V(efa) or V([efa, ib]). NCCL falling back to V(socket)
                fails with a hint on the EFA setup. Not checked when omitted.
            type: list
            elements: str
          min_busbw:
            description: Bus bandwidth floors at given message sizes.
            type: list
            elements: dict
            suboptions:
              size:
                description:
                  - Message size in bytes, or a string such as V(1G), V(1GiB), V(16GiB), V(512M).
                  - Suffixes are binary (V(1G) is 1073741824), as in nccl-tests C(-e 1G).
                type: raw
                required: true
              floor:
                description:
                  - Minimum out-of-place busbw in GB/s at that size. The row used is the largest size at or
                    below O(nccl[].expect.min_busbw[].size) and at least 90% of it (all_gather rounds sizes down);
                    no such row fails as "could not collect the evidence".
                type: float
                required: true
              tolerance:
                description: Fraction that overrides O(nccl[].expect.tolerance) for this size.
                type: float
          test:
            description:
              - Judge only the results tables of this collective (the C(test) key of a table, for example
                V(all_reduce)) when the log holds several. By default the last table with rows is used.
            type: str
          tolerance:
            description: Fraction allowed below every busbw floor (V(0.1) accepts 90% of the floor).
            type: float
            default: 0.0
          nranks:
            description: Expected number of ranks. Not checked when omitted.
            type: int
          nnodes:
            description: Expected number of nodes. Not checked when omitted.
            type: int
          forbid_signatures:
            description:
              - Failure signature ids that fail the level when found in the log. V(all) forbids every id.
              - When omitted every id except V(nccl_warn) is forbidden; found but allowed ids are
                reported as passed, informational checks.
            type: list
            elements: str
          require_complete:
            description: The test must have printed its final summary (C(Avg bus bandwidth)).
            type: bool
            default: true
          max_wrong:
            description: Largest allowed total of C(#wrong) results (data corruption).
            type: int
            default: 0
          single_rank_ok:
            description:
              - With one rank busbw is 0 by definition. When V(true) and the result has one rank, the busbw
                (and an undetected network) are reported as passed, informational checks
                ("not measurable on one GPU") instead of failing the fabric.
            type: bool
            default: false
          transport:
            description:
              - The transport proof for aws-ofi-nccl (EFA), beyond "not Socket"; each key that is set gives
                one check (C(docs/verdicts.md)). M(rlstack.validation.nccl_log_info) facts C(ofi_provider),
                C(ofi_fabric), C(ofi_nics_by_host), C(ofi_protocol) and C(gdrdma) are compared.
              - The C(nccl_mpijob) filter fills it from the instance profile when the network is V(efa).
            type: dict
            suboptions:
              instance_type:
                description: Named in the messages.
                type: str
              provider:
                description: Libfabric provider aws-ofi-nccl must select (check C(<name>_ofi_provider)).
                type: str
              fabric:
                description:
                  - Allowed libfabric fabrics, for example V(efa-direct) (check C(<name>_ofi_fabric)).
                  - Only aws-ofi-nccl 1.14 and later print it; an older log gives an informational check.
                type: list
                elements: str
              nics:
                description:
                  - EFA NICs the plugin must find on every host (C(found N nics)); one check
                    C(<name>_efa_nics) per host, so 31 of 32 names the host.
                type: int
              protocol:
                description:
                  - Transport protocol aws-ofi-nccl must use, V(RDMA) or V(SENDRECV) (check
                    C(<name>_ofi_protocol)); a log that does not print it gives an informational check.
                type: str
              gdrdma:
                description:
                  - Every NET channel must use GPUDirect RDMA (C(via NET/.../GDRDMA)), check C(<name>_gdrdma).
                type: bool
                default: false
  skip_reason:
    description:
      - When not empty the level is SKIPPED with this reason and no check is evaluated.
    type: str
    default: ""
  started:
    description:
      - Start of the level in epoch seconds (for example C(now().timestamp()) or
        C(ansible_facts['date_time']['epoch'])); C(duration_s) becomes now - started.
    type: float
  duration_s:
    description: Duration of the level in seconds; wins over O(started).
    type: float
  report_only:
    description:
      - Return the verdict without failing the task when checks fail.
    type: bool
    default: false
  node_names:
    description:
      - The names of the cluster's nodes. RV(findings) lists the failed checks that name one of them.
    type: list
    elements: str
    default: []
  attach:
    description:
      - Fields added to the result as they are, for example the GPU time the level held (C(gpu)) and the stack
        it saw (C(fingerprint)). A key may not name one of the result's own fields.
    type: dict
    default: {}
  publish_host:
    description:
      - When set, the result is recorded in the run's statistics as C(rlstack_validation.<publish_host>.levels.<id>),
        what M(ansible.builtin.set_stats) with C(per_host=false) records and the report callback and AWX read, and
        RV(result) is not returned (RV(verdict) is). The whole result then never passes through a template again;
        over 256 nodes it holds some 8,000 checks.
    type: str
    default: ""
  rows:
    description:
      - Several rows of one level judged in one call (L5 and L6 have one per example), rather than a loop of this
        task, which would send each row's whole result through ansible-core twice. Each row is judged with the task's
        options, its own in their place; O(rows[].attach) is merged into O(attach). Every row's result is published
        (O(publish_host)) and RV(rows) returns each one's verdict.
      - Empty, the task's own options are the one row.
    type: list
    elements: dict
    default: []
    suboptions:
      id:
        description: The row's id, as O(id).
        type: str
        required: true
      name:
        description: The row's display name, as O(name).
        type: str
      checks:
        description: The row's checks, as O(checks) (a list or its JSON text).
        type: raw
      skip_reason:
        description: The row's skip reason, as O(skip_reason).
        type: str
      attach:
        description: Fields added to the row's result, over O(attach).
        type: dict
notes:
  - The module never changes anything and returns C(changed=false), in check mode too.
  - Failing with M(ansible.builtin.fail) semantics still returns RV(result) and RV(failed_checks), so a
    role can record the level with M(ansible.builtin.set_stats) in an C(always) section.
seealso:
  - module: rlstack.validation.nccl_log_info
  - plugin: rlstack.validation.report
    plugin_type: callback
  - plugin: rlstack.validation.instance_profile
    plugin_type: lookup
"""

EXAMPLES = r"""
- name: Judge the infrastructure level of this cluster
  rlstack.validation.level_assert:
    id: l0_infrastructure
    level: L0
    name: Infrastructure
    order: 0
    started: "{{ _l0_infrastructure_started }}"
    checks:
      - name: gpu_count
        node: p5-node-0
        actual: "{{ _l0_probe.gpu_count | default(none) }}"
        expected: 8
        hint: "nvidia-smi on the node shows fewer GPUs: check XID errors and the GPU operator pods"
      - name: gpu_model
        node: p5-node-0
        op: matches
        actual: "{{ _l0_probe.gpus[0].name | default(none) }}"
        expected: 'H100.*80GB'
  register: _l0_infrastructure_verdict
  delegate_to: localhost
  run_once: true

- name: Judge a two-node NCCL all_reduce over EFA
  rlstack.validation.level_assert:
    id: l3_5_efa
    level: L3.5
    name: EFA Validation
    nccl:
      - name: allreduce
        facts: "{{ _phase0_efa_nccl }}"
        expect:
          network: efa
          nranks: 2
          min_busbw:
            - size: 1G
              floor: 2.0
          tolerance: 0.1
  register: _phase0_efa_verdict

- name: Judge a level and record it in the run's statistics (no set_stats task that templates it again)
  rlstack.validation.level_assert:
    id: l0_infrastructure
    level: L0
    name: Infrastructure
    checks: "{{ l0_infrastructure_checks }}"
    report_only: true
    node_names: "{{ runner_gpu_nodes | map(attribute='node') | list }}"
    attach:
      gpu: "{{ runner_level_gpu }}"
    publish_host: "{{ inventory_hostname }}"
  register: _l0_verdict

- name: Record the level even when it failed
  ansible.builtin.set_stats:
    per_host: false
    data:
      rlstack_validation: "{{ {inventory_hostname: {'levels': {_phase0_efa_verdict.result.id: _phase0_efa_verdict.result}}} }}"
  when: _phase0_efa_verdict.result is defined
"""

RETURN = r"""
result:
  description:
    - The level result of C(docs/architecture.md), the shape the report callback and AWX read. With O(rows), the last
      row's (each row's is in RV(rows)).
  returned: unless O(publish_host) is set
  type: dict
  contains:
    id:
      description: The O(id).
      type: str
      returned: always
      sample: l0_infrastructure
    level:
      description: Display id.
      type: str
      returned: always
      sample: L0
    name:
      description: Display name.
      type: str
      returned: always
      sample: Infrastructure
    order:
      description: Sort key.
      type: float
      returned: always
      sample: 0.0
    status:
      description: V(PASS), V(FAIL) or V(SKIPPED).
      type: str
      returned: always
      sample: FAIL
    reason:
      description: The skip reason, or the first failed check as one line; empty on PASS.
      type: str
      returned: always
      sample: "p5-node-1: gpu_count expected 8, saw 7 — check XID errors"
    duration_s:
      description: Duration in seconds, one decimal.
      type: float
      returned: always
      sample: 12.3
    checks:
      description: One entry per check.
      type: list
      elements: dict
      returned: always
      sample:
        - name: gpu_count
          node: p5-node-1
          op: eq
          expected: 8
          actual: 7
          unit: ""
          passed: false
          message: gpu_count expected 8, saw 7
          hint: check XID errors
          evidence_missing: false
    nodes:
      description: Per-node summary of the checks that name a node (cluster-wide checks are not listed).
      type: dict
      returned: always
      sample: {p5-node-1: {status: FAIL, passed: 4, failed: 1, failed_checks: [gpu_count]}}
    summary:
      description: Counts of passed, failed, total and evidence-missing checks.
      type: dict
      returned: always
      sample: {passed: 8, failed: 1, total: 9, evidence_missing: 0}
    sweeps:
      description:
        - The busbw sweep of every O(nccl) item whose log has a table, for the HTML report's chart, from the table
          the busbw checks judge. Sizes in bytes, busbw in GB/s as printed; O(nccl[].expect.min_busbw) as floors.
      type: list
      elements: dict
      returned: always
      sample:
        - name: nccl
          node: ""
          test: all_reduce_perf
          nranks: 16
          nnodes: 2
          instance_type: p5.48xlarge
          points: [{size: 1073741824, busbw: 437.2}]
          floors: [{size: 1073741824, floor: 100.0}]
verdict:
  description:
    - RV(result) with only its failed checks (C(checks)) and failed nodes (C(nodes)), and the same other fields;
      what later tasks read, at a size that does not grow with the passing checks. With O(rows), the last row's.
  returned: always
  type: dict
  sample: {id: l0_infrastructure, level: L0, status: PASS, reason: "", checks: [], nodes: {}}
findings:
  description:
    - "The bad-node findings: one C({node, level, check, reason}) per failed check that names one of O(node_names).
      Warnings and checks that could not collect their evidence are not findings."
  returned: always
  type: list
  elements: dict
  sample: [{node: p5-node-1, level: L0, check: gpu_count, reason: "L0 gpu_count expected 8, saw 7"}]
rows:
  description:
    - "One entry per row judged (the task's own when O(rows) is empty): C({id, verdict, findings, failed_checks, msg}),
      and C(result) when O(publish_host) is not set."
  returned: always
  type: list
  elements: dict
  sample: [{id: l5_training_step/trl-grpo, verdict: {status: PASS}, findings: [], failed_checks: [], msg: "..."}]
failed_checks:
  description: "One line per failed check: C(- <node>: <name> expected <x>, saw <y> — <hint>)."
  returned: always
  type: list
  elements: str
  sample: ["- p5-node-1: gpu_count expected 8, saw 7 — check XID errors"]
msg:
  description: One-line verdict, or on failure the level title followed by every failed check line.
  returned: always
  type: str
  sample: "L0 Infrastructure: PASS, 9 of 9 checks passed"
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._level_assert import argument_spec, judge_rows


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    outcome = judge_rows(module.params)
    if outcome.pop("failed"):
        module.fail_json(changed=False, **outcome)
    module.exit_json(changed=False, **outcome)


if __name__ == "__main__":
    main()
