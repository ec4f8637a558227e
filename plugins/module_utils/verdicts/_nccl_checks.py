# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The NCCL checks (split from _checks.py, the level checks): a parsed NCCL result as level_assert checks.

Standard library only. nccl_item wraps a registered nccl_log_info result; nccl_checks turns it into checks of
the network, the transport (aws-ofi-nccl, EFA NICs, GPUDirect RDMA), busbw against the floor and the failure
signatures, each naming the node, what was expected, what was seen and what to do; nccl_sweep is the report's
busbw-by-size table."""

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl, _nccl_network, _nccl_results
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain as _plain
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._verdict import (
    CONFIG_HINT,
    VerdictError,
    as_list,
    fmt_value,
    format_size,
    parse_size,
    to_bool,
)
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._checks import _int, check


def nccl_item(result, name, expect, instance_types=None):
    """A registered nccl_log_info result (possibly from a loop) as a level_assert `nccl` item; instance_types
    ({node: type}) gives the item its node's instance type (for the report's busbw limit, judges nothing)."""
    result = result or {}
    item = result.get("item")
    node = item.get("key", "") if isinstance(item, dict) else ""
    facts = None if (result.get("failed") or result.get("skipped")) else result
    item = {"name": name, "node": node, "facts": facts, "expect": dict(expect or {})}
    if (instance_types or {}).get(node):
        item["instance_type"] = str(instance_types[node])
    return item


def log_facts(text):
    """An nccl-tests log parsed as nccl_log_info parses its `content`; None when there is nothing to parse (empty, or
    binary: nccl_log_info refuses both)."""
    text = str(text or "")
    try:
        _nccl.check_content(text)
    except _nccl.NcclLogError:
        return None
    return _nccl.parse_text(text)


def sweep_items(probe_results, name, expect, instance_types=None):
    """The single-node sweeps of probes that printed one (probe_results {node: {status, stdout}}, status ok), each as
    a level_assert `nccl` item of that node, in the order of the probe results."""
    items = []
    for node, outcome in (probe_results or {}).items():
        if (outcome or {}).get("status") != "ok":
            continue
        item = {"name": name, "node": node, "facts": log_facts(outcome.get("stdout")), "expect": dict(expect or {})}
        if (instance_types or {}).get(node):
            item["instance_type"] = str(instance_types[node])
        items.append(item)
    return items


# Signatures reported but not failing the level by default (socket_fallback and wrong_results are soft
# too when the network / wrong checks judge them).
NCCL_SOFT_SIGNATURES = ("nccl_warn",)


HINT_NCCL_LOG = ("the NCCL log could not be read or parsed: check the launcher pod name, the namespace and "
                 "that the job wrote its log before it was collected")


HINT_NETWORK_SOCKET = (
    "NCCL fell back to TCP sockets: the aws-ofi-nccl plugin did not load or found no EFA device. "
    "Request vpc.amazonaws.com/efa in the pod, set FI_PROVIDER=efa, check that the image ships "
    "aws-ofi-nccl (NCCL_DEBUG=INFO shows 'NET/OFI Selected provider is efa')"
)


HINT_NETWORK = ("NCCL chose another network than expected: check FI_PROVIDER, NCCL_NET, the EFA device plugin "
                "and the NCCL_DEBUG=INFO 'Using network ...' line")


HINT_NETWORK_MISSING = ("run with NCCL_DEBUG=INFO so the log has the 'Using network ...' / 'NET/OFI Selected "
                        "provider' lines")


HINT_BUSBW = ("busbw below the floor: check the network check above (socket fallback gives ~3 GB/s), EFA device "
              "count per pod, FI_EFA_USE_DEVICE_RDMA on RDMA-capable types only, and GPU clocks")


ONE_GPU_TEXT = "not measurable on one GPU (busbw is 0 by definition with a single rank)"


def _flag(value, default):
    try:
        return to_bool(value, "flag") if value is not None else default
    except VerdictError:
        return default


SWEEP_MAX_POINTS = 64  # a sweep doubling from 8 B to 16 GiB has 32 rows; bounds what report.json carries


def nccl_sweep(item):
    """The busbw sweep of one NCCL item for the report, or None when its log has no table with rows.

    From the table the checks judge (_nccl_results.last_table): {name, node, test, nranks, nnodes, instance_type,
    points [{size, busbw}] (bytes, GB/s), floors [{size, floor}]}; instance_type is the item's own (nccl_item's
    instance_types), else the transport expectation's (MPIJob on EFA, Phase 0), else None.
    """
    item = dict(_plain(item) or {})
    facts = item.get("facts")
    if not isinstance(facts, dict) or facts.get("failed") or facts.get("skipped"):
        return None
    expect = dict(item.get("expect") or {})
    table = _nccl_results.last_table(facts, expect.get("test") or None)
    if table is None:
        return None
    points = []
    for row in table["rows"]:
        size, busbw = row.get("size"), _nccl_results.row_busbw(row)
        if isinstance(size, (int, float)) and not isinstance(size, bool) and busbw is not None:
            points.append({"size": int(size), "busbw": float(busbw)})
    floors = []
    for floor_item in expect.get("min_busbw") or []:
        floor_item = dict(floor_item or {})
        try:
            floors.append({"size": parse_size(floor_item.get("size")), "floor": float(floor_item.get("floor"))})
        except (VerdictError, TypeError, ValueError):
            continue  # the busbw check already reports the bad floor
    transport = expect.get("transport") if isinstance(expect.get("transport"), dict) else {}
    return {"name": str(item.get("name") or "nccl"), "node": str(item.get("node") or ""),
            "test": table.get("test"), "nranks": _int(facts.get("nranks")), "nnodes": _int(facts.get("nnodes")),
            "instance_type": item.get("instance_type") or transport.get("instance_type") or None,
            "points": points[-SWEEP_MAX_POINTS:],
            "floors": floors}


def _nccl_network_check(name, node, facts, allowed, one_gpu):
    """<name>_network: the network NCCL used, in _nccl_network.NETWORKS' words, is one of the allowed ones."""
    allowed = [a for a in (_nccl_network.normalize_network(a) for a in allowed) if a]
    seen = _nccl_network.normalize_network(facts.get("network"), facts.get("ofi_provider"))
    raw = facts.get("network_raw") or facts.get("network")
    allowed_text = " or ".join(fmt_value(a) for a in allowed)
    if one_gpu and not seen:
        return check(name, node, "info", None, allowed, message="%s; network not used" % ONE_GPU_TEXT)
    if not seen:
        return check(name, node, "in", None, allowed, hint=HINT_NETWORK_MISSING, evidence_missing=True,
                     message="the log does not say which network NCCL used; expected %s" % allowed_text)
    if seen == "ofi" and "efa" in allowed:
        # aws-ofi-nccl is in use but the log does not name the libfabric provider: not a socket
        # fallback; a tcp provider would still fail the busbw floors
        return check(name, node, "info", seen, allowed,
                     message="NCCL used %s (aws-ofi-nccl); the log does not name the provider, efa assumed "
                             "(NCCL_DEBUG=INFO prints 'Selected provider is ...')" % fmt_value(raw))
    if "ofi" in allowed and (seen == "efa" or seen.startswith("ofi")):
        return check(name, node, "info", seen, allowed,
                     message="NCCL used %s through aws-ofi-nccl (expected any OFI provider)" % fmt_value(seen))
    hint = HINT_NETWORK_SOCKET if seen == "socket" else HINT_NETWORK
    said = "NCCL printed %s" % fmt_value(raw) if raw and str(raw) != seen else ""
    return check(name, node, "in", seen, allowed, hint=hint, message=said)


