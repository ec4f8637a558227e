"""The launcher logs of bad-node isolation's pair MPIJobs (sim/replay/pairlog.py): the real 2-node p5 log
with its bandwidth scaled, parsed back by the collection's own nccl-tests parser."""
import importlib.util
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.nccl import _nccl, _nccl_results

SIM = Path(__file__).resolve().parents[3] / "sim"


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pairlog = load("sim_pairlog", SIM / "replay" / "pairlog.py")
replay = load("sim_replay", SIM / "replay.py")
HEALTHY = pairlog.HEALTHY.read_text()


@pytest.mark.parametrize("ratio", [0.5, 0.25, 0.9])
def test_scaling_changes_only_the_bandwidth_and_time_columns(ratio):
    scaled = pairlog.scale(HEALTHY, ratio)
    before, after = HEALTHY.split("\n"), scaled.split("\n")
    assert len(before) == len(after)
    changed = [(a, b) for a, b in zip(before, after) if a != b]
    # 7 table rows with a non-zero bandwidth or time (the 0-byte row's time changes too) and the footer
    assert 6 <= len(changed) <= 8
    for a, b in changed:
        assert len(a) == len(b) or abs(len(a) - len(b)) <= 2  # columns stay aligned
    base, out = _nccl.parse_text(HEALTHY), _nccl.parse_text(scaled)
    assert out["busbw_at_largest_size"] == pytest.approx(base["busbw_at_largest_size"] * ratio, abs=0.01)
    assert _nccl_results.busbw_at_size(out, 1 << 30) == pytest.approx(313.29 * ratio, abs=0.01)
    assert out["avg_busbw_reported"] == pytest.approx(base["avg_busbw_reported"] * ratio, abs=0.001)
    assert out["complete"] and out["wrong_total"] == 0 and out["network"] == base["network"]
    assert out["nranks"] == base["nranks"] == 16


def test_ratio_one_is_the_source_itself():
    assert pairlog.scale(HEALTHY, 1.0) == HEALTHY


def test_a_pair_runs_at_its_slower_node_and_a_crash_wins():
    pairs = {"p5-node-7": {"busbw_ratio": 0.5}, "p5-node-1?": {"busbw_ratio": 0.25}, "p5-node-3": {"crash": True}}
    text, crashed = pairlog.pair_log(pairs, ["p5-node-6", "p5-node-7"], replay.node_variant)
    assert not crashed and _nccl_results.busbw_at_size(_nccl.parse_text(text), 1 << 30) == pytest.approx(156.65, abs=0.01)
    text, crashed = pairlog.pair_log(pairs, ["p5-node-7", "p5-node-12"], replay.node_variant)  # pattern p5-node-1?
    assert not crashed and _nccl_results.busbw_at_size(_nccl.parse_text(text), 1 << 30) == pytest.approx(78.32, abs=0.01)
    text, crashed = pairlog.pair_log(pairs, ["p5-node-3", "p5-node-4"], replay.node_variant)
    assert crashed and "Caught signal 11" in text
    text, crashed = pairlog.pair_log({}, ["p5-node-0", "p5-node-1"], replay.node_variant)
    assert text == HEALTHY and not crashed
