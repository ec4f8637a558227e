# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Bounds on every request to the Kubernetes API server: connect/read timeouts, retries with backoff for
transient errors inside a total bound, and one sentence when the server stays unreachable.

Why this exists: kubernetes.core 6.2.0 has no option for request timeouts or retries (its AUTH_ARG_MAP in
plugins/module_utils/args_common.py lists every setting it passes to the client), and the kubernetes
client 34.1.0 passes ``timeout=None`` to urllib3 when a call has no ``_request_timeout``
(kubernetes/client/rest.py, RESTClientObject.request), which overrides urllib3's pool defaults and
``socket.setdefaulttimeout``: a stalled API server blocks a task forever. ``install()`` wraps
RESTClientObject.request (and the exec websocket's connect) in the module's process; the runner loads it
through roles/runner/files/api_guard/sitecustomize.py (docs/reliability.md).

Standard library only at import time; the kubernetes client is patched when it is imported.

Settings (environment of the module, set by playbooks/vars/api_bounds.yml from validation_api_*):
  RLSTACK_API_RUN_TIMEOUT_S      validation_api_timeout_s: how long an unreachable or stalled API server may
                                 hold the run. One call retries for call_bound_s() of it, and a mark of a
                                 server that did not answer stays fresh that long (a later one is from an
                                 earlier run). Unset: RUN_TIMEOUT_DEFAULT_S, the argument spec's default
                                 (roles/runner/meta/argument_specs.yml; a unit test keeps them equal)
  RLSTACK_API_TIMEOUT_S          total bound of one call, retries included (overrides call_bound_s(); tests)
  RLSTACK_API_CONNECT_TIMEOUT_S  connect timeout of one attempt (default 5)
  RLSTACK_API_READ_TIMEOUT_S     read timeout of one attempt (default 15)
  RLSTACK_API_STATE              a file that records an unreachable server across tasks (optional): while
                                 it is fresh a call fails at once with the recorded sentence; the record says
                                 until when it is fresh (`until`), for the tasks that report it
  RLSTACK_API_STATE_TTL_S        how long a mark stays fresh (overrides the run's bound; tests)
  RLSTACK_CLUSTER                the cluster's name in the inventory, for the message
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import re
import socket
import sys
import time

RUN_TIMEOUT_DEFAULT_S = 60.0
# What follows a call that gave up (rescue, verdict, report) within the run's bound: 14 to 21 s measured on
# the 2-core build machine, where two thirds of 60 s (40 s) once ended a stalled run after 60.6 s.
AFTER_FAILED_CALL_S = 25.0


def call_bound_s(run_timeout_s):
    """How long one call may retry within the run's bound: all of it but AFTER_FAILED_CALL_S, and at least half
    of it (35 s of 60)."""
    run_timeout_s = float(run_timeout_s)
    return float(max(run_timeout_s - AFTER_FAILED_CALL_S, -(-run_timeout_s // 2)))


DEFAULTS = {"total_s": call_bound_s(RUN_TIMEOUT_DEFAULT_S), "connect_s": 5.0, "read_s": 15.0,
            "state_ttl_s": RUN_TIMEOUT_DEFAULT_S}
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 5.0
TRANSIENT_STATUS = {429: "HTTP 429 (too many requests)", 500: "HTTP 500", 502: "HTTP 502", 503: "HTTP 503",
                    504: "HTTP 504"}
# Errors the API server returns while etcd elects a leader or restarts (status 500 or 504 with this text).
ETCD_TRANSIENT = ("etcdserver: leader changed", "etcdserver: request timed out", "etcdserver: no leader",
                  "etcdserver: too many requests")
# Names of urllib3 / http.client exceptions (matched by name: this module imports neither).
_CONNECT_NAMES = {"NewConnectionError": "connection refused", "ConnectTimeoutError": "connect timed out",
                  "NameResolutionError": "name not resolved"}
_READ_NAMES = {"ReadTimeoutError": "read timed out", "ProtocolError": "connection reset",
               "RemoteDisconnected": "connection closed by the server", "IncompleteRead": "connection reset",
               "SSLError": "TLS error"}
MESSAGE_START = "The Kubernetes API server of "
CHECK = ("check the endpoint in the kubeconfig, the network path to it (VPN, proxy, security groups) and "
         "that the credentials have not expired (aws eks get-token / kubeconfig token)")


class Bounds:
    """The bounds of one call, from the environment."""

    def __init__(self, total_s=None, connect_s=None, read_s=None, state_file="", cluster="", state_ttl_s=None):
        self.total_s = float(DEFAULTS["total_s"] if total_s is None else total_s)
        self.connect_s = float(DEFAULTS["connect_s"] if connect_s is None else connect_s)
        self.read_s = float(DEFAULTS["read_s"] if read_s is None else read_s)
        self.state_file = state_file or ""
        self.cluster = cluster or ""
        self.state_ttl_s = float(DEFAULTS["state_ttl_s"] if state_ttl_s is None else state_ttl_s)

    @classmethod
    def from_env(cls, env=None):
        env = os.environ if env is None else env

        def number(name):
            text = env.get(name, "")
            try:
                value = float(text)
            except ValueError:
                return None
            return value if value > 0 else None

        run_s = number("RLSTACK_API_RUN_TIMEOUT_S")
        total_s = number("RLSTACK_API_TIMEOUT_S")
        ttl_s = number("RLSTACK_API_STATE_TTL_S")
        return cls(total_s if total_s is not None else (call_bound_s(run_s) if run_s is not None else None),
                   number("RLSTACK_API_CONNECT_TIMEOUT_S"), number("RLSTACK_API_READ_TIMEOUT_S"),
                   env.get("RLSTACK_API_STATE", ""), env.get("RLSTACK_CLUSTER", ""),
                   ttl_s if ttl_s is not None else run_s)


def _chain(exc):
    """The exception, what it wraps (urllib3's .reason) and its causes, each once."""
    seen = []
    todo = [exc]
    while todo:
        item = todo.pop(0)
        if item is None or any(item is s for s in seen):
            continue
        seen.append(item)
        todo += [getattr(item, "reason", None) if isinstance(getattr(item, "reason", None), BaseException) else None,
                 item.__cause__, item.__context__]
    return seen


def _text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def classify(exc):
    """Why a failed request may succeed when tried again: (kind, reason), or None when it is not transient.

    kind is 'connect' (the request never reached the server: safe to repeat for any method), 'read' (it may
    have reached it: repeated only for reads and idempotent writes) or 'status' (the server answered 429/5xx
    or an etcd election error: it did not apply the request).
    """
    status = getattr(exc, "status", None)
    if isinstance(status, int) and status:
        body = _text(getattr(exc, "body", ""))
        if any(marker in body for marker in ETCD_TRANSIENT):
            return ("status", "etcd is electing a leader or restarting (HTTP %d)" % status)
        if status in TRANSIENT_STATUS:
            return ("status", TRANSIENT_STATUS[status])
        return None
    for item in _chain(exc):
        name = type(item).__name__
        if isinstance(item, ConnectionRefusedError) or name in _CONNECT_NAMES:
            return ("connect", _CONNECT_NAMES.get(name, "connection refused"))
        if isinstance(item, (ConnectionResetError, BrokenPipeError)):
            return ("read", "connection reset")
        if isinstance(item, (socket.timeout, TimeoutError)) or name in _READ_NAMES:
            return ("read", _READ_NAMES.get(name, "read timed out"))
    return None


def retry_after(exc):
    """Seconds the server asked to wait (Retry-After of a 429/503), or None."""
    headers = getattr(exc, "headers", None) or {}
    try:
        value = float(headers.get("Retry-After", ""))
    except (TypeError, ValueError, AttributeError):
        return None
    return value if value >= 0 else None


IDEMPOTENT = {"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"}


def may_retry(method, kind):
    """A POST that may have reached the server is not sent twice (it would fail with AlreadyExists)."""
    return kind in ("connect", "status") or str(method).upper() in IDEMPOTENT


def path_of(url):
    """The request's path without the query (the endpoint is in the message separately)."""
    match = re.match(r"^[a-z]+://[^/]+(/[^?]*)?", str(url))
    return (match.group(1) or "/") if match else str(url).split("?", maxsplit=1)[0]


def endpoint_of(url):
    match = re.match(r"^([a-z]+://[^/]+)", str(url))
    return match.group(1) if match else ""


class APIUnreachableError(Exception):
    """The API server did not answer within the bound. str() is the one sentence for the user."""

    def __init__(self, message, reason=""):
        super().__init__(message)
        self.reason = reason


def unreachable_message(cluster, method, url, seconds, attempts, reason):
    where = "cluster %s (%s)" % (cluster, endpoint_of(url)) if cluster else "the cluster at %s" % endpoint_of(url)
    return (MESSAGE_START + "%s did not answer %s %s within %.0f s (%d attempt%s, last: %s): %s."
            % (where, str(method).upper(), path_of(url), seconds, attempts, "" if attempts == 1 else "s",
               reason, CHECK))


def _state_fresh(path, ttl_s):
    """A mark younger than ttl_s (an older one is from an earlier run)."""
    try:
        return bool(path) and time.time() - os.path.getmtime(path) < ttl_s
    except OSError:
        return False


def _recorded_message(path):
    try:
        with open(path) as handle:
            return json.load(handle).get("message") or ""
    except (OSError, ValueError, AttributeError):
        return ""


def _mark(path, message, ttl_s=DEFAULTS["state_ttl_s"]):
    if not path:
        return
    now = time.time()
    try:
        with open(path, "w") as handle:
            json.dump({"since": now, "until": now + float(ttl_s), "message": message}, handle)
    except OSError:
        pass


def _clear(path):
    if path and os.path.exists(path):
        try:
            os.unlink(path)
        except OSError:
            pass


def bounded_call(send, method, url, bounds, clock=time.monotonic, sleep=time.sleep):
    """Call send(timeout) -> response until it succeeds, a non-transient error, or the total bound.

    timeout is (connect_s, read_s) for the attempt, never longer than what is left of the bound. Transient
    errors are retried with exponential backoff (0.5, 1, 2, 4, 5, 5 ... s, or the server's Retry-After);
    when the bound is spent a network failure becomes APIUnreachableError (one sentence), an HTTP error is
    raised as it came. While bounds.state_file is fresh (a call of this run gave up less than state_ttl_s ago)
    a call fails at once with that call's sentence, so the rest of the run (its cleanup) ends in seconds; the
    interrupt watchdog deletes what the run left once the server answers again (_run_guard.linger).
    """
    start = clock()
    if _state_fresh(bounds.state_file, bounds.state_ttl_s):
        raise APIUnreachableError(_recorded_message(bounds.state_file) or unreachable_message(
            bounds.cluster, method, url, 0, 0, "an earlier call of the run got no answer"), "known down")
    total = bounds.total_s
    delay = BACKOFF_FIRST_S
    attempts = 0
    while True:
        left = total - (clock() - start)
        timeout = (max(0.5, min(bounds.connect_s, left)), max(0.5, min(bounds.read_s, left)))
        attempts += 1
        try:
            response = send(timeout)
        except Exception as exc:  # pylint: disable=broad-except
            found = classify(exc)
            if found is None:
                if getattr(exc, "status", None):
                    _clear(bounds.state_file)  # the server answered
                raise
            wait = retry_after(exc)
            wait = min(BACKOFF_MAX_S, delay if wait is None else wait)
            spent = clock() - start
            if spent + wait >= total or not may_retry(method, found[0]):
                if found[0] == "status":
                    raise
                message = unreachable_message(bounds.cluster, method, url, spent, attempts, found[1])
                _mark(bounds.state_file, message, bounds.state_ttl_s)
                raise APIUnreachableError(message, found[1]) from None
            sleep(wait)
            delay = min(BACKOFF_MAX_S, delay * 2)
            continue
        _clear(bounds.state_file)
        return response


def _no_urllib3_retries(client):
    """urllib3 retries a failed connect or read 3 times by itself (Retry.DEFAULT) with the same timeout, which
    would multiply each attempt's bound by 4: the retries here replace them (redirects are still followed).
    A retry policy the user set on the client's Configuration is kept."""
    pool_manager = getattr(client, "pool_manager", None)
    pool_kw = getattr(pool_manager, "connection_pool_kw", None)
    if pool_kw is None or "retries" in pool_kw:
        return
    from urllib3.util.retry import Retry  # pylint: disable=import-outside-toplevel
    pool_kw["retries"] = Retry(total=None, connect=0, read=0, status=0, other=0, redirect=5)


_FORBIDDEN = re.compile(r'cannot (?P<verb>\w+) resource "(?P<resource>[^"]+)" in API group "(?P<group>[^"]*)"'
                        r'(?: in the namespace "(?P<namespace>[^"]+)"| at the cluster scope)')


def forbidden_sentence(message):
    """The API server's RBAC denial ('User "u" cannot delete resource "configmaps" in API group "" in the
    namespace "ns"', k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go) as the permission to
    add: 'forbidden: needs delete on configmaps in namespace ns'. None when the text is not such a denial."""
    match = _FORBIDDEN.search(message or "")
    if not match:
        return None
    resource = match.group("resource") + ("." + match.group("group") if match.group("group") else "")
    where = "in namespace %s" % match.group("namespace") if match.group("namespace") else "at the cluster scope"
    return ("forbidden: needs %s on %s %s (add it to the Role or ClusterRole of rbac/rlstack-validation.yml, "
            "docs/security.md)" % (match.group("verb"), resource, where))


def _explain_forbidden(exc):
    """Put the missing permission first in a 403's message (kubernetes.core prints the body's message)."""
    body = getattr(exc, "body", None)
    try:
        status = json.loads(body) if body else None
    except (TypeError, ValueError):
        return
    if not isinstance(status, dict):
        return
    sentence = forbidden_sentence(status.get("message"))
    if sentence and not str(status.get("message", "")).startswith("forbidden: needs"):
        status["message"] = "%s: %s" % (sentence, status.get("message"))
        exc.body = json.dumps(status)


def _guard_request(original):
    def request(self, method, url, *args, **kwargs):
        if kwargs.get("_request_timeout"):
            return original(self, method, url, *args, **kwargs)
        bounds = Bounds.from_env()
        _no_urllib3_retries(self)

        def send(timeout):
            return original(self, method, url, *args, **dict(kwargs, _request_timeout=timeout))

        try:
            return bounded_call(send, method, url, bounds)
        except Exception as exc:  # pylint: disable=broad-except
            if getattr(exc, "status", None) == 403:
                _explain_forbidden(exc)
            raise

    request.__wrapped__ = original
    return request


def _guard_websocket(original):
    """The exec/attach websocket: its connect (and TLS handshake) bounded; the stream itself is bounded by
    the task's timeout (a probe may print nothing for minutes)."""

    def create_websocket(configuration, url, headers=None):
        bounds = Bounds.from_env()
        previous = socket.getdefaulttimeout()
        socket.setdefaulttimeout(bounds.connect_s + bounds.read_s)
        try:
            websocket = original(configuration, url, headers)
        finally:
            socket.setdefaulttimeout(previous)
        sock = getattr(websocket, "sock", None)
        if sock is not None:
            sock.settimeout(None)
        return websocket

    create_websocket.__wrapped__ = original
    return create_websocket


def _patch_rest(module):
    module.RESTClientObject.request = _guard_request(module.RESTClientObject.request)


def _patch_ws_client(module):
    module.create_websocket = _guard_websocket(module.create_websocket)


PATCHES = {"kubernetes.client.rest": _patch_rest, "kubernetes.stream.ws_client": _patch_ws_client}


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader, patch):
        self._loader = loader
        self._patch = patch

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._patch(module)


class _Finder(importlib.abc.MetaPathFinder):
    """Patches the kubernetes client's modules as they are imported (most modules never import them)."""

    def find_spec(self, fullname, path, target=None):
        patch = PATCHES.get(fullname)
        if patch is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _PatchingLoader(spec.loader, patch)
        return spec


def install():
    """Patch the kubernetes client of this process (now if it is imported already, else when it is)."""
    if any(isinstance(finder, _Finder) for finder in sys.meta_path):
        return
    for name, patch in PATCHES.items():
        if name in sys.modules:
            patch(sys.modules[name])
    sys.meta_path.insert(0, _Finder())
