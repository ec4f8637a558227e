# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The cluster's baseline: what its last passing run measured, and the checks that compare a run with it.

Standard library only (docs/baselines.md). A baseline is built from the run's level results (each with the
stack fingerprint of _fingerprint.py where the level has one: L1, L3, Phase 0) and the cluster's GPU nodes:

    {schema, cluster, run_id, date,
     levels: {<level id>: {level, run_id, date, duration_s, busbw: [{size_bytes, busbw_gbps}], versions}},
     versions: {nccl, aws_ofi_nccl, libfabric, cuda_driver, cuda, efa_installer, image, image_digest,
                instance_type, nodes}}

:func:`compare` gives one check per level and measure, for the report's "Baseline" row: busbw at the size
that fell most (from BASELINE_MIN_SIZE_BYTES up), and the level's time. Tolerances: _limits.py.
"""

from __future__ import annotations

import json

from ansible_collections.rlstack.validation.plugins.module_utils import _levels, _limits

SCHEMA = "rlstack.validation/baseline/v1"
# versions, as the report names them, in the order a change is told
VERSION_NAMES = (
    ("nccl", "NCCL"), ("aws_ofi_nccl", "aws-ofi-nccl"), ("libfabric", "libfabric"), ("cuda_driver", "driver"),
    ("cuda", "CUDA"), ("efa_installer", "EFA installer"), ("image_digest", "image digest"), ("image", "image"),
    ("instance_type", "instance type"), ("nodes", "node count"),
)
HINT_BUSBW = ("compare the versions named above with the baseline's (report.json, baseline/<cluster>.json); if the "
              "new performance is expected, store this run as the baseline with -e validation_baseline=reset")
HINT_TIME = ("a slower level: look at the pod events (image pulls, scheduling) and the level's own checks; "
             "-e validation_baseline=reset accepts the new times")


class BaselineError(ValueError):
    """A stored baseline that cannot be read; the text says which and why."""


def _versions(fingerprints, nodes):
    out = {}
    for fingerprint in fingerprints:
        if not isinstance(fingerprint, dict):
            continue
        for source in (fingerprint.get("observed") or {}, fingerprint.get("declared") or {}):
            for key in ("nccl", "aws_ofi_nccl", "libfabric", "cuda_driver", "cuda", "efa_installer"):
                if source.get(key) not in (None, "") and key not in out:
                    out[key] = str(source[key])
        for key in ("image", "image_digest"):
            if fingerprint.get(key) and key not in out:
                out[key] = str(fingerprint[key])
    nodes = [n for n in nodes or [] if isinstance(n, dict)]
    types = sorted(set(str(n.get("instance_type") or "") for n in nodes) - {""})
    out["instance_type"] = ",".join(types)
    out["nodes"] = len(nodes)
    return out


def record(results, cluster, run_id, date, nodes):
    """The baseline of one run: results {level id: level result (with 'fingerprint')}, nodes: the GPU nodes
    ([{node, instance_type, ...}], runner_gpu_nodes)."""
    levels = {}
    fingerprints = []
    for level_id in sorted(results or {}):
        result = results[level_id]
        if _levels.row_level(level_id) not in _levels.ids():
            continue  # the rows that are not levels (the Phase 0 gate, Baseline, Bad nodes)
        if not isinstance(result, dict) or result.get("status") != "PASS":
            continue
        fingerprint = result.get("fingerprint") if isinstance(result.get("fingerprint"), dict) else {}
        fingerprints.append(fingerprint)
        busbw = [{"size_bytes": int(r["size_bytes"]), "busbw_gbps": float(r["busbw_gbps"])}
                 for r in fingerprint.get("busbw") or [] if isinstance(r, dict)
                 and r.get("size_bytes") is not None and r.get("busbw_gbps") is not None]
        levels[str(level_id)] = {"level": str(result.get("level") or ""), "run_id": str(run_id), "date": str(date),
                                 "duration_s": float(result.get("duration_s") or 0.0), "busbw": busbw,
                                 "versions": _versions([fingerprint], nodes)}
    return {"schema": SCHEMA, "cluster": str(cluster), "run_id": str(run_id), "date": str(date),
            "levels": levels, "versions": _versions(fingerprints, nodes)}


def merge(stored, current):
    """The baseline to store after a passing run: the stored one with this run's levels and versions replacing
    theirs (a run of some levels keeps the other levels' baseline)."""
    out = dict(current)
    levels = dict((stored or {}).get("levels") or {})
    levels.update(current.get("levels") or {})
    out["levels"] = levels
    versions = dict((stored or {}).get("versions") or {})
    versions.update(dict((k, v) for k, v in (current.get("versions") or {}).items() if v not in (None, "")))
    out["versions"] = versions
    return out


def load(stored):
    """A stored baseline from its JSON text (file or ConfigMap) or a dict; None when there is none ('')."""
    if stored in (None, "", {}):
        return None
    if isinstance(stored, str):
        try:
            stored = json.loads(stored)
        except ValueError as exc:
            raise BaselineError("the stored baseline is not JSON (%s)" % exc) from None
    if not isinstance(stored, dict) or stored.get("schema") != SCHEMA:
        raise BaselineError("the stored baseline is not a %s document" % SCHEMA)
    return stored


def changes(before, after):
    """What changed between two baselines' versions, e.g. 'NCCL 2.27.7 -> 2.28.3, driver 12.8 -> 12.9'."""
    before, after = before or {}, after or {}
    out = []
    for key, title in VERSION_NAMES:
        old, new = before.get(key), after.get(key)
        if old in (None, "") and new in (None, ""):
            continue
        if str(old) != str(new):
            out.append("%s %s -> %s" % (title, old if old not in (None, "") else "unknown",
                                        new if new not in (None, "") else "unknown"))
    return ", ".join(out)


def size_text(size_bytes):
    """1073741824 -> '1 GiB', 1048576 -> '1 MiB', 65536 -> '64 KiB'."""
    size = int(size_bytes)
    for shift, unit in ((40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return "%d %s" % (size >> shift, unit)
    return "%d B" % size


def _day(date):
    return str(date or "an unknown date")[:10]


def _worst_busbw(now_rows, base_rows, min_size):
    base = dict((int(r["size_bytes"]), float(r["busbw_gbps"])) for r in base_rows or [])
    worst = None
    # largest size first, ratios to 3 decimals: of sizes that fell alike, the report names the largest
    for row in sorted(now_rows or [], key=lambda r: -int(r["size_bytes"])):
        size = int(row["size_bytes"])
        if size < min_size or base.get(size, 0) <= 0:
            continue
        ratio = round(float(row["busbw_gbps"]) / base[size], 3)
        if worst is None or ratio < worst[0]:
            worst = (ratio, size, float(row["busbw_gbps"]), base[size])
    return worst


def compare(current, stored, busbw_tolerance=None, time_tolerance=None):
    """Check specs (level_assert) comparing this run's baseline with the stored one; stored None: one info
    check saying there is none yet."""
    tol = _limits.BASELINE_BUSBW_TOLERANCE if busbw_tolerance in (None, "") else float(busbw_tolerance)
    time_tol = _limits.BASELINE_TIME_TOLERANCE if time_tolerance in (None, "") else float(time_tolerance)
    if not stored:
        return [{"name": "baseline", "node": "", "op": "info", "actual": None,
                 "fail_msg": "no baseline of this cluster yet; this run is stored as the baseline when it passes"}]
    checks = []
    for level_id in sorted(current.get("levels") or {}):
        now = current["levels"][level_id]
        base = (stored.get("levels") or {}).get(level_id)
        if not base:
            continue
        label = now.get("level") or level_id
        day = _day(base.get("date") or stored.get("date"))
        run = base.get("run_id") or stored.get("run_id") or "unknown"
        before = base.get("versions") or stored.get("versions") or {}
        after = now.get("versions") or current.get("versions") or {}
        changed = changes(before, after) or "no recorded version changed"
        same_shape = all(str(before.get(k)) == str(after.get(k)) for k in ("instance_type", "nodes"))
        if now.get("busbw") and base.get("busbw"):
            name = "baseline_busbw_%s" % label
            worst = _worst_busbw(now["busbw"], base["busbw"], _limits.BASELINE_MIN_SIZE_BYTES)
            if not same_shape:
                checks.append({"name": name, "node": "", "op": "info", "actual": None,
                               "fail_msg": "not compared: the baseline of %s (run %s) ran on other nodes (%s)"
                                           % (day, run, changed)})
            elif worst:
                ratio, size, seen, was = worst
                below = (1.0 - ratio) * 100.0
                text = ("busbw at %s %.0f%% %s the baseline of %s (%s; baseline run %s: %.1f GB/s)"
                        % (size_text(size), abs(below), "below" if below >= 0 else "above", day, changed, run, was))
                checks.append({"name": name, "node": "", "op": "ge", "actual": round(seen, 3),
                               "expected": round(was * (1.0 - tol), 3), "unit": "GB/s", "fail_msg": text,
                               "hint": HINT_BUSBW})
        seen_s, was_s = float(now.get("duration_s") or 0.0), float(base.get("duration_s") or 0.0)
        if was_s > 0:
            bound = round(was_s * (1.0 + time_tol) + _limits.BASELINE_TIME_SLACK_S, 1)
            checks.append({"name": "baseline_time_%s" % label, "node": "", "op": "le", "actual": round(seen_s, 1),
                           "expected": bound, "unit": "s", "hint": HINT_TIME,
                           "fail_msg": "%s took %.0f s, %.0f s in the baseline of %s (%s; baseline run %s)"
                                       % (label, seen_s, was_s, day, changed, run)})
    if not checks:
        checks.append({"name": "baseline", "node": "", "op": "info", "actual": None,
                       "fail_msg": "no level of this run is in the baseline of %s (run %s)"
                                   % (_day(stored.get("date")), stored.get("run_id") or "unknown")})
    return checks
