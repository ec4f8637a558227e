# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The run's renewed lease (plugins/plugin_utils/_run_lease.py): the calls it makes and when. What Kubernetes does
when it runs out is measured on the simulated cluster (tests/faults, a run killed with its watchdog)."""

from __future__ import annotations

import json
import os

from ansible_collections.rlstack.validation.plugins.module_utils import _limits as limits
from ansible_collections.rlstack.validation.plugins.plugin_utils import _run_guard as guard
from ansible_collections.rlstack.validation.plugins.plugin_utils import _run_lease as lease_mod

KINDS = [{"api_version": "batch/v1", "kind": "Job"}]


class Recorder:
    """An ApiClient stand-in that records each call (method, path, body, content type)."""

    def __init__(self, fail=None):
        self.calls = []
        self.fail = fail or {}

    def call_api(self, path, method, body=None, header_params=None, **_kwargs):
        self.calls.append((method, path, body, (header_params or {}).get("Content-Type")))
        error = self.fail.get((method, path))
        if error is not None:
            raise error
        if method == "POST":
            return {"metadata": {"name": body["metadata"]["name"], "uid": "uid-1"}}
        return {}


class Gone(Exception):
    status = 404


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def run(lease_s=20):
    return {"namespace": "ns1", "run_id": "r1", "anchor": "rlsv-r1-anchor", "lease_s": lease_s, "image": "img:1",
            "auth": {}, "kinds": KINDS, "host": "sim-eks", "event": "run"}


def test_the_lease_job_owns_the_anchor_and_starts_no_pod():
    api, clock = Recorder(), Clock()
    lease = lease_mod.Lease(api, run(), clock)
    lease.acquire()
    (post, path, job, _post_type), (patch, anchor_path, owner, content_type) = api.calls
    assert (post, path) == ("POST", "/apis/batch/v1/namespaces/ns1/jobs")
    assert job["metadata"]["name"] == "rlsv-r1-lease"
    assert job["metadata"]["labels"]["rlstack.io/run-id"] == "r1"
    assert job["spec"]["parallelism"] == 0 and job["spec"]["ttlSecondsAfterFinished"] == 0
    assert job["spec"]["activeDeadlineSeconds"] == 20
    assert (patch, anchor_path, content_type) == ("PATCH", "/apis/batch/v1/namespaces/ns1/jobs/rlsv-r1-anchor",
                                                  "application/merge-patch+json")
    assert owner == {"metadata": {"ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "rlsv-r1-lease",
                                                       "uid": "uid-1", "blockOwnerDeletion": False}]}}


def test_renewal_moves_the_deadline_to_the_lease_from_now_every_2_s():
    api, clock = Recorder(), Clock()
    lease = lease_mod.Lease(api, run(), clock)
    lease.acquire()
    clock.now += 1.9
    assert not lease.due()
    clock.now += 0.2
    assert lease.due()
    lease.renew()
    method, path, body, _content_type = api.calls[-1]
    assert (method, path) == ("PATCH", "/apis/batch/v1/namespaces/ns1/jobs/rlsv-r1-lease")
    # 2.1 s since the creation call, rounded up, plus 20: never less than 20 s from now
    assert body == {"spec": {"activeDeadlineSeconds": 23}}


def test_an_api_server_that_cannot_write_for_the_lease_less_2_s_does_not_end_the_run():
    """The margin that matters: the deadline after the last renewal before an outage is at least lease_s - 2 s
    away when writes resume, so the watchdog's retry lands before the Job controller can fail the lease."""
    # etcd killed and back 10 s later: 15 to 18 s without writes on the simulated cluster (docs/reliability.md)
    assert limits.RENEWED_LEASE_S - lease_mod.RENEW_EVERY_S >= 18.5


def test_a_short_lease_is_renewed_every_quarter_of_it():
    api, clock = Recorder(), Clock()
    lease = lease_mod.Lease(api, run(lease_s=4), clock)
    lease.acquire()
    clock.now += 0.9
    assert not lease.due()
    clock.now += 0.2
    assert lease.due()


def test_a_normal_end_orphans_the_anchor_and_a_removed_anchor_does_not():
    anchor = "/apis/batch/v1/namespaces/ns1/jobs/rlsv-r1-anchor"
    for anchor_gone, fail, policy in ((False, {}, "Orphan"), (True, {}, "Background"),
                                      (False, {("GET", anchor): Gone("not found")}, "Background")):
        api = Recorder(dict(fail))
        lease = lease_mod.Lease(api, run(), Clock())
        lease.acquire()
        lease.release(anchor_gone)
        method, path, body, _content_type = api.calls[-1]
        assert (method, path, body["propagationPolicy"]) == (
            "DELETE", "/apis/batch/v1/namespaces/ns1/jobs/rlsv-r1-lease", policy)


def test_a_lease_that_ran_out_is_said_once_and_not_renewed_again():
    api, clock, said = Recorder(), Clock(), []
    keeper = lease_mod.Keeper(lambda _auth: api, said.append)
    keeper.take("sim-eks", run())
    keeper.leases["sim-eks"].clock = clock
    keeper.leases["sim-eks"].renewed = clock.now - 30
    api.fail[("PATCH", "/apis/batch/v1/namespaces/ns1/jobs/rlsv-r1-lease")] = Gone("not found")
    keeper.tick()
    keeper.tick()
    assert len(said) == 1 and "ran out" in said[0] and "r1" in said[0]
    assert keeper.leases == {}


def test_no_lease_when_the_anchor_asks_for_none_and_one_sentence_when_it_cannot_be_taken():
    api, said = Recorder(), []
    keeper = lease_mod.Keeper(lambda _auth: api, said.append)
    keeper.take("sim-eks", run(lease_s=0))
    assert api.calls == [] and keeper.leases == {}
    api.fail[("POST", "/apis/batch/v1/namespaces/ns1/jobs")] = RuntimeError("forbidden: jobs")
    keeper.take("sim-eks", run())
    assert len(said) == 1 and "could not take the renewed lease" in said[0] and "forbidden" in said[0]


def feed(events):
    read, write = os.pipe()
    with os.fdopen(write, "wb") as handle:
        for event in events:
            handle.write((json.dumps(event) + "\n").encode())
    return os.fdopen(read, "rb")


def test_the_watchdog_takes_the_lease_and_releases_it_at_the_end():
    api, said = Recorder(), []
    events = [run(), {"event": "auth", "host": "sim-eks", "auth": {"kubeconfig": "/k"}}, {"event": "end"}]
    result = guard.watch(feed(events), os.getpid(), said.append, lambda _auth: api)
    assert result == "end" and said == []
    assert [c[0] for c in api.calls] == ["POST", "PATCH", "GET", "DELETE"]
    assert api.calls[-1][2]["propagationPolicy"] == "Orphan"


def test_a_cluster_lost_at_the_end_keeps_its_lease_running_out():
    api = Recorder()
    guard.watch(feed([run(), {"event": "auth", "host": "sim-eks", "auth": {}},
                      {"event": "unreachable", "host": "sim-eks"}, {"event": "end"}]), os.getpid(),
                lambda _text: None, lambda _auth: api, linger_s=0)
    assert ("POST", "/apis/batch/v1/namespaces/ns1/jobs") in [c[:2] for c in api.calls]
    assert ("DELETE", "/apis/batch/v1/namespaces/ns1/jobs/rlsv-r1-lease") not in [c[:2] for c in api.calls]
