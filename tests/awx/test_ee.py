# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The execution environment: build the collection, create the ansible-builder context (no container
engine here), check the context, and replay its galaxy and introspection stages offline."""
from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GALAXY = yaml.safe_load((ROOT / "galaxy.yml").read_text())
TARBALL = f"{GALAXY['namespace']}-{GALAXY['name']}-{GALAXY['version']}.tar.gz"
EE = yaml.safe_load((ROOT / "ee" / "execution-environment.yml").read_text())
# What must never ship in the collection: local state, caches, the simulator, AWX/EE sources, site data.
FORBIDDEN = (".venv/", ".venv-sanity/", ".sim/", ".collections/", ".cache/", ".ansible/", ".pytest_cache/",
             ".hypothesis/", ".git/", "sim/", "tests/output/", "ee/", "awx/", "inventories/", "benchmarks/",
             "extensions/", "report/", "Makefile", "validate.sh")
REQUIRED = ("MANIFEST.json", "FILES.json", "plugins/", "roles/", "playbooks/validate.yml", "meta/runtime.yml",
            "meta/execution-environment.yml", "meta/ee-bindep.txt", "requirements.txt")


def _pins(path: Path) -> dict:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[name.strip().lower()] = version.strip()
    return pins


def _run(argv, cwd, **kwargs):
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=600, **kwargs, check=False)
    assert proc.returncode == 0, f"{' '.join(map(str, argv))}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _build(src: Path, out: Path) -> Path:
    _run([BIN / "ansible-galaxy", "collection", "build", "--force", "--output-path", out, src], cwd=src)
    return out / TARBALL


def _members(tarball: Path) -> list:
    with tarfile.open(tarball) as tar:
        return [m.name + ("/" if m.isdir() else "") for m in tar.getmembers()]


def _shipped(members: list, entry: str) -> bool:
    return any(m == entry or m.startswith(entry if entry.endswith("/") else entry + "/") for m in members)


def test_build_ignore_keeps_local_state_out(tmp_path):
    """galaxy.yml build_ignore on a synthetic tree holding every kind of local clutter a checkout has
    after make test, lint and sanity (deterministic, whatever this checkout happens to contain)."""
    tree = tmp_path / "tree"
    for rel in ("plugins/modules/x.py", "roles/r/tasks/main.yml", "playbooks/validate.yml", "meta/runtime.yml",
                "docs/x.md", "README.md", "requirements.txt", "tests/unit/test_x.py", "pytest.ini"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text("---\n")
    for rel in FORBIDDEN + ("old-build.tar.gz",):
        target = tree / rel.rstrip("/")
        if rel.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
            (target / "clutter.txt").write_text("x")
        else:
            target.write_text("x")
    shutil.copy(ROOT / "galaxy.yml", tree / "galaxy.yml")
    members = _members(_build(tree, tmp_path))
    shipped = [entry for entry in FORBIDDEN + ("old-build.tar.gz",) if _shipped(members, entry)]
    assert not shipped, f"add {[e.rstrip('/') for e in shipped]} to build_ignore in galaxy.yml"
    for entry in ("plugins/", "roles/", "playbooks/", "meta/", "docs/", "tests/unit/"):
        assert _shipped(members, entry), entry


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The collection built from this checkout into a copy of ee/, and the build context created from it.
    A file edited while the build reads it makes a tarball whose checksums do not match: build again."""
    tmp = tmp_path_factory.mktemp("ee")
    ee = tmp / "ee"
    shutil.copytree(ROOT / "ee", ee, ignore=shutil.ignore_patterns("context", "*.tar.gz"))
    for attempt in range(3):
        tarball = _build(ROOT, ee)
        context = tmp / f"context{attempt}"
        _run([BIN / "ansible-builder", "create", "-f", ee / "execution-environment.yml", "--context", context,
              "--output-filename", "Containerfile"], cwd=tmp)
        collections = tmp / f"collections{attempt}"
        kubernetes_core = Path(__import__("ansible_collections.kubernetes.core", fromlist=["x"]).__path__[0])
        shutil.copytree(kubernetes_core, collections / "ansible_collections" / "kubernetes" / "core")
        # The galaxy stage (WORKDIR /build = context/_build), offline: kubernetes.core 6.2.0 is pre-installed
        # from this venv, as Galaxy would provide it.
        proc = subprocess.run([BIN / "ansible-galaxy", "collection", "install", "--offline", "-r", "requirements.yml",
                               "--collections-path", collections], cwd=context / "_build", capture_output=True,
                              text=True, timeout=600, env={"ANSIBLE_GALAXY_DISABLE_GPG_VERIFY": "1",
                                                           "PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp)}, check=False)
        if proc.returncode == 0:
            return {"tarball": tarball, "context": context, "collections": collections, "install": proc}
        if "Checksum mismatch" not in proc.stdout + proc.stderr:
            break
    raise AssertionError(f"ansible-galaxy collection install failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def test_tarball_contents(built):
    members = _members(built["tarball"])
    assert built["tarball"].name == TARBALL
    for entry in REQUIRED:
        assert _shipped(members, entry), entry
    shipped = [entry for entry in FORBIDDEN if _shipped(members, entry)]
    assert not shipped, f"shipped in the collection: {shipped}; add them to build_ignore in galaxy.yml"
    assert not [m for m in members if m.endswith(".tar.gz")]
    with tarfile.open(built["tarball"]) as tar:
        manifest = json.load(tar.extractfile("MANIFEST.json"))
    assert manifest["collection_info"]["version"] == GALAXY["version"]
    assert manifest["collection_info"]["dependencies"] == GALAXY["dependencies"]


def test_context_files(built):
    context = built["context"]
    containerfile = (context / "Containerfile").read_text()
    assert (context / "_build" / "collections" / TARBALL).read_bytes() == built["tarball"].read_bytes()
    assert "COPY _build /build" in containerfile and "WORKDIR /build" in containerfile
    assert 'ARG ANSIBLE_INSTALL_REFS="ansible-core==2.19.14 ansible-runner==2.4.3"' in containerfile
    assert 'ARG PYCMD="/usr/bin/python3.11"' in containerfile
    assert f'ARG EE_BASE_IMAGE="{EE["images"]["base_image"]["name"]}"' in containerfile
    assert "dumb-init==1.2.5" in containerfile
    assert "ansible-galaxy collection install" in containerfile and "-r requirements.yml" in containerfile
    galaxy_reqs = yaml.safe_load((context / "_build" / "requirements.yml").read_text())["collections"]
    assert {"name": f"collections/{TARBALL}", "type": "file"} in galaxy_reqs
    assert _pins(context / "_build" / "requirements.txt") == _pins(ROOT / "ee" / "requirements.txt")
    assert "awscli" in _pins(context / "_build" / "requirements.txt")


def test_pins_match_the_project_environment():
    """The EE runs what the project's venv tests: the same ansible-core and ansible-runner, the
    kubernetes.core that ansible 12.3.0 ships, within galaxy.yml's range."""
    core = EE["dependencies"]["ansible_core"]["package_pip"]
    runner = EE["dependencies"]["ansible_runner"]["package_pip"]
    assert core == f"ansible-core=={importlib.metadata.version('ansible-core')}"
    assert core == f"ansible-core=={_pins(ROOT / 'requirements.txt')['ansible-core']}"
    assert core.split("==")[1].startswith("2.19.")
    assert runner == f"ansible-runner=={_pins(ROOT / 'test-requirements.txt')['ansible-runner']}"
    assert EE["version"] == 3
    reqs = yaml.safe_load((ROOT / "ee" / "requirements.yml").read_text())["collections"]
    pinned = next(r for r in reqs if r["name"] == "kubernetes.core")
    installed = json.loads((Path(__import__("ansible_collections.kubernetes.core", fromlist=["x"]).__path__[0])
                            / "MANIFEST.json").read_text())["collection_info"]["version"]
    assert pinned["version"] == installed
    low, high = (part.strip().lstrip("<>=") for part in GALAXY["dependencies"]["kubernetes.core"].split(","))

    def as_tuple(version):
        return tuple(int(x) for x in version.split("."))

    assert as_tuple(low) <= as_tuple(installed) < as_tuple(high)
    assert {"src": TARBALL, "dest": "collections"} in EE["additional_build_files"]
    assert {"name": f"collections/{TARBALL}", "type": "file"} in reqs


def test_galaxy_stage_installs_the_collection(built):
    installed = built["collections"] / "ansible_collections" / "rlstack" / "validation"
    assert "rlstack.validation:1.0.0 was installed successfully" in built["install"].stdout
    for rel in ("roles/l0_infrastructure", "plugins/callback/report.py", "playbooks/validate.yml",
                "meta/execution-environment.yml"):
        assert (installed / rel).exists(), rel


def test_introspection_brings_the_collection_dependencies(built):
    """The builder stage's introspect.py over the installed collections: the EE gets requirements.txt's
    runtime packages (not ansible/ansible-core, which the builder drops) and the SSH client."""
    build = built["context"] / "_build"
    proc = _run([sys.executable, build / "scripts" / "introspect.py", "introspect", "--user-pip=requirements.txt",
                 built["collections"]], cwd=build)
    found = yaml.safe_load(proc.stdout)
    python = [line.split("#")[0].strip() for line in found["python"]]
    runtime = {k: v for k, v in _pins(ROOT / "requirements.txt").items() if k not in ("ansible", "ansible-core")}
    for name, version in runtime.items():
        assert f"{name}=={version}" in python, name
    assert f"awscli=={_pins(ROOT / 'ee' / 'requirements.txt')['awscli']}" in python
    assert not [p for p in python if p.split("=")[0].strip().lower() in ("ansible", "ansible-core")]
    system = " ".join(found["system"])
    assert "openssh-clients [platform:rpm]" in system
