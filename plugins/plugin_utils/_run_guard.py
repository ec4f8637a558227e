# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Cleanup at once when a run is interrupted: a watchdog process outside ansible-playbook's process group.

Why a separate process: an interrupted ansible-playbook runs none of the playbook's cleanup. Ctrl-C raises
KeyboardInterrupt in the controller (ansible/executor/task_queue_manager.py, _signal_handler, ansible-core
2.19), SIGTERM and SIGHUP end it, and an AWX/ansible-runner cancel sends SIGKILL to its whole process group
(ansible_runner/runner.py, Runner.handle_termination, ansible-runner 2.4.3), so no code inside it may run.
The callback rlstack.validation.interrupt_cleanup starts this watchdog in a session of its own
(start_new_session) with a pipe on its stdin and tells it each run's anchor as it is created. When the pipe
closes (the controller is gone, however it ended) before the run said "end", the watchdog deletes every
object labelled with the run id in the run's namespace (and the namespace if the run created it), bounded
in time; when it cannot reach the API server, the run's lease (the anchor Job's deadline) remains the
backstop. While the run lives it also holds the run's renewed lease (_run_lease.py): when the watchdog dies
with the controller (an AWX cancel kills both), Kubernetes deletes the run's objects once that lease runs out.

Protocol, one JSON object per line: {"event": "run", "host", "namespace", "run_id", "anchor", "auth", "kinds",
"namespace_created", "lease_s", "image"}, {"event": "auth", "host", "auth"} (cluster access the module arguments masked),
{"event": "done", "host"} (that cluster's run removed its objects itself),
{"event": "unreachable", "host"} (a call to that cluster's API server gave up), {"event": "end"} (the
playbook ended: nothing to do, unless a cluster was unreachable and its run not done: then linger()).
"""

from __future__ import annotations

import glob
import json
import os
import re
import select
import sys
import time

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _api_guard, _cluster_access, _objects_absent
from ansible_collections.rlstack.validation.plugins.plugin_utils import _run_lease

RUN_LABEL = _objects_absent.RUN_LABEL
UNREACHABLE_MARK = _api_guard.MESSAGE_START
# The whole cleanup of one cluster must end within this bound (the 30 s, less startup).
CLEANUP_BOUND_S = 25.0
# After a run that lost its API server ended, how long the watchdog keeps trying to delete what it left.
LINGER_S = float(os.environ.get("RLSTACK_CLEANUP_LINGER_S", "300"))
# kubernetes.core's auth options (plugins/module_utils/args_common.py AUTH_ARG_MAP values) that may be passed on.
AUTH_KEYS = ("kubeconfig", "context", "host", "api_key", "username", "password", "validate_certs", "ca_cert",
             "client_cert", "client_key", "proxy", "no_proxy", "proxy_headers", "persist_config",
             "impersonate_user", "impersonate_groups")
NO_LOG_MARK = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"


def auth_from_module_args(module_args):
    """The auth options of a kubernetes.core call, without values Ansible masked (no_log) or left unset:
    those come from the environment (K8S_AUTH_*) in the watchdog as they did in the module."""
    out = {}
    for key in AUTH_KEYS:
        value = (module_args or {}).get(key)
        if value is None or value == NO_LOG_MARK or (isinstance(value, str) and NO_LOG_MARK in value):
            continue
        out[key] = value
    return out


def anchor_of(result):
    """(namespace, run_id, anchor name) when a kubernetes.core result is the creation of a run's anchor Job."""
    obj = (result or {}).get("result")
    if not isinstance(obj, dict) or obj.get("kind") != "Job":
        return None
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    if labels.get("app.kubernetes.io/component") != "anchor" or \
            labels.get("app.kubernetes.io/managed-by") != "rlstack.validation" or not labels.get(RUN_LABEL):
        return None
    return meta.get("namespace") or "default", labels[RUN_LABEL], meta.get("name") or ""


def collection_path(api_version, kind, namespace):
    return _objects_absent.collection_path(api_version, kind, namespace)


class Cleaner:
    """Deletes one run's objects through an ApiClient of the kubernetes client (bounded by the API guard)."""

    def __init__(self, api_client, clock=time.monotonic):
        self.api = api_client
        self.clock = clock

    def _call(self, method, path, query=None, body=None):
        data = self.api.call_api(path, method, query_params=list((query or {}).items()), body=body,
                                 header_params={"Accept": "application/json", "Content-Type": "application/json"},
                                 response_type="object", auth_settings=["BearerToken"], _return_http_data_only=True,
                                 _request_timeout=(5, 10))
        return data or {}

    def _delete(self, path):
        """1 when deleted, 0 when it was gone already (its owner's deletion took it)."""
        try:
            self._call("DELETE", path, None, _objects_absent.delete_options())
        except Exception as exc:  # pylint: disable=broad-except
            if getattr(exc, "status", None) == 404:
                return 0
            raise
        return 1

    def listed(self, run, kind):
        """(name, being deleted) of each of the run's objects of this kind."""
        try:
            listed = self._call("GET", collection_path(kind["api_version"], kind["kind"], run["namespace"]),
                                {"labelSelector": "%s=%s" % (RUN_LABEL, run["run_id"])})
        except Exception as exc:  # pylint: disable=broad-except
            if getattr(exc, "status", None) == 404:  # the kind (an MPIJob CRD) is not installed
                return []
            raise
        return [(item["metadata"]["name"], bool((item.get("metadata") or {}).get("deletionTimestamp")))
                for item in listed.get("items") or []]

    def delete_run(self, run, bound_s=CLEANUP_BOUND_S):
        """Delete every object of the run, owners first; wait (bounded) until they are gone, deleting again
        what appeared meanwhile (a controller that had not yet seen its owner's deletion creates one more
        pod, which the garbage collector of a busy control plane may take longer than the bound to remove).
        Returns (deleted count, objects left, error text)."""
        start = self.clock()
        deleted, error, left = 0, "", []
        while True:
            left = []
            for kind in run["kinds"]:
                try:
                    objects = self.listed(run, kind)
                    path = collection_path(kind["api_version"], kind["kind"], run["namespace"])
                    # one DELETE per object, as the level cleanup does (objects_absent): `delete` is the verb the
                    # RBAC grants, not `deletecollection`
                    for name in [name for name, deleting in objects if not deleting]:
                        deleted += self._delete("%s/%s" % (path, name))
                    left += ["%s/%s" % (kind["kind"], name) for name, _deleting in objects]
                except Exception as exc:  # pylint: disable=broad-except
                    error = str(exc).splitlines()[0][:300]
            # an error (the server gone, a kind not permitted) will not go away within the bound
            if not left or error or self.clock() - start >= bound_s:
                break
            time.sleep(0.5)
        if run.get("namespace_created") and not error:
            try:
                self._call("DELETE", "/api/v1/namespaces/%s" % run["namespace"], None,
                           {"propagationPolicy": "Background"})
            except Exception as exc:  # pylint: disable=broad-except
                error = str(exc).splitlines()[0][:300]
        return deleted, left, error


def api_client_for(auth):
    """A kubernetes ApiClient for the access the run's modules used: `auth` (the module arguments and the plan's
    runner_cleanup_auth) resolved with the watchdog's environment, which is the controller's (K8S_AUTH_*,
    KUBECONFIG, HOME), by the run's one rule (_cluster_access.resolve), and configured by kubernetes.core's own
    functions, as its modules configure theirs."""
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import (  # pylint: disable=import-outside-toplevel
        _create_auth_spec, _create_configuration, _create_headers)
    import kubernetes  # pylint: disable=import-outside-toplevel
    resolved = _cluster_access.resolve(auth)
    # impersonation is a header, not part of the access (kubernetes.core's _create_headers reads it the same way)
    options = dict(resolved["auth"], **{k: v for k, v in (auth or {}).items() if k.startswith("impersonate_")})
    if resolved["mode"] == "kubeconfig" and resolved["kubeconfig"]:
        options["kubeconfig"] = resolved["kubeconfig"]
    configuration = _create_configuration(_create_auth_spec(**options))
    client = kubernetes.client.ApiClient(configuration)
    for header, value in _create_headers(**options).items():
        client.set_default_header(header, ",".join(value) if isinstance(value, list) else value)
    return client


def scratch_files(host, run_id, tmpdir=None):
    """The controller files a run keeps between its tasks, which its own end removes: job_run's state
    (roles/runner/tasks/jobs_kubernetes.yml) and the API guard's record (playbooks/vars/api_bounds.yml), both named
    rlstack-<what>-<host>-<run id>... in $TMPDIR with every other character made '_'."""
    folder = glob.escape(tmpdir or os.environ.get("TMPDIR") or "/tmp")
    stem = glob.escape(re.sub(r"[^A-Za-z0-9_.-]", "_", "%s-%s" % (host, run_id)))
    return sorted(glob.glob(os.path.join(folder, "rlstack-job-run-%s-*.json" % stem))
                  + glob.glob(os.path.join(folder, "rlstack-api-%s" % stem)))


def remove_scratch(host, run_id, tmpdir=None):
    """An interrupted run leaves none of its controller files behind either."""
    for path in scratch_files(host, run_id, tmpdir):
        try:
            os.unlink(path)
        except OSError:
            pass


def cleanup(runs, done, say, client_for=api_client_for):
    """Delete the objects of every run not marked done; one line per cluster on say()."""
    for host, run in runs.items():
        if host in done:
            continue
        remove_scratch(host, run["run_id"])
        started = time.monotonic()
        try:
            deleted, left, error = Cleaner(client_for(run.get("auth") or {})).delete_run(run)
        except Exception as exc:  # pylint: disable=broad-except
            deleted, left, error = 0, [], str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        took = time.monotonic() - started
        if left or error:
            say("rlstack.validation: the run %s on %s was interrupted and its objects in namespace %s could not all "
                "be deleted (%s); the run's lease deletes them when the anchor Job's deadline passes, or run "
                "playbooks/cleanup.yml -e validation_run_id=%s."
                % (run["run_id"], host, run["namespace"], error or "still there after %.0f s: %s"
                   % (took, ", ".join(left[:5])), run["run_id"]))
        else:
            say("rlstack.validation: the run %s on %s was interrupted; its %d object(s) in namespace %s were deleted "
                "in %.1f s." % (run["run_id"], host, deleted, run["namespace"], took))


def linger(runs, say, client_for=api_client_for, linger_s=LINGER_S, every_s=5.0):
    """The run ended while its API server was unreachable, so its own cleanup failed: retry in the background
    for linger_s, so that a server that comes back soon gets the objects deleted then, not at the lease."""
    deadline = time.monotonic() + linger_s
    left = dict(runs)
    while left and time.monotonic() < deadline:
        for host, run in list(left.items()):
            try:
                deleted, remaining, error = Cleaner(client_for(run.get("auth") or {})).delete_run(run)
            except Exception:  # pylint: disable=broad-except
                continue
            if not remaining and not error:
                say("rlstack.validation: the API server of %s answers again; the %d object(s) the run %s left in "
                    "namespace %s were deleted." % (host, deleted, run["run_id"], run["namespace"]))
                del left[host]
        if left:
            time.sleep(every_s)


def watch(stream, parent_pid, say, client_for=api_client_for, poll_s=0.5, linger_s=None):
    """Read events until the stream closes or the parent is gone; then clean up unless the run ended.

    An "unreachable" event (a call of that cluster gave up: the API guard's sentence) makes the watchdog
    retry the cleanup after a normal end too (linger), when the run could not remove its objects itself.
    """
    linger_s = LINGER_S if linger_s is None else linger_s
    runs, done, unreachable, buffer = {}, set(), set(), b""
    leases = _run_lease.Keeper(client_for, say)
    fd = stream.fileno()
    while True:
        leases.tick()
        ready = select.select([fd], [], [], poll_s)[0]
        if not ready:
            try:
                os.kill(parent_pid, 0)
                continue
            except OSError:
                break  # the controller is gone, its pipe kept open by a stray child
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            try:
                event = json.loads(line.decode("utf-8"))
            except ValueError:
                continue
            kind = event.get("event")
            if kind == "end":
                lost = [h for h in runs if h in unreachable and h not in done]
                # a lost cluster's lease is left to run out: Kubernetes then deletes what the run left there
                for host in [h for h in runs if h not in lost]:
                    leases.release(host, anchor_gone=False)
                if not lost:
                    return "end"
                linger({h: runs[h] for h in lost}, say, client_for, linger_s)
                return "lingered"
            if kind == "unreachable":
                unreachable.add(event.get("host"))
            elif kind == "auth" and event.get("host") in runs:
                # the access the run's modules used, where the module arguments masked it (kubeconfig is no_log)
                runs[event["host"]]["auth"] = dict(event.get("auth") or {}, **runs[event["host"]].get("auth") or {})
                # the run's access is complete now (the plan sends it just after the anchor)
                if event["host"] not in leases.leases:
                    leases.take(event["host"], runs[event["host"]])
            elif kind == "run":
                runs[event["host"]] = event
                done.discard(event["host"])
            elif kind == "done":
                done.add(event.get("host"))
                leases.release(event.get("host"), anchor_gone=True)
    leases.forget()
    if any(host not in done for host in runs):
        cleanup(runs, done, say, client_for)
        return "cleaned"
    return "nothing"


def main():
    _api_guard.install()
    os.environ.setdefault("RLSTACK_API_TIMEOUT_S", "10")

    def say(text):
        try:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
        except (OSError, AttributeError, ValueError):
            pass  # the terminal is gone (SIGHUP), or there is no stderr at all

    watch(sys.stdin.buffer, int(sys.argv[1]), say)
    return 0


if __name__ == "__main__":
    sys.exit(main())
