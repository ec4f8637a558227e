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
