# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The Phase 0 gate: no expensive multi-node level without a matching, fresh Phase 0 pass.

Standard library only. ``decide`` takes the run's plan facts and the Phase 0 records found (evidence directory,
AWX workflow artifact, object storage) and says pass / warn / fail, naming every difference. See docs/phase0.md.

What must match (``MATCHED``), each compared like with like (declared by the image tag, or observed in a log;
the run under test is judged before any pod, so on what its image declares):

* the nccl-tests image (its digest when both sides know it, else the reference);
* NCCL, aws-ofi-nccl, the EFA installer, libfabric.

Not compared: instance type and node count (Phase 0 runs on cheap instances by design), the CUDA toolkit and
driver (the node's AMI, not the networking stack), busbw (a different fabric).
"""

from __future__ import annotations

import datetime
import re

from ansible_collections.rlstack.validation.plugins.module_utils import _levels

MODES = ("fail", "warn", "off")
# The levels that need many expensive nodes at once (level ids of the plan): the registry's phase0_gated.
GATED_LEVELS = tuple(level["id"] for level in _levels.levels() if level["phase0_gated"])
# Those gated only when they span two nodes or more (L3: one node never crosses the network).
GATED_MULTI_NODE = tuple(level["id"] for level in _levels.levels() if level["phase0_gated"] == "multi_node")
MATCHED = (
    ("nccl", "NCCL"),
    ("aws_ofi_nccl", "aws-ofi-nccl"),
    ("efa_installer", "the EFA installer"),
    ("libfabric", "libfabric"),
)
RECORD_SCHEMA = "rlstack.validation/phase0-record/v1"


def parse_iso(text):
    match = re.match(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)", str(text or ""))
    if not match:
        return None
    return datetime.datetime(*(int(x) for x in match.groups()), tzinfo=datetime.timezone.utc).timestamp()


def _age_text(seconds):
    hours = seconds / 3600.0
    return "%.1f h" % hours if hours < 48 else "%.1f days" % (hours / 24.0)


def _level_of(level_id):
    try:
        level = _levels.by_id(level_id)
    except KeyError:
        return level_id
    return level["level"] + (" multi-node" if level["phase0_gated"] == "multi_node" else "")


def _version(value):
    """'2.27.7-1' and '2.27.7' are the same NCCL; '1.16.3' and '1.16.3-aws' the same aws-ofi-nccl."""
    match = re.match(r"v?(\d+(?:\.\d+)*)", str(value or ""))
    return match.group(1) if match else str(value or "")


def differences(record_fp, current_fp):
    """Each difference that matters, as a sentence; plus the fields that could not be compared."""
    record_fp = record_fp or {}
    current_fp = current_fp or {}
    diffs = []
    same_image = False
    if record_fp.get("image_digest") and current_fp.get("image_digest"):
        same_image = record_fp["image_digest"] == current_fp["image_digest"]
        if not same_image:
            diffs.append("Phase 0 passed with image digest %s, this run's image is %s"
                         % (record_fp["image_digest"], current_fp["image_digest"]))
    elif record_fp.get("image") != current_fp.get("image"):
        diffs.append("Phase 0 passed with image %s, this run uses %s"
                     % (record_fp.get("image") or "(none)", current_fp.get("image") or "(none)"))
    else:
        same_image = True
    not_compared = []
    for key, label in MATCHED:
        compared = False
        for kind, verb in (("declared", "declares"), ("observed", "printed")):
            theirs = (record_fp.get(kind) or {}).get(key)
            ours = (current_fp.get(kind) or {}).get(key)
            if theirs and ours:
                compared = True
                if _version(theirs) != _version(ours):
                    diffs.append("Phase 0 passed with %s %s, this image %s %s" % (label, theirs, verb, ours))
        if not compared and not same_image:
            not_compared.append(label)
    return diffs, not_compared


def decide(mode, levels, instance_type, price_per_hour, threshold_usd, records, current_fp, now, max_age_s,
           phase0_in_run=False, nodes=0):
    """The gate's verdict: {action: pass|warn|fail|skip|defer, reason: ok|missing|stale|mismatch|cheap|off|no_level|
    same_run, message, record, differences, not_compared}.

    levels: the selected gated level ids that will run; price_per_hour: the instance type's price or None
    (unknown counts as expensive); records: Phase 0 records (dicts with status, passed_at, fingerprint);
    phase0_in_run: Phase 0 runs in this run (before the gated levels), so its result decides (``settle``);
    nodes: how many nodes of instance_type the gated levels would use (for the money they would not spend)."""
    mode = str(mode or "fail").strip().lower()
    out = {"action": "skip", "reason": "", "message": "", "record": None, "differences": [], "not_compared": [],
           "mode": mode, "instance_type": instance_type, "levels": list(levels or []), "blocked": [],
           "nodes": int(nodes or 0), "price_per_hour": price_per_hour, "what": ""}
    if mode == "off":
        out.update(reason="off", message="the Phase 0 gate is off (validation_phase0_gate: off)")
        return out
    if not out["levels"]:
        out.update(reason="no_level", message="no expensive multi-node level is selected")
        return out
    if price_per_hour is not None and float(price_per_hour) < float(threshold_usd):
        out.update(reason="cheap", message="%s costs $%.2f/h, under the gate's threshold of $%.2f/h"
                   % (instance_type, float(price_per_hour), float(threshold_usd)))
        return out
    price_text = ("$%.2f/h" % float(price_per_hour)) if price_per_hour is not None else "an unknown price"
    what = "%s on %s (%s)" % (", ".join(_level_of(i) for i in out["levels"]), instance_type or "these nodes",
                              price_text)
    out["what"] = what
    if phase0_in_run:
        out.update(action="defer", reason="same_run",
                   message="Phase 0 runs first in this run; %s start only if it passes" % what)
        return out
    passes = [r for r in (records or []) if isinstance(r, dict) and str(r.get("status")).upper() == "PASS"
              and isinstance(r.get("fingerprint"), dict)]
    passes.sort(key=lambda r: parse_iso(r.get("passed_at")) or 0.0, reverse=True)
    matching, mismatched = [], []
    for record in passes:
        diffs, not_compared = differences(record["fingerprint"], current_fp)
        (mismatched if diffs else matching).append((record, diffs, not_compared))
    fresh = [m for m in matching if now - (parse_iso(m[0].get("passed_at")) or 0.0) <= float(max_age_s)]
    if fresh:
        record, _diffs, not_compared = fresh[0]
        age = now - (parse_iso(record.get("passed_at")) or now)
        out.update(action="pass", reason="ok", record=record, not_compared=not_compared,
                   message="Phase 0 passed %s ago (run %s on %s) with this stack; %s may run"
                   % (_age_text(age), record.get("run_id") or "?",
                      (record.get("fingerprint") or {}).get("instance_type") or "?", what))
        return out
    if matching:
        record = matching[0][0]
        age = now - (parse_iso(record.get("passed_at")) or 0.0)
        message = "the last matching Phase 0 pass (run %s, %s) is %s old, more than the %s allowed " \
                  "(validation_phase0_max_age_h)" % (record.get("run_id") or "?", record.get("passed_at"),
                                                     _age_text(age), _age_text(float(max_age_s)))
        out.update(reason="stale", record=record, message=message)
    elif mismatched:
        record, diffs, not_compared = mismatched[0]
        out.update(reason="mismatch", record=record, differences=diffs, not_compared=not_compared,
                   message="no Phase 0 pass matches this stack: " + "; ".join(diffs))
    else:
        out.update(reason="missing", message="no Phase 0 pass was found (%d record(s) read)" % len(records or []))
    if mode == "warn":
        out["message"] = "%s: %s; running anyway (validation_phase0_gate: warn)" % (what, out["message"])
    else:
        out["message"] = "%s: %s. Run Phase 0 on cheap instances first (playbooks/phase0.yml, docs/phase0.md), " \
                         "or set validation_phase0_gate: warn to run anyway" % (what, out["message"])
    out["action"] = "warn" if mode == "warn" else "fail"
    return out


def not_spent(gate):
    """What the blocked levels did not spend per hour: '2 x p5.48xlarge, $110.64/h' (or without the money)."""
    nodes = int(gate.get("nodes") or 0)
    where = "%s%s" % ("%d x " % nodes if nodes else "", gate.get("instance_type") or "the expensive nodes")
    price = gate.get("price_per_hour")
    if price is None:
        return where
    return "%s, $%.2f/h" % (where, float(price) * max(nodes, 1))


def settle(gate, phase0_status, must_pass=True):
    """The deferred gate (``decide`` with phase0_in_run) once this run's Phase 0 has its verdict: its pass opens the
    gate; anything else keeps the gated levels from starting (``blocked``), whatever
    validation_continue_on_error says, unless must_pass is false (validation_phase0_must_pass)."""
    gate = dict(gate or {})
    if gate.get("action") != "defer":
        return gate
    status = str(phase0_status or "FAIL").upper()
    what = gate.get("what") or ", ".join(_level_of(i) for i in gate.get("levels") or [])
    if status == "PASS":
        gate.update(action="pass", reason="same_run", message="Phase 0 passed in this run; %s may run" % what)
    elif not must_pass:
        gate.update(action="warn", reason="same_run_failed",
                    message="Phase 0 %s in this run; %s run anyway (validation_phase0_must_pass: false)"
                    % (status, what))
    else:
        gate.update(action="fail", reason="same_run_failed", blocked=list(gate.get("levels") or []),
                    message="Phase 0 %s in this run, so %s did not start: %s not spent "
                            "(validation_phase0_must_pass: false runs them anyway)"
                            % (status, ", ".join(_level_of(i) for i in gate.get("levels") or []), not_spent(gate)))
    return gate


def skip_reason(gate, level_id):
    """The SKIPPED reason of a level the settled gate kept from starting, else ''."""
    gate = gate if isinstance(gate, dict) else {}
    if gate.get("action") != "fail" or _levels.row_level(level_id) not in (gate.get("blocked") or []):
        return ""
    return "not run: Phase 0 failed in this run (%s not spent)" % not_spent(gate)


def record(status, run_id, cluster, fingerprint, checks_failed=None, cost=None, passed_at=None):
    """A Phase 0 record as it is written to the evidence directory and AWX artifacts."""
    return {
        "schema": RECORD_SCHEMA, "status": str(status).upper(), "run_id": str(run_id), "cluster": str(cluster),
        "passed_at": passed_at or (fingerprint or {}).get("date"), "fingerprint": fingerprint or {},
        "checks_failed": list(checks_failed or []), "cost": cost,
    }