def nccl_checks(item):
    """The checks of one NCCL result: item {name, node, facts, expect, hosts} (see level_assert's ``nccl``); hosts,
    {host name the log prints: node}, names the node of a check per host (the MPIJob's pods: pod_hosts).

    facts: a nccl_log_info result; expect: network, nranks, nnodes, require_complete, max_wrong,
    min_busbw [{size, floor, tolerance}], tolerance, test, forbid_signatures, single_rank_ok. Returns
    generic check specs for level_assert, named ``<name>_network``, ``<name>_busbw_1GiB``, ...
    """
    item = dict(_plain(item) or {})
    prefix = str(item.get("name") or "nccl")
    node = str(item.get("node") or "")
    facts = item.get("facts")
    expect = dict(item.get("expect") or {})
    checks = []

    def name(suffix):
        return "%s_%s" % (prefix, suffix)

    if not isinstance(facts, dict) or not facts or facts.get("failed") or facts.get("skipped"):
        why = "no parsed NCCL result"
        if isinstance(facts, dict) and facts.get("msg"):
            why = str(facts.get("msg"))
        elif isinstance(facts, dict) and facts.get("skipped"):
            why = "the parse task was skipped"
        return [check(name("log"), node, "true", None, True, message=why, hint=HINT_NCCL_LOG,
                      evidence_missing=True)]

    tolerance = expect.get("tolerance")
    test = expect.get("test") or None
    nranks = _int(facts.get("nranks"))
    single_rank = nranks == 1
    one_gpu = single_rank and _flag(expect.get("single_rank_ok"), False)

    network = expect.get("network")
    if network not in (None, "", []):
        checks.append(_nccl_network_check(name("network"), node, facts, as_list(network), one_gpu))

    if expect.get("nranks") not in (None, ""):
        checks.append(check(name("nranks"), node, "eq", facts.get("nranks"), expect.get("nranks"),
                            hint="not every GPU joined the job: compare -np with nodes x GPUs per node, and "
                                 "slotsPerWorker with the nvidia.com/gpu request"))
    if expect.get("nnodes") not in (None, ""):
        checks.append(check(name("nnodes"), node, "eq", facts.get("nnodes"), expect.get("nnodes"),
                            hint="the ranks did not spread over the expected nodes: check the worker replicas "
                                 "and pod anti-affinity / topology spread"))

    require_complete = _flag(expect.get("require_complete"), True)
    if require_complete and facts.get("complete") is None and not facts.get("tables"):
        checks.append(check(name("complete"), node, "true", False, True,
                            message="the log has no nccl-tests results table (the test did not start, or its "
                                    "output was not captured)",
                            hint="read the launcher log, not a worker's; set require_complete: false for logs "
                                 "that are not nccl-tests output"))
    elif require_complete:
        checks.append(check(name("complete"), node, "true", bool(facts.get("complete")), True,
                            message="the NCCL test did not finish (no 'Avg bus bandwidth' footer)",
                            hint="the job crashed, hung or was killed before the end; see the signature checks "
                                 "and the launcher log"))
    max_wrong = expect.get("max_wrong")
    if max_wrong in (None, ""):
        max_wrong = 0
    wrong = facts.get("wrong_total")
    if wrong is None:
        checks.append(check(name("wrong"), node, "info", None, max_wrong,
                            message="not checked by the test (run with -c 0 or no #wrong column)"))
    else:
        checks.append(check(name("wrong"), node, "le", wrong, max_wrong,
                            message="the NCCL test reported %s wrong results (data corruption)" % fmt_value(wrong),
                            hint="a GPU, NVLink or NIC corrupts data: rerun per node pair to isolate it and "
                                 "check XID errors (dmesg / nvidia-smi -q)"))

    transport = expect.get("transport")
    if isinstance(transport, dict) and transport and not one_gpu:
        checks.extend(_nccl_transport_checks(name, node, facts, transport, item.get("hosts") or {}))
    checks.extend(_nccl_busbw_checks(name, node, facts, expect, tolerance, test, single_rank, one_gpu))
    checks.extend(_nccl_signature_checks(name, node, facts, expect))
    return _with_isolate_hint(checks, expect.get("isolate_command"), prefix)


