# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Least privilege, enforced by the simulated cluster's real kube-apiserver (--authorization-mode=Node,RBAC:
kwok v0.8.0 pkg/kwokctl/components/kube_apiserver.go adds it whenever the secure port is on, the default
for Kubernetes > 1.12, pkg/config/vars.go). A run through ansible-runner (as AWX runs it) with only a token
of a ServiceAccount bound to rbac/rlstack-validation.yml passes; the token (a canary) appears nowhere in
the console, report.json, junit.xml or the runner's artifacts; a permission taken away is named."""
from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest
import yaml

import faultkit
import simkit

# make test-faults and make test run it (it passed on the integrated main on 2026-12-04, 103.8 s; docs/reliability.md).
pytestmark = pytest.mark.faults
MANIFEST = faultkit.ROOT / "rbac" / "rlstack-validation.yml"
SA = "rlstack-validation"


@pytest.fixture
def rbac(api_client):
    """The shipped RBAC objects applied in the sim (namespace default), removed afterwards."""
    from kubernetes import dynamic
    dyn = dynamic.DynamicClient(api_client)
    docs = yaml.safe_load(MANIFEST.read_text())["items"]  # one List (kubectl apply -f takes it as it is)
    made = []
    for doc in docs:
        resource = dyn.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
        resource.create(body=doc, namespace=doc["metadata"].get("namespace"))
        made.append((resource, doc))
    yield dyn, docs
    for resource, doc in reversed(made):
        resource.delete(name=doc["metadata"]["name"], namespace=doc["metadata"].get("namespace"))


def sa_kubeconfig(core, tmp_path: Path) -> tuple[Path, str]:
    """A kubeconfig with only the ServiceAccount's token (TokenRequest, 1 h) and the sim's CA."""
    token = core.create_namespaced_service_account_token(
        SA, "default", {"spec": {"expirationSeconds": 3600}}).status.token
    admin = yaml.safe_load(simkit.KUBECONFIG.read_text())
    cluster = dict(admin["clusters"][0]["cluster"])
    if "certificate-authority" in cluster:
        ca = Path(cluster.pop("certificate-authority"))
        if not ca.is_absolute():
            ca = simkit.KUBECONFIG.parent / ca
        cluster["certificate-authority-data"] = base64.b64encode(ca.read_bytes()).decode()
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "sa",
              "clusters": [{"name": "sim", "cluster": cluster}], "users": [{"name": SA, "user": {"token": token}}],
              "contexts": [{"name": "sa", "context": {"cluster": "sim", "user": SA, "namespace": "default"}}]}
    path = tmp_path / "sa-kubeconfig.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, token


def run_with_runner(tmp_path: Path, kubeconfig: Path, tags: str, run_id: str, **extra):
    import ansible_runner
    # the lease margin as the other fault tests' (test_faults.FAST): 20 s ran out before L5's lease task on a loaded machine
    extravars = {"validation_kubeconfig": str(kubeconfig), "validation_run_id": run_id,
                 "validation_evidence_dir": str(faultkit.EVIDENCE),
                 "validation_lease_margin_s": 120, "validation_problem_grace_s": 10, **extra}
    report = tmp_path / "report"
    (tmp_path / "runner").mkdir(exist_ok=True)  # ansible-runner refuses a private_data_dir that does not exist
    result = ansible_runner.run(private_data_dir=str(tmp_path / "runner"), project_dir=str(faultkit.ROOT),
                                playbook="playbooks/validate.yml", inventory=str(faultkit.ROOT / "inventories/sim"),
                                extravars=extravars, tags=tags, quiet=True, timeout=600,
                                envvars=faultkit.runner_envvars(RLSTACK_REPORT_DIR=str(report)))
    return result, report


def test_the_shipped_rbac_is_enough_and_the_token_never_shows(core, batch, custom, rbac, tmp_path):
    kubeconfig, token = sa_kubeconfig(core, tmp_path)
    run_id = "rbac-" + str(int(time.time()))[-6:]
    started = time.monotonic()
    result, report = run_with_runner(tmp_path, kubeconfig, "l0,l1,l2,l3,l5", run_id,
                                     validation_example="libero-10-openvlaoft")
    stdout = result.stdout.read()
    faultkit.record("RBAC: a ServiceAccount token bound to rbac/rlstack-validation.yml only (L0-L3, L5)",
                    verdict=result.status, seconds_to_verdict=round(time.monotonic() - started, 1),
                    objects_left=len(faultkit.objects(core, batch, custom, run_id)))
    assert result.status == "successful", stdout[-5000:]
    assert "forbidden" not in stdout
    places = {"console": stdout, "report.json": (report / "report.json").read_text(),
              "junit.xml": (report / "junit.xml").read_text()}
    for path in (tmp_path / "runner" / "artifacts").rglob("*"):
        if path.is_file():
            places["artifacts/" + str(path.relative_to(tmp_path / "runner" / "artifacts"))] = \
                path.read_text(errors="replace")
    leaked = [name for name, text in places.items() if token in text or token[:40] in text]
    assert not leaked, "the ServiceAccount token appears in: %s" % leaked
    assert not faultkit.objects(core, batch, custom, run_id)


def test_a_missing_permission_is_named(core, rbac, tmp_path):
    dyn, docs = rbac
    role = [d for d in docs if d["kind"] == "Role"][0]
    rules = [dict(r, verbs=[v for v in r["verbs"] if v != "create"]) if "configmaps" in r["resources"] else r
             for r in role["rules"]]
    dyn.resources.get(api_version="rbac.authorization.k8s.io/v1", kind="Role").patch(
        body={"rules": rules}, name=role["metadata"]["name"], namespace="default",
        content_type="application/merge-patch+json")
    kubeconfig, _token = sa_kubeconfig(core, tmp_path)
    result, report = run_with_runner(tmp_path, kubeconfig, "l1", "rbac-deny-" + str(int(time.time()))[-5:])
    stdout = result.stdout.read()
    sentence = "forbidden: needs create on configmaps in namespace default"
    faultkit.record("RBAC: create on configmaps taken away (L1)", verdict=result.status,
                    message=[line.strip() for line in stdout.splitlines() if sentence in line][:1])
    assert result.status == "failed"
    assert sentence in stdout, stdout[-4000:]
    assert sentence in json.dumps(json.loads((report / "report.json").read_text()))
