"""Fixtures for the smoke tests of the simulated cluster (sim/; start it with `make sim-up`).

* the kubernetes client from .sim/kubeconfig (or $SIM_STATE/kubeconfig); every test is skipped when no
  simulated cluster answers;
* `namespace`: a fresh namespace per test, deleted afterwards (waiting until its pods are gone, so the
  next test finds the GPUs free);
* `scenario`: switches the scenario with `simctl.py scenario NAME` and switches back to `healthy`
  afterwards, also when the test fails.
"""
from __future__ import annotations

import re
import time
import uuid

import pytest

import simkit


def pytest_collection_modifyitems(session, config, items):
    """The tests on a cluster of their own (sized_cluster) run after those on the shared one, and
    test_lifecycle.py, which restarts the shared cluster (when enabled), after everything else."""
    items.sort(key=lambda item: (item.path.name == "test_lifecycle.py",
                                 "sized_cluster" in getattr(item, "fixturenames", ())))


@pytest.fixture(scope="session")
def sized_cluster(tmp_path_factory):
    """get(N): the state directory of a simulated cluster of its own with N p5 nodes (started on first use,
    SIM_STATE under the session's temporary directory), beside the shared 2-node one. One at a time on a
    small machine: asking for another size stops the previous one; the last is stopped at the end."""
    started = {}

    def get(nodes: int):
        if nodes not in started:
            for other in list(started):
                simkit.simctl_at(started.pop(other), "down")
            state = tmp_path_factory.mktemp(f"sim-{nodes}-nodes")
            simkit.simctl_at(state, "up", "--nodes", str(nodes), "--scenario", "healthy")
            started[nodes] = state
        return started[nodes]

    yield get
    for state in started.values():
        simkit.simctl_at(state, "down")


@pytest.fixture(scope="session")
def api_client():
    if not simkit.KUBECONFIG.exists():
        pytest.skip(f"simulated cluster not running ({simkit.KUBECONFIG} missing); start it with `make sim-up`")
    from kubernetes import client, config
    api = config.new_client_from_config(config_file=str(simkit.KUBECONFIG))
    try:
        client.VersionApi(api).get_code(_request_timeout=5)
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"simulated cluster not answering ({exc}); start it with `make sim-up`")
    yield api
    api.close()


@pytest.fixture(scope="session", autouse=True)
def _healthy_session():
    """Run the tests under `healthy`; put back whatever scenario was active before."""
    before = simkit.current_scenario() if simkit.KUBECONFIG.exists() else ""
    if before and before != "healthy":
        # check=False: with a stale .sim/ and no cluster, the tests skip (api_client) instead of erroring here.
        simkit.simctl("scenario", "healthy", check=False)
    yield
    if before and before != "healthy" and simkit.KUBECONFIG.exists():
        simkit.simctl("scenario", before, check=False)


@pytest.fixture(scope="session")
def core(api_client):
    from kubernetes import client
    return client.CoreV1Api(api_client)


@pytest.fixture(scope="session")
def batch(api_client):
    from kubernetes import client
    return client.BatchV1Api(api_client)


@pytest.fixture(scope="session")
def apps(api_client):
    from kubernetes import client
    return client.AppsV1Api(api_client)


@pytest.fixture(scope="session")
def custom(api_client):
    from kubernetes import client
    return client.CustomObjectsApi(api_client)


@pytest.fixture(scope="session")
def apiext(api_client):
    from kubernetes import client
    return client.ApiextensionsV1Api(api_client)


@pytest.fixture
def namespace(core, request):
    """A namespace of this test's own: sim-t-<test name>-<random>. Deleted afterwards."""
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"sim-t-{slug}-{uuid.uuid4().hex[:5]}"
    core.create_namespace({"metadata": {"name": name, "labels": {"sim.rlstack.io/test": "smoke"}}})
    simkit.wait_until(lambda: core.read_namespaced_service_account("default", name), 30,
                      f"the default service account of {name}")
    yield name
    from kubernetes.client.rest import ApiException
    try:
        # The namespace first (no controller can create pods in it any more), then its pods without grace
        # (kwok's pod-delete stage removes them): the namespace controller alone takes several seconds.
        core.delete_namespace(name, propagation_policy="Background")
        core.delete_collection_namespaced_pod(name, grace_period_seconds=0)
    except ApiException as exc:
        if exc.status != 404:
            raise
    # Wait for the pods only (kwok's pod-delete stage removes them): that frees the GPUs for the next test.
    simkit.wait_until(lambda: not core.list_namespaced_pod(name).items, 60, f"the pods of {name} to go")


@pytest.fixture
def scenario():
    """switch(name): make `name` the active scenario for this test; `healthy` is restored afterwards."""
    switched = []

    def switch(name: str, settle: bool = True) -> None:
        switched.append(name)
        simkit.simctl("scenario", name)
        if settle:  # kwok-controller watches Stage objects; give it a moment to load the new ones
            time.sleep(1.0)

    yield switch
    if switched:  # also after a failed or half-done switch
        simkit.simctl("scenario", "healthy")