def _with_isolate_hint(checks, command, prefix):
    """A multi-node bandwidth, completeness or crash check names the command that finds the bad node
    (bad-node isolation, docs/isolation.md); the hint only shows when the check fails."""
    if not command:
        return checks
    marks = tuple("%s_%s" % (prefix, part) for part in ("busbw_", "complete", "signature_"))
    for spec in checks:
        if str(spec.get("name") or "").startswith(marks) and spec.get("op") != "info":
            spec["hint"] = ("%s; to find the node: %s" % (spec.get("hint") or "", " ".join(str(command).split()))
                            ).lstrip("; ")
    return checks


HINT_OFI_PROVIDER = ("aws-ofi-nccl did not select the efa libfabric provider: check that the pod has its EFA "
                     "devices (vpc.amazonaws.com/efa or a DRA ResourceClaim), that 'fi_info -p efa' lists them "
                     "and that FI_PROVIDER is efa")


HINT_EFA_NICS = ("the plugin found fewer EFA NICs than the node has: a device is down or was not given to the pod; "
                 "compare 'fi_info -p efa' and /sys/class/infiniband on that node with the instance type, check the "
                 "pod's EFA request, and replace the node when a device is missing")


HINT_OFI_PROTOCOL = ("aws-ofi-nccl uses another transport protocol than its AWS platform code sets for this "
                     "instance type: an OFI_NCCL_PROTOCOL override, or an aws-ofi-nccl built without "
                     "--enable-platform-aws; use the EFA installer's plugin")


