# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How the repository renders each manifest: the ``envsubst`` calls of its scripts, docs and the manifest's
own comments that apply that file (issue 31).

A repository says it in its own words: ``envsubst '${ECR_URI} ${NAMESPACE}' < examples/x/job.yaml | kubectl
apply -f -`` in a README, ``envsubst < "${REPO_ROOT}/tests/manifests/step.yaml"`` in a test script, ``# Render
with: envsubst '${NAMESPACE}' | kubectl apply -f -`` in the manifest itself. Per file:

* restricted when any of its calls is restricted: the union of their variable lists; every other ``$X`` is the
  shell's, left alone and never reported;
* unrestricted where its calls are all unrestricted; then a placeholder of a variable that the file's own
  script assigns or that its container's env sets is not "a variable without a value" but a variable envsubst
  empties before the script runs (rule ``envsubst_clobbers``), with the restricted call as the fix; so is
  an unrestricted call to a file that other calls restrict, when it would empty such a variable;
* as local_checks_envsubst says (auto: by where its placeholders are) where nothing says anything; a
  placeholder of the shell's own variables is then not reported.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import os
import re

from ansible_collections.rlstack.validation.plugins.module_utils.lint import _envsubst, _pitfall_rules, _shell_env
from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import finding

# envsubst, then its SHELL-FORMAT in quotes (optional), then `< PATH` (optional): a call, not a mention
_CALL = re.compile(r"""\benvsubst[ \t]+(?:(?P<q>['"])(?P<fmt>[^'"\n]*)(?P=q))?[ \t]*(?:<[ \t]*(?P<path>"[^"\n]+"|'[^'\n]+'|[^\s|;)&]+))?""")
_ASSIGNED = re.compile(r"(?:^|[\s;&|(`])(?:local\s+|export\s+|readonly\s+|declare\s+(?:-\w+\s+)*)?([A-Za-z_]\w*)\+?=(?!=)")
_LOOP_OR_READ = re.compile(r"\b(?:for\s+([A-Za-z_]\w*)\s+in\b|read\s+(?:-\w+\s+)*([A-Za-z_]\w*))")


def calls(text):
    """[(line, names or None, path text or '')] of the envsubst calls in a text."""
    out = []
    for number, line in _shell_env.logical_lines(text):
        for match in _CALL.finditer(line):
            fmt, path = match.group("fmt"), (match.group("path") or "").strip("'\"")
            if fmt is None and not path:
                continue  # a mention (`for cmd in kubectl envsubst`, "needs envsubst"), not a call
            names = _envsubst.shell_format_names(fmt) if fmt and "$" in fmt else None
            out.append((number, names, path))
    return out


def _tail(path):
    """The literal end of a path text: what follows its last variable (${REPO_ROOT}/x.yaml -> x.yaml)."""
    path = path.replace("\\", "/")
    match = re.search(r"(?:\$\{[^}]*\}|\$[A-Za-z_]\w*)/?([^$]*)$", path)
    tail = match.group(1) if match else path
    return os.path.normpath(tail.lstrip("./")) if tail.strip("./") else ""


def plan(manifest_texts, other_texts):
    """{manifest path: [{'file', 'line', 'names'}]}: the calls that apply each manifest. manifest_texts and
    other_texts: {path as shown: text} (manifests: the YAML files; others: scripts, docs)."""
    out = dict((path, []) for path in manifest_texts)
    shown = sorted(manifest_texts)
    for where, text in list(manifest_texts.items()) + list(other_texts.items()):
        for line, names, path in calls(text):
            is_comment = where in manifest_texts
            if is_comment and (not path or os.path.basename(_tail(path)) == os.path.basename(where)):
                out[where].append({"file": where, "line": line, "names": names})
                continue
            tail = _tail(path) if path else ""
            if not tail or "$" in tail:
                continue  # `envsubst < "$MANIFEST"`: which file is not written down
            for candidate in shown:
                # a relative path, or the repository's checkout at an absolute path (/aws-do-ray/Container-Root/...)
                if candidate == tail or candidate.endswith("/" + tail) or tail.endswith("/" + candidate):
                    out[candidate].append({"file": where, "line": line, "names": names})
    return out


def render_of(instructions):
    """(only, unrestricted calls) of one manifest: only = the union of the restricted calls' names (None:
    unrestricted or nothing said), and the unrestricted calls (that empty the shell's variables)."""
    restricted = [i for i in instructions or [] if i["names"]]
    plain = [i for i in instructions or [] if not i["names"]]
    if not restricted:
        return None, plain
    names = []
    for item in restricted:
        names.extend(n for n in item["names"] if n not in names)
    return names, plain


