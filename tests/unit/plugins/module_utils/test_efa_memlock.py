# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""L0's efa_memlock check (plugins/module_utils/verdicts/_checks.py efa_memlock_checks), judged by the same
evaluate_check that level_assert uses.

The `memlock` values are what the probe's own memlock_limit prints (roles/l0_infrastructure/files/probe_node.py)
with resource.getrlimit replaced; the rest of each node's evidence is the sim's replay of a real L0 probe
(sim/replay/probes/probe_node, which predates `memlock` and so shows how an older probe output is judged)."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils import _limits
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _checks as checks
from ansible_collections.rlstack.validation.plugins.module_utils.verdicts import _verdict
from ansible_collections.rlstack.validation.plugins.module_utils.workloads import _probe_pods

REPO = Path(__file__).resolve().parents[4]
PROBE = REPO / "roles" / "l0_infrastructure" / "files" / "probe_node.py"
P5_HEALTHY = REPO / "sim" / "replay" / "probes" / "probe_node" / "healthy" / "p5.48xlarge.out"
ULIMIT_L_65536 = 65536 * 1024  # `ulimit -l` printed 65536 (KiB) on the node of awslabs/awsome-distributed-ai #647


def _probe_module():
    spec = importlib.util.spec_from_file_location("probe_node_for_memlock", PROBE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROBE_NODE = _probe_module()


def memlock(monkeypatch, soft, hard):
    """What the probe prints for these getrlimit values."""
    monkeypatch.setattr(PROBE_NODE.resource, "getrlimit", lambda which: (soft, hard))
    return PROBE_NODE.memlock_limit()


def p5_outcome(memlock_field=None):
    out = _probe_pods.probe_output(P5_HEALTHY.read_text(encoding="utf-8") + "__rlstack_rc=0\n")
    out = copy.deepcopy(out)
    if memlock_field is not None:
        out["data"]["memlock"] = memlock_field
    return out


def p5_node(name):
    return {"metadata": {"name": name, "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"}}, "spec": {},
            "status": {"capacity": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def l0(probes, **expect):
    base = {"selector": "node.kubernetes.io/instance-type=p5.48xlarge", "overrides": {}, "min_nodes": 1,
            "daemonsets": [], "storage_claim": None, "storage": False, "transport": "kubernetes"}
    base.update(expect)
    result = checks.l0_checks([p5_node(n) for n in sorted(probes)], probes, base)
    return [c for c in result if c["name"] == "efa_memlock"]


def judged(check):
    return _verdict.evaluate_check(check)


def test_unlimited_passes(monkeypatch):
    inf = PROBE_NODE.resource.RLIM_INFINITY
    found = l0({"p5-node-1": p5_outcome(memlock(monkeypatch, inf, inf))})
    assert len(found) == 1
    entry = judged(found[0])
    assert entry["passed"] is True and entry["node"] == "p5-node-1"
    assert (found[0]["op"], found[0]["actual"], found[0]["expected"]) == ("eq", "unlimited", "unlimited")


def test_65536_kib_fails_naming_node_expected_seen_and_fix(monkeypatch):
    found = l0({"p5-node-1": p5_outcome(memlock(monkeypatch, ULIMIT_L_65536, ULIMIT_L_65536))})
    entry = judged(found[0])
    assert entry["passed"] is False and entry["evidence_missing"] is False
    assert entry["node"] == "p5-node-1"
    assert entry["message"] == (
        "efa_memlock: locked-memory limit (RLIMIT_MEMLOCK) in a container on this EFA node: soft 67108864 bytes "
        "(65536 KiB), hard 67108864 bytes (65536 KiB) (expected 'unlimited', saw '65536 KiB')")
    hint = entry["hint"]
    for words in ("Cannot allocate memory", "spec.containerd.baseRuntimeSpec.process.rlimits", "RLIMIT_MEMLOCK",
                  "Modifying container RLIMITs", "Bottlerocket", "l0_infrastructure_efa_memlock_min_kib"):
        assert words in hint, words


def test_the_soft_limit_is_judged_and_the_hard_one_shown(monkeypatch):
    inf = PROBE_NODE.resource.RLIM_INFINITY
    entry = judged(l0({"n": p5_outcome(memlock(monkeypatch, 65536, inf))})[0])
    assert entry["passed"] is False
    assert "soft 65536 bytes (64 KiB), hard unlimited" in entry["message"]


def test_a_finite_minimum_from_the_inventory(monkeypatch):
    inf = PROBE_NODE.resource.RLIM_INFINITY
    low = p5_outcome(memlock(monkeypatch, ULIMIT_L_65536, ULIMIT_L_65536))
    assert judged(l0({"n": low}, efa_memlock_min_kib=65536)[0])["passed"] is True
    entry = judged(l0({"n": low}, efa_memlock_min_kib="131072")[0])  # extra vars arrive as strings
    assert entry["passed"] is False and "expected >= 131072 KiB, saw 65536 KiB" in entry["message"]
    assert judged(l0({"n": p5_outcome(memlock(monkeypatch, inf, inf))}, efa_memlock_min_kib=131072)[0])["passed"]


def test_the_default_is_the_limits_module(monkeypatch):
    assert _limits.limit("efa_memlock_min_kib") == _limits.EFA_MEMLOCK_MIN_KIB == 0
    low = p5_outcome(memlock(monkeypatch, ULIMIT_L_65536, ULIMIT_L_65536))
    for given in ({}, {"efa_memlock_min_kib": None}, {"efa_memlock_min_kib": ""}):
        assert judged(l0({"n": low}, **given)[0])["passed"] is False, given


@pytest.mark.parametrize("bad", [-1, "lots"])
def test_a_bad_minimum_is_one_sentence(monkeypatch, bad):
    entry = judged(l0({"n": p5_outcome(memlock(monkeypatch, 1, 1))}, efa_memlock_min_kib=bad)[0])
    assert entry["passed"] is False
    assert "l0_infrastructure_efa_memlock_min_kib is %r: give 0 (unlimited) or a number of KiB" % (bad,) in entry["message"]


def test_an_older_probe_output_without_memlock_is_not_judged():
    # the sim's replays come from a real probe run before the field existed: no check, nothing missing
    assert "memlock" not in p5_outcome()["data"]
    assert l0({"p5-node-1": p5_outcome()}) == []


def test_a_limit_the_probe_could_not_read_is_evidence_missing(monkeypatch):
    def getrlimit(which):
        raise OSError(1, "Operation not permitted")
    monkeypatch.setattr(PROBE_NODE.resource, "getrlimit", getrlimit)
    entry = judged(l0({"n": p5_outcome(PROBE_NODE.memlock_limit())})[0])
    assert entry["passed"] is False and entry["evidence_missing"] is True
    assert "the probe could not read the locked-memory limit: getrlimit(RLIMIT_MEMLOCK)" in entry["message"]


def test_only_nodes_with_efa_are_judged(monkeypatch):
    low = memlock(monkeypatch, 65536, 65536)
    assert checks.efa_memlock_checks("cpu-node", {"efa_count": 0, "memlock": low}, {"efa_count": 0}) == []
    assert checks.efa_memlock_checks("unknown-type", {"efa_count": 0, "memlock": low}, {"efa_count": None}) == []
    # EFA devices the probe found count even when nothing was expected, and expected ones count when none were found
    assert len(checks.efa_memlock_checks("n", {"efa_count": 1, "memlock": low}, {"efa_count": None})) == 1
    assert len(checks.efa_memlock_checks("n", {"efa_count": 0, "memlock": low}, {"efa_count": 32})) == 1
