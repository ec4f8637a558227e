# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run one call per item with a bounded number in flight and one deadline for all (standard library only).

Used to read many pods' logs at once: the API server sees at most `workers` requests of the run at a
time, and a stalled request cannot hold the run past the deadline.
"""

from __future__ import annotations

import concurrent.futures
import copy
import time


class CallError(Exception):
    """A failed call whose text is already one line for the user: bounded_map records it without its class name."""


def bounded_map(call, items, workers=16, deadline_s=60.0, clock=time.monotonic):
    """Call `call(item)` for every item, at most `workers` at a time, all within `deadline_s` seconds.

    Returns one entry per item, in the order of `items`: {"item", "ok", "value", "error", "timed_out"}.
    An exception becomes ok=False with its text in `error`; an item still running or not yet started
    at the deadline becomes timed_out=True (its thread is left to finish on its own: Python threads
    cannot be killed, so calls must carry their own request timeout too).
    """
    items = list(items)
    workers = max(1, min(int(workers), len(items) or 1))
    out = [{"item": item, "ok": False, "value": None, "error": "", "timed_out": False} for item in items]
    if not items:
        return out
    end = clock() + max(0.0, float(deadline_s))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rlsv-fanout")
    try:
        futures = {pool.submit(call, item): i for i, item in enumerate(items)}
        pending = set(futures)
        while pending:
            left = end - clock()
            if left <= 0:
                break
            done, pending = concurrent.futures.wait(pending, timeout=left,
                                                    return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                entry = out[futures[future]]
                try:
                    entry["value"] = future.result()
                    entry["ok"] = True
                except CallError as exc:
                    entry["error"] = str(exc)
                except Exception as exc:  # one failed call must not hide the others' results
                    entry["error"] = "%s: %s" % (type(exc).__name__, exc) if str(exc) else type(exc).__name__
        for future in pending:
            future.cancel()
            entry = out[futures[future]]
            entry["timed_out"] = True
            entry["error"] = "no answer within %.0f s" % float(deadline_s)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return out


def pooled_core_api(kubernetes, k8s_client, pool_size):
    """A CoreV1Api of the `kubernetes` package on a copy of the module's client configuration, with a connection
    pool as big as the fan-out (urllib3 keeps 4 by default, so 16 calls in flight would reconnect each time).
    The package is passed in, so that this file needs only the standard library."""
    configuration = copy.copy(k8s_client.configuration)
    configuration.connection_pool_maxsize = max(int(pool_size), 1)
    api_client = kubernetes.client.ApiClient(configuration)
    api_client.default_headers.update(getattr(k8s_client.client.client, "default_headers", {}) or {})
    return kubernetes.client.CoreV1Api(api_client)
