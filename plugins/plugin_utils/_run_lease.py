# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run's renewed lease: a short-lived Job that owns the anchor, renewed while the controller lives.

Why: when the interrupt watchdog dies with the controller (an AWX cancel kills the job's whole sandbox:
`podman kill`), nothing on the controller is left to delete the run's objects, and the anchor Job's own
deadline (roles/runner/tasks/lease.yml) covers a whole wait plus a margin: minutes to hours. So while the run
lives, the watchdog holds a lease Job (``rlsv-<run>-lease``: it starts no pod, its activeDeadlineSeconds is
the time since it was created plus ``lease_s``, ``ttlSecondsAfterFinished: 0``), renews that deadline every
``RENEW_EVERY_S`` (a quarter of ``lease_s`` if that is shorter) and makes the anchor name it as its owner. When
the renewals stop, Kubernetes' own controllers end the run, nothing of ours needs to be alive: the Job controller fails the lease Job at its deadline
(DeadlineExceeded), the TTL-after-finished controller deletes it, and the garbage collector deletes the anchor
it owns, then everything the anchor owns. The calls are the run's own verbs on Jobs (create, patch, delete:
rbac/rlstack-validation.yml); no pod, image or extra privilege. docs/reliability.md says why this and not an
in-cluster reaper.

When the run ends normally the lease is deleted with propagationPolicy Orphan, which leaves the anchor (kept
objects of failed levels, validation_keep_failed) under its own deadline; after the run deleted its anchor,
with Background.
"""

from __future__ import annotations

import math
import time

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _objects_absent

RUN_LABEL = _objects_absent.RUN_LABEL
# The anchor's annotation that carries validation_renewed_lease_s (roles/runner/templates/anchor_job.yml.j2).
LEASE_ANNOTATION = "rlstack.io/renewed-lease-s"
MERGE_PATCH = "application/merge-patch+json"
# How often the deadline moves. An API server that cannot write for longer than lease_s less this lets the Job
# controller fail the lease of a live run, so the renewals are frequent: one PATCH of one Job every 2 s (a node's
# kubelet renews its Lease every 10 s). Measured: etcd killed and back 10 s later, the API server wrote nothing for
# 15 to 18 s (docs/reliability.md); a renewal every 5 s of a 20-s lease left 15 s, and a CI run lost its lease so.
RENEW_EVERY_S = 2.0


def lease_name(anchor_name):
    """rlsv-<run>-anchor -> rlsv-<run>-lease (a DNS label no longer than the anchor's)."""
    base = anchor_name[:-len("-anchor")] if anchor_name.endswith("-anchor") else anchor_name[:57]
    return base + "-lease"


def lease_job(namespace, run_id, anchor_name, lease_s, image):
    """The lease Job: no pod (parallelism 0), failed by the Job controller lease_s after it starts unless renewed."""
    labels = {"app.kubernetes.io/managed-by": "rlstack.validation", RUN_LABEL: run_id,
              "app.kubernetes.io/component": "lease"}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": lease_name(anchor_name), "namespace": namespace, "labels": labels},
            "spec": {"parallelism": 0, "completions": 1, "backoffLimit": 0, "activeDeadlineSeconds": int(lease_s),
                     "ttlSecondsAfterFinished": 0,
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "lease", "image": image, "command": ["true"]}]}}}}


