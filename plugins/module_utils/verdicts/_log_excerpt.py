# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a failed L5/L6 run's log says about its cause, with secrets redacted (docs/verdicts.md, "Excerpt").

From a Job pod's (or the host run's) log: the end of the last Python traceback (the frame line above the
exception, the code line, the exception line), the first CUDA/NCCL/out-of-memory error line, and the last
lines. Every line is redacted first: the values of the run's environment variables whose names look
secret, and common token shapes (Hugging Face, AWS key ids, GitHub, bearer tokens, URL passwords,
NAME=value pairs whose NAME looks secret).

Standard library only (run_example.py ships it to the host next to _frameworks.py).
"""

from __future__ import annotations

import re

LAST_LINES = 20  # the log's last lines an excerpt keeps
MAX_LINE = 300  # characters of one excerpt line
MIN_SECRET = 6  # shorter values (a flag, a port) are not redacted: they would blot out ordinary text
REDACTED = "[redacted]"

# Names of environment variables whose values are secrets.
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|PRIVATE|API_?KEY|ACCESS_?KEY|(^|_)KEY($|_)|"
                         r"(^|_)AUTH($|_)|SESSION", re.IGNORECASE)

# Token shapes redacted wherever they appear (the value only; the name stays readable).
TOKEN_PATTERNS = [
    re.compile(r"\bhf_[A-Za-z0-9]{20,}"),  # Hugging Face user access tokens
    re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),  # AWS access key ids
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),  # GitHub tokens
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),  # Slack tokens
    re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),  # user:password@ in a URL
]
# NAME=value / NAME: value / "name": "value" where NAME looks secret: the value goes.
SECRET_PAIR = re.compile(r"(?i)(\b([\w.-]*(?:token|secret|passw(?:or)?d|api_?key|access_?key|credentials?))"
                         r"[\"']?[ \t]*[:=][ \t]*[\"']?)([^\s\"',}]{%d,})" % MIN_SECRET)
# Tokenizer settings that end in `token` but hold no secret (pad_token='<|endoftext|>').
NOT_SECRET_NAME = re.compile(r"(?i)(?:pad|eos|bos|unk|sep|cls|mask)_token$")

# Prefixes that launchers put in front of every line of a rank or actor: torchrun's `[rank0]: `,
# Ray's `(TaskRunner pid=123, ip=10.0.0.1) `.
LINE_PREFIX = re.compile(r"^(?:\[rank\d+\]:\s?|\([\w.:-]+ pid=\d+(?:, ip=[\d.]+)?\)\s?)")
TRACEBACK_START = "Traceback (most recent call last):"
FRAME = re.compile(r"^\s+File \"[^\"]*\", line \d+")
# The first line of these kinds is the run's hardware or communication cause.
ERROR_PATTERNS = [
    re.compile(r"CUDA out of memory|OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED|\bOOMKilled\b"),
    re.compile(r"CUDA error|CUDA driver error|cudaError\w*|CUBLAS_STATUS_\w+|CUDNN_STATUS_\w+|cuDNN error|"
               r"device-side assert|illegal memory access|uncorrectable ECC"),
    re.compile(r"NCCL error|NCCL WARN|nccl\w*Error\b|ncclInternalError|ncclSystemError|ncclRemoteError|"
               r"ncclUnhandledCudaError|ncclInvalidUsage|Watchdog caught collective operation timeout|"
               r"NCCL communicator was aborted"),
    re.compile(r"Caught signal \d+|Segmentation fault|SIGSEGV|core dumped"),  # a crash inside CUDA/NCCL code
]


def secret_values(env):
    """The values of the variables in `env` ({name: value} or [{name, value}]) whose names look secret."""
    if isinstance(env, (list, tuple)):
        env = dict((str(e.get("name")), e.get("value")) for e in env if isinstance(e, dict) and e.get("name"))
    values = []
    for name, value in sorted((env or {}).items()):
        value = "" if value is None else str(value)
        if SECRET_NAME.search(str(name)) and len(value) >= MIN_SECRET:
            values.append(value)
    # Longest first, so a value that contains another is redacted whole.
    return sorted(set(values), key=len, reverse=True)


def redact(text, secrets=()):
    """`text` with every secret value and token shape replaced by [redacted]."""
    text = "" if text is None else str(text)
    for value in secrets or ():
        if value:
            text = text.replace(value, REDACTED)
    for pattern in TOKEN_PATTERNS:
        text = pattern.sub(REDACTED, text)
    return SECRET_PAIR.sub(lambda m: m.group(0) if NOT_SECRET_NAME.search(m.group(2)) else m.group(1) + REDACTED,
                           text)


def log_lines(log):
    """The log's non-blank lines; tqdm's carriage-return updates count as lines of their own."""
    return [line.rstrip() for line in re.split(r"\r\n|\r|\n", log or "") if line.strip()]


def _bare(line):
    return LINE_PREFIX.sub("", line, count=1)


def traceback_tail(lines):
    """The end of the last Python traceback in `lines`: [frame line, code line, exception line] (as printed).

    The exception line is the first line after the frames that is not indented; the frame line is the last
    `File "...", line N, in f` above it, with its code line (Python 3.11's ^^^^ markers are skipped)."""
    starts = [i for i, line in enumerate(lines) if _bare(line).strip().endswith(TRACEBACK_START)]
    if not starts:
        return []
    frame, code = None, None
    for line in lines[starts[-1] + 1:]:
        bare = _bare(line)
        if FRAME.match(bare):
            frame, code = line, None
            continue
        if bare.startswith((" ", "\t")):
            if frame is not None and code is None and not set(bare.strip()) <= set("^~ "):
                code = line
            continue
        if bare.startswith("During handling of the above exception") or \
                bare.startswith("The above exception was the direct cause"):
            continue
        return [x for x in (frame, code, line) if x is not None]
    return [x for x in (frame, code) if x is not None]


def first_error_line(lines):
    """The first CUDA, NCCL or out-of-memory error line of `lines`, or None."""
    for line in lines:
        if any(pattern.search(line) for pattern in ERROR_PATTERNS):
            return line
    return None


def _cut(line):
    return line if len(line) <= MAX_LINE else line[:MAX_LINE - 3] + "..."


def excerpt(log, env=None, last=LAST_LINES):
    """What a failed run's log shows of its cause, redacted: a list of lines.

    The traceback's end (frame, code, exception), then the first CUDA/NCCL/OOM error line (when it is not
    one of those), then `last lines of the log:` and the log's last `last` lines. Empty for an empty log."""
    secrets = secret_values(env)
    lines = [redact(line, secrets) for line in log_lines(log)]
    if not lines:
        return []
    out = traceback_tail(lines)
    error = first_error_line(lines)
    if error is not None and error not in out:
        out.append(error)
    tail = lines[-int(last):] if int(last) > 0 else []
    if tail:
        out.append("last %d line%s of the log:" % (len(tail), "" if len(tail) == 1 else "s"))
        out.extend(tail)
    return [_cut(line) for line in out]
