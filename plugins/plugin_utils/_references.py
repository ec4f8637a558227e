# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Reference integrity (controller only): every file that Ansible content names exists.

:class:`ReferenceScanner` resolves include/import_tasks, include/import_role tasks_from, template/copy src,
lookup('file'|'template') and ``{{ role_path }}/...`` of a collection's or repository's roles and playbooks;
:func:`kustomization_references` the resources, patches and generator files of kustomization.yaml files;
:func:`shell_source_references` the literal ``source``/``.`` paths of shell scripts.
"""

from __future__ import annotations

import glob
import os
import re

from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import LintError, check, finding
from ansible_collections.rlstack.validation.plugins.module_utils.lint._manifest_lint import YAML_SUFFIXES, display_path
from ansible_collections.rlstack.validation.plugins.module_utils.lint._yaml_marks import load_plain

REFERENCES_FIX = ("create the missing file or fix the path; Ansible fails only when it reaches the task, "
                  "possibly in the middle of a run on a cluster, and kubectl apply -k fails at once")


_ACTIONS = ("include_tasks", "import_tasks", "include_role", "import_role", "template", "copy", "script",
            "include_vars", "import_playbook", "include")
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
_LOOKUP = re.compile(
    r"""\b(?:lookup|query|q)\(\s*['"](?:ansible\.builtin\.|ansible\.legacy\.)?(file|template)['"]\s*,\s*"""
    r"""(['"])((?:(?!\2).)+)\2""")
_ROLE_PATH = re.compile(r"""\{\{\s*role_path\s*\}\}(/(?:[^\s'"{}]|\{\{[^}]*\}\})*)""")


def _first_word(text):
    """The first word of a free-form argument, keeping Jinja expressions ({{ a }}) whole."""
    blocks = []

    def keep(match):
        blocks.append(match.group(0))
        return "\x00%d\x00" % (len(blocks) - 1)

    masked = _JINJA.sub(keep, str(text).strip())
    word = masked.split()[0] if masked.split() else ""
    return re.sub("\x00(\\d+)\x00", lambda m: blocks[int(m.group(1))], word)


def _without_comments(text, path):
    """The text with comments blanked (line numbers kept): YAML comment lines, Jinja {# #} comments."""
    if path.endswith(".j2"):
        return re.sub(r"\{#.*?#\}", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return "\n".join("" if line.lstrip().startswith("#") else line for line in text.split("\n"))


def _short_action(key):
    for prefix in ("ansible.builtin.", "ansible.legacy."):
        if key.startswith(prefix):
            return key[len(prefix):]
    return key


def _role_of(path, roles_dir):
    """(role name, role dir) of a file under roles_dir, or (None, None)."""
    rel = os.path.relpath(path, roles_dir)
    if rel.startswith(".."):
        return None, None
    name = rel.split(os.sep, 1)[0]
    return name, os.path.join(roles_dir, name)


class ReferenceScanner:
    """Finds the file references of a collection's roles and playbooks and says whether each exists.

    root: the collection root (roles/ and playbooks/ below it); collection: its 'namespace.name', so
    FQCN roles and playbooks of this collection resolve to files. Roles and playbooks of other
    collections are reported as external and not checked.
    """

    def __init__(self, root, collection=""):
        self.root = os.path.abspath(str(root))
        self.collection = str(collection or "")
        self.roles_dir = os.path.join(self.root, "roles")
        self.playbooks_dir = os.path.join(self.root, "playbooks")

    # --- resolving

    def role_dir(self, name):
        """Directory of a role by short name or FQCN; None for another collection's role; '' when dynamic."""
        name = str(name or "").strip()
        if not name or _JINJA.search(name):
            return ""
        if name.count(".") >= 2:
            prefix, _dot, short = name.rpartition(".")
            if prefix != self.collection:
                return None
            name = short
        return os.path.join(self.roles_dir, name)

    def _candidates(self, path, ref, kind):
        """Directories where Ansible looks for `ref` (relative) from the file at `path`."""
        here = os.path.dirname(path)
        _role, role_dir = _role_of(path, self.roles_dir)
        sub = {"tasks": "tasks", "template": "templates", "file": "files", "vars": "vars"}.get(kind, "")
        bases = []
        if role_dir:
            if sub:
                bases.append(os.path.join(role_dir, sub))
            bases.append(role_dir)
            bases.append(here)
            if sub:
                bases.append(os.path.join(here, "..", sub))
        else:
            if sub:
                bases.append(os.path.join(here, sub))
            bases.append(here)
        return bases

    def _exists(self, candidate):
        if _JINJA.search(candidate):
            pattern = _JINJA.sub("*", candidate)
            return len(glob.glob(pattern)) > 0
        return os.path.exists(candidate)

    def resolve(self, path, ref, kind):
        """(status, where): status is ok, missing, dynamic or external."""
        ref = str(ref).strip()
        _role, role_dir = _role_of(path, self.roles_dir)
        if role_dir:
            ref = re.sub(r"\{\{\s*role_path\s*\}\}", role_dir.replace("\\", "/"), ref)
        if not ref or _JINJA.sub("", ref).strip("/*. ") == "" or _JINJA.match(ref):
            return "dynamic", ""
        if os.path.isabs(ref):
            return ("ok" if self._exists(ref) else "missing"), display_path(os.path.dirname(ref), self.root)
        bases = self._candidates(path, ref, kind)
        for base in bases:
            if self._exists(os.path.join(base, ref)):
                return "ok", os.path.normpath(os.path.join(base, ref))
        return "missing", ", ".join(os.path.relpath(os.path.normpath(b), self.root) for b in bases[:2])

    def _role_file(self, role_name, sub, file_name):
        role_dir = self.role_dir(role_name)
        if role_dir is None:
            return "external", role_name
        if role_dir == "":
            return "dynamic", ""
        if not os.path.isdir(role_dir):
            return "missing", "role %s (%s)" % (role_name, os.path.relpath(role_dir, self.root))
        if file_name is None:
            return "ok", role_dir
        if _JINJA.search(str(file_name)):
            if _JINJA.sub("", str(file_name)).strip("/*. ") == "":
                return "dynamic", ""
        for suffix in ("", ".yml", ".yaml"):
            if self._exists(os.path.join(role_dir, sub, str(file_name) + suffix)):
                return "ok", os.path.join(role_dir, sub, str(file_name) + suffix)
        return "missing", os.path.relpath(os.path.join(role_dir, sub), self.root)

    # --- finding

    def scan_file(self, path):
        """References of one file: [{file, line, kind, ref, status, where}]."""
        try:
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8", errors="replace")
        except (IOError, OSError) as exc:
            return [{"file": path, "line": 0, "kind": "read", "ref": path, "status": "missing", "where": str(exc)}]
        found = []
        text = _without_comments(text, path)
        if path.endswith(YAML_SUFFIXES):
            try:
                docs = load_plain(text, path)
            except LintError:
                docs = []  # yamllint reports the syntax; nothing to resolve
            for doc in docs:
                self._walk(path, doc, found, in_play=path.startswith(self.playbooks_dir + os.sep))
        for match in _LOOKUP.finditer(text):
            found.append(("template" if match.group(1) == "template" else "file", match.group(3), None))
        for match in _ROLE_PATH.finditer(text):
            found.append(("role_path", "{{ role_path }}" + match.group(1), None))
        out = []
        seen = set()
        lines = text.splitlines()
        for kind, ref, role_info in found:
            key = (kind, str(ref), str(role_info))
            if key in seen:
                continue
            seen.add(key)
            if kind == "role":
                status, where = self._role_file(ref, "", None)
            elif kind in ("tasks_from", "vars_from", "defaults_from", "handlers_from"):
                sub = kind.split("_")[0]
                status, where = self._role_file(role_info, sub, ref)
            elif kind == "playbook":
                status, where = self._playbook(path, ref)
            elif kind == "role_path":
                status, where = self.resolve(path, ref, "file")
            else:
                status, where = self.resolve(path, ref, kind)
            needle = str(ref).replace("{{ role_path }}", "").strip("/") or str(ref)
            line = next((i + 1 for i, l in enumerate(lines) if needle in l), 0)
            out.append({"file": path, "line": line, "kind": kind, "ref": str(ref), "status": status,
                        "where": where if status != "ok" else ""})
        return out

    def _playbook(self, path, ref):
        ref = str(ref)
        if _JINJA.search(ref):
            return "dynamic", ""
        if ref.count(".") >= 2 and not ref.endswith(YAML_SUFFIXES):
            prefix, _dot, short = ref.rpartition(".")
            if prefix != self.collection:
                return "external", ref
            for suffix in (".yml", ".yaml"):
                if os.path.exists(os.path.join(self.playbooks_dir, short + suffix)):
                    return "ok", ""
            return "missing", "playbooks"
        candidate = os.path.join(os.path.dirname(path), ref)
        if os.path.exists(candidate):
            return "ok", ""
        return "missing", os.path.relpath(os.path.dirname(path), self.root)

    def _walk(self, path, node, found, in_play=False):
        if isinstance(node, list):
            for item in node:
                self._walk(path, item, found, in_play)
            return
        if not isinstance(node, dict):
            return
        if in_play and isinstance(node.get("roles"), list) and ("hosts" in node or "tasks" in node):
            for item in node["roles"]:
                name = item if isinstance(item, str) else (item.get("role") or item.get("name")
                                                           if isinstance(item, dict) else None)
                if name:
                    found.append(("role", name, None))
        for key, value in node.items():
            action = _short_action(str(key))
            if action in ("include_tasks", "import_tasks", "include"):
                ref = (value.get("file") or value.get("_raw_params")) if isinstance(value, dict) else value
                if isinstance(ref, str) and ref.strip():
                    found.append(("tasks", ref.strip(), None))
            elif action in ("include_role", "import_role") and isinstance(value, dict) and value.get("name"):
                found.append(("role", value["name"], None))
                for option in ("tasks_from", "vars_from", "defaults_from", "handlers_from"):
                    if value.get(option):
                        found.append((option, value[option], value["name"]))
            elif action == "import_playbook" and isinstance(value, str):
                found.append(("playbook", value, None))
            elif action in ("template", "copy") and isinstance(value, dict) and isinstance(value.get("src"), str):
                if not value.get("remote_src"):
                    found.append(("template" if action == "template" else "file", value["src"], None))
            elif action == "script" and ("name" in node or len(node) <= 3):
                ref = value.get("cmd") if isinstance(value, dict) else value
                if isinstance(ref, str) and ref.strip():
                    found.append(("file", _first_word(ref), None))
            elif action == "include_vars" and ("name" in node or len(node) <= 3):
                if isinstance(value, dict):
                    ref = value.get("file") or value.get("dir") or value.get("_raw_params")
                else:
                    ref = _first_word(value) if isinstance(value, str) else None
                if isinstance(ref, str) and ref.strip():
                    found.append(("vars", ref.strip(), None))
            if isinstance(value, (dict, list)):
                task_list = key in ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always")
                self._walk(path, value, found, in_play and task_list)

    def files(self, paths=("roles", "playbooks")):
        """The YAML and Jinja files under the given paths (relative to root), without roles' files/ dirs."""
        out = []
        for rel in paths:
            base = rel if os.path.isabs(str(rel)) else os.path.join(self.root, str(rel))
            if os.path.isfile(base):
                out.append(base)
                continue
            for root, dirs, files in os.walk(base):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("files", "__pycache__"))
                for name in sorted(files):
                    if name.endswith(YAML_SUFFIXES + (".j2",)):
                        out.append(os.path.join(root, name))
        return out


def _line_of(text, needle):
    for number, line in enumerate(text.splitlines(), start=1):
        if needle and needle in line:
            return number
    return 0


KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def kustomization_references(path):
    """[{file, line, kind, ref, status, where}] of a kustomization file: resources, components, bases,
    patchesStrategicMerge, patches[].path, configMapGenerator/secretGenerator files and envs. Remote
    resources (URLs, git refs) are external."""
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        docs = load_plain(text, path)
    except (IOError, OSError, LintError):
        return []
    here = os.path.dirname(path)
    refs = []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        for key in ("resources", "components", "bases", "patchesStrategicMerge", "crds"):
            for item in doc.get(key) or []:
                if isinstance(item, str):
                    refs.append((key, item))
        for item in doc.get("patches") or []:
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                refs.append(("patches", item["path"]))
        for key in ("configMapGenerator", "secretGenerator"):
            for gen in doc.get(key) or []:
                if not isinstance(gen, dict):
                    continue
                for item in list(gen.get("files") or []) + list(gen.get("envs") or []) + (
                        [gen["env"]] if isinstance(gen.get("env"), str) else []):
                    if isinstance(item, str):
                        refs.append((key, item.split("=", 1)[-1]))
    out = []
    for kind, ref in refs:
        if re.match(r"^(https?://|git@|ssh://|github\.com/)", ref) or "?ref=" in ref:
            status, where = "external", ref
        else:
            status = "ok" if os.path.exists(os.path.join(here, ref)) else "missing"
            where = "" if status == "ok" else display_path(here, os.path.dirname(here)) or "."
        out.append({"file": path, "line": _line_of(text, ref), "kind": kind, "ref": ref, "status": status,
                    "where": where})
    return out


_SOURCE = re.compile(r"""^\s*(?:source|\.)\s+(['"]?)([^\s'"$`;&|]+)\1\s*(?:$|[;&|#])""")


def shell_source_references(path, root):
    """[{file, line, kind, ref, status, where}] of the literal `source FILE` / `. FILE` lines of a shell
    script (a path with a variable or a command substitution is dynamic and left out). Bash reads a
    relative path from the working directory; it counts as found next to the script or at the root."""
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except (IOError, OSError):
        return []
    out = []
    for number, line in enumerate(lines, start=1):
        match = _SOURCE.match(line)
        if not match:
            continue
        ref = match.group(2)
        if ref.startswith("~") or ref in ("/dev/stdin",):
            continue
        if os.path.isabs(ref):
            candidates = [ref]
        else:
            candidates = [os.path.join(os.path.dirname(path), ref), os.path.join(root, ref)]
        status = "ok" if any(os.path.exists(c) for c in candidates) else "missing"
        if status == "missing" and os.path.isabs(ref) and not ref.startswith(root):
            status = "external"  # a file of the image or the host (/etc/profile.d/...)
        out.append({"file": path, "line": number, "kind": "source", "ref": ref, "status": status,
                    "where": "" if status == "ok" else "the script's directory and the repository root"})
    return out


def reference_checks(root, collection="", paths=("roles", "playbooks"), kustomizations=(), scripts=()):
    """(checks, references): one failing `references` check per missing file (its node file:line), one
    passing check per file whose references all resolve, and every reference found.

    paths: directories with Ansible content (relative to root; missing ones are left out);
    kustomizations, scripts: kustomization files and shell scripts whose references are checked."""
    scanner = ReferenceScanner(root, collection)
    ansible_paths = [p for p in paths or [] if os.path.exists(p if os.path.isabs(str(p)) else os.path.join(scanner.root, str(p)))]
    found_by_file = []
    for path in scanner.files(ansible_paths):
        found_by_file.append((path, scanner.scan_file(path)))
    for path in kustomizations or []:
        found_by_file.append((path, kustomization_references(path)))
    for path in scripts or []:
        found_by_file.append((path, shell_source_references(path, scanner.root)))
    checks, refs = [], []
    for path, found in found_by_file:
        if not found:
            continue
        rel = display_path(path, scanner.root)
        for item in found:
            item["file"] = rel
        refs.extend(found)
        missing = [r for r in found if r["status"] == "missing"]
        for item in missing:
            checks.append(check("references", "%s:%d" % (rel, item["line"]), op="eq", actual=1, expected=0,
                                unit="missing file", hint=REFERENCES_FIX,
                                message="%s line %d: %s %s does not exist (looked in %s)"
                                        % (rel, item["line"], item["kind"], item["ref"], item["where"])))
        if not missing:
            static = [r for r in found if r["status"] == "ok"]
            checks.append(check("references", rel, op="eq", actual=0, expected=0,
                                unit="missing of %d" % len(static)))
    return checks, refs


def reference_findings(refs):
    """Findings (``_lint_base.finding``) of the missing references."""
    return [finding("references", "error", "%s %s does not exist (looked in %s)" % (r["kind"], r["ref"], r["where"]),
                    REFERENCES_FIX, file=r["file"], line=r["line"]) for r in refs if r["status"] == "missing"]
