# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""_objects_absent: a level's cleanup in one call (list, delete in parallel, wait until gone, bounded)."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ansible_collections.rlstack.validation.plugins.module_utils.k8s import _objects_absent as oa
from ansible_collections.rlstack.validation.plugins.module_utils.k8s._objects_absent import (
    KindNotServed, collection_path, plural_of, remove)

POD, JOB, MPIJOB = ({"api_version": "v1", "kind": "Pod"}, {"api_version": "batch/v1", "kind": "Job"},
                    {"api_version": "kubeflow.org/v2beta1", "kind": "MPIJob"})


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class Cluster:
    """Objects by kind; a deleted object stays `linger` lists before it is gone (a graceful pod deletion)."""

    def __init__(self, objects, served=("Pod", "Job"), linger=0):
        self.objects = {kind: set(names) for kind, names in objects.items()}
        self.served, self.linger = set(served), linger
        self.deleting, self.lists, self.deletes = {}, 0, []
        self.lock = threading.Lock()

    def list_names(self, spec):
        kind = spec["kind"]
        if kind not in self.served:
            raise KindNotServed(kind)
        with self.lock:
            self.lists += 1
            for key in [k for k in self.deleting if k[0] == kind]:
                self.deleting[key] -= 1
                if self.deleting[key] < 0:
                    self.objects[kind].discard(key[1])
                    del self.deleting[key]
            return sorted(self.objects.get(kind, ()))

    def delete(self, spec, name):
        with self.lock:
            self.deletes.append((spec["kind"], name))
            self.deleting[(spec["kind"], name)] = self.linger


@pytest.mark.parametrize("kind,plural", [("Pod", "pods"), ("MPIJob", "mpijobs"), ("TrainJob", "trainjobs"),
                                         ("ResourceClaimTemplate", "resourceclaimtemplates"),
                                         ("NetworkPolicy", "networkpolicies"), ("Ingress", "ingresses")])
def test_plural_is_the_one_kubernetes_guesses(kind, plural):
    assert plural_of(kind) == plural


def test_collection_paths_of_the_core_group_and_the_others():
    assert collection_path("v1", "Pod", "ns") == "/api/v1/namespaces/ns/pods"
    assert collection_path("kubeflow.org/v2beta1", "MPIJob", "ns") == "/apis/kubeflow.org/v2beta1/namespaces/ns/mpijobs"
    assert collection_path("x.io/v1", "Octopus", "ns", plural="octopi") == "/apis/x.io/v1/namespaces/ns/octopi"


def test_everything_found_is_deleted_and_waited_on_until_gone():
    clock = Clock()
    cluster = Cluster({"Pod": {"p-0", "p-1", "p-2"}, "Job": {"anchor"}}, linger=3)
    out = remove([JOB, POD, MPIJOB], cluster.list_names, cluster.delete, timeout_s=30, poll_s=0.5, clock=clock,
                 sleep=clock.sleep)
    assert out["deleted"] == {"Pod": 3, "Job": 1}
    assert sorted(cluster.deletes) == [("Job", "anchor"), ("Pod", "p-0"), ("Pod", "p-1"), ("Pod", "p-2")]
    assert out["left"] == {} and not out["timed_out"] and out["errors"] == []
    assert out["not_served"] == ["MPIJob"]  # the CRD is not installed: skipped, not an error
    assert cluster.objects == {"Pod": set(), "Job": set()}
    assert 1.0 <= out["elapsed_s"] <= 2.0  # three lists of lingering, half a second apart


def test_nothing_to_delete_is_one_list_per_kind():
    cluster = Cluster({"Pod": set(), "Job": set()})
    out = remove([JOB, POD], cluster.list_names, cluster.delete, timeout_s=30)
    assert cluster.lists == 2 and cluster.deletes == [] and out["deleted"] == {} and out["left"] == {}


def test_an_object_that_stays_is_named_at_the_deadline():
    clock = Clock()
    cluster = Cluster({"Pod": {"stuck"}}, linger=10 ** 6)  # a finalizer nobody removes
    out = remove([POD], cluster.list_names, cluster.delete, timeout_s=5, poll_s=0.5, clock=clock, sleep=clock.sleep)
    assert out["timed_out"] and out["left"] == {"Pod": ["stuck"]} and out["deleted"] == {"Pod": 1}
    assert 5.0 <= clock.now <= 5.5


