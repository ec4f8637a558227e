# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every way a user gives the run its cluster reaches the cluster (issue 27 item 0): validate.yml with L0 and one L5
example on the simulated cluster, from an inventory that does not set validation_kubeconfig (the shipped
example-p5 style), with the access given only one way each: KUBECONFIG, K8S_AUTH_KUBECONFIG (as the
collection's AWX credential type injects it), ~/.kube/config, and validation_kubeconfig. HOME is a temp dir, so
no ~/.kube/config of the machine is read, and no other K8S_AUTH_* or KUBECONFIG is left in the environment.
Before the fix, every way but validation_kubeconfig stopped in the plan ("'validation_kubeconfig' is
undefined"), and past that, job_watch (now job_run) ignored K8S_AUTH_KUBECONFIG. About 40 s each."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

WAYS = ["KUBECONFIG", "K8S_AUTH_KUBECONFIG", "~/.kube/config", "validation_kubeconfig"]


def inventory_without_kubeconfig(where: Path) -> Path:
    """inventories/sim without its validation_kubeconfig line (the group_vars are the sim's own)."""
    where.mkdir()
    hosts = (simkit.ROOT / "inventories" / "sim" / "hosts.yml").read_text().splitlines()
    (where / "hosts.yml").write_text("\n".join(l for l in hosts if "validation_kubeconfig" not in l) + "\n")
    (where / "group_vars").symlink_to(simkit.ROOT / "inventories" / "sim" / "group_vars")
    return where


def environment_without_access(tmp_path: Path):
    """(an empty HOME, this process's environment without any way to the cluster and with that HOME)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("K8S_AUTH_", "KUBERNETES_SERVICE_"))
           and k != "KUBECONFIG"}
    env.update(HOME=str(home), ANSIBLE_CONFIG=str(simkit.ROOT / "ansible.cfg"),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    return home, env


@pytest.mark.parametrize("way", WAYS)
def test_each_way_of_giving_cluster_access_runs_l0_and_l5(core, tmp_path, way):
    home, env = environment_without_access(tmp_path)
    run_id = "access-" + uuid.uuid4().hex[:6]
    extra = {"validation_run_id": run_id, "validation_report_dir": str(tmp_path / "report"),
             "validation_example": "maniskill-openvlaoft"}
    kubeconfig = str(simkit.KUBECONFIG)
    if way == "KUBECONFIG":
        env["KUBECONFIG"] = kubeconfig
    elif way == "K8S_AUTH_KUBECONFIG":
        env["K8S_AUTH_KUBECONFIG"] = kubeconfig
    elif way == "~/.kube/config":
        (home / ".kube").mkdir()
        shutil.copy(kubeconfig, home / ".kube" / "config")
    else:
        extra["validation_kubeconfig"] = kubeconfig
    inventory = inventory_without_kubeconfig(tmp_path / "inventory")
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml",
                           "-i", str(inventory), "--tags", "l0,l5", "-e", json.dumps(extra)],
                          cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=600, check=False)
    out = proc.stdout + proc.stderr
    assert "is undefined" not in out, out[-3000:]
    assert proc.returncode == 0, out[-4000:]
    cluster = json.loads((tmp_path / "report" / "report.json").read_text())["clusters"][0]
    statuses = {level["id"]: level["status"] for level in cluster["levels"]}
    assert statuses.get("l0_infrastructure") == "PASS", statuses
    assert [s for i, s in statuses.items() if i.startswith("l5_training_step")] == ["PASS"], statuses
    # nothing of the run is left
    assert not core.list_pod_for_all_namespaces(label_selector="rlstack.io/run-id=" + run_id).items


def test_no_cluster_access_at_all_is_one_sentence_before_anything_is_created(tmp_path):
    """No validation_kubeconfig, no K8S_AUTH_*, no KUBECONFIG, no ~/.kube/config, not in a pod: the plan says so in
    one sentence and exits 2, before anything is created."""
    env = environment_without_access(tmp_path)[1]
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml",
                           "-i", str(inventory_without_kubeconfig(tmp_path / "inventory")), "--tags", "l0",
                           "-e", json.dumps({"validation_report_dir": str(tmp_path / "report")})],
                          cwd=str(simkit.ROOT), env=env, capture_output=True, text=True, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out[-3000:]
    assert "No cluster access: validation_kubeconfig is not set" in out and "Traceback" not in out
