"""A run needs only the collections galaxy.yml declares: a module of any other collection sits in a task file
that is included only when its feature is configured (found on the H200 machine, 2026-12-01: with ansible-core
and kubernetes.core alone, every run stopped at phase0_gate.yml's amazon.aws.s3_object)."""
import pathlib
import re

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
# task files that use an optional collection, and what includes them only when configured
OPTIONAL = {
    "roles/runner/tasks/evidence_s3.yml": "amazon.aws",   # validation_evidence_s3
    "playbooks/awx_configure.yml": "awx.awx",             # configures AWX itself, not a validation run
}
MODULE = re.compile(r"^\s*-?\s*([a-z_]+\.[a-z_]+)\.[a-z_0-9]+:\s", re.M)


def _used_collections(path):
    return set(MODULE.findall(path.read_text(encoding="utf-8")))


def test_every_task_file_uses_only_declared_collections():
    galaxy = yaml.safe_load((ROOT / "galaxy.yml").read_text(encoding="utf-8"))
    allowed = {"ansible.builtin", "rlstack.validation", *galaxy.get("dependencies", {})}
    stray = {}
    for path in sorted([*ROOT.glob("roles/*/tasks/*.yml"), *ROOT.glob("playbooks/*.yml")]):
        rel = str(path.relative_to(ROOT))
        extra = _used_collections(path) - allowed - {OPTIONAL.get(rel)}
        if extra:
            stray[rel] = sorted(extra)
    assert not stray, f"modules of undeclared collections outside the optional task files: {stray}"


def test_optional_task_files_are_included_only_when_configured():
    for rel, collection in OPTIONAL.items():
        assert collection in _used_collections(ROOT / rel), f"{rel} no longer uses {collection}: drop it from OPTIONAL"
    includers = [p for p in ROOT.glob("roles/*/tasks/*.yml") if "evidence_s3.yml" in p.read_text(encoding="utf-8")
                 and p.name != "evidence_s3.yml"]
    assert len(includers) == 2, includers
    for path in includers:
        for task in _tasks(yaml.safe_load(path.read_text(encoding="utf-8"))):
            if "evidence_s3.yml" in str(task.get("ansible.builtin.include_tasks", task.get("ansible.builtin.include_role", ""))):
                assert "runner_evidence_s3.bucket" in str(task.get("when", "")), (path, task["name"])


def _tasks(items):
    for item in items or []:
        yield item
        for key in ("block", "rescue", "always"):
            yield from _tasks(item.get(key))
