# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: report
type: aggregate
author:
  - rlstack.validation maintainers (@rlstack)
version_added: 1.0.0
short_description: Print the VALIDATION RESULTS table per cluster and write report.json, junit.xml and report.html
description:
  - At the end of the run reads the statistics C(rlstack_validation) that the levels record with
    M(ansible.builtin.set_stats) (C(per_host=false)) and prints, per cluster, the VALIDATION RESULTS table
    (Level, Name, Status, Time), failed checks indented under their level with the hint, and a footer
    such as C(9/9 passed in 3604s).
  - "Planned levels without a result are SKIPPED with a reason, for example 'not selected (--tags)' or 'not run: L0 failed'.
    A selected level without a result and without an earlier failure marks the run incomplete."
  - When a report directory is configured, writes C(report.json), C(junit.xml) and C(report.html) there
    atomically, also when the play failed.
  - An aggregate callback, so it also prints under AWX where the stdout callback is replaced.
  - Prints nothing for runs without validation statistics (for example C(cleanup.yml)), unless the playbook
    file name starts with C(validate).
requirements:
  - enable it with C(callbacks_enabled = rlstack.validation.report) in C(ansible.cfg)
options:
  report_dir:
    description:
      - Directory for C(report.json), C(junit.xml) and C(report.html); created when missing. No files when unset.
      - C(validation_report_dir) of the run (C(-e) or the inventory), which the playbook publishes as
        C(rlstack_validation_meta.report_dir) with M(ansible.builtin.set_stats), wins over this option, as
        C(-e) wins over C(ansible.cfg) and the environment in Ansible.
    type: path
    env:
      - name: RLSTACK_REPORT_DIR
    ini:
      - section: callback_rlstack_report
        key: report_dir
  report_html:
    description:
      - Also write C(report.html) next to C(report.json), one self-contained page with the level table, the cost,
        the node x check matrix, an isolation run's pair matrix and the busbw charts (C(docs/reports.md)).
      - C(validation_report_html) of the run, published as C(rlstack_validation_meta.report_html), wins over this
        option.
    type: bool
    default: true
    version_added: 1.1.0
    env:
      - name: RLSTACK_REPORT_HTML
    ini:
      - section: callback_rlstack_report
        key: report_html
  max_failed_checks:
    description: Failed checks printed under a failed level; the rest are in C(report.json).
    type: int
    default: 10
    env:
      - name: RLSTACK_REPORT_MAX_FAILED_CHECKS
    ini:
      - section: callback_rlstack_report
        key: max_failed_checks
"""

EXAMPLES = r"""
# ansible.cfg
# [defaults]
# callbacks_enabled = rlstack.validation.report
#
# [callback_rlstack_report]
# report_dir = ./reports

# or per run: RLSTACK_REPORT_DIR=./reports/$(date +%Y%m%dT%H%M%S) ansible-playbook playbooks/validate.yml
"""

import os
import time

from ansible import constants as C
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.callback import CallbackBase

from ansible_collections.rlstack.validation.plugins.module_utils.verdicts._report import (
    build_reports,
    plain,
    render_table_kinds,
    wrap_line,
    write_reports,
)
from ansible_collections.rlstack.validation.plugins.plugin_utils._console import terminal_width
from ansible_collections.rlstack.validation.plugins.plugin_utils._report_html import render_html

_COLORS = {"PASS": C.COLOR_OK, "FAIL": C.COLOR_ERROR, "SKIPPED": C.COLOR_SKIP, "NO_DATA": C.COLOR_ERROR}


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "rlstack.validation.report"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None):
        super().__init__(display=display)
        self._run_start = None
        self._playbook_name = ""

    def v2_playbook_on_start(self, playbook):
        if self._run_start is None:
            self._run_start = time.time()
        name = getattr(playbook, "_file_name", "") or ""
        if not self._playbook_name:
            self._playbook_name = os.path.basename(str(name))

    def v2_playbook_on_stats(self, stats):
        run_end = time.time()
        run = (getattr(stats, "custom", None) or {}).get("_run") or {}
        data = plain(run.get("rlstack_validation") or {})
        meta = plain(run.get("rlstack_validation_meta") or {})
        if not isinstance(data, dict):
            data = {}
        processed = sorted(str(h) for h in (getattr(stats, "processed", None) or {}))
        broken = [h for h in processed
                  if (getattr(stats, "failures", None) or {}).get(h) or (getattr(stats, "dark", None) or {}).get(h)]
        if data:
            extra_hosts = [h for h in broken if h not in data]
        elif self._playbook_name.startswith("validate"):
            extra_hosts = broken or processed
        else:
            return  # not a validation run: say nothing, write nothing

        reports = build_reports(data, extra_hosts, self._run_start, run_end)
        limit = self.get_option("max_failed_checks")
        if not reports:
            self._display.display("VALIDATION RESULTS: no level reported a result in this run", color=C.COLOR_ERROR)
        # on a terminal a longer line is wrapped at a space to its width; piped and under AWX, lines stay whole
        width = terminal_width()
        for report in reports:
            for line, kind in render_table_kinds(report, max_failed_checks=limit if limit is not None else 10,
                                                 width=width):
                self._display.display(line, color=_COLORS.get(kind))

        # The run's own setting (-e, inventory) wins over ansible.cfg and the environment.
        report_dir = (meta.get("report_dir") if isinstance(meta, dict) else None) or self.get_option("report_dir")
        if report_dir:
            try:
                html = meta.get("report_html") if isinstance(meta, dict) else None
                if html is None:
                    html = self.get_option("report_html")
                paths = write_reports(report_dir, reports, self._run_start, run_end,
                                      render_html if boolean(html, strict=False) else None)
            except (OSError, ValueError) as exc:
                self._display.warning("rlstack.validation.report: could not write the report to %s: %s"
                                      % (report_dir, exc))
            else:
                for line in wrap_line("Validation report written to %s" % ", ".join(paths), width):
                    self._display.display(line)
