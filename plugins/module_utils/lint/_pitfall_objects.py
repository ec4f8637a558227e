# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the pitfall rules look at (split from ``_pitfall_rules``, the rule registry): the containers and pod
specs of an object, quantities, images and pull policies, and the shell scripts containers run (their
lines, commands and control flow).

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import os
import re
import shlex

from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import fmt_path, object_label


# --------------------------------------------------------------------------------------------------
# what the rules look at


class Container:
    """One container of one pod spec of one object, with paths for the marks."""

    def __init__(self, doc, spec_path, spec, path, container, provided_env):
        self.doc, self.spec_path, self.spec, self.path, self.data = doc, spec_path, spec, path, container
        self.provided_env = set(provided_env or [])
        self.name = str(container.get("name") or fmt_path(path))
        self.kind = "init container" if "initContainers" in path else (
            "ephemeral container" if "ephemeralContainers" in path else "container")

    @property
    def title(self):
        return "%s %s of %s" % (self.kind, self.name, object_label(self.doc))

    def env(self):
        """{name: value} of the container's env (valueFrom entries have the value None)."""
        out = {}
        for item in self.data.get("env") or []:
            if isinstance(item, dict) and item.get("name"):
                out[str(item["name"])] = None if "valueFrom" in item else str(item.get("value", ""))
        return out

    def argv(self):
        return [str(a) for a in list(self.data.get("command") or []) + list(self.data.get("args") or [])
                if a is not None]


def pod_specs(doc, path=()):
    """Every pod spec inside an object: (path, spec) for each dict with a list `containers` (Pods, Jobs,
    CronJobs, Deployments, MPIJobs, PyTorchJobs, RayClusters ... without a table of kinds)."""
    found = []
    if isinstance(doc, dict):
        if isinstance(doc.get("containers"), list):
            found.append((tuple(path), doc))
        for key, value in doc.items():
            if key in ("containers", "initContainers", "ephemeralContainers", "status"):
                continue
            found.extend(pod_specs(value, tuple(path) + (key,)))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found.extend(pod_specs(value, tuple(path) + (index,)))
    return found


def containers(spec, path=()):
    """(path, container) of the init, regular and ephemeral containers of a pod spec."""
    out = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        items = spec.get(key)
        if isinstance(items, list):
            for index, item in enumerate(items):
                if isinstance(item, dict):
                    out.append((tuple(path) + (key, index), item))
    return out


def find_keys(doc, wanted, path=()):
    """(path, value) of every key named `wanted`, at any depth (status left out)."""
    out = []
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == wanted:
                out.append((tuple(path) + (key,), value))
            if key != "status":
                out.extend(find_keys(value, wanted, tuple(path) + (key,)))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out.extend(find_keys(value, wanted, tuple(path) + (index,)))
    return out


