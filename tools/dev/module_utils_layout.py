# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Group plugins/module_utils/ into sub-packages by domain, and rewrite every reference to the old paths.

  .venv/bin/python tools/dev/module_utils_layout.py            # move what is still flat, rewrite references
  .venv/bin/python tools/dev/module_utils_layout.py --check    # exit 1 and list what still uses an old path

Safe to run again: after merging a branch that still imports `...plugins.module_utils import _checks` or names
`plugins/module_utils/_checks.py`, or that adds a module under an old flat name, a second run moves that file and
rewrites those references (a module changed on a branch but already moved here: take the branch's text into the
new path first, e.g. `git show BRANCH:plugins/module_utils/_x.py > plugins/module_utils/<sub>/_x.py`). Module
names do not change, only their package, so code that says `_checks.check(...)` stays as it is; only import
lines, dotted strings (mock.patch targets) and file paths in text are rewritten.

MAPPING is the table old module -> new dotted path under module_utils; modules not in it stay at the top
(the run's registry and the shared facts every domain reads: _levels, _plan, _data, _frameworks, _limits).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MU = ROOT / "plugins" / "module_utils"
PKG = "ansible_collections.rlstack.validation.plugins.module_utils"

SUBPACKAGES = {
    "nccl": "The NCCL log reader: the streaming parser, nccl-tests tables and JSON files, the failure-signature\n"
            "catalog, network facts, and the readers of a parse result (standard library only, nothing else\n"
            "of the collection: tests/unit/plugins/module_utils/test_nccl.py).",
    "k8s": "Talking to the Kubernetes API: which cluster and credentials (cluster access), bounds on every call\n"
           "(API guard), waits on pods and Jobs, reading objects' state, deleting a run's objects, and the\n"
           "diagnosis of a pod or Job that did not do what a level waited for.",
    "workloads": "Building what a level creates: the probe pods and their protocol (entrypoint, output markers),\n"
                 "the nccl-tests MPIJob and TrainJob, the L5/L6 example Jobs, and the description of all of it\n"
                 "for local mode.",
    "verdicts": "Turning evidence into verdicts and reports: the level checks and the NCCL checks, level_assert's\n"
                "verdict, the report (table, report.json, junit.xml), log excerpts, the cluster baseline, the\n"
                "Phase 0 fingerprint and gate.",
    "gpu": "GPU nodes: the EC2 instance profiles (what a node of a type should show) and L0's GPU health checks.",
    "lint": "Local mode: linting a user's repository (manifests, pitfall rules, schemas, shell syntax, YAML\n"
            "positions, envsubst rendering, node groups declared in Terraform and YAML).",
    "fleet": "Acting on a fleet: bad-node findings and patches, bad-node isolation from pair runs, and the run's\n"
             "cost in GPU time and money.",
}

MAPPING = {
    # nccl
    "_nccl": "nccl._nccl",
    "_nccl_base": "nccl._nccl_base",
    "_nccl_catalog": "nccl._nccl_catalog",
    "_nccl_facts": "nccl._nccl_facts",
    "_nccl_json": "nccl._nccl_json",
    "_nccl_json_files": "nccl._nccl_json_files",
    "_nccl_network": "nccl._nccl_network",
    "_nccl_parser": "nccl._nccl_parser",
    "_nccl_results": "nccl._nccl_results",
    "_nccl_signatures": "nccl._nccl_signatures",
    "_nccl_tables": "nccl._nccl_tables",
    # k8s
    "_api_guard": "k8s._api_guard",
    "_cluster_access": "k8s._cluster_access",
    "_diagnose": "k8s._diagnose",
    "_fanout": "k8s._fanout",
    "_job_watch": "k8s._job_watch",
    "_k8s_status": "k8s._k8s_status",
    "_objects_absent": "k8s._objects_absent",
    "_pod_batch": "k8s._pod_batch",
    "_pod_wait": "k8s._pod_wait",
    # workloads
    "_describe": "workloads._describe",
    "_probe_pods": "workloads._probe_pods",
    "_trainjob": "workloads._trainjob",
    "_workloads": "workloads._workloads",
    # verdicts
    "_baseline": "verdicts._baseline",
    "_checks": "verdicts._checks",
    "_nccl_checks": "verdicts._nccl_checks",
    "_fingerprint": "verdicts._fingerprint",
    "_gate": "verdicts._gate",
    "_level_assert": "verdicts._level_assert",
    "_log_excerpt": "verdicts._log_excerpt",
    "_report": "verdicts._report",
    "_verdict": "verdicts._verdict",
    # gpu
    "_gpu_health": "gpu._gpu_health",
    "_profiles": "gpu._profiles",
    # lint
    "_envsubst": "lint._envsubst",
    "_manifest_sources": "lint._manifest_sources",
    "_shell_env": "lint._shell_env",
    "_k8s_schema": "lint._k8s_schema",
    "_lint_base": "lint._lint_base",
    "_manifest_lint": "lint._manifest_lint",
    "_node_groups": "lint._node_groups",
    "_node_groups_tf": "lint._node_groups_tf",
    "_pitfall_objects": "lint._pitfall_objects",
    "_pitfall_rules": "lint._pitfall_rules",
    "_render_plan": "lint._render_plan",
    "_shell_syntax": "lint._shell_syntax",
    "_yaml_marks": "lint._yaml_marks",
    # fleet
    "_bad_nodes": "fleet._bad_nodes",
    "_cost": "fleet._cost",
    "_isolate": "fleet._isolate",
}

# Where references live; generated output, virtual environments and the sim's state are left alone.
SCAN = ("plugins", "roles", "tests", "sim", "docs", "tools", "benchmarks", "playbooks", "meta", "awx", "extensions",
        "README.md", "CONTRIBUTING.md", "Makefile", "pytest.ini", ".ci")
SKIP_PARTS = {".venv", "output", "__pycache__", ".sim", ".git", "node_modules"}
TEXT_SUFFIXES = {".py", ".yml", ".yaml", ".md", ".j2", ".sh", ".txt", ".cfg", ".ini", ".rst", ".toml", ".json", ""}
# Globs and patterns in prose that name a group of modules.
LITERALS = {
    "module_utils/_nccl*.py": "module_utils/nccl/_nccl*.py",
    "module_utils/_nccl_*.py": "module_utils/nccl/_nccl_*.py",
    "module_utils/_pitfall*.py": "module_utils/lint/_pitfall*.py",
    "module_utils/_node_groups*.py": "module_utils/lint/_node_groups*.py",
}

INIT_HEADER = ("# -*- coding: utf-8 -*-\n# Copyright (c) rlstack.validation contributors\n"
               "# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)\n"
               "# SPDX-License-Identifier: GPL-3.0-or-later\n")


def files():
    for top in SCAN:
        path = ROOT / top
        if path.is_file():
            yield path
        elif path.is_dir():
            for p in sorted(path.rglob("*")):
                if p.is_file() and not (SKIP_PARTS & set(p.relative_to(ROOT).parts)) and p.suffix in TEXT_SUFFIXES \
                        and p != Path(__file__).resolve():
                    yield p


def sub_of(module):
    return MAPPING[module].rsplit(".", 1)[0]


def move_files(dry):
    """git mv every module still at the top into its sub-package; write each sub-package's __init__.py."""
    moved = []
    for sub, doc in SUBPACKAGES.items():
        init = MU / sub / "__init__.py"
        if not init.exists():
            moved.append(str(init.relative_to(ROOT)))
            if not dry:
                init.parent.mkdir(exist_ok=True)
                init.write_text(INIT_HEADER + '"""%s\n"""\n' % doc)
                subprocess.run(["git", "add", str(init)], cwd=ROOT, check=False, capture_output=True)
    for old, new in MAPPING.items():
        src = MU / (old + ".py")
        dest = MU / (new.replace(".", "/") + ".py")
        if src.exists():
            if dest.exists():
                sys.exit("both %s and %s exist: merge the old one into the new one by hand, then run again"
                         % (src.relative_to(ROOT), dest.relative_to(ROOT)))
            moved.append("%s -> %s" % (src.relative_to(ROOT), dest.relative_to(ROOT)))
            if not dry:
                if subprocess.run(["git", "mv", str(src), str(dest)], cwd=ROOT, check=False, capture_output=True).returncode != 0:
                    src.rename(dest)
    return moved


_ALIAS = r"[A-Za-z_][A-Za-z0-9_]*(?:\s+as\s+[A-Za-z_][A-Za-z0-9_]*)?"
FROM_PKG = re.compile(r"^(?P<indent>[ \t]*)from %s import (?P<names>\((?:[^()]*)\)|%s(?:\s*,\s*%s)*)(?P<tail>[ \t]*(?:#[^\n]*)?)$"
                      % (re.escape(PKG), _ALIAS, _ALIAS), re.M)


def rewrite_from_pkg(match):
    """`from ...module_utils import _a, _b as b` -> one import per package, in the order of first use."""
    indent, tail = match.group("indent"), match.group("tail")
    names = [n.strip() for n in match.group("names").strip("()").replace("\n", " ").split(",") if n.strip()]
    groups = {}
    for name in names:
        module = name.split()[0]
        where = PKG + ("." + sub_of(module) if module in MAPPING else "")
        groups.setdefault(where, []).append(name)
    if list(groups) == [PKG]:
        return match.group(0)
    lines = []
    for where, group in groups.items():
        line = "%sfrom %s import %s" % (indent, where, ", ".join(group))
        if len(line) > 120:
            names = "".join("%s    %s,\n" % (indent, n) for n in group)
            line = "%sfrom %s import (\n%s%s)" % (indent, where, names, indent)
        lines.append(line)
    lines[0] += tail
    return "\n".join(lines)


DOTTED = re.compile(r"%s\.(?P<mod>_[a-z0-9_]+)\b" % re.escape(PKG))
SLASHED = re.compile(r"(?P<pre>module_utils/)(?P<mod>_[a-z0-9_]+)(?P<post>\.py\b)")
# os.path.join(..., "module_utils", "_api_guard.py") (roles/runner/files/api_guard/sitecustomize.py loads it by path)
JOINED = re.compile(r"(?P<pre>([\"'])module_utils\2,\s*)(?P<q>[\"'])(?P<mod>_[a-z0-9_]+)\.py(?P=q)")


def rewrite_text(text):
    text = FROM_PKG.sub(rewrite_from_pkg, text)
    text = DOTTED.sub(lambda m: "%s.%s" % (PKG, MAPPING[m.group("mod")]) if m.group("mod") in MAPPING else m.group(0),
                      text)
    text = SLASHED.sub(lambda m: "%s%s%s" % (m.group("pre"), MAPPING[m.group("mod")].replace(".", "/"),
                                             m.group("post")) if m.group("mod") in MAPPING else m.group(0), text)
    text = JOINED.sub(lambda m: "%s%s%s.py%s" % (
        m.group("pre"), "".join("%s%s%s, " % (m.group("q"), part, m.group("q"))
                                for part in MAPPING[m.group("mod")].split(".")[:-1]),
        m.group("q") + m.group("mod"), m.group("q")) if m.group("mod") in MAPPING else m.group(0), text)
    for old, new in LITERALS.items():
        text = text.replace(old, new)
    return text


def main_check():
    """What --check does, for the unit test: 0 when nothing is at or names an old path."""
    return run(check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 when something uses an old path")
    return run(ap.parse_args().check)


def run(check):
    moved = move_files(dry=check)
    changed = []
    for path in files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        new = rewrite_text(text)
        if new != text:
            changed.append(str(path.relative_to(ROOT)))
            if not check:
                path.write_text(new, encoding="utf-8")
    for line in moved:
        print(("would move " if check else "moved ") + line)
    for name in changed:
        print(("would rewrite " if check else "rewrote ") + name)
    if check and (moved or changed):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
