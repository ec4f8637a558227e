# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Unit tests for plugins/module_utils/verdicts/_nccl_checks.py (an NCCL result turned into checks: nccl_item,
nccl_checks, the transport proof) and workloads/_workloads.py's nccl_mpijob (the MPIJob and its expectation)."""

from __future__ import annotations

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _nccl_checks
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _verdict
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _workloads

from checks_kit import REPO

LOGS = REPO / "sim" / "replay" / "logs"


# ------------------------------------------------------------------------------------------- nccl_item, mpijob


def test_nccl_item_from_a_loop_result():
    result = {"item": {"key": "p5-node-1", "value": {}}, "changed": False, "nranks": 8, "complete": True, "network": "NVLink"}
    item = _nccl_checks.nccl_item(result, "sweep", {"min_busbw": [{"size": "1G", "floor": 300}]})
    assert item == {"name": "sweep", "node": "p5-node-1", "facts": result, "expect": {"min_busbw": [{"size": "1G", "floor": 300}]}}


def test_nccl_item_failed_or_skipped_has_no_facts():
    for result in ({"failed": True, "msg": "no NCCL output"}, {"skipped": True, "item": {"key": "n2"}}):
        item = _nccl_checks.nccl_item(result, "nccl", None)
        assert item["facts"] is None
        assert item["expect"] == {}
    assert _nccl_checks.nccl_item({"skipped": True, "item": {"key": "n2"}}, "nccl", {})["node"] == "n2"


def test_nccl_item_plain_item_and_empty_result():
    assert _nccl_checks.nccl_item({"item": "p5-node-1", "nranks": 8}, "nccl", {})["node"] == ""
    assert _nccl_checks.nccl_item(None, "nccl", {}) == {"name": "nccl", "node": "", "facts": {}, "expect": {}}


def test_nccl_item_copies_the_expectation():
    expect = {"nranks": 16}
    item = _nccl_checks.nccl_item({}, "nccl", expect)
    item["expect"]["nranks"] = 1
    assert expect == {"nranks": 16}


P5_NODES = [{"node": "p5-node-1", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32},
            {"node": "p5-node-2", "instance_type": "p5.48xlarge", "gpus": 8, "efa": 32}]
G6_NODES = [{"node": "g6-node-1", "instance_type": "g6.8xlarge", "gpus": 1, "efa": 1},
            {"node": "g6-node-2", "instance_type": "g6.8xlarge", "gpus": 1, "efa": 1}]
IMAGE = "public.ecr.aws/hpc-cloud/nccl-tests:latest"


def test_nccl_mpijob_p5():
    job = _workloads.nccl_mpijob(P5_NODES, "rlsv-run1-l3", IMAGE, None, None, 0.0)
    assert job["instance_type"] == "p5.48xlarge"
    assert job["mpijob"] == {"name": "rlsv-run1-l3-nccl", "workers": 2, "gpus_per_worker": 8, "efa_per_worker": 32,
                             "node_selector": {"node.kubernetes.io/instance-type": "p5.48xlarge"}, "image": IMAGE, "rdma": True,
                             "min_bytes": "8", "max_bytes": "16G"}
    assert job["expect"] == {"network": ["efa"], "nranks": 16, "min_busbw": [{"size": 1073741824, "floor": 100.0}],
                             "tolerance": 0.0, "require_complete": True,
                             # aws-ofi-nccl must find every EFA NIC, use RDMA and GPUDirect RDMA on p5
                             "transport": {"instance_type": "p5.48xlarge", "provider": "efa", "nics": 32,
                                           "protocol": "RDMA", "gdrdma": True}}


def test_nccl_mpijob_g6():
    job = _workloads.nccl_mpijob(G6_NODES, "rlsv-run1-phase0", IMAGE, [], [], 0.1)
    assert (job["mpijob"]["rdma"], job["mpijob"]["max_bytes"], job["mpijob"]["gpus_per_worker"]) == (False, "1G", 1)
    assert (job["mpijob"]["efa_per_worker"], job["mpijob"]["workers"]) == (1, 2)
    assert job["expect"] == {"network": ["efa"], "nranks": 2, "min_busbw": [{"size": 1073741824, "floor": 1.0}],
                             "tolerance": 0.1, "require_complete": True,
                             # g6 is not in aws-ofi-nccl's platform table: no protocol, no GPUDirect RDMA
                             "transport": {"instance_type": "g6.8xlarge", "provider": "efa", "nics": 1,
                                           "protocol": None, "gdrdma": False}}


