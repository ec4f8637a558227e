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
    _manifest_sources,
    _node_groups,
    _node_groups_tf,
    _pitfall_rules,
    _render_plan,
    _shell_env,
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
NOT_CHECKED_FIX = ("render it as the repository does and lint the result (local_checks_paths), or leave it: "
                   "local mode cannot check what it cannot read")
UNKNOWN_VALUE_FIX = ("give the value with --set NAME=VALUE (or export it) to have the files that use it checked "
                     "with it; local mode runs no command of a .env file")
ENV_FILE_NAME = ".env"
DOC_SUFFIXES = (".md", ".markdown", ".rst")


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
        self._scripts = {}  # shown path -> text of the scripts among the render plan's sources
        self.tf_templates = {}  # shown path -> the Terraform file whose templatefile() renders it
        self._unknown_of = {}  # shown path -> {NAME: why} of the values local mode cannot know for it
        self._clobbers = {}  # shown path -> its envsubst_clobbers findings
        self.unknown = {}  # NAME -> {"why": ..., "uses": [(file, line)]}: a value local mode cannot know
        self._layers = None  # (environ, env file values, env file unknown, --set values): per-folder .env applies
        self._folder_values = {}  # directory -> (values, unknown)

    # --- the values of each file: its folders' .env, then the exported variables, --values and --set

    def set_value_layers(self, environ=None, file_values=None, file_unknown=None, values=None):
        """Render each file with the .env files of its folders (from the repository root down, each read as the
        shell reads it), over which the exported variables, the --values file and --set win, in that order."""
        self._layers = (dict(environ or {}), dict(file_values or {}), dict(file_unknown or {}), dict(values or {}))
        self.values = _envsubst.merged_values(environ, file_values, values)

    def values_for(self, shown):
        """({NAME: value}, {NAME: why unknown}) for a file shown as `shown`."""
        if self._layers is None:
            return self.values, {}
        directory = os.path.dirname(os.path.join(self.base or "", shown))
        if directory in self._folder_values:
            return self._folder_values[directory]
        environ, file_values, file_unknown, values = self._layers
        chain, current = [], os.path.abspath(directory)
        root = os.path.abspath(self.base or directory)
        while True:
            chain.insert(0, current)
            if current == root or os.path.dirname(current) == current or not current.startswith(root):
                break
            current = os.path.dirname(current)
        env, unknown = dict(environ), {}
        for folder in chain:
            path = os.path.join(folder, ENV_FILE_NAME)
            if not os.path.isfile(path):
                continue
            try:
                with open(path, "r", encoding="utf-8", errors="replace") as handle:
                    env, more, missing = _shell_env.read(handle.read(), env, display_path(path, self.base))
            except (IOError, OSError):
                continue
            unknown.update(more)
            for name in missing:
                unknown.pop(name, None)
            for name in env:
                if name not in more:
                    unknown.pop(name, None)
        env = _envsubst.merged_values(env, dict(environ, **file_values), values)
        unknown.update(file_unknown)
        unknown = dict((n, why) for n, why in unknown.items() if n not in env)
        self._folder_values[directory] = (env, unknown)
        return env, unknown

    def _known(self, shown, unset, unknown, offset=0):
        """The unset names that have no value at all; the unknown ones are kept in self.unknown."""
        out = {}
        for name, lines in unset.items():
            if name in unknown:
                entry = self.unknown.setdefault(name, {"why": unknown[name], "uses": []})
                entry["uses"].extend((shown, line + offset) for line in lines)
            else:
                out[name] = [line + offset for line in lines]
        return out

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
        others = texts(other_paths)
        self._scripts = dict((k, v) for k, v in others.items() if not k.lower().endswith(DOC_SUFFIXES))
        self.render = dict((k, v) for k, v in _render_plan.plan(manifests, others).items() if v)
        return self.render

    def _values_of_calls(self, calls, values):
        """The values a file gets from the scripts that render it: what each calling script sets before its
        envsubst call, under the user's values; a value the script computes is unknown, never missing."""
        values, unknown = dict(values), {}
        for call in calls or []:
            script = self._scripts.get(call["file"])
            if script is None:
                continue  # a doc or the manifest's own usage comment: the user gives the values
            known, unsure = _render_plan.script_values(script, call["line"], call["file"], values)
            for name, value in known.items():
                values.setdefault(name, value)
            for name, why in unsure.items():
                unknown.setdefault(name, why)
        return values, unknown

    def _render(self, shown, text):
        """(rendered, unset) of one file the way the repository renders it; keeps its clobber findings."""
        if shown in self.tf_templates:
            # rendered by Terraform's templatefile(): its ${name} are the call's variables, known at apply time
            self._unknown_of[shown] = dict((n, "%s renders it with templatefile()" % self.tf_templates[shown])
                                           for n in _envsubst.placeholders(text))
            return text, {}
        calls = self.render.get(shown) or []
        only, plain = (self.only, []) if self.only is not None or not calls else _render_plan.render_of(calls)
        if not (calls and self.envsubst != "off" and _envsubst.placeholders(text)) and \
                not is_envsubst_template(text, self.envsubst, shown):
            return text, {}
        values, unknown = self.values_for(shown)
        if calls and self.only is None:
            values, more = self._values_of_calls(calls, values)
            unknown = dict(more, **unknown)
        self._unknown_of[shown] = unknown
        rendered, unset = _envsubst.substitute(text, values, only)
        unset = self._known(shown, unset, unknown)
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
            _full, unset_all = _envsubst.substitute(text, values, None)
            emptied = dict((n, lines) for n, lines in unset_all.items() if n in shell)
            self._clobbers[shown] = _render_plan.clobber_findings(
                shown, emptied, plain, [c for c in calls if c["names"]], self.opts)
        return rendered, unset

    # --- the repository's node groups (context of the node_selector, toleration and gpu_efa_request rules)

    def collect_node_groups(self, yaml_paths=(), terraform_paths=()):
        """Read the node groups of eksctl ClusterConfigs, Karpenter NodePools (YAML files, rendered as they are
        linted, and Terraform heredocs) and Terraform node groups into the rule options; returns them."""
        texts = {}
        for path in terraform_paths or []:
            try:
                with open(path, "rb") as handle:
                    texts[display_path(path, self.base)] = handle.read().decode("utf-8", errors="replace")
            except (IOError, OSError):
                continue  # the Terraform row reports unreadable files
        # before any YAML file is rendered: the files Terraform's templatefile() renders are not envsubst's
        self.tf_templates = _manifest_sources.terraform_templates(texts)
        groups = []
        for path in yaml_paths or []:
            if is_helm_template(path):
                continue
            shown, _text, _rendered, _unset, docs = self._load(path)
            if isinstance(docs, LintError) or docs is None:
                continue
            for doc, marks, first_line in docs:
                groups.extend(_node_groups.from_yaml_document(doc, shown, marks, first_line))
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

    def not_checked(self, shown, why, line=0):
        """A file or heredoc that looks like a manifest but cannot be read: listed, never skipped in silence."""
        self.skipped.append((shown if not line else "%s:%d" % (shown, line), why))
        self.findings.append(finding("not_checked", "info", "not checked: %s" % why, NOT_CHECKED_FIX, file=shown,
                                     line=line, actual=1, expected=0, unit="files"))

    def lint_file(self, path):
        shown = display_path(path, self.base)
        if is_helm_template(path):
            self.not_checked(shown, "a Helm chart template (render it with helm template first)")
            return
        by_name = str(path).endswith(YAML_SUFFIXES)
        if not by_name:
            try:
                with open(path, "rb") as handle:
                    head = handle.read().decode("utf-8", errors="replace")
            except (IOError, OSError):
                head = ""
            if not _manifest_sources.looks_like_manifest(head):
                return
            reason = _manifest_sources.template_reason(head, shown in self.tf_templates)
            if reason:
                self.not_checked(shown, reason)
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
            if not by_name:
                self.not_checked(shown, "it is not YAML once rendered (%s)" % str(exc).split("\n", maxsplit=1)[0][:200], line)
            elif is_k8s_object_text(rendered):
                self.files.append(shown)
                self.findings.append(finding("yaml", "error", str(exc), YAML_FIX, file=shown, line=line,
                                             actual=1, expected=0, unit="errors"))
            return
        unknown = [n for n in self._unknown_of.get(shown, {}) if n in _envsubst.placeholders(text)]
        self._lint_docs(shown, shown, docs, unset, unknown)

    # --- manifests in heredocs of scripts and Terraform files

    def lint_heredocs(self, path, kind):
        """Lint the manifests written as heredocs in a shell script (kind 'shell') or Terraform file ('terraform'),
        each at the lines of the file; returns how many heredocs held one."""
        shown = display_path(path, self.base)
        try:
            with open(path, "rb") as handle:
                script = handle.read().decode("utf-8", errors="replace")
        except (IOError, OSError):
            return 0
        segments = _manifest_sources.manifest_segments(script, kind)
        for segment in segments:
            self._lint_segment(shown, segment, script)
        return len(segments)

    def _render_segment(self, shown, segment, script):
        """(rendered, unset, unknown names) of a heredoc as its command receives it."""
        text, unknown_names = segment["text"], []
        if segment["origin"] == "terraform" or segment.get("terraform"):
            text, unknown_names = _manifest_sources.terraform_placeholders(text)
        if segment["origin"] == "terraform":
            return text, {}, unknown_names
        values, unknown = self.values_for(shown)
        mode = _manifest_sources.envsubst_names(segment["command"])
        if mode is not False:
            rendered, unset = _envsubst.substitute(text, values, mode)
            return rendered, self._known(shown, unset, unknown, segment["line"] - 1), unknown_names
        if segment["quoted"]:
            return text, {}, unknown_names
        # unquoted: the shell expands it with the script's own assignments before the heredoc (not run: read)
        before = "\n".join(script.split("\n")[:max(0, segment["line"] - 2)])
        env, script_unknown, _missing = _shell_env.read(before, values, shown)
        own = _render_plan.shell_names([{"command": ["sh", "-c", script]}])
        sources = re.search(r"(?m)^\s*(?:source|\.)\s+\S", script)
        protected = text.replace("\\$", "\0")
        rendered, unset = _envsubst.substitute(protected, env)
        rendered = rendered.replace("\0", "$")
        unset = dict((n, lines) for n, lines in unset.items()
                     if n not in own and n not in script_unknown and not sources)
        return rendered, self._known(shown, unset, unknown, segment["line"] - 1), unknown_names

    def _lint_segment(self, shown, segment, script):
        where = "the heredoc at line %d" % (segment["line"] - 1)
        reason = _manifest_sources.template_reason(segment["text"], segment["origin"] == "terraform")
        if reason:
            self.not_checked(shown, "%s is %s" % (where, reason), segment["line"])
            return
        rendered, unset, unknown_names = self._render_segment(shown, segment, script)
        try:
            docs = load_all("\n" * (segment["line"] - 1) + rendered, shown)
        except LintError as exc:
            self.not_checked(shown, "%s is not YAML once rendered (%s)" % (where, str(exc).split("\n", maxsplit=1)[0][:200]),
                             segment["line"])
            return
        start = len(self.findings)
        # tool configuration (a kustomization.yaml a script writes) is not a cluster object, as for files
        self._lint_docs(shown, "%s:%d" % (shown, segment["line"] - 1), docs, unset, unknown_names)
        if segment["column"]:
            for item in self.findings[start:]:
                if item.get("column"):
                    item["column"] += segment["column"]

    def _lint_docs(self, shown, prefix, docs, unset, unknown_names=()):
        """Lint the objects of loaded documents (sources named `prefix#n Kind/name`); False when none is one."""
        objects = []
        for index, (doc, marks, first_line) in enumerate(docs, start=1):
            if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
                for sub, item in enumerate(doc["items"]):
                    if is_k8s_object(item) and not _k8s_schema.is_tool_config(item):
                        sub_marks = dict((k[2:], v) for k, v in marks.items() if k[:2] == ("items", sub))
                        objects.append(("%s#%d.items[%d] %s" % (prefix, index, sub, object_label(item)), item,
                                        sub_marks, line_of(marks, ("items", sub), first_line)[0]))
            elif is_k8s_object(doc) and not _k8s_schema.is_tool_config(doc):
                objects.append(("%s#%d %s" % (prefix, index, object_label(doc)), doc, marks, first_line))
        if not objects:
            return False  # not a manifest (a playbook, a values file, tool configuration)
        if shown not in self.files:
            self.files.append(shown)
        self.findings.extend(self._clobbers.pop(shown, []))
        for name, lines in unset.items():
            self.unset.setdefault(name, []).extend((shown, line) for line in lines)
        for source, doc, marks, first_line in objects:
            self.lint_object(doc, source, file=shown, marks=marks, first_line=first_line,
                             unset_names=list(unset) + list(unknown_names))
        return True

    def finish(self):
        """Add the unset-variable findings (one per variable, every use listed); return the findings."""
        self.findings.extend(_pitfall_rules.unset_variable_findings(self.unset, self.opts))
        for name in sorted(self.unknown):
            uses = self.unknown[name]["uses"]
            found = finding("unknown_value", "info", "${%s} has a value local mode cannot know (%s); files using it "
                            "are checked with the placeholder left, at %s" % (
                                name, self.unknown[name]["why"], ", ".join("%s:%d" % use for use in uses)),
                            UNKNOWN_VALUE_FIX, file=uses[0][0], line=uses[0][1], path=name, actual=len(uses),
                            expected=0, unit="uses")
            found["uses"] = [{"file": use[0], "line": int(use[1])} for use in uses]
            self.findings.append(found)
        return self.findings


def is_k8s_object_text(text):
    """A cheap guess, for YAML that does not parse: does the text look like a Kubernetes object?"""
    return bool(re.search(r"(?m)^apiVersion:\s*\S", text) and re.search(r"(?m)^kind:\s*\S", text))


ROW_OF_RULE = {"schema": "local_manifests", "schema_missing": "local_manifests", "yaml": "local_manifests",
               "not_checked": "local_manifests", "unknown_value": "local_manifests"}


def split_by_row(findings):
    """(schema findings, pitfall findings)."""
    schema = [f for f in findings if f["rule"] in ROW_OF_RULE]
    return schema, [f for f in findings if f["rule"] not in ROW_OF_RULE]
