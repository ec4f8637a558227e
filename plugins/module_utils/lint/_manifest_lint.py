# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Lint Kubernetes manifest files as they would be applied: render the ``${VAR}`` placeholders with the
user's values (``_envsubst``), load the YAML with line marks and resolved anchors (``_yaml_marks``), check
each object against its schema (``_k8s_schema``) and the pitfall rules (``_pitfall_rules``), and return
findings that each name file, line, column, object and container.

A YAML file is a manifest when it holds a Kubernetes object (a string apiVersion and kind), wherever it
is: discovery is by content, not by folder. Tool configuration (eksctl ClusterConfig, Kustomization, ...)
and Helm chart templates are not cluster objects and are left out.

Standard library only, Python 3.8 syntax (PyYAML through ``_yaml_marks``).
"""

from __future__ import annotations

import os
import re

from ansible_collections.rlstack.validation.plugins.module_utils.lint import (
    _envsubst,
    _k8s_schema,
    _node_groups,
    _node_groups_tf,
    _pitfall_rules,
    _render_plan,
)
from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import (
    LintError, finding, fmt_path, is_k8s_object, object_label)
from ansible_collections.rlstack.validation.plugins.module_utils.lint._yaml_marks import line_of, load_all

YAML_SUFFIXES = (".yml", ".yaml")
ENVSUBST_MODES = ("auto", "all", "off")

# Findings of the manifest row that are not pitfall rules (their fix, severity is fixed).
SCHEMA_FIX = ("fix the field named: `kubectl apply` (server-side field validation Strict) rejects the object "
              "as it is")
SCHEMA_MISSING_FIX = ("give the schema of this kind with local_checks_crd_schemas (a CRD file), or keep "
                      "local_checks_unknown_kinds=skip to accept kinds without a schema")
YAML_FIX = "fix the YAML syntax at the line named (yamllint shows it too), or render templates before linting them"


def display_path(path, base):
    """A path relative to base when it is below base, else as given."""
    path = str(path)
    if not base:
        return path
    try:
        rel = os.path.relpath(path, base)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def is_helm_template(path):
    """True for a file under templates/ of a Helm chart (a Chart.yaml next to templates/): Go templates,
    not manifests, until `helm template` renders them."""
    parts = os.path.abspath(path).split(os.sep)
    for index in range(len(parts) - 1, 0, -1):
        if parts[index] == "templates":
            chart = os.sep.join(parts[:index])
            if os.path.isfile(os.path.join(chart, "Chart.yaml")):
                return True
    return False


def manifest_files(paths):
    """The YAML files of the given files and directories (directories recursively, hidden ones skipped),
    in order; a path that does not exist raises LintError."""
    out = []
    for path in paths or []:
        path = str(path)
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if name.endswith(YAML_SUFFIXES) and not name.startswith("."):
                        out.append(os.path.join(root, name))
        elif os.path.isfile(path):
            out.append(path)
        else:
            raise LintError("%s does not exist" % path)
    seen = set()
    return [p for p in out if not (p in seen or seen.add(p))]


# Where a `$NAME` may be meant for something else than envsubst: the shell at run time (command, args,
# scripts, ConfigMap data) or a container's env (shell-style values such as $PATH:/opt/bin).
_SCRIPT_KEYS = ("command", "args", "script", "data", "stringData", "env")


def _placeholder_outside_scripts(node, names, inside=False):
    """True when a scalar outside command/args/ConfigMap data uses one of the placeholders."""
    if isinstance(node, dict):
        return any(_placeholder_outside_scripts(v, names, inside or str(k) in _SCRIPT_KEYS) or
                   (not inside and any(("$" + n) in str(k) or ("${" + n) in str(k) for n in names))
                   for k, v in node.items())
    if isinstance(node, list):
        return any(_placeholder_outside_scripts(v, names, inside) for v in node)
    if isinstance(node, str) and not inside:
        return bool(_envsubst.placeholders(node))
    return False


def is_envsubst_template(text, mode, where=""):
    """Whether a file is rendered with envsubst: mode all (every file with a placeholder), off (none),
    auto (files that use a placeholder where nothing but envsubst could fill it: an image, a replica
    count, a resource, a name; placeholders only inside command/args, env values or ConfigMap data may be
    meant for the shell at run time)."""
    if mode == "off" or not _envsubst.placeholders(text):
        return False
    if mode == "all":
        return True
    try:
        docs = [d for d, _m, _l in load_all(text, where)]
    except LintError:
        return True  # only valid YAML once rendered
    names = _envsubst.placeholders(text)
    return any(_placeholder_outside_scripts(doc, names) for doc in docs)


def _value_at(doc, path):
    node = doc
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


class ManifestLinter:
    """Lints files and inline objects; collects findings, documents and unset variables.

    validator: a ``_k8s_schema.SchemaValidator`` or None (pitfalls only); opts: ``_pitfall_rules`` options;
    values / envsubst / envsubst_vars: the rendering (values {NAME: value}, mode auto|all|off, the
    restricted names or None)."""

    def __init__(self, validator=None, options=None, unknown_kinds="fail", values=None, envsubst="auto",
                 envsubst_vars=None, base=""):
        if envsubst not in ENVSUBST_MODES:
            raise LintError("envsubst must be one of %s, not %r" % (", ".join(ENVSUBST_MODES), envsubst))
        self.validator = validator
        self.opts = _pitfall_rules.options_with_defaults(options)
        self.unknown_kinds = unknown_kinds
        self.values = dict(values or {})
        self.envsubst = envsubst
        self.only = _envsubst.shell_format_names(envsubst_vars)
        self.base = base
        self.findings = []
        self.documents = []
        self.files = []
        self.skipped = []  # (file, why)
        self.unset = {}  # NAME -> [(file, line)]
        self.schema_used = set()
        self._loaded = {}  # path -> (shown, text, rendered, unset, docs or LintError)
        self.render = {}  # shown path -> the repository's envsubst calls for it (_render_plan.plan)
        self._clobbers = {}  # shown path -> its envsubst_clobbers findings

    # --- how the repository renders each file (its scripts', docs' and own envsubst calls)

    def read_render_plan(self, yaml_paths=(), other_paths=()):
        """Read the envsubst calls of the scripts and docs (other_paths) and of the manifests' own comments."""
        def texts(paths):
            out = {}
            for path in paths or []:
                try:
                    with open(path, "rb") as handle:
                        text = handle.read().decode("utf-8", errors="replace")
                except (IOError, OSError):
                    continue
                if "envsubst" in text:
                    out[display_path(path, self.base)] = text
            return out
        manifests = dict((display_path(p, self.base), "") for p in yaml_paths or [])
        manifests.update(texts(yaml_paths))
        self.render = dict((k, v) for k, v in _render_plan.plan(manifests, texts(other_paths)).items() if v)
        return self.render

    def _render(self, shown, text):
        """(rendered, unset) of one file the way the repository renders it; keeps its clobber findings."""
        calls = self.render.get(shown) or []
        only, plain = (self.only, []) if self.only is not None or not calls else _render_plan.render_of(calls)
        if not (calls and self.envsubst != "off" and _envsubst.placeholders(text)) and \
                not is_envsubst_template(text, self.envsubst, shown):
            return text, {}
        rendered, unset = _envsubst.substitute(text, self.values, only)
        if self.only is not None:
            return rendered, unset  # the user's own restriction (--envsubst-vars): every unset name is reported
        try:
            shell = _render_plan.shell_names([d for d, _m, _l in load_all(text, shown)])
        except LintError:
            shell = set()  # YAML only once rendered: nothing known of its scripts
        if only is None:
            # unrestricted: the shell's own variables are emptied (a finding when the repository says so), not unset
            emptied = dict((n, lines) for n, lines in unset.items() if n in shell)
            self._clobbers[shown] = _render_plan.clobber_findings(shown, emptied, plain, [], self.opts)
            return rendered, dict((n, lines) for n, lines in unset.items() if n not in shell)
        if plain:  # restricted by some calls, unrestricted by others: what would the unrestricted ones empty?
            _full, unset_all = _envsubst.substitute(text, self.values, None)
            emptied = dict((n, lines) for n, lines in unset_all.items() if n in shell)
            self._clobbers[shown] = _render_plan.clobber_findings(
                shown, emptied, plain, [c for c in calls if c["names"]], self.opts)
        return rendered, unset

    # --- the repository's node groups (context of the node_selector, toleration and gpu_efa_request rules)

    def collect_node_groups(self, yaml_paths=(), terraform_paths=()):
        """Read the node groups of eksctl ClusterConfigs, Karpenter NodePools (YAML files, rendered as they are
        linted, and Terraform heredocs) and Terraform node groups into the rule options; returns them."""
        groups = []
        for path in yaml_paths or []:
            if is_helm_template(path):
                continue
            shown, _text, _rendered, _unset, docs = self._load(path)
            if isinstance(docs, LintError) or docs is None:
                continue
            for doc, marks, first_line in docs:
                groups.extend(_node_groups.from_yaml_document(doc, shown, marks, first_line))
        texts = {}
        for path in terraform_paths or []:
            try:
                with open(path, "rb") as handle:
                    texts[display_path(path, self.base)] = handle.read().decode("utf-8", errors="replace")
            except (IOError, OSError):
                continue  # the Terraform row reports unreadable files
        groups.extend(_node_groups_tf.from_terraform(texts))
        self.opts["node_groups"] = groups
        return groups

    def _load(self, path):
        """(shown, text, rendered, unset, [(doc, marks, first_line)] or the LintError) of a file, read once."""
        if path in self._loaded:
            return self._loaded[path]
        shown = display_path(path, self.base)
        try:
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8", errors="replace")
        except (IOError, OSError) as exc:
            self._loaded[path] = (shown, None, None, {}, LintError("cannot read %s: %s" % (shown, exc)))
            return self._loaded[path]
        rendered, unset = self._render(shown, text)
        try:
            docs = load_all(rendered, shown)
        except LintError as exc:
            docs = exc
        self._loaded[path] = (shown, text, rendered, unset, docs)
        return self._loaded[path]

    # --- one object

    def lint_object(self, doc, source, file="", marks=None, first_line=0, provided_env=None, unset_names=()):
        label = object_label(doc)
        entry = {"source": source, "file": file, "line": first_line, "api_version": doc.get("apiVersion"),
                 "kind": doc.get("kind"), "name": (doc.get("metadata") or {}).get("name") or "", "schema": "",
                 "findings": 0}
        found = []

        def where(path):
            return line_of(marks or {}, path, first_line) if (marks or first_line) else (0, 0)

        if self.validator is not None:
            try:
                used, errors = self.validator.validate(doc)
                entry["schema"] = used
                self.schema_used.add(used)
                for path, message in errors:
                    value = _value_at(doc, path)
                    if any(re.search(r"\$\{?%s\b" % re.escape(n), text) for n in unset_names
                           for text in ((value if isinstance(value, str) else ""), message)):
                        continue  # reported once as the unset variable (a label map's error names the value)
                    line, column = where(path)
                    found.append(finding("schema", "error", "%s %s: %s" % (label, fmt_path(path) or "(object)", message),
                                         SCHEMA_FIX, file=file or source, line=line, column=column, obj=label,
                                         path=fmt_path(path), actual=1, expected=0, unit="errors"))
            except _k8s_schema.SchemaNotFound as exc:
                severity = "info" if self.unknown_kinds == "skip" else "error"
                found.append(finding("schema_missing", severity, "%s: %s; not validated" % (label, exc),
                                     SCHEMA_MISSING_FIX, file=file or source, line=first_line, obj=label,
                                     actual=1, expected=0, unit="kinds without a schema"))
        found.extend(_pitfall_rules.lint_document(doc, provided_env=provided_env, file=file or source, marks=marks,
                                                  first_line=first_line, opts=self.opts))
        entry["findings"] = len(found)
        for item in found:
            item["source"] = source
        self.findings.extend(found)
        self.documents.append(entry)
        return found

    # --- one file

    def lint_file(self, path):
        if is_helm_template(path):
            self.skipped.append((display_path(path, self.base), "a Helm chart template (render it with helm template first)"))
            return
        shown, text, rendered, unset, docs = self._load(path)
        if text is None:
            self.findings.append(finding("yaml", "error", str(docs), YAML_FIX, file=shown))
            return
        if isinstance(docs, LintError):
            exc = docs
            line = 0
            match = re.search(r"line (\d+), column (\d+)", str(exc))
            if match:
                line = int(match.group(1))
            if is_k8s_object_text(rendered):
                self.files.append(shown)
                self.findings.append(finding("yaml", "error", str(exc), YAML_FIX, file=shown, line=line,
                                             actual=1, expected=0, unit="errors"))
            return
        objects = []
        for index, (doc, marks, first_line) in enumerate(docs, start=1):
            if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
                for sub, item in enumerate(doc["items"]):
                    if is_k8s_object(item) and not _k8s_schema.is_tool_config(item):
                        sub_marks = dict((k[2:], v) for k, v in marks.items() if k[:2] == ("items", sub))
                        objects.append(("%s#%d.items[%d] %s" % (shown, index, sub, object_label(item)), item,
                                        sub_marks, line_of(marks, ("items", sub), first_line)[0]))
            elif is_k8s_object(doc) and not _k8s_schema.is_tool_config(doc):
                objects.append(("%s#%d %s" % (shown, index, object_label(doc)), doc, marks, first_line))
        if not objects:
            return  # not a manifest (a playbook, a values file, tool configuration)
        self.files.append(shown)
        self.findings.extend(self._clobbers.pop(shown, []))
        for name, lines in unset.items():
            self.unset.setdefault(name, []).extend((shown, line) for line in lines)
        for source, doc, marks, first_line in objects:
            self.lint_object(doc, source, file=shown, marks=marks, first_line=first_line, unset_names=list(unset))

    def finish(self):
        """Add the unset-variable findings (one per variable, every use listed); return the findings."""
        self.findings.extend(_pitfall_rules.unset_variable_findings(self.unset, self.opts))
        return self.findings


def is_k8s_object_text(text):
    """A cheap guess, for YAML that does not parse: does the text look like a Kubernetes object?"""
    return bool(re.search(r"(?m)^apiVersion:\s*\S", text) and re.search(r"(?m)^kind:\s*\S", text))


ROW_OF_RULE = {"schema": "local_manifests", "schema_missing": "local_manifests", "yaml": "local_manifests"}


def split_by_row(findings):
    """(schema findings, pitfall findings)."""
    schema = [f for f in findings if f["rule"] in ROW_OF_RULE]
    return schema, [f for f in findings if f["rule"] not in ROW_OF_RULE]