def test_nccl_mpijob_explicit_floors_and_network_win():
    floors = [{"size": "16G", "floor": 400}]
    job = _workloads.nccl_mpijob(P5_NODES, "l3", IMAGE, floors, ["efa", "ib"], 0.05)
    assert job["expect"]["min_busbw"] == floors
    assert job["expect"]["network"] == ["efa", "ib"]
    assert job["expect"]["tolerance"] == 0.05


def test_nccl_mpijob_expectation_is_judged_by_the_verdict_engine():
    job = _workloads.nccl_mpijob(P5_NODES, "l3", IMAGE, None, None, 0.0)
    entries = judged({"name": "nccl_tests", "node": "", "facts": None, "expect": job["expect"]})
    assert entries
    assert all(not e["passed"] for e in entries)


def test_nccl_mpijob_without_efa_or_gpus():
    nodes = [{"node": "p5-node-1", "instance_type": "p5.48xlarge", "efa": 0}]
    job = _workloads.nccl_mpijob(nodes, "l3", IMAGE, None, None, None)
    assert job["mpijob"]["gpus_per_worker"] == 8
    assert job["expect"]["network"] == []
    assert job["expect"]["nranks"] == 8
    assert job["expect"]["tolerance"] == 0.0


def test_nccl_mpijob_unknown_type_and_no_nodes():
    job = _workloads.nccl_mpijob([{"node": "x", "instance_type": "x9.metal"}], "l3", IMAGE, None, None, 0)
    assert job["mpijob"]["node_selector"] == {"node.kubernetes.io/instance-type": "x9.metal"}
    assert (job["mpijob"]["rdma"], job["mpijob"]["max_bytes"], job["mpijob"]["gpus_per_worker"]) == (False, "1G", 1)
    assert job["expect"]["min_busbw"] == []
    empty = _workloads.nccl_mpijob([], "l3", IMAGE, None, None, 0)
    assert (empty["mpijob"]["workers"], empty["mpijob"]["node_selector"], empty["expect"]["nranks"]) == (0, {}, 0)
    assert empty["instance_type"] == ""


# ------------------------------------------------------------------------------------------ nccl


def row(size, busbw, in_place=None):
    return {"size": size, "count": size // 4, "type": "float", "redop": "sum", "root": -1,
            "out_of_place": {"time_us": 1.0, "algbw": busbw / 1.875, "busbw": busbw, "wrong": 0},
            "in_place": {"time_us": 1.0, "algbw": 1.0, "busbw": in_place if in_place is not None else busbw,
                         "wrong": 0}}


def facts(**kw):
    """A literal nccl_log_info result (the keys of _nccl.py's parser)."""
    base = {
        "network": "efa", "ofi_provider": "efa", "nranks": 16, "nnodes": 2, "hosts": ["a", "b"],
        "complete": True, "wrong_total": 0, "signatures": [], "nccl_version": "2.27.7",
        "tables": [{"test": "all_reduce", "rows": [row(512 << 20, 300.0), row(1 << 30, 437.9, 440.0),
                                                   row(16 << 30, 487.1)],
                    "avg_busbw": 52.9, "complete": True}],
        "peak_busbw": 487.1, "busbw_at_largest_size": 487.1, "largest_size": 16 << 30, "avg_busbw_reported": 52.9,
    }
    base.update(kw)
    return base


def judged(item):
    """nccl_checks' specs judged by the verdict engine, as level_assert does."""
    return [_verdict.evaluate_check(spec) for spec in _nccl_checks.nccl_checks(item)]


def nccl_checks(fact_dict, **expect):
    return dict((c["name"], c) for c in judged({"name": "nccl", "node": "p5", "facts": fact_dict,
                                                "expect": expect}))


