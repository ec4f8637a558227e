# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Load the AWX data of awx/ (the vars files of playbooks/awx_configure.yml) as plain Python data."""
from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
AWX_DIR = ROOT / "awx"
PLAYBOOK = ROOT / "playbooks" / "awx_configure.yml"
# The awx.awx modules playbooks/awx_configure.yml calls.
MODULES = ("organization", "execution_environment", "project", "credential_type", "credential", "inventory",
           "inventory_source", "inventory_source_update", "job_template", "workflow_job_template",
           "workflow_job_template_node")


class _Loader(yaml.SafeLoader):
    """SafeLoader that reads Ansible's `!unsafe` tag as the plain string it marks."""


def _unsafe(loader, node):
    return loader.construct_scalar(node)


_Loader.add_constructor("!unsafe", _unsafe)


def load_yaml(path: Path):
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_Loader)  # noqa: S506 - SafeLoader subclass


def load() -> dict:
    """Every variable of awx/*.yml, merged (the files must not define a variable twice)."""
    merged: dict = {}
    for path in sorted(AWX_DIR.glob("*.yml")):
        data = load_yaml(path) or {}
        twice = set(merged) & set(data)
        if twice:
            raise AssertionError(f"{path.name} defines {sorted(twice)} again")
        merged.update(data)
    return merged