HINT_GDRDMA = ("NET channels do not use GPUDirect RDMA on an instance type that requires it: check the "
               "efa_nv_peermem (or nvidia_peermem) module on the node, FI_EFA_USE_DEVICE_RDMA=1 and that the "
               "image's libfabric supports FI_HMEM for CUDA")


NOT_PRINTED = "not checked: the log does not say (%s)"


def _nccl_transport_checks(name, node, facts, transport, hosts):
    """Proof that the fabric is the one expected, beyond 'not Socket': provider, NICs found, protocol, GDRDMA.

    transport: provider (e.g. efa), nics (EFA devices per pod: the number aws-ofi-nccl must find on each
    host), protocol (RDMA or SENDRECV, what aws-ofi-nccl's AWS platform code sets for the type), gdrdma
    (true when the type requires GPUDirect RDMA), fabric (optional: efa or efa-direct), instance_type. hosts: the
    node of each host the log names (a pod's host name is not a node's: the report's node matrix and the bad-node
    findings need the node); a host it does not name stays as the log printed it."""
    checks = []
    itype = transport.get("instance_type") or "the instance type"
    provider = transport.get("provider")
    if provider:
        seen = facts.get("ofi_provider")
        why = "the log has no 'NET/OFI Selected provider is ...' line"
        if facts.get("ofi_no_eligible_providers"):
            why += "; aws-ofi-nccl printed 'No eligible providers were found'"
        checks.append(check(name("ofi_provider"), node, "eq", seen, provider, hint=HINT_OFI_PROVIDER,
                            evidence_missing=seen is None, message=why if seen is None else ""))
    fabric = transport.get("fabric")
    if fabric:
        seen = facts.get("ofi_fabric")
        if seen is None:
            checks.append(check(name("ofi_fabric"), node, "info", None, fabric,
                                message=NOT_PRINTED % "aws-ofi-nccl 1.14+ prints 'fabric is ...'"))
        else:
            checks.append(check(name("ofi_fabric"), node, "in", seen, as_list(fabric), hint=HINT_OFI_PROVIDER))
    nics = _int(transport.get("nics"))
    if nics:
        by_host = facts.get("ofi_nics_by_host") or {}
        if by_host:
            for host in sorted(by_host):
                found = _int(by_host[host])
                node_of = hosts.get(host) or host
                on = host if node_of == host else "%s (node %s)" % (host, node_of)
                checks.append(check(name("efa_nics"), node_of, "ge", found, nics, hint=HINT_EFA_NICS,
                                    message="aws-ofi-nccl on %s found %s of the %d EFA NICs of %s"
                                            % (on, found, nics, itype)))
        else:
            found = facts.get("ofi_nics")
            checks.append(check(name("efa_nics"), node, "ge", found, nics, hint=HINT_EFA_NICS,
                                evidence_missing=found is None,
                                message=("the log has no 'NET/OFI Selected provider ... (found N nics)' line"
                                         if found is None else
                                         "aws-ofi-nccl found %s of the %d EFA NICs of %s" % (found, nics, itype))))
    protocol = transport.get("protocol")
    if protocol:
        seen = facts.get("ofi_protocol")
        if seen is None:
            checks.append(check(name("ofi_protocol"), node, "info", None, protocol,
                                message=NOT_PRINTED % "aws-ofi-nccl prints 'Using transport protocol ...'"))
        else:
            checks.append(check(name("ofi_protocol"), node, "eq", seen, protocol, hint=HINT_OFI_PROTOCOL,
                                message="aws-ofi-nccl uses %s on %s" % (seen, itype)))
    if _flag(transport.get("gdrdma"), False):
        seen = facts.get("gdrdma")
        if seen is None:
            checks.append(check(name("gdrdma"), node, "info", None, True,
                                message=NOT_PRINTED % "no 'Channel ... via NET/...' line"))
        else:
            hosts = facts.get("hosts_without_gdrdma") or []
            checks.append(check(name("gdrdma"), node, "true", bool(seen), True, hint=HINT_GDRDMA,
                                message="NET channels without /GDRDMA on %s" % (", ".join(hosts) or "a host")))
    return checks


