# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""``bash -n`` on an inline script: the syntax errors bash itself finds, with their line in the script.

Runs on the host that holds the repository (where manifest_lint runs), bounded by a timeout; when bash cannot
be run (not installed, timed out) the answer is None and the rule stays quiet rather than guess.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import re
import subprocess

BASH_N_TIMEOUT_S = 10
# bash 5.2 `bash -n -c SCRIPT` (as the container runs it, `bash -c`), on stderr: "bash: -c: line 4: syntax error
# near unexpected token `fi'", then "bash: -c: line 4: `fi fi'" (the offending line). Reading stdin instead,
# bash prints no line numbers.
_ERROR = re.compile(r"^.*?: line (\d+): (.*)$")


def parse_bash_n(stderr):
    """[(line, message)] of `bash -n`'s stderr, one entry per line number, messages joined."""
    found = []
    for text in str(stderr or "").splitlines():
        match = _ERROR.match(text.strip())
        if not match:
            continue
        line, message = int(match.group(1)), match.group(2).strip()
        if found and found[-1][0] == line:
            found[-1] = (line, "%s: %s" % (found[-1][1], message))
        else:
            found.append((line, message))
    return found


def bash_n(script, bash="bash", timeout=BASH_N_TIMEOUT_S):
    """[(line, message)] of the syntax errors `bash -n` finds in script ([] when none); None when bash
    could not say (not installed, timed out)."""
    try:
        proc = subprocess.run([bash, "-n", "-c", str(script)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode == 0:
        return []
    stderr = proc.stderr.decode("utf-8", "replace")
    return parse_bash_n(stderr) or [(0, stderr.strip() or "bash -n exited %d" % proc.returncode)]
