"""The fleet-scale benchmark reads L0's row from a real report.json (the H200 run of docs/hardware.md)."""
import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _bench():
    spec = importlib.util.spec_from_file_location("fleet_scale_run", ROOT / "benchmarks" / "fleet_scale" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_l0_row_of_a_recorded_report():
    report = json.loads((ROOT / "sim" / "replay" / "recorded" / "playbook-h200x1-2026-12-01" / "l0-l4.report.json")
                        .read_text())
    row = _bench().l0_row(report)
    assert row["status"] == "PASS" and row["duration_s"] > 0 and len(row["checks"]) >= 5


def _clock_summary():
    path = ROOT / "benchmarks" / "fleet_scale" / "clock_summary.py"
    spec = importlib.util.spec_from_file_location("fleet_scale_clock_summary", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_probe_task_margins_of_a_recorded_256_node_run():
    # the task clock and pod timeline of one 256-node run on 16 cores (results-2026-12-07-16cores-h.json, call 2);
    # device_fleet.sh printed 1.39 s and 0.41 s for it there
    data = ROOT / "benchmarks" / "fleet_scale"
    with open(data / "clock-2026-12-07-256.jsonl") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    timeline = json.loads((data / "timeline-2026-12-07-256.json").read_text())
    summary = _clock_summary()
    before, after = summary.probe_task_margins(rows, timeline)
    assert round(before, 2) == 1.39 and round(after, 2) == 0.41
    seconds, name = summary.slowest(rows)[0]
    assert "Run one probe pod" in name and seconds > before + after


def test_a_run_without_a_task_clock_is_one_line(tmp_path, capsys):
    # a run that ended before its playbook started (the cluster did not come up) has no clock file
    assert _clock_summary().main(["clock_summary.py", str(tmp_path / "absent.jsonl")]) == 0
    assert capsys.readouterr().out.startswith("   (no task clock: ")