def test_nccl_checks_all_good():
    checks = nccl_checks(facts(), network="efa", nranks=16, nnodes=2,
                         min_busbw=[{"size": "1G", "floor": 400}, {"size": "16GiB", "floor": 450}])
    assert sorted(checks) == sorted([
        "nccl_network", "nccl_nranks", "nccl_nnodes", "nccl_complete", "nccl_wrong", "nccl_busbw_1GiB",
        "nccl_busbw_16GiB", "nccl_signatures"])
    assert all(c["passed"] for c in checks.values()), [c["message"] for c in checks.values()]
    assert checks["nccl_busbw_1GiB"]["unit"] == "GB/s" and checks["nccl_busbw_1GiB"]["node"] == "p5"


def test_nccl_checks_socket_fallback_fails_the_network():
    checks = nccl_checks(facts(network="Socket"), network=["efa"])
    net = checks["nccl_network"]
    assert not net["passed"]
    assert net["message"] == "nccl_network: NCCL printed 'Socket' (expected one of 'efa', saw 'socket')"
    assert "fell back to TCP sockets" in net["hint"]


def test_nccl_checks_network_list_and_unknown():
    assert nccl_checks(facts(network="IB"), network=["efa", "ib"])["nccl_network"]["passed"]
    libfabric = nccl_checks(facts(network="Libfabric", ofi_provider=None), network="efa")["nccl_network"]
    assert libfabric["passed"] and "efa assumed" in libfabric["message"]
    assert not nccl_checks(facts(network="Libfabric", ofi_provider=None), network="ib")["nccl_network"]["passed"]
    missing = nccl_checks(facts(network=None, ofi_provider=None), network="efa")["nccl_network"]
    assert not missing["passed"] and missing["evidence_missing"]
    assert "NCCL_DEBUG=INFO" in missing["hint"]


def test_nccl_checks_busbw_floor_tolerance_and_string_floor():
    ok = nccl_checks(facts(), min_busbw=[{"size": "1G", "floor": "480"}], tolerance=0.1)
    assert ok["nccl_busbw_1GiB"]["passed"]  # 437.9 >= 432
    per_size = nccl_checks(facts(), min_busbw=[{"size": "1G", "floor": 480, "tolerance": 0.0}], tolerance=0.5)
    assert not per_size["nccl_busbw_1GiB"]["passed"]


def test_nccl_checks_busbw_size_not_measured():
    entry = nccl_checks(facts(), min_busbw=[{"size": "32G", "floor": 1}])["nccl_busbw_32GiB"]
    assert not entry["passed"] and entry["evidence_missing"]
    assert "largest size measured was 16GiB" in entry["message"]
    assert "-e 32G" in entry["hint"]


def test_nccl_checks_single_rank_ok_is_informational():
    one = facts(nranks=1, nnodes=1, network=None, tables=[{"test": "all_reduce", "rows": [row(1 << 30, 0.0)]}])
    checks = nccl_checks(one, network="efa", min_busbw=[{"size": "1G", "floor": 100}], single_rank_ok=True)
    assert checks["nccl_busbw_1GiB"]["passed"]
    assert "not measurable on one GPU" in checks["nccl_busbw_1GiB"]["message"]
    assert checks["nccl_network"]["passed"]


def test_nccl_checks_single_rank_without_permission_fails():
    one = facts(nranks=1, tables=[{"test": "all_reduce", "rows": [row(1 << 30, 0.0)]}])
    entry = nccl_checks(one, min_busbw=[{"size": "1G", "floor": 100}])["nccl_busbw_1GiB"]
    assert not entry["passed"] and "2+ ranks" in entry["hint"]


def test_nccl_checks_wrong_results_fail():
    entry = nccl_checks(facts(wrong_total=128))["nccl_wrong"]
    assert not entry["passed"]
    assert "128 wrong results" in entry["message"]
    assert nccl_checks(facts(wrong_total=2), max_wrong="4")["nccl_wrong"]["passed"]
    assert nccl_checks(facts(wrong_total=None))["nccl_wrong"]["passed"]  # -c 0: not checked


