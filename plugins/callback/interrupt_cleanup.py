# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
name: interrupt_cleanup
type: aggregate
author:
  - rlstack.validation maintainers (@rlstack)
version_added: 1.1.0
short_description: Delete a validation run's objects at once when the run is interrupted
description:
  - An interrupted ansible-playbook (Ctrl-C, SIGTERM, SIGHUP from a closed terminal, an AWX cancel, which
    sends SIGKILL to its process group) runs none of the playbook's cleanup. When a run creates its anchor
    Job, this callback starts a watchdog process in a session of its own and tells it the run's id, namespace
    and the cluster access the run used. If ansible-playbook ends before the playbook's end, the watchdog
    deletes every object labelled with the run id (within about 25 s) and prints one line saying what it did.
  - A Ctrl-C that ansible-core loses is honoured. ansible-core 2.19 turns SIGINT into KeyboardInterrupt in its
    signal handler, which first resets the handler to the default; when the signal lands while Python runs an
    at-fork hook (each task forks a worker), the exception is printed as "Exception ignored" and the run goes on,
    with no handler left. This callback sees that state at the next task or result and raises the interrupt
    there, so the run ends as interrupted and the watchdog deletes its objects.
  - A Ctrl-C after which ansible-playbook does not stop is bounded. An interrupt that lands at a bad moment can
    leave ansible-core waiting forever in its own shutdown; once SIGINT has arrived, ansible-playbook is ended
    (exit code 99, as for an interrupt) if it is still running 20 s later (E(RLSTACK_INTERRUPT_EXIT_S)), and the
    watchdog deletes the run's objects.
  - When the API server cannot be reached, nothing is deleted and the run's lease (the anchor Job's deadline)
    deletes the objects later, as before.
  - While the run lives the watchdog also renews the run's short lease (a Job that owns the anchor,
    C(validation_renewed_lease_s), default 25 s, renewed every 2 s). Under AWX with container isolation a cancel
    removes the job's container, watchdog included; there Kubernetes deletes the objects once that lease runs out.
requirements:
  - enable it with C(callbacks_enabled = rlstack.validation.interrupt_cleanup) in C(ansible.cfg)
  - the kubernetes Python client and kubernetes.core on the controller (as for the run itself)
