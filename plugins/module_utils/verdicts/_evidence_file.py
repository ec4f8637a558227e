# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One record of the evidence directory written whole (the evidence_file module and action; standard library only).

Why: a Phase 0 record or a baseline was two module runs of ansible.builtin.file and ansible.builtin.copy (a copy with
content is itself a stat and a copy module run), about 2 s on 2 cores for a file of a few kB on the controller. The
record goes into a temporary file of its directory and is renamed over the old one, so a reader (the next run's
Phase 0 gate) never sees half a record, and the directory is made first when missing.
"""

from __future__ import annotations

import json
import os
import tempfile


def render(content):
    """The file's text: a string as it is, anything else as indented, key-sorted JSON with a final newline."""
    if isinstance(content, str):
        return content
    return json.dumps(content, indent=4, sort_keys=True) + "\n"


def write(path, content, mode=0o644, check_mode=False):
    """Write `content` (render()) to `path`, making its directory (0755) when missing: {changed, path, bytes}.
    Unchanged content writes nothing. Raises OSError with the file system's reason."""
    text = render(content).encode("utf-8")
    try:
        with open(path, "rb") as current:
            changed = current.read() != text
    except FileNotFoundError:
        changed = True
    out = {"changed": changed, "path": path, "bytes": len(text)}
    if not changed or check_mode:
        return out
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, mode=0o755, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return out


def argument_spec():
    """The module's and the action's options (their docs: plugins/modules/evidence_file.py)."""
    return dict(path=dict(type="path", required=True), content=dict(type="raw", required=True),
                mode=dict(type="raw", default="0644"))


def file_mode(value):
    """A mode given as octal text ('0644') or a number (0o644)."""
    if isinstance(value, int):
        return value
    return int(str(value), 8)