def test_nccl_checks_incomplete_run_fails():
    entry = nccl_checks(facts(complete=False))["nccl_complete"]
    assert not entry["passed"] and "did not finish" in entry["message"]
    assert "nccl_complete" not in nccl_checks(facts(complete=False), require_complete=False)


def test_nccl_checks_forbidden_signature_fails_and_default_allows_nccl_warn():
    sigs = [
        {"id": "cm_req_handle_error_entry", "line_no": 42, "line": "NCCL WARN NET/OFI Request ... completed with error",
         "hint": "security group must allow all traffic between the EFA nodes"},
        {"id": "cm_req_handle_error_entry", "line_no": 50, "line": "again", "hint": ""},
        {"id": "nccl_warn", "line_no": 7, "line": "NCCL WARN something", "hint": ""},
    ]
    checks = nccl_checks(facts(signatures=sigs))
    bad = checks["nccl_signature_cm_req_handle_error_entry"]
    assert not bad["passed"]
    assert "(line 42, 2 occurrences)" in bad["message"]
    assert bad["hint"].startswith("security group")
    assert checks["nccl_signature_nccl_warn"]["passed"]
    assert "nccl_signatures" not in checks
    strict = nccl_checks(facts(signatures=sigs), forbid_signatures=["all"])
    assert not strict["nccl_signature_nccl_warn"]["passed"]
    lenient = nccl_checks(facts(signatures=sigs), forbid_signatures=[])
    assert lenient["nccl_signature_cm_req_handle_error_entry"]["passed"]


def test_nccl_checks_missing_facts_is_missing_evidence():
    for value in (None, {}, {"failed": True, "msg": "no such file: /logs/launcher.log"}, {"skipped": True}):
        checks = judged({"facts": value, "expect": {"network": "efa"}})
        assert [c["name"] for c in checks] == ["nccl_log"]
        assert checks[0]["evidence_missing"] and not checks[0]["passed"]
    assert "no such file" in judged({"facts": {"failed": True, "msg": "no such file"}})[0]["message"]


def test_nccl_checks_signatures_judged_by_other_checks_are_soft():
    sigs = [{"id": "socket_fallback", "line_no": 3, "line": "Using network Socket", "hint": "set NCCL_NET=ofi"},
            {"id": "wrong_results", "line_no": 9, "line": "Out of bounds values : 4 FAILED", "hint": ""}]
    judged = nccl_checks(facts(signatures=sigs, network="socket", wrong_total=4), network=["efa"])
    assert not judged["nccl_network"]["passed"] and not judged["nccl_wrong"]["passed"]
    assert judged["nccl_signature_socket_fallback"]["passed"]
    assert judged["nccl_signature_wrong_results"]["passed"]
    alone = nccl_checks(facts(signatures=sigs, network="socket", wrong_total=None))
    assert not alone["nccl_signature_socket_fallback"]["passed"]
    assert not alone["nccl_signature_wrong_results"]["passed"]


def test_nccl_checks_busbw_reads_out_of_place_and_needs_the_size():
    checks = nccl_checks(facts(), min_busbw=[{"size": "1G", "floor": 437.9}, {"size": "768M", "floor": 1}])
    assert checks["nccl_busbw_1GiB"]["actual"] == 437.9  # out-of-place, not the in-place 440
    # 768 MiB: the 512 MiB row is too small to answer for it
    assert checks["nccl_busbw_768MiB"]["evidence_missing"]
    rounded = facts(tables=[{"test": "all_gather", "rows": [row(17179868160, 400.0)]}])
    assert nccl_checks(rounded, min_busbw=[{"size": "16G", "floor": 350}])["nccl_busbw_16GiB"]["passed"]


def test_nccl_checks_busbw_of_one_collective_and_flat_rows():
    two = facts(tables=[{"test": "all_reduce", "rows": [row(1 << 30, 400.0)]},
                        {"test": "sendrecv", "rows": [row(1 << 30, 20.0)]}])
    assert not nccl_checks(two, min_busbw=[{"size": "1G", "floor": 100}])["nccl_busbw_1GiB"]["passed"]
    assert nccl_checks(two, min_busbw=[{"size": "1G", "floor": 100}], test="all_reduce")["nccl_busbw_1GiB"]["passed"]
    flat = facts(tables=[{"rows": [{"size": 1 << 30, "busbw": 3.0}]}])
    assert nccl_checks(flat, min_busbw=[{"size": "1G", "floor": 2}])["nccl_busbw_1GiB"]["passed"]


