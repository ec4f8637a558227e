# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

"""The evidence directory on the controller: Phase 0 records as JSON files (controller only).

Layout: ``<validation_evidence_dir>/phase0/<cluster>-<run id>.json``, one record per Phase 0 run
(``_gate.record``). Standard library only.
"""

from __future__ import annotations

import glob
import json
import os

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._gate import RECORD_SCHEMA, parse_iso

PHASE0_DIR = "phase0"


def read_records(directory):
    """(records newest first, problems): every readable Phase 0 record under directory/phase0/."""
    directory = os.path.expanduser(str(directory or ""))
    records, problems = [], []
    for path in sorted(glob.glob(os.path.join(directory, PHASE0_DIR, "*.json"))):
        try:
            with open(path, encoding="utf-8") as handle:
                record = json.load(handle)
        except (OSError, ValueError) as exc:
            problems.append("%s: %s" % (path, exc))
            continue
        if not isinstance(record, dict) or record.get("schema") != RECORD_SCHEMA:
            problems.append("%s: not a Phase 0 record (schema %r)" % (path, RECORD_SCHEMA))
            continue
        record["source"] = path
        records.append(record)
    records.sort(key=lambda r: parse_iso(r.get("passed_at")) or 0.0, reverse=True)
    return records, problems
