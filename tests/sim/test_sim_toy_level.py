"""A new level is a registry row and a role, and no runner file (issue 27, item 1).

The test builds a throw-away copy of the collection, adds a toy level L7 there exactly as CONTRIBUTING.md's
"Recipe: add a level" says (part A: what a run needs), and runs it on the simulated cluster with
`--tags l7`: the level runs its probe pod, is judged by its own <id>_checks (vars/main.yml), gets its row in report.json, and
leaves nothing behind. The toy probe is named probe_smoke.py so the sim replays the committed smoke fixture
(sim/replay/probes/probe_smoke/healthy/, its README says so): the sim that runs is this checkout's.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import simkit

pytestmark = pytest.mark.sim

LEVEL_ID = "l7_toy"

# Step 1: the registry row (plugins/module_utils/_levels.py, LEVELS, in run order: last).
REGISTRY_ROW = """\
    {"id": "l7_toy", "level": "L7", "name": "Toy", "order": 7, "tags": ["l7"], "skip_to": "7",
     "kind": "probe", "probe": "probe_smoke.py", "local": ["probe_pod"]},
"""

# Step 2: the role, roles/l7_toy/ (the runner's files are not touched).
ROLE = {
    "defaults/main.yml": """\
---
# L7 toy: one probe pod on the first GPU node; its probe must say ok.
l7_toy_timeout_s: 120
""",
    "meta/argument_specs.yml": """\
---
argument_specs:
  main:
    short_description: "L7 toy: one probe pod on the first GPU node"
    options:
      l7_toy_timeout_s:
        type: int
        default: 120
        description: Seconds the probe may take.
""",
    "meta/main.yml": """\
---
galaxy_info:
  author: rlstack.validation maintainers
  description: "L7 toy: one probe pod on the first GPU node"
  license: GPL-3.0-or-later
  min_ansible_version: "2.19"
  platforms:
    - name: GenericLinux
      versions: [all]
  galaxy_tags: [gpu, kubernetes, validation]
dependencies: []
""",
    "files/probe_smoke.py": """\
\"\"\"L7 toy probe: one JSON object on the last stdout line (docs/probes.md).\"\"\"
import json
print(json.dumps({"probe": "smoke", "ok": True}))
""",
    "tasks/describe.yml": """\
---
- name: Describe L7
  ansible.builtin.set_fact:
    l7_toy_description:
      id: l7_toy
      probe:
        script: "{{ role_path }}/files/probe_smoke.py"
        launcher: "{{ runner_python }}"
        params: {}
        timeout_s: "{{ l7_toy_timeout_s | int }}"
        storage: false
        env: {}
      targets: "{{ runner_gpu_nodes[:1] | map('combine', {'gpus': 1, 'efa': 0}) | list }}"
      mpijob: null
""",
    "vars/main.yml": """\
---
# templated when the runner records the verdict (tasks/finish_level.yml reads <id>_checks)
l7_toy_checks:
  - name: toy_ok
    node: "{{ __l7_toy_node }}"
    op: "true"
    actual: "{{ ((runner_probe_results[__l7_toy_node] | default({})).data | default({})).ok | default(false) }}"
    expected: true
    fail_msg: the toy probe did not say ok
    hint: read the probe pod's log
__l7_toy_node: "{{ runner_probe_targets[0].node }}"
""",
    "tasks/main.yml": """\
---
- name: Run L7
  ansible.builtin.import_role:
    name: rlstack.validation.runner
    tasks_from: level.yml
  vars:
    runner_level_id: l7_toy
""",
}

# Step 3: its entry in playbooks/validate.yml, after L6 (tags: _levels.cumulative_tags(index)).
PLAYBOOK_ENTRY = """\
        - name: L7 toy
          ansible.builtin.import_role: {name: rlstack.validation.l7_toy}
          tags: [l7, from_l0, from_l1, from_l2, from_l3, from_phase0, from_l4, from_l5, from_l6, from_l7]
          when: "'l7_toy' in runner_plan_ids and not runner_stop"
"""


def add_toy_level(root: Path) -> None:
    """CONTRIBUTING.md's recipe, part A, on the copy at `root`."""
    registry = root / "plugins/module_utils/_levels.py"
    text = registry.read_text()
    end = text.index("\n)\n", text.index("LEVELS = ("))
    registry.write_text(text[:end + 1] + REGISTRY_ROW + text[end + 1:])
    for name, content in ROLE.items():
        path = root / "roles" / LEVEL_ID / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    playbook = root / "playbooks/validate.yml"
    text = playbook.read_text()
    anchor = "      always:\n        - name: Finish the run\n"
    assert anchor in text
    playbook.write_text(text.replace(anchor, PLAYBOOK_ENTRY + anchor, 1))


def copy_collection(dest: Path) -> Path:
    """Copy what git tracks or would track (not .venv, a running cluster's state and sockets, reports)."""
    listing = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=str(simkit.ROOT), capture_output=True, check=True).stdout.decode()
    for name in filter(None, listing.split("\0")):
        source, target = simkit.ROOT / name, dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, target)
    return dest


def test_a_toy_level_runs_from_a_registry_row_and_a_role(core, tmp_path):
    root = copy_collection(tmp_path / "collection")
    runner_before = {p.name: p.read_bytes() for p in (root / "roles/runner").rglob("*") if p.is_file()}
    add_toy_level(root)
    assert {p.name: p.read_bytes() for p in (root / "roles/runner").rglob("*") if p.is_file()} == runner_before
    report_dir = tmp_path / "report"
    env = dict(os.environ, ANSIBLE_CONFIG=str(root / "ansible.cfg"),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    env.pop("RLSTACK_REPORT_DIR", None)
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "playbooks/validate.yml", "-i", "inventories/sim",
           "--tags", "l7", "-e", f"validation_kubeconfig={simkit.KUBECONFIG}",
           "-e", f"validation_report_dir={report_dir}"]
    proc = subprocess.run(cmd, cwd=str(root), env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    cluster = json.loads((report_dir / "report.json").read_text())["clusters"][0]
    rows = {level["id"]: level for level in cluster["levels"]}
    toy = rows[LEVEL_ID]
    assert toy["status"] == "PASS", toy
    assert toy["level"] == "L7" and toy["name"] == "Toy"
    assert [c["name"] for c in toy["checks"]] == ["toy_ok"]
    assert [r["status"] for i, r in rows.items() if i != LEVEL_ID] == ["SKIPPED"] * (len(rows) - 1)
    # nothing the run created outlives it
    left = core.list_pod_for_all_namespaces(label_selector=f"{simkit.LEVEL_LABEL}={LEVEL_ID}").items
    assert [p.metadata.name for p in left if not p.metadata.deletion_timestamp] == []