class Lease:
    """One run's lease on one cluster, through an ApiClient of the kubernetes client."""

    def __init__(self, api_client, run, clock=time.monotonic):
        self.api = api_client
        self.run = run
        self.clock = clock
        self.lease_s = int(run["lease_s"])
        self.name = lease_name(run["anchor"])
        self.path = "/apis/batch/v1/namespaces/%s/jobs" % run["namespace"]
        self.created = None
        self.renewed = None

    def _call(self, method, path, body=None, content_type="application/json"):
        return self.api.call_api(path, method, query_params=[], body=body,
                                 header_params={"Accept": "application/json", "Content-Type": content_type},
                                 response_type="object", auth_settings=["BearerToken"],
                                 _return_http_data_only=True, _request_timeout=(5, 10)) or {}

    def acquire(self):
        """Create the lease Job and make the anchor its dependent."""
        self.created = self.clock()
        lease = self._call("POST", self.path, lease_job(self.run["namespace"], self.run["run_id"], self.run["anchor"],
                                                        self.lease_s, self.run.get("image") or "busybox"))
        owner = {"apiVersion": "batch/v1", "kind": "Job", "name": self.name,
                 "uid": (lease.get("metadata") or {}).get("uid"), "blockOwnerDeletion": False}
        self._call("PATCH", "%s/%s" % (self.path, self.run["anchor"]), {"metadata": {"ownerReferences": [owner]}},
                   MERGE_PATCH)
        self.renewed = self.clock()

    def due(self):
        every_s = min(RENEW_EVERY_S, self.lease_s / 4.0)
        return self.renewed is not None and self.clock() - self.renewed >= every_s

    def renew(self):
        """Move the deadline to lease_s from now. The Job controller counts it from the Job's startTime, which
        is no earlier than our creation call: the time since that call over-counts, never under-counts."""
        deadline = int(math.ceil(self.clock() - self.created)) + self.lease_s
        self._call("PATCH", "%s/%s" % (self.path, self.name), {"spec": {"activeDeadlineSeconds": deadline}},
                   MERGE_PATCH)
        self.renewed = self.clock()

    def release(self, anchor_gone):
        """Delete the lease; Orphan keeps the anchor (and what it owns) when the run left it on purpose. Orphan
        leaves the lease Job terminating until the garbage collector has unlinked the anchor, so it is used only
        while the anchor is there."""
        if not anchor_gone:
            try:
                self._call("GET", "%s/%s" % (self.path, self.run["anchor"]))
            except Exception as exc:  # pylint: disable=broad-except
                anchor_gone = getattr(exc, "status", None) == 404
        try:
            self._call("DELETE", "%s/%s" % (self.path, self.name),
                       _objects_absent.delete_options("Background" if anchor_gone else "Orphan"))
        except Exception as exc:  # pylint: disable=broad-except
            if getattr(exc, "status", None) != 404:
                raise


class Keeper:
    """The leases of every cluster of a run, held by the watchdog (plugins/plugin_utils/_run_guard.py)."""

    def __init__(self, client_for, say):
        self.client_for = client_for
        self.say = say
        self.leases = {}

    def take(self, host, run):
        if int(run.get("lease_s") or 0) <= 0:
            return
        try:
            lease = Lease(self.client_for(run.get("auth") or {}), run)
            lease.acquire()
        except Exception as exc:  # pylint: disable=broad-except
            self.say("rlstack.validation: could not take the renewed lease of the run %s on %s (%s); if the run is "
                     "killed with its watchdog, its lease (the anchor Job's deadline) deletes its objects."
                     % (run.get("run_id"), host, _first_line(exc)))
            return
        self.leases[host] = lease

    def tick(self):
        """Renew the leases that are due; one that is gone ran out (the API server was away longer than it)."""
        for host, lease in list(self.leases.items()):
            if not lease.due():
                continue
            try:
                lease.renew()
            except Exception as exc:  # pylint: disable=broad-except
                if getattr(exc, "status", None) == 404:
                    del self.leases[host]
                    unrenewed_s = lease.clock() - lease.renewed
                    self.say("rlstack.validation: the renewed lease of the run %s on %s ran out (not renewed for "
                             "%.0f s); Kubernetes deletes the run's objects." % (lease.run["run_id"], host, unrenewed_s))
                # else: the API server does not answer now; the next tick tries again

    def release(self, host, anchor_gone):
        lease = self.leases.pop(host, None)
        if lease is None:
            return
        try:
            lease.release(anchor_gone)
        except Exception:  # pylint: disable=broad-except
            pass  # unreachable: the lease runs out by itself

    def release_all(self, anchor_gone=False):
        for host in list(self.leases):
            self.release(host, anchor_gone)

    def forget(self):
        """The controller is gone: stop renewing (the cleanup deletes the lease Job with the run's objects)."""
        self.leases = {}


def _first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__