def quantity(value):
    """An integer quantity ('8', 8, '8.0' -> 8); None for anything else (a placeholder, '1Gi')."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(float(str(value).strip()))
    except ValueError:
        return None


def gpu_count(container, gpu_resources):
    resources = container.get("resources") if isinstance(container.get("resources"), dict) else {}
    best = 0
    for section in ("limits", "requests"):
        values = resources.get(section) if isinstance(resources.get(section), dict) else {}
        for name in gpu_resources:
            if name in values:
                # a GPU request written as a placeholder ($GPU_PER_NODE) still asks for GPUs
                best = max(best, quantity(values.get(name)) if quantity(values.get(name)) is not None else 1)
    return best


# --------------------------------------------------------------------------------------------------
# images


def parse_image(image):
    """{'tag', 'digest', 'placeholder'} of an image reference. A tag of '${TAG}' is a placeholder; in
    '${ECR_URI}:latest' only the repository is, and the tag is 'latest'."""
    text = str(image or "").strip()
    digest = None
    if "@" in text:
        text, digest = text.split("@", 1)
    # mask ${...} (same length) so a ':' inside a placeholder is not read as the tag separator
    masked = re.sub(r"\$\{[^}]*\}", lambda m: "X" * len(m.group(0)), text)
    slash = masked.rfind("/")
    colon = masked.find(":", slash + 1)
    tag = text[colon + 1:] if colon >= 0 else None
    # image references are lower case: PLACEHOLDER_IMAGE (replaced by sed) is a placeholder, not an image
    repository = text.rsplit(":", 1)[0] if tag is not None else text
    placeholder = (not text) or bool(re.search(r"\$\{?\w|<[^>]*>|\{\{", text)) or bool(re.search(r"[A-Z]", repository))
    tag_placeholder = tag is not None and bool(re.search(r"\$\{?\w|\{\{", tag))
    return {"tag": tag, "digest": digest, "placeholder": placeholder, "tag_placeholder": tag_placeholder}


def effective_pull_policy(container):
    """imagePullPolicy as the API server defaults it (SetDefaults_Container in Kubernetes
    pkg/apis/core/v1/defaults.go: Always when the tag is latest or missing and there is no digest,
    else IfNotPresent)."""
    policy = container.get("imagePullPolicy")
    if policy:
        return str(policy), False
    ref = parse_image(container.get("image"))
    if ref["digest"] is None and ref["tag"] in (None, "latest"):
        return "Always", True
    return "IfNotPresent", True


# --------------------------------------------------------------------------------------------------
# shell scripts


def shell_script(argv, shells):
    """(shell, script) of a `bash -c SCRIPT` style argv, or None. The shell may be a path or follow
    `env`; its option may combine flags (-c, -lc, -ec, -euxc, -o pipefail -c)."""
    for index, arg in enumerate(argv):
        if os.path.basename(arg) not in shells:
            continue
        rest = argv[index + 1:]
        position, has_c = 0, False
        while position < len(rest) and rest[position].startswith("-"):
            flag = rest[position]
            if flag in ("-o", "+o") and position + 1 < len(rest):
                position += 2
                continue
            if not flag.startswith("--") and "c" in flag[1:]:
                has_c = True
            position += 1
            if has_c:
                break
        if has_c and position < len(rest):
            return os.path.basename(arg), rest[position]
        return None
    return None


_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_FUNCTION = re.compile(r"^\s*(?:function\s+[\w:.-]+|[A-Za-z_][\w:.-]*\s*\(\s*\))\s*(?:\{|\(|$)")
_SEPARATORS = re.compile(r"&&|\|\||;;|[;|&(){}\n]")
CONTROL_KEYWORDS = ("if", "elif", "for", "while", "until", "case", "select")


def split_script(script):
    """(code lines, heredoc bodies) of a shell script; comment and blank lines left out, heredoc bodies
    kept apart (they are data for another program, such as `python - <<EOF`)."""
    lines, bodies = [], []
    pending = []
    for raw in str(script).splitlines():
        if pending:
            end = pending[0]
            if raw.strip() == end:
                pending.pop(0)
            else:
                bodies[-1] += raw + "\n"
            continue
        line = _strip_comment(raw)
        if not line.strip():
            continue
        lines.append(line)
        for match in _HEREDOC.finditer(line):
            pending.append(match.group(2))
            bodies.append("")
    return lines, bodies


def _strip_comment(line):
    quote = None
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in ("'", '"'):
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index]
    return line


def control_flow(script):
    """The control-flow constructs of a shell script, in order: 'if', 'for', 'while', 'case', ...,
    'function NAME'. Words inside quotes, heredocs and ${...} expansions do not count."""
    lines, _bodies = split_script(script)
    found = []
    for line in lines:
        masked = _QUOTED.sub("''", line)
        masked = re.sub(r"\$\{[^}]*\}", "X", masked)
        function = _FUNCTION.match(masked)
        if function:
            found.append("function " + re.sub(r"^function\s+|\s*\(\s*\).*$|\s*\{.*$", "", function.group(0).strip()))
            continue
        for command in _SEPARATORS.split(masked):
            words = command.split()
            if words and words[0] in CONTROL_KEYWORDS:
                found.append(words[0])
    return found


def commands_of(container, shells):
    """(argv of each command the container runs, heredoc bodies): the container's own argv, or each
    command of its `bash -c` script (split on lines and ; && || |)."""
    argv = container.argv()
    script = shell_script(argv, shells)
    if not script:
        return [argv], []
    lines, bodies = split_script(script[1])
    out = []
    for line in lines:
        for part in re.split(r"&&|\|\||;|\|", line):
            try:
                words = shlex.split(part, posix=True)
            except ValueError:
                words = part.split()
            if words:
                out.append(words)
    return out, bodies