def _nccl_busbw_checks(name, node, facts, expect, tolerance, test, single_rank, one_gpu):
    checks = []
    for floor_item in expect.get("min_busbw") or []:
        floor_item = dict(floor_item or {})
        floor = floor_item.get("floor")
        tol = floor_item.get("tolerance") if floor_item.get("tolerance") not in (None, "") else tolerance
        try:
            size_bytes = parse_size(floor_item.get("size"))
        except VerdictError as exc:
            checks.append(check(name("busbw"), node, "true", False, True, unit="GB/s",
                                message="cannot check: %s" % exc, hint=CONFIG_HINT))
            continue
        label = name("busbw_" + format_size(size_bytes))
        if one_gpu:
            checks.append(check(label, node, "info", None, floor, unit="GB/s", message=ONE_GPU_TEXT))
            continue
        value = _nccl_results.busbw_at_size(facts, size_bytes, test)
        if value is None:
            largest = _nccl_results.largest_size(facts, test)
            seen = ("the largest size measured was %s" % format_size(largest)) if largest else "no result rows"
            checks.append(check(label, node, "ge", None, floor, unit="GB/s", evidence_missing=True,
                                message="no row for %s in the %sNCCL table; %s"
                                        % (format_size(size_bytes), (test + " ") if test else "", seen),
                                hint="run all_reduce_perf with -e %s or larger, and check that the job finished"
                                     % format_size(size_bytes).replace("iB", "")))
            continue
        hint = HINT_BUSBW
        if single_rank:
            hint = "one rank has no bus bandwidth: run with 2+ ranks, or set single_rank_ok"
        checks.append(check(label, node, "ge", value, floor, unit="GB/s", tolerance=tol, hint=hint))
    return checks


def _nccl_signature_checks(name, node, facts, expect):
    checks = []
    forbid = expect.get("forbid_signatures")
    signatures = [s for s in (facts.get("signatures") or []) if isinstance(s, dict)]
    soft = list(NCCL_SOFT_SIGNATURES)
    if expect.get("network") not in (None, "", []):
        soft.append("socket_fallback")  # judged by the network check, which knows what is allowed
    if facts.get("wrong_total") is not None:
        soft.append("wrong_results")  # judged by the wrong check against max_wrong
    forbidden = None if forbid is None else [str(x) for x in as_list(forbid)]
    counts = {}
    for sig in signatures:
        sig_id = str(sig.get("id") or "unknown")
        counts[sig_id] = counts.get(sig_id, 0) + 1
    done = set()
    for sig in signatures:
        sig_id = str(sig.get("id") or "unknown")
        if sig_id in done:
            continue
        done.add(sig_id)
        is_forbidden = (sig_id not in soft) if forbidden is None else ("all" in forbidden or sig_id in forbidden)
        line = str(sig.get("line") or "").strip()
        if len(line) > 240:
            line = line[:237] + "..."
        where = []
        if sig.get("line_no") is not None:
            where.append("line %s" % sig.get("line_no"))
        if counts[sig_id] > 1:
            where.append("%d occurrences" % counts[sig_id])
        where = (" (" + ", ".join(where) + ")") if where else ""
        sig_name = name("signature_" + sig_id)
        if is_forbidden:
            checks.append(check(sig_name, node, "not_contains", [sig_id], sig_id, hint=str(sig.get("hint") or ""),
                                message="the log has failure signature %s%s: %s" % (sig_id, where, line)))
        else:
            checks.append(check(sig_name, node, "info", line, sig_id,
                                message="seen, not forbidden%s: %s" % (where, line)))
    if not done:
        checks.append(check(name("signatures"), node, "info", [], [],
                            message="no known failure signature in the log"))
    return checks