def test_a_failed_list_or_delete_is_one_line_and_the_other_kinds_still_go():
    cluster = Cluster({"Pod": {"p-0"}, "Job": {"j"}})

    def list_names(spec):
        if spec["kind"] == "Job":
            raise RuntimeError('HTTP 403: jobs.batch is forbidden: User "u" cannot list resource "jobs"')
        return cluster.list_names(spec)

    def delete(spec, name):
        raise RuntimeError("HTTP 500: etcdserver: leader changed")

    out = remove([JOB, POD], list_names, delete, timeout_s=0.2, poll_s=0.05)
    assert out["errors"][0].startswith("listing Job: HTTP 403: jobs.batch is forbidden")
    assert out["errors"][1] == "deleting Pod p-0: HTTP 500: etcdserver: leader changed"
    assert out["deleted"] == {} and out["left"] == {"Pod": ["p-0"]} and out["timed_out"]


def test_an_unreachable_api_server_ends_the_call_at_once():
    class APIUnreachableError(Exception):
        pass

    clock = Clock()
    calls = []

    def list_names(spec):
        calls.append(spec["kind"])
        raise APIUnreachableError("the API server of cluster sim-eks did not answer within 60 s")

    out = remove([JOB, POD], list_names, lambda *_: None, timeout_s=120, clock=clock, sleep=clock.sleep,
                 fatal=lambda exc: isinstance(exc, APIUnreachableError))
    assert calls == ["Job"] and clock.now == 0
    assert out["errors"] == ["listing Job: the API server of cluster sim-eks did not answer within 60 s"]


def test_unreachable_while_waiting_stops_the_wait():
    class APIUnreachableError(Exception):
        pass

    clock = Clock()
    cluster = Cluster({"Pod": {"p-0"}}, linger=10 ** 6)
    rounds = []

    def list_names(spec):
        rounds.append(clock.now)
        if len(rounds) > 2:
            raise APIUnreachableError("gone")
        return cluster.list_names(spec)

    out = remove([POD], list_names, cluster.delete, timeout_s=120, poll_s=0.5, clock=clock, sleep=clock.sleep,
                 fatal=lambda exc: isinstance(exc, APIUnreachableError))
    assert len(rounds) == 3 and clock.now < 2 and out["left"] == {"Pod": ["p-0"]} and not out["timed_out"]
    assert out["errors"] == ["listing Pod: gone"]


def test_deletes_run_in_parallel_within_the_bound():
    cluster = Cluster({"Pod": {"p-%d" % i for i in range(64)}})
    in_flight, peak = [0], [0]
    gate = threading.Lock()

    def delete(spec, name):
        with gate:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        threading.Event().wait(0.01)
        with gate:
            in_flight[0] -= 1
        cluster.delete(spec, name)

    out = remove([POD], cluster.list_names, delete, timeout_s=30, workers=8)
    assert out["deleted"] == {"Pod": 64} and out["left"] == {}
    assert 2 <= peak[0] <= 8


def _role_rules():
    import yaml
    items = yaml.safe_load((Path(__file__).resolve().parents[4] / "rbac" / "rlstack-validation.yml").read_text())["items"]
    return [item for item in items if item["kind"] == "Role"][0]["rules"]


def _granted(rules, group, resource):
    return set(v for r in rules if group in r["apiGroups"] and resource in r["resources"] for v in r["verbs"])


def test_the_role_grants_the_cleanup_exactly_the_verbs_it_uses():
    """Every kind a run may create (the one list, RUN_KINDS) is listed and deleted one object at a time by the level
    cleanup, the interrupt watchdog and playbooks/cleanup.yml: the Role grants list and delete on each, and no
    deletecollection anywhere (nothing uses it; StatefulSet, never created, is neither in the list nor granted)."""
    from ansible_collections.rlstack.validation.plugins.plugin_utils import _run_guard
    rules = _role_rules()
    for kind in oa.RUN_KINDS:
        group = kind["api_version"].rpartition("/")[0]
        assert set(oa.CLEANUP_VERBS) <= _granted(rules, group, oa.plural_of(kind["kind"])), kind
    assert not [r for r in rules if "deletecollection" in r["verbs"]]
    assert not [r for r in rules if "statefulsets" in r["resources"]]
    assert "StatefulSet" not in [k["kind"] for k in oa.RUN_KINDS]
    # the watchdog deletes by name through the same paths (not the collection)
    assert _run_guard.collection_path("v1", "Pod", "n") == oa.collection_path("v1", "Pod", "n")