def test_nccl_checks_log_without_results_table():
    checks = nccl_checks(facts(tables=[], complete=None), network="efa")
    assert not checks["nccl_complete"]["passed"]
    assert "no nccl-tests results table" in checks["nccl_complete"]["message"]
    assert "nccl_complete" not in nccl_checks(facts(tables=[], complete=None), require_complete=False)


# ------------------------------------------------------------------------------------- transport proof

FIXTURES_NCCL = REPO / "tests" / "unit" / "fixtures" / "nccl"


def parsed_log(path):
    from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl
    return _nccl.parse_file(str(path))


def l3_checks(log, nodes=None):
    job = _workloads.nccl_mpijob(nodes or P5_NODES, "l3", IMAGE, None, None, 0.0)
    return judged({"name": "nccl_tests", "node": "", "facts": parsed_log(log), "expect": job["expect"]})


def test_transport_proof_passes_on_the_healthy_p5_log():
    entries = l3_checks(LOGS / "l3-efa-healthy.log")
    by_name = {}
    for entry in entries:
        by_name.setdefault(entry["name"], []).append(entry)
    assert all(e["passed"] for e in entries), [e["message"] for e in entries if not e["passed"]]
    hosts = ["compute-gpu-st-distributed-ml-1", "compute-gpu-st-distributed-ml-2"]
    assert [e["node"] for e in by_name["nccl_tests_efa_nics"]] == hosts
    assert by_name["nccl_tests_ofi_provider"][0]["actual"] == "efa"
    assert by_name["nccl_tests_gdrdma"][0]["actual"] is True
    # aws-ofi-nccl 1.7.3 does not print the protocol: recorded, not judged
    assert "does not say" in by_name["nccl_tests_ofi_protocol"][0]["message"]


def test_a_host_with_31_of_32_nics_fails_with_that_message():
    entries = l3_checks(LOGS / "l3-efa-nic-missing.log")
    failed = [e for e in entries if not e["passed"]]
    assert [(e["name"], e["node"]) for e in failed] == [("nccl_tests_efa_nics", "compute-gpu-st-distributed-ml-2")]
    assert failed[0]["message"] == (
        "nccl_tests_efa_nics: aws-ofi-nccl on compute-gpu-st-distributed-ml-2 found 31 of the 32 EFA NICs of "
        "p5.48xlarge (expected >= 32, saw 31)")
    assert "fewer EFA NICs" in failed[0]["hint"]
    result = _verdict.build_level_result("l3_multi_gpu", checks=_nccl_checks.nccl_checks(
        {"name": "nccl_tests", "facts": parsed_log(LOGS / "l3-efa-nic-missing.log"),
         "expect": _workloads.nccl_mpijob(P5_NODES, "l3", IMAGE, None, None, 0.0)["expect"]}))
    assert result["status"] == "FAIL" and result["nodes"]["compute-gpu-st-distributed-ml-2"]["status"] == "FAIL"


def test_a_host_the_jobs_pods_name_is_judged_as_its_node():
    """NCCL prints the pod's host name; the item's hosts (pod_hosts of the MPIJob's pods) name the node, so the node
    matrix and the bad-node findings say which machine lacks a NIC. A host no pod names stays as printed."""
    from ansible_collections.rlstack.validation.plugins.module_utils.k8s._k8s_status import pod_hosts
    pods = [{"metadata": {"name": "rlsv-l3-worker-1"},
             "spec": {"hostname": "compute-gpu-st-distributed-ml-2", "nodeName": "p5-node-1"}},
            {"metadata": {"name": "rlsv-l3-launcher-x7k2p"}, "spec": {"nodeName": "p5-node-0"}},
            {"metadata": {"name": "rlsv-l3-worker-0"}, "spec": {"hostname": "rlsv-l3-worker-0"}}]  # not bound yet
    hosts = pod_hosts(pods)
    assert hosts == {"compute-gpu-st-distributed-ml-2": "p5-node-1", "rlsv-l3-launcher-x7k2p": "p5-node-0"}
    job = _workloads.nccl_mpijob(P5_NODES, "l3", IMAGE, None, None, 0.0)
    entries = judged({"name": "nccl_tests", "node": "", "facts": parsed_log(LOGS / "l3-efa-nic-missing.log"),
                      "expect": job["expect"], "hosts": hosts})
    nics = {e["node"]: e for e in entries if e["name"] == "nccl_tests_efa_nics"}
    assert sorted(nics) == ["compute-gpu-st-distributed-ml-1", "p5-node-1"]
    assert not nics["p5-node-1"]["passed"]
    assert nics["p5-node-1"]["message"].startswith(
        "nccl_tests_efa_nics: aws-ofi-nccl on compute-gpu-st-distributed-ml-2 (node p5-node-1) found 31 of the 32")


