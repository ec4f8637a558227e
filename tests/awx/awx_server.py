# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A bounded client of AWX's REST API (/api/v2, basic auth from CONTROLLER_*), and what make test-awx needs
around it: the simulated cluster's kubeconfig made self-contained for a credential, a snapshot of the working
tree as a git repository AWX can clone (file://), and playbooks/awx_configure.yml run against the server."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
STATE = Path(os.environ.get("RLSTACK_AWX_STATE", "/var/lib/rlstack-awx"))
SIM_KUBECONFIG = Path(os.environ.get("SIM_STATE", ROOT / ".sim")) / "kubeconfig"
FINISHED = {"successful", "failed", "error", "canceled"}


class AWXError(AssertionError):
    pass


class AWX:
    def __init__(self, host: str, username: str, password: str):
        self.host = host.rstrip("/")
        token = base64.b64encode(f"{username}:{password}".encode()).decode()
        self.headers = {"Authorization": f"Basic {token}", "Content-Type": "application/json"}

    @classmethod
    def from_env(cls) -> "AWX":
        host = os.environ.get("CONTROLLER_HOST", "")
        if not host:
            raise AWXError("CONTROLLER_HOST is not set: start AWX with `make awx-up` and run `make test-awx`")
        return cls(host, os.environ.get("CONTROLLER_USERNAME", "admin"), os.environ.get("CONTROLLER_PASSWORD", ""))

    def request(self, method: str, path: str, body=None, timeout: float = 60) -> tuple[int, object]:
        url = path if path.startswith("http") else f"{self.host}{path}"
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method, headers=self.headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
                status = resp.status
        except urllib.error.HTTPError as exc:
            raw, status = exc.read(), exc.code
        text = raw.decode(errors="replace")
        try:
            return status, json.loads(text) if text else {}
        except ValueError:
            return status, text

    def get(self, path: str, timeout: float = 60):
        status, body = self.request("GET", path, timeout=timeout)
        if status != 200:
            raise AWXError(f"GET {path}: HTTP {status}: {str(body)[:2000]}")
        return body

    def post(self, path: str, body: dict, timeout: float = 60) -> tuple[int, object]:
        return self.request("POST", path, body, timeout=timeout)

    def all(self, path: str) -> list:
        """Every result of a list endpoint (its pages)."""
        sep = "&" if "?" in path else "?"
        page = self.get(f"{path}{sep}page_size=200")
        results = list(page["results"])
        while page.get("next"):
            page = self.get(page["next"])
            results += page["results"]
        return results

    def one(self, kind: str, name: str) -> dict:
        found = self.all(f"/api/v2/{kind}/?name={urllib.request.quote(name)}")
        if len(found) != 1:
            raise AWXError(f"{kind} named {name!r}: {len(found)} found")
        return found[0]

    def wait_job(self, job_id: int, within_s: float, path: str = "jobs") -> dict:
        deadline = time.monotonic() + within_s
        while True:
            job = self.get(f"/api/v2/{path}/{job_id}/")
            # A job is finished before the callback receiver has saved all its events, and its stdout is built
            # from them: read before event_processing_finished, it lacks lines (the results table's, seen once).
            done = job["status"] in FINISHED and job.get("event_processing_finished", True)
            if done or time.monotonic() > deadline:
                return job
            time.sleep(2)

    def stdout(self, job_id: int) -> str:
        status, body = self.request("GET", f"/api/v2/jobs/{job_id}/stdout/?format=txt_download", timeout=120)
        if status != 200:
            raise AWXError(f"stdout of job {job_id}: HTTP {status}")
        return body if isinstance(body, str) else json.dumps(body)

    def events(self, job_id: int) -> list:
        return self.all(f"/api/v2/jobs/{job_id}/job_events/?order_by=counter")


def self_contained_kubeconfig(path: Path = SIM_KUBECONFIG) -> str:
    """The kubeconfig with every file it names (certificates, keys) inlined as *-data, as a credential holds it."""
    config = yaml.safe_load(path.read_text())
    for section, fields in (("clusters", ("certificate-authority",)), ("users", ("client-certificate", "client-key"))):
        for entry in config.get(section, []):
            inner = entry.get(section[:-1], {})
            for field in fields:
                if field in inner:
                    file_path = Path(inner.pop(field))
                    if not file_path.is_absolute():
                        file_path = path.parent / file_path
                    inner[f"{field}-data"] = base64.b64encode(file_path.read_bytes()).decode()
    return yaml.safe_dump(config, sort_keys=False)


def snapshot_repository(dest: Path, branch: str = "awx-test") -> str:
    """The working tree (tracked and untracked files, less the ignored ones) committed on top of HEAD into a
    bare repository at dest, branch `branch`, without touching the checkout's index or branches. Returns the
    commit. AWX's project clones it (file://dest), as it would clone the team's git server."""
    env = dict(os.environ, GIT_INDEX_FILE=str(dest.parent / "snapshot.index"))
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not (dest / "HEAD").exists():
        subprocess.run(["git", "init", "-q", "--bare", str(dest)], check=True, timeout=60)

    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True,
                              timeout=300).stdout.strip()

    git("read-tree", "HEAD")
    git("add", "-A")
    tree = git("write-tree")
    commit = git("-c", "user.name=make test-awx", "-c", "user.email=test-awx@localhost", "commit-tree", tree,
                 "-p", "HEAD", "-m", "make test-awx: snapshot of the working tree")
    git("push", "-q", "--force", str(dest), f"{commit}:refs/heads/{branch}")
    return commit


def run_configure(extra_env: dict, extra_vars: dict, timeout: float = 1200) -> subprocess.CompletedProcess:
    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLSTACK_")}
    # The whole stream (task banners and the PLAY RECAP), which the default console of
    # rlstack.validation.progress hides (docs/console.md): the test reads the recap's changed= and failed=.
    env.update(extra_env, PATH=f"{bin_dir}:{env.get('PATH', '')}", ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", RLSTACK_CONSOLE_TASKS="true")
    cmd = [str(bin_dir / "ansible-playbook"), "playbooks/awx_configure.yml"]
    for key, value in extra_vars.items():
        cmd += ["-e", json.dumps({key: value})]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