_SCRIPT_KEYS = ("command", "args", "entrypoint", "script")


def _script_names(script):
    names = set()
    for line in str(script).split("\n"):
        if line.strip().startswith("#"):
            continue  # a comment (a usage line such as `# export NAMESPACE=rlinf` is not the script's)
        names.update(m.group(1) for m in _ASSIGNED.finditer(line))
        names.update(a or b for a, b in _LOOP_OR_READ.findall(line))
    return names


def shell_names(docs):
    """Names that the objects' scripts assign (NAME=, local/export NAME=, for NAME in, read NAME in command,
    args, a RayJob entrypoint, ConfigMap data) or that a container's env sets to a value of its own (not to a
    placeholder): variables of the shell at run time, not of envsubst. docs: the parsed YAML documents."""
    names = set()

    def walk(node, key=""):
        if isinstance(node, dict):
            if node.get("kind") == "ConfigMap":
                for value in (node.get("data") or {}).values() if isinstance(node.get("data"), dict) else []:
                    names.update(_script_names(value))
            for sub_key, value in node.items():
                walk(value, str(sub_key))
        elif isinstance(node, list):
            if key == "env":
                for item in node:
                    if isinstance(item, dict) and isinstance(item.get("name"), str) and (
                            "valueFrom" in item or "$" not in str(item.get("value", ""))):
                        names.add(item["name"])
            for item in node:
                walk(item, key)
        elif isinstance(node, str) and key in _SCRIPT_KEYS:
            names.update(_script_names(node))

    for doc in docs or []:
        walk(doc)
    return names


def script_values(script, call_line, where, values):
    """({NAME: value}, {NAME: why}) of the variables a script sets before its envsubst call at call_line (read
    as the shell reads them, _shell_env; nothing run): they are the script's, not values the user must give.
    Names that `values` (the user's) has are left to it."""
    before = "\n".join(str(script).split("\n")[:max(0, call_line - 1)])
    env, unknown, missing = _shell_env.read(before, {}, where)
    known, unsure = {}, {}
    for name in _script_names(before):
        if name in values:
            continue
        if name in env and name not in unknown:
            known[name] = env[name]
        else:
            unsure[name] = unknown.get(name) or ("%s sets it before its envsubst call at line %d" % (where, call_line))
            if name in missing:
                unsure[name] = "%s sets it from ${%s}, which has no value here" % (where, missing[name])
    return known, unsure


def _where(calls_):
    return ", ".join("%s:%d" % (c["file"], c["line"]) for c in calls_)


def clobber_findings(file, emptied, calls_, restricted_by, opts=None):
    """The envsubst_clobbers finding of one file: emptied {NAME: [line]} (the shell's variables an unrestricted
    call empties), calls_ the unrestricted calls, restricted_by the restricted ones ([] if none)."""
    opts = opts or _pitfall_rules.options_with_defaults()
    if "envsubst_clobbers" not in opts["rules"] or not emptied or not calls_:
        return []
    uses = sorted((line, name) for name, lines in emptied.items() for line in lines)
    names = sorted(emptied)
    listed = ", ".join("${%s} (line %s)" % (n, ", ".join(str(x) for x in emptied[n])) for n in names)
    if restricted_by:
        keep = " ".join("${%s}" % n for n in render_of(restricted_by)[0])
        text = ("%s renders %s with unrestricted envsubst, which empties the variables its script sets itself: "
                "%s; %s render it with envsubst '%s'" % (_where(calls_), file, listed, _where(restricted_by), keep))
        first = calls_[0]
        located = {"file": first["file"], "line": first["line"]}
    else:
        text = ("%s renders %s with unrestricted envsubst (%s), which replaces the variables its script sets "
                "itself with empty strings before the script runs: %s" % (file, file, _where(calls_), listed,))
        located = {"file": file, "line": uses[0][0]}
    found = finding("envsubst_clobbers", _pitfall_rules.severity_of("envsubst_clobbers", opts), text,
                    _pitfall_rules.fix_of("envsubst_clobbers", opts), file=located["file"], line=located["line"],
                    path=",".join(names), actual=len(uses), expected=0, unit="variables emptied")
    found["uses"] = [located] + [{"file": file, "line": line} for line, _name in uses]
    return [found]