def test_socket_fallback_fails_the_provider_too():
    entries = {e["name"]: e for e in l3_checks(FIXTURES_NCCL / "ofi-plugin-init-failed-socket-fallback-p4d.log")}
    assert not entries["nccl_tests_network"]["passed"]
    provider = entries["nccl_tests_ofi_provider"]
    assert not provider["passed"] and provider["evidence_missing"]
    assert "no 'NET/OFI Selected provider is ...' line" in provider["message"]
    # aws-ofi-nccl printed its protocol before it failed: SENDRECV is not what p5 needs
    assert not entries["nccl_tests_ofi_protocol"]["passed"]
    assert "SENDRECV" in entries["nccl_tests_ofi_protocol"]["message"]


def test_gdrdma_required_only_where_the_plugin_requires_it():
    g6e = FIXTURES_NCCL / "efa-g6e-l40s-4pod-deepspeed-nccl-info.log"     # no /GDRDMA on its channels
    g6e_nodes = [{"node": "n%d" % i, "instance_type": "g6e.48xlarge", "gpus": 1, "efa": 4} for i in range(4)]
    entries = {e["name"]: e for e in l3_checks(g6e, g6e_nodes)}
    assert "nccl_tests_gdrdma" not in entries and "nccl_tests_ofi_protocol" not in entries
    assert entries["nccl_tests_efa_nics"]["passed"] and entries["nccl_tests_ofi_provider"]["passed"]
    p5 = {e["name"]: e for e in l3_checks(g6e)}
    assert not p5["nccl_tests_gdrdma"]["passed"]
    assert "llama-3-8b-node-0-0" in p5["nccl_tests_gdrdma"]["message"]
    assert not p5["nccl_tests_efa_nics"]["passed"]                   # 4 of 32


def test_transport_fabric_and_missing_nic_line():
    item = {"name": "nccl", "facts": facts(ofi_fabric="efa", ofi_nics=None, ofi_nics_by_host={}),
            "expect": {"transport": {"fabric": ["efa-direct"], "nics": 16}}}
    entries = {e["name"]: e for e in judged(item)}
    assert not entries["nccl_ofi_fabric"]["passed"]
    assert entries["nccl_efa_nics"]["evidence_missing"]
    old = {e["name"]: e for e in judged({"facts": facts(), "expect": {"transport": {"fabric": "efa-direct"}}})}
    assert old["nccl_ofi_fabric"]["passed"] and "1.14+" in old["nccl_ofi_fabric"]["message"]


def test_a_failed_multi_node_bandwidth_check_names_the_isolation_command():
    cmd = "ansible-playbook playbooks/validate.yml -i inv --tags isolate -e validation_hosts=eks"
    got = nccl_checks(facts(), network="efa", min_busbw=[{"size": "1G", "floor": 450}], isolate_command=cmd)
    assert not got["nccl_busbw_1GiB"]["passed"]
    assert got["nccl_busbw_1GiB"]["hint"].endswith("to find the node: " + cmd)
    assert "isolate" not in got["nccl_network"]["hint"]
    plain = nccl_checks(facts(), network="efa", min_busbw=[{"size": "1G", "floor": 450}])
    assert "isolate" not in plain["nccl_busbw_1GiB"]["hint"]