"""

EXAMPLES = r"""
# ansible.cfg
# [defaults]
# callbacks_enabled = rlstack.validation.report, rlstack.validation.interrupt_cleanup
"""

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time

from ansible.plugins.callback import CallbackBase

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _objects_absent
from ansible_collections.rlstack.validation.plugins.plugin_utils import _run_guard, _run_lease

_HERE = os.path.dirname(os.path.abspath(__file__))
_COLLECTION = os.path.dirname(os.path.dirname(_HERE))
_WATCHDOG = os.path.join(_COLLECTION, "plugins", "plugin_utils", "_run_guard.py")
# The directory that holds ansible_collections/rlstack/validation (a checkout's .collections, or an install path).
_OWN_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(_COLLECTION)))


def _runner_kinds():
    """What a run may create, from its one home (plugins/module_utils/k8s/_objects_absent.py, RUN_KINDS)."""
    return _objects_absent.run_kinds()


def _collections_root():
    """The directory that holds ansible_collections/kubernetes/core, for the watchdog's sys.path. Found, not imported:
    importing kubernetes.core's client module imports the kubernetes package, 0.4-0.6 s of the controller's CPU."""
    spec = importlib.util.find_spec("ansible_collections.kubernetes.core")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the kubernetes.core collection is not installed")
    # .../ansible_collections/kubernetes/core: three levels up
    return os.path.abspath(os.path.join(list(spec.submodule_search_locations)[0], *([os.pardir] * 3)))


# The results this callback reads: kubernetes.core.k8s (the anchor Job, the namespace), objects_absent (the run's end
# removes the anchor with it; a level's cleanup) and the set_fact that carries the cleanup's cluster access. Reading
# any other result makes ansible-core 2.19 convert the whole of it for this callback (executor/task_result.py,
# CallbackTaskResult.result): over 256 nodes a node list or the checks of a level, seconds for nothing
# (docs/performance.md).
_K8S_ACTIONS = frozenset(("kubernetes.core.k8s", "k8s"))
_SET_FACT_ACTIONS = frozenset(("ansible.builtin.set_fact", "set_fact"))
_ABSENT_ACTIONS = frozenset(("rlstack.validation.objects_absent", "objects_absent"))
# The label that marks the anchor Job (roles/runner/templates/anchor_job.yml.j2).
_ANCHOR_SELECTOR = "app.kubernetes.io/component=anchor"


def _may_concern_the_run(task):
    action = getattr(task, "action", None)
    if action in _K8S_ACTIONS or action in _ABSENT_ACTIONS:
        return True
    return action in _SET_FACT_ACTIONS and "runner_cleanup_auth" in (getattr(task, "args", None) or {})


def _deleted_the_anchor(args, anchor):
    """kubernetes.core.k8s deleted the anchor Job `anchor` (and, waiting, everything it owns)."""
    return args.get("state") == "absent" and args.get("kind") == "Job" and args.get("name") == anchor


def _removed_the_anchor(args, result):
    """objects_absent removed the run's anchor Job (the run's end, tasks/finish_run.yml) and nothing was left."""
    selectors = args.get("label_selectors") or []
    return _ANCHOR_SELECTOR in selectors and any(str(s).startswith(_run_guard.RUN_LABEL + "=") for s in selectors) \
        and not result.get("left") and not result.get("timed_out")


def _run_lease_of(result):
    """The renewed lease the anchor asks for (its annotation; 0 or none: no renewed lease) and its image."""
    obj = result.get("result") or {}
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    try:
        lease_s = int(annotations.get(_run_lease.LEASE_ANNOTATION) or 0)
    except ValueError:
        lease_s = 0
    containers = ((((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or [{}])
    return {"lease_s": lease_s, "image": containers[0].get("image") or ""}


def interrupt_was_lost(armed):
    """True when the controller received SIGINT but goes on: ansible-core's handler (TaskQueueManager._signal_handler,
    2.19) resets SIGINT to the default before it raises KeyboardInterrupt, and nothing else in the controller sets it
    back, so a default handler after the run had armed one means an interrupt whose exception was swallowed (raised
    inside an at-fork hook: "Exception ignored in: <function _releaseLock>", seen on a loaded machine)."""
    return armed and signal.getsignal(signal.SIGINT) is signal.SIG_DFL and \
        threading.current_thread() is threading.main_thread()


# How long ansible-playbook may take to stop after SIGINT before it is ended (see DOCUMENTATION).
INTERRUPT_EXIT_S = float(os.environ.get("RLSTACK_INTERRUPT_EXIT_S") or 20)
# ansible-playbook's own exit code for an interrupted run (ansible/cli/__init__.py, 2.19: "User interrupted").
INTERRUPTED_RC = 99


def _end_if_still_running(interrupted, bound_s):
    interrupted.wait()
    time.sleep(bound_s)
    try:
        # os.write, not sys.stderr: ansible-core's Display guards sys.stdout/sys.stderr with a lock, which the
        # interrupted main thread may hold forever (seen: interrupted inside a print)
        os.write(2, ("rlstack.validation: ansible-playbook did not stop within %.0f s of Ctrl-C (ansible-core can "
                     "hang when the interrupt lands at a bad moment); ending it now, the interrupt watchdog deletes "
                     "the run's objects\n" % bound_s).encode())
    finally:
        os._exit(INTERRUPTED_RC)  # pylint: disable=protected-access


def bound_the_stop_after_ctrl_c(bound_s=INTERRUPT_EXIT_S):
    """Wrap the controller's SIGINT handler (ansible-core's TaskQueueManager._signal_handler) so that SIGINT also
    wakes a daemon thread, started now, that ends the process bound_s later if it is still running. The handler only
    sets an Event of its own: starting a thread there could wait on a lock the interrupted code holds. Main thread
    only; once per process. True when the wrapper was put in place."""
    current = signal.getsignal(signal.SIGINT)
    if not callable(current) or getattr(current, "rlstack_bounded", False) or \
            threading.current_thread() is not threading.main_thread():
        return False
    interrupted = threading.Event()
    threading.Thread(target=_end_if_still_running, args=(interrupted, bound_s), daemon=True,
                     name="rlstack-interrupt-bound").start()

    def on_sigint(signum, frame):
        interrupted.set()
        current(signum, frame)

    on_sigint.rlstack_bounded = True
    signal.signal(signal.SIGINT, on_sigint)
    return True


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "rlstack.validation.interrupt_cleanup"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None):
        super().__init__(display=display)
        self._watchdog = None
        self._anchors = {}
        self._namespaces = {}
        self._sigint_armed = False

    def _honour_a_lost_interrupt(self):
        if interrupt_was_lost(self._sigint_armed):
            self._sigint_armed = False
            self._display.warning("rlstack.validation: Ctrl-C was received while ansible-core could not act on it; "
                                  "the run stops here")
            raise KeyboardInterrupt()

    def v2_playbook_on_play_start(self, play):
        # the TaskQueueManager installed its SIGINT handler when it was made, before any play starts
        self._sigint_armed = callable(signal.getsignal(signal.SIGINT))
        bound_the_stop_after_ctrl_c()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._honour_a_lost_interrupt()

    def v2_runner_on_start(self, host, task):
        self._honour_a_lost_interrupt()

    def _send(self, event):
        if self._watchdog is None:
            return
        try:
            self._watchdog.stdin.write((json.dumps(event) + "\n").encode("utf-8"))
            self._watchdog.stdin.flush()
        except (OSError, ValueError):
            self._watchdog = None

    def _start(self):
        if self._watchdog is not None:
            return True
        try:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                p for p in (_OWN_ROOT, _collections_root(), os.environ.get("PYTHONPATH")) if p))
            self._watchdog = subprocess.Popen(  # pylint: disable=consider-using-with
                [sys.executable, _WATCHDOG, str(os.getpid())], stdin=subprocess.PIPE, env=env,
                # the controller's stderr, named: ansible-core 2.19 keeps its fds 1 and 2 from children
                # (close-on-exec), and a watchdog without them could neither say what it deleted nor run
                stdout=subprocess.DEVNULL, stderr=2, start_new_session=True, close_fds=True)
        except (OSError, ImportError) as exc:
            self._display.warning("rlstack.validation.interrupt_cleanup: could not start the watchdog (%s); an "
                                  "interrupted run's objects are deleted by its lease" % exc)
            return False
        fd = self._watchdog.stdin.fileno()

        def close_in_child():
            # Forked workers must not keep the pipe open: its end is how the watchdog learns the run ended.
            # (Only while it is open: after the run the number may belong to another file.)
            if self._watchdog is not None and not self._watchdog.stdin.closed:
                try:
                    os.close(fd)
                except OSError:
                    pass

        os.register_at_fork(after_in_child=close_in_child)
        return True

    def v2_runner_on_ok(self, result):
        if not _may_concern_the_run(result.task):
            return
        res = getattr(result, "_result", None) or {}
        host = result._host.get_name()
        args = (res.get("invocation") or {}).get("module_args") or {}
        anchor = _run_guard.anchor_of(res)
        if anchor is not None and args.get("state", "present") == "present":
            namespace, run_id, name = anchor
            if not self._start():
                return
            self._anchors[host] = name
            self._send(dict({"event": "run", "host": host, "namespace": namespace, "run_id": run_id, "anchor": name,
                             "auth": _run_guard.auth_from_module_args(args), "kinds": _runner_kinds(),
                             "namespace_created": self._namespaces.get(host) == (namespace, run_id)},
                            **_run_lease_of(res)))
            return
        auth = (res.get("ansible_facts") or {}).get("runner_cleanup_auth")
        if isinstance(auth, dict) and host in self._anchors:
            self._send({"event": "auth", "host": host,
                        "auth": dict((k, v) for k, v in auth.items() if isinstance(v, str) and v)})
            return
        obj = res.get("result")
        if isinstance(obj, dict) and obj.get("kind") == "Namespace" and args.get("state", "present") == "present":
            labels = (obj.get("metadata") or {}).get("labels") or {}
            if labels.get(_run_guard.RUN_LABEL):
                self._namespaces[host] = (obj["metadata"].get("name"), labels[_run_guard.RUN_LABEL])
        if host in self._anchors and (_deleted_the_anchor(args, self._anchors[host])
                                      or _removed_the_anchor(args, res)):
            self._send({"event": "done", "host": host})

    def v2_runner_on_failed(self, result, ignore_errors=False):
        """A call that gave up on the API server (the API guard's sentence): the run's own cleanup will fail
        too, so the watchdog keeps trying after the run ends."""
        res = getattr(result, "_result", None) or {}
        if self._watchdog is not None and _run_guard.UNREACHABLE_MARK in str(res.get("msg", "")):
            self._send({"event": "unreachable", "host": result._host.get_name()})

    def v2_playbook_on_stats(self, stats):
        if self._watchdog is not None:
            self._send({"event": "end"})
            try:
                self._watchdog.stdin.close()
                self._watchdog.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self._watchdog = None
