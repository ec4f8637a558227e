# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The pitfall rules of local mode, as one registry.

:data:`RULES` is the only list of rules: each :class:`Rule` carries its name, default severity, one-line
summary, fix and the function that finds it. The module's argument-spec ``choices``, the role's argument
spec and defaults, the docs table and the severity of every finding come from it (a unit test keeps the
YAML copies equal to it). To add a rule: write ``_rule_<name>(ctx)`` and add one ``Rule`` line.

A rule sees one container at a time (:class:`Container`) with the object, the pod spec and where each
part is, and yields ``(message, path, extra)``; :func:`lint_document` turns that into findings
(``_lint_base.finding``) with the rule's severity, the fix and file:line:column from the YAML marks.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import copy
import os
import re
import shlex

from ansible_collections.rlstack.validation.plugins.module_utils import _node_groups, _profiles
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain as _plain
from ansible_collections.rlstack.validation.plugins.module_utils._lint_base import (
    SEVERITIES, LintError, finding, fmt_path, is_k8s_object, object_label)
from ansible_collections.rlstack.validation.plugins.module_utils._yaml_marks import line_of


class Rule:
    """One pitfall rule: name (its config switch and the name of its checks), default severity, summary
    (for the docs and SARIF), fix (what to do), scope ('container', 'pod' or 'object') and function."""

    def __init__(self, name, severity, summary, fix, scope, func):
        self.name, self.severity, self.summary, self.fix, self.scope, self.func = (
            name, severity, summary, fix, scope, func)


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


# --------------------------------------------------------------------------------------------------
# simulators

# The simulators whose import reads a configuration file and, when it is missing, asks on stdin.
# LIBERO: libero 0.1.1 (PyPI), libero/libero/__init__.py lines 5-9 (config_file = $LIBERO_CONFIG_PATH,
# default ~/.libero, + /config.yaml) and 100-104 (missing file -> input("Do you want to specify a custom
# path for the dataset folder? (Y/N): ")). LIBERO_DATASET_DIR is not read by that package.
SIMULATORS = [
    {"name": "LIBERO", "modules": ["libero"], "word": "libero", "config_env": "LIBERO_CONFIG_PATH",
     "config_default": "~/.libero", "config_file": "config.yaml",
     "source": "libero 0.1.1 libero/libero/__init__.py:5-9,100-104"},
]

_PYTHON = re.compile(r"^(?:python(?:\d+(?:\.\d+)?)?|pypy3?)$")
_LAUNCHERS = ("torchrun", "accelerate", "deepspeed", "ray", "uv", "poetry", "pipenv", "conda")


def _import_regex(module):
    return re.compile(r"(?m)(?:^|;)\s*(?:import\s+%s\b|from\s+%s(?:\.[\w.]+)?\s+import\b)|__import__\(\s*['\"]%s\b"
                      % ((re.escape(module),) * 3))


def _words_of_path(path):
    name = os.path.basename(path)
    name = re.sub(r"\.py$", "", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", name.lower()) if w]


def simulator_signals(container, simulator, shells):
    """Why the container runs the simulator: what it executes (python -m MODULE, import MODULE in
    python -c or a heredoc, a script named after it, an env-type argument such as --env.type=libero) or
    the simulator's config variable in its env. Paths, model names and repository ids in arguments or
    env values are not signals."""
    word = simulator["word"]
    signals = []
    imports = [_import_regex(m) for m in simulator["modules"]]
    commands, bodies = commands_of(container, shells)
    for argv in commands:
        words = list(argv)
        # skip wrappers: env, exec, time, nohup, launchers (torchrun train.py runs train.py)
        while words and (os.path.basename(words[0]) in ("env", "exec", "time", "nohup", "stdbuf")
                         or re.match(r"^[A-Za-z_]\w*=", words[0])):
            words = words[1:]
        if not words:
            continue
        program = os.path.basename(words[0])
        runs_python = bool(_PYTHON.match(program)) or program in _LAUNCHERS
        for index, arg in enumerate(words[1:], start=1):
            if runs_python and arg == "-m" and index + 1 < len(words):
                module = words[index + 1]
                if any(module == m or module.startswith(m + ".") for m in simulator["modules"]):
                    signals.append("runs python -m %s" % module)
            if runs_python and arg == "-c" and index + 1 < len(words):
                if any(r.search(words[index + 1]) for r in imports):
                    signals.append("imports %s in python -c" % simulator["modules"][0])
            match = re.match(r"^-{0,2}([\w.]+)=(.*)$", arg)
            if match:
                key, value = match.group(1).lower(), match.group(2).strip("'\"").lower()
                last = key.rsplit(".", 1)[-1]
                if value == word and ("env" in key or "sim" in key) and last in (
                        "type", "env_type", "simulator_type", "simulator", "env", "env_name"):
                    signals.append("selects the %s environment (%s)" % (simulator["name"], arg))
        if runs_python:
            script = next((w for w in words[1:] if w.endswith(".py")), None)
            if script and word in _words_of_path(script):
                signals.append("runs %s" % script)
    for body in bodies:
        if any(r.search(body) for r in imports):
            signals.append("imports %s in an inline Python heredoc" % simulator["modules"][0])
    env = container.env()
    if simulator["config_env"] in env:
        signals.append("sets %s" % simulator["config_env"])
    return sorted(set(signals), key=signals.index)


def _norm_dir(path, home):
    path = str(path or "").strip()
    if path.startswith("~"):
        path = home.rstrip("/") + path[1:]
    return path.rstrip("/") or "/"


def simulator_config_provided(container, simulator, shells):
    """(provided, config path, how): the config file the simulator reads, and whether the pod provides
    it (a volume mounted at the file, its directory or a parent, or a script that writes it)."""
    env = container.env()
    home = env.get("HOME") or "/root"
    config_dir = env.get(simulator["config_env"])
    from_env = simulator["config_env"] in env or simulator["config_env"] in container.provided_env
    if config_dir is None:
        config_dir = simulator["config_default"]
    config_dir = _norm_dir(config_dir, home)
    config_file = config_dir.rstrip("/") + "/" + simulator["config_file"]
    for mount in container.data.get("volumeMounts") or []:
        if not isinstance(mount, dict):
            continue
        where = _norm_dir(mount.get("mountPath"), home)
        if where == config_file or config_dir == where or config_dir.startswith(where.rstrip("/") + "/"):
            if where != "/":
                return True, config_file, "volume %s mounted at %s" % (mount.get("name"), where)
    script = shell_script(container.argv(), shells)
    if script and simulator["config_file"] in script[1] and (
            simulator["config_env"] in script[1] or os.path.basename(config_dir) in script[1]):
        return True, config_file, "the container's script writes it"
    if from_env and simulator["config_env"] in container.provided_env and simulator["config_env"] not in env:
        return True, config_file, "%s comes from outside the object" % simulator["config_env"]
    return False, config_file, ""


# --------------------------------------------------------------------------------------------------
# the rules


def _rule_deadline(obj, opts):
    for path, value in find_keys(obj.doc, "activeDeadlineSeconds"):
        seconds = quantity(value)
        if seconds is not None and seconds < opts["min_deadline_s"]:
            yield ("%s %s is %s s, under %d s: the pod is killed while a large image is still being pulled"
                   % (object_label(obj.doc), fmt_path(path), value, opts["min_deadline_s"]), path,
                   {"actual": seconds, "expected": opts["min_deadline_s"], "op": "ge", "unit": "s"})


def _rule_image_pull_policy(ctr, opts):
    if str(ctr.data.get("imagePullPolicy") or "") == "Always":
        yield ("%s pulls its image on every start (imagePullPolicy: Always)" % ctr.title,
               ctr.path + ("imagePullPolicy",), {"actual": "Always", "expected": "Always", "op": "ne"})


def _rule_image_tag(ctr, opts):
    image = ctr.data.get("image")
    if image is None:
        return
    ref = parse_image(image)
    if ref["digest"] or ref["tag_placeholder"]:
        return
    policy, defaulted = effective_pull_policy(ctr.data)
    how = ("imagePullPolicy is not set, so the API server makes it %s" % policy if defaulted
           else "imagePullPolicy: %s" % policy)
    if ref["tag"] == "latest":
        text = "uses the tag latest (%r): it changes under you; %s" % (str(image), how)
    elif ref["tag"] is None and not ref["placeholder"]:
        text = "uses the untagged image %r, which Kubernetes reads as :latest; %s" % (str(image), how)
    else:
        return  # a pinned tag, or a whole-image placeholder (reported as an unset variable when unset)
    yield ("%s %s" % (ctr.title, text), ctr.path + ("image",),
           {"actual": ref["tag"] or "untagged", "expected": ["latest", "untagged"], "op": "not_in"})


def _rule_dev_shm(pod, opts):
    spec = pod["spec"]
    if spec.get("hostIPC"):
        return
    volumes = dict((v.get("name"), v) for v in spec.get("volumes") or [] if isinstance(v, dict))
    for ctr in pod["containers"]:
        gpus = gpu_count(ctr.data, opts["gpu_resources"])
        if gpus <= 0:
            continue
        mounts = [m for m in ctr.data.get("volumeMounts") or []
                  if isinstance(m, dict) and str(m.get("mountPath") or "").rstrip("/") == "/dev/shm"]
        if not mounts:
            yield ("%s requests GPUs but mounts nothing at /dev/shm (the container default is 64 MiB)" % ctr.title,
                   ctr.path + ("resources",), {"actual": False, "expected": True, "op": "true"})
            continue
        volume = volumes.get(mounts[0].get("name")) or {}
        empty = volume.get("emptyDir") if isinstance(volume.get("emptyDir"), dict) else None
        host = volume.get("hostPath") if isinstance(volume.get("hostPath"), dict) else None
        if empty is not None and str(empty.get("medium") or "") == "Memory":
            continue
        if host is not None and str(host.get("path") or "").rstrip("/") == "/dev/shm":
            continue  # the node's own /dev/shm: memory-backed
        yield ("%s mounts volume %r at /dev/shm, which is neither an emptyDir with medium: Memory nor the "
               "node's /dev/shm" % (ctr.title, mounts[0].get("name")), ctr.path + ("volumeMounts",),
               {"actual": False, "expected": True, "op": "true"})


def _rule_inline_script(ctr, opts):
    script = shell_script(ctr.argv(), opts["shells"])
    if not script:
        return
    shell, body = script
    lines, _bodies = split_script(body)
    constructs = control_flow(body)
    if len(lines) > opts["inline_script_max_lines"] and len(constructs) > opts["inline_script_max_control_flow"]:
        shells_in_command = [os.path.basename(a) for a in ctr.data.get("command") or []]
        where = "args" if ctr.data.get("args") and shell not in shells_in_command else "command"
        yield ("%s runs `%s -c` with a %d-line inline script with control flow (%s)"
               % (ctr.title, shell, len(lines), ", ".join(sorted(set(constructs), key=constructs.index))),
               ctr.path + (where,), {"actual": len(constructs), "expected": opts["inline_script_max_control_flow"],
                                     "op": "le", "unit": "control-flow constructs"})


def _rule_simulator_config(ctr, opts):
    for simulator in opts["simulators"]:
        signals = simulator_signals(ctr, simulator, opts["shells"])
        if not signals:
            continue
        provided, config_file, _how = simulator_config_provided(ctr, simulator, opts["shells"])
        if provided:
            continue
        stdin = bool(ctr.data.get("stdin") or ctr.data.get("tty"))
        effect = ("the pod waits forever (stdin/tty is open)" if stdin else
                  "with stdin closed (the Kubernetes default) input() raises EOFError and the import fails")
        yield ("%s runs %s (%s) but nothing in the pod provides %s: importing %s then calls input() (%s); %s, "
               "unless the image ships that file"
               % (ctr.title, simulator["name"], "; ".join(signals), config_file, simulator["modules"][0],
                  simulator["source"], effect),
               ctr.path + ("env",), {"actual": False, "expected": True, "op": "true"})


# --------------------------------------------------------------------------------------------------
# GPU/EFA requests, hugepages, node selectors and tolerations (the last two with the repository's node groups)


def requested(container, names):
    """{name: count or None (a placeholder)} of the resources named that the container asks for (limits or
    requests: for extended resources the API server requires the limit and makes the request equal to it,
    which the schema row checks, _k8s_schema.resource_errors)."""
    resources = container.get("resources") if isinstance(container.get("resources"), dict) else {}
    out = {}
    for section in ("limits", "requests"):
        values = resources.get(section) if isinstance(resources.get(section), dict) else {}
        for name in names:
            if name in values:
                count = quantity(values.get(name))
                if name not in out or (count is not None and (out[name] is None or count > out[name])):
                    out[name] = count
    return out


def extended_resources(spec):
    """Names of the extended resources (a domain outside *kubernetes.io, not hugepages-*) that any container of
    the pod requests: the ExtendedResourceToleration admission plugin adds a toleration for each."""
    names = set()
    for _path, data in containers(spec):
        resources = data.get("resources") if isinstance(data.get("resources"), dict) else {}
        for section in ("limits", "requests"):
            for name in (resources.get(section) or {}) if isinstance(resources.get(section), dict) else {}:
                name = str(name)
                if "/" in name and not name.split("/", 1)[0].endswith("kubernetes.io") and not name.startswith("requests."):
                    names.add(name)
    return sorted(names)


def _pod_title(pod):
    where = fmt_path(pod["path"])
    return "the pod of %s%s" % (object_label(pod["doc"]), " (%s)" % where if where else "")


def _groups(opts):
    return opts.get("node_groups") or []


def _listed(groups, limit=6):
    shown = "; ".join(_node_groups.describe(g) for g in groups[:limit])
    return shown + ("; and %d more" % (len(groups) - limit) if len(groups) > limit else "")


def _candidates(spec, opts):
    """(selector, terms, node groups the pod's node selector and required node affinity allow), or None when
    the repository declares no node groups or the pod targets nodes no reader models (HyperPod)."""
    groups = _groups(opts)
    if not groups:
        return None
    selector, terms = _node_groups.pod_selectors(spec)
    if _node_groups.targets_hyperpod(selector, terms):
        return None
    extra = opts["node_label_prefixes"]
    return selector, terms, [g for g in groups if _node_groups.fits(g, selector, terms, extra)]


def _env_value(ctr, name):
    value = ctr.env().get(name)
    return None if value is None else str(value).strip().strip("'\"")


def _instance_types_of(ctr, opts):
    """The instance types the container's pod can land on, when all are known: the node selector's instance type,
    else those of the node groups it fits; None when any is unknown."""
    selector, terms = _node_groups.pod_selectors(ctr.spec)
    for key in _node_groups.INSTANCE_TYPE_LABELS:
        value = selector.get(key)
        if value is not None and not _node_groups._placeholder(value):
            return [str(value)], "its node selector %s=%s" % (key, value)
    found = _candidates(ctr.spec, opts)
    if not found or not found[2]:
        return None, ""
    types = []
    for group in found[2]:
        if not group["instance_types"]:
            return None, ""
        types.extend(group["instance_types"])
    return sorted(set(types)), "the node groups it fits (%s)" % ", ".join(g["name"] for g in found[2])


def _rule_gpu_efa_request(ctr, opts):
    gpus = requested(ctr.data, opts["gpu_resources"])
    efa = requested(ctr.data, opts["efa_resources"])
    # FI_PROVIDER=efa in a GPU container without an EFA device: the EFA device plugin mounts the devices
    # (/dev/infiniband/uverbs*) only into containers that request vpc.amazonaws.com/efa, so libfabric finds no
    # EFA device (the AWS EKS guide "Manage EFA devices on Amazon EKS"; aws-samples/awsome-distributed-training's
    # EFA manifests request it wherever they set FI_PROVIDER=efa)
    if gpus and not efa and (_env_value(ctr, "FI_PROVIDER") or "").lower() == "efa":
        yield ("%s sets FI_PROVIDER=efa and requests GPUs but no %s: without the resource no EFA device is in the "
               "container, libfabric finds no EFA provider and NCCL's inter-node traffic fails or falls back to "
               "TCP sockets" % (ctr.title, " or ".join(opts["efa_resources"])), ctr.path + ("resources",),
               {"actual": 0, "expected": 1, "op": "ge", "unit": "EFA devices requested"})
    asked = [(name, count, "gpu_count", "GPUs") for name, count in gpus.items() if count] + \
            [(name, count, "efa_devices", "EFA devices") for name, count in efa.items() if count]
    if not asked:
        return
    types, how = _instance_types_of(ctr, opts)
    if not types:
        return
    profiles = []
    for instance_type in types:
        try:
            profiles.append(_profiles.get_profile(instance_type))
        except _profiles.ProfileNotFound:
            return  # an instance type without a profile: its capacity is not known here
    for name, count, field, what in asked:
        most = max(p[field] or 0 for p in profiles)
        if count > most:
            yield ("%s requests %s: %d, but %s offer at most %d %s per node (%s): the pod stays Pending"
                   % (ctr.title, name, count, how, most, what,
                      ", ".join("%s %d" % (p["instance_type"], p[field] or 0) for p in profiles)),
                   ctr.path + ("resources",), {"actual": count, "expected": most, "op": "le", "unit": what})


def _rule_efa_hugepages(ctr, opts):
    efa = requested(ctr.data, opts["efa_resources"])
    if not efa:
        return
    if requested(ctr.data, ["hugepages-2Mi", "hugepages-1Gi"]):
        return
    if _env_value(ctr, "FI_EFA_USE_HUGE_PAGE") in ("0", "false", "no", "off"):
        return  # libfabric's EFA provider then allocates its buffers from regular pages
    yield ("%s requests %s but no hugepages-2Mi: libfabric's EFA provider allocates its packet buffers from huge "
           "pages by default and, when the pod has none, falls back to regular pages (libfabric prov/util/src/util_buf.c ofi_bufpool_region_alloc)"
           % (ctr.title, ", ".join(sorted(efa))), ctr.path + ("resources",),
           {"actual": 0, "expected": "hugepages-2Mi", "op": "true"})


def _rule_node_selector(pod, opts):
    found = _candidates(pod["spec"], opts)
    if found is None:
        return
    selector, terms, candidates = found
    if candidates or not (selector or terms):
        return
    groups, extra = _groups(opts), opts["node_label_prefixes"]
    missing = ["%s=%s" % (k, v) for k, v in sorted(selector.items())
               if not any(_node_groups.fits(g, {k: v}, [], extra) for g in groups)]
    if terms and not any(any(_node_groups._term_fits(g, t, extra) for g in groups) for t in terms):
        missing.append("its required node affinity")
    path = pod["path"] + (("nodeSelector",) if selector else ("affinity",))
    yield ("%s selects %s, which no node group of the repository gives its nodes (and neither the kubelet, the "
           "cloud provider, EKS nor Karpenter sets it): the pod stays Pending. Node groups: %s"
           % (_pod_title(pod), ", ".join(missing) or "a combination", _listed(groups)), path,
           {"actual": 0, "expected": 1, "op": "ge", "unit": "node groups that fit"})


def _rule_toleration(pod, opts):
    found = _candidates(pod["spec"], opts)
    if found is None or not found[2]:
        return
    tolerations = [t for t in pod["spec"].get("tolerations") or [] if isinstance(t, dict)]
    if opts["extended_resource_toleration"]:
        # the ExtendedResourceToleration admission plugin (kubernetes plugin/pkg/admission/
        # extendedresourcetoleration: key = the resource, operator Exists, effect NoSchedule), enabled on EKS since
        # 1.19 (aws/containers-roadmap#739)
        tolerations += [{"key": name, "operator": "Exists", "effect": "NoSchedule"}
                        for name in extended_resources(pod["spec"])]
    blocked = [(g, _node_groups.untolerated(g, tolerations)) for g in found[2]]
    if not all(taints for _g, taints in blocked):
        return
    path = pod["path"] + (("tolerations",) if pod["spec"].get("tolerations") else ())
    yield ("%s tolerates none of the taints of the node groups its node selector allows: %s; the pod stays Pending"
           % (_pod_title(pod), "; ".join("%s has %s" % (g["name"], ", ".join(
               "%s=%s:%s" % (t["key"], t["value"] if t["value"] is not None else "*", t["effect"]) for t in taints))
               for g, taints in blocked)), path,
           {"actual": 0, "expected": 1, "op": "ge", "unit": "node groups it tolerates"})


RULES = (
    Rule("deadline", "error", "A Job, pod or MPIJob deadline (activeDeadlineSeconds) under the floor",
         "set activeDeadlineSeconds to at least %(min_deadline_s)d s: images of 15-20 GB take 5-10 minutes to pull "
         "the first time, and the deadline counts the pull (seed pitfall 3)", "object", _rule_deadline),
    Rule("image_pull_policy", "warning", "imagePullPolicy: Always",
         "use imagePullPolicy: IfNotPresent with a pinned tag: Always re-pulls a 15-20 GB image on every start "
         "(seed pitfall 3)", "container", _rule_image_pull_policy),
    Rule("image_tag", "warning", "An image tagged latest or untagged (effective pull policy Always)",
         "tag the image with a specific version or pin a digest (image@sha256:...): latest moves, and without an "
         "explicit imagePullPolicy Kubernetes pulls it on every start", "container", _rule_image_tag),
    Rule("dev_shm", "warning", "A GPU container without a memory-backed /dev/shm",
         "mount an emptyDir with medium: Memory (and a sizeLimit such as 64Gi) at /dev/shm: the container default "
         "of 64 MiB breaks PyTorch DataLoader workers and NCCL", "pod", _rule_dev_shm),
    Rule("inline_script", "warning", "A multi-line `sh -c` script with control flow",
         "keep inline shell to straight commands; put branches, loops and functions in a script mounted from a "
         "ConfigMap or baked into the image (seed pitfall 4)", "container", _rule_inline_script),
    Rule("simulator_config", "warning", "A simulator workload whose import would ask for its config on stdin",
         "provide the simulator's config file: for LIBERO set LIBERO_CONFIG_PATH to a directory holding "
         "config.yaml (a ConfigMap volume) or write it before the import; and keep stdin closed (seed pitfall 1)",
         "container", _rule_simulator_config),
    Rule("gpu_efa_request", "warning", "A GPU or EFA request the pod's nodes cannot meet, or FI_PROVIDER=efa without EFA",
         "request vpc.amazonaws.com/efa (as a limit; the request equals it) in every GPU container that sets "
         "FI_PROVIDER=efa, and no more GPUs or EFA devices than one node of the target instance type has",
         "container", _rule_gpu_efa_request),
    Rule("efa_hugepages", "info", "An EFA container without hugepages-2Mi",
         "add hugepages-2Mi (AWS's nccl-tests sample requests 5120Mi, with memory) to the limits of containers that "
         "request EFA, or set FI_EFA_USE_HUGE_PAGE=0 where huge pages are unwanted (fork-heavy data loaders)",
         "container", _rule_efa_hugepages),
    Rule("node_selector", "warning", "A node selector that no node group of the repository labels",
         "label a node group with it (eksctl labels, Terraform labels, Karpenter spec.template.metadata.labels) or "
         "select a label the node groups set; add labels software sets on your nodes with "
         "local_checks_node_label_prefixes", "pod", _rule_node_selector),
    Rule("toleration", "warning", "A pod that tolerates the taints of none of the node groups it may run on",
         "add a toleration for the node group's taint (key, value, effect) to the pod template, or select a node "
         "group without taints", "pod", _rule_toleration),
    Rule("unset_variable", "warning", "A ${VAR} placeholder with no value",
         "give the variable a value (local_checks_values, an env file with local_checks_env_file, or -e), or "
         "restrict envsubst to the variables meant for it (local_checks_envsubst_vars)", "file", None),
)

RULE_NAMES = tuple(rule.name for rule in RULES)
RULES_BY_NAME = dict((rule.name, rule) for rule in RULES)

DEFAULT_OPTIONS = {
    "rules": list(RULE_NAMES),
    "severity": {},
    "min_deadline_s": 600,
    "gpu_resources": ["nvidia.com/gpu"],
    "inline_script_max_lines": 1,
    "inline_script_max_control_flow": 0,
    "shells": ["bash", "sh", "zsh", "dash", "ash", "ksh"],
    "simulators": copy.deepcopy(SIMULATORS),
    "efa_resources": ["vpc.amazonaws.com/efa"],
    # the repository's node groups (_node_groups); None or [] = none declared, and the node rules stay quiet
    "node_groups": None,
    # more label prefixes that software on the nodes sets (beyond _node_groups.AUTO_PREFIXES)
    "node_label_prefixes": [],
    # whether the cluster runs the ExtendedResourceToleration admission plugin (EKS does)
    "extended_resource_toleration": True,
}


def options_with_defaults(options=None):
    """The rule options with the defaults filled in; None values mean 'use the default'."""
    out = copy.deepcopy(DEFAULT_OPTIONS)
    for key, value in (_plain(options) or {}).items():
        if value is None:
            continue
        if key not in out:
            raise LintError("unknown pitfall option %r (known: %s)" % (key, ", ".join(sorted(out))))
        out[key] = value
    for key in ("min_deadline_s", "inline_script_max_lines", "inline_script_max_control_flow"):
        try:
            out[key] = int(out[key])
        except (TypeError, ValueError):
            raise LintError("%s must be an integer, not %r" % (key, out[key]))
    unknown = [r for r in out["rules"] if r not in RULES_BY_NAME]
    if unknown:
        raise LintError("unknown pitfall rule(s) %s (known: %s)" % (", ".join(unknown), ", ".join(RULE_NAMES)))
    for name, level in (out["severity"] or {}).items():
        if name not in RULES_BY_NAME:
            raise LintError("severity given for unknown rule %r (known: %s)" % (name, ", ".join(RULE_NAMES)))
        if level not in SEVERITIES:
            raise LintError("severity of %s must be one of %s, not %r" % (name, ", ".join(SEVERITIES), level))
    for sim in out["simulators"]:
        missing = [k for k in SIMULATORS[0] if k not in sim]
        if missing:
            raise LintError("simulator %r lacks %s" % (sim.get("name"), ", ".join(missing)))
    return out


def severity_of(rule_name, opts):
    return (opts.get("severity") or {}).get(rule_name) or RULES_BY_NAME[rule_name].severity


def fix_of(rule_name, opts):
    return RULES_BY_NAME[rule_name].fix % opts if "%(" in RULES_BY_NAME[rule_name].fix else RULES_BY_NAME[rule_name].fix


class _Object:
    def __init__(self, doc):
        self.doc = doc


def lint_document(doc, options=None, provided_env=None, file="", marks=None, first_line=0, opts=None):
    """Findings (``_lint_base.finding``) of the enabled rules in one Kubernetes object.

    provided_env: names of variables that something outside the object provides (for the rendered
    manifests of the collection: the inventory's validation_simulator_env). marks/first_line: the YAML
    marks of the object (``_yaml_marks.load_all``), for line and column."""
    opts = opts or options_with_defaults(options)
    enabled = set(opts["rules"])
    doc = _plain(doc)
    if not is_k8s_object(doc):
        return []
    label = object_label(doc)
    out = []

    def emit(rule, results, container=""):
        for message, path, extra in results:
            line, column = line_of(marks or {}, path, first_line) if (marks or first_line) else (0, 0)
            out.append(finding(rule.name, severity_of(rule.name, opts), message, fix_of(rule.name, opts), file=file,
                               line=line, column=column, obj=label, container=container, path=fmt_path(path),
                               **extra))

    for rule in RULES:
        if rule.name in enabled and rule.scope == "object":
            emit(rule, rule.func(_Object(doc), opts))
    for spath, spec in pod_specs(doc):
        ctrs = [Container(doc, spath, spec, cpath, data, provided_env) for cpath, data in containers(spec, spath)]
        for rule in RULES:
            if rule.name not in enabled:
                continue
            if rule.scope == "container":
                for ctr in ctrs:
                    emit(rule, rule.func(ctr, opts), ctr.name)
            elif rule.scope == "pod":
                for message, path, extra in rule.func({"spec": spec, "containers": ctrs, "doc": doc, "path": spath},
                                                      opts):
                    owner = next((c.name for c in ctrs if tuple(path[:len(c.path)]) == c.path), "")
                    emit(rule, [(message, path, extra)], owner)
    return out


def unset_variable_findings(unset_by_var, opts=None, file_of=None):
    """One finding per unset variable, listing every file:line that uses it. unset_by_var:
    {NAME: [(file, line), ...]}."""
    opts = opts or options_with_defaults()
    if "unset_variable" not in opts["rules"]:
        return []
    out = []
    for name in sorted(unset_by_var):
        uses = unset_by_var[name]
        first_file, first_line = uses[0]
        more = " (and %d more)" % (len(uses) - 20) if len(uses) > 20 else ""
        shown = ", ".join("%s:%d" % use for use in uses[:20]) + more
        out.append(finding("unset_variable", severity_of("unset_variable", opts),
                           "${%s} has no value; it is used at %s" % (name, shown), fix_of("unset_variable", opts),
                           file=first_file, line=first_line, path=name, actual=len(uses), expected=0,
                           unit="uses"))
    return out


def simulator_inventory_findings(module, env, options=None):
    """The inventory's simulator (validation_simulator_module / _env, what the L4 probe imports)."""
    opts = options_with_defaults(options)
    if "simulator_config" not in opts["rules"] or not module:
        return []
    have = set((_plain(env) or {}).keys())
    out = []
    for sim in opts["simulators"]:
        if not any(str(module) == m or str(module).startswith(m + ".") for m in sim["modules"]):
            continue
        if sim["config_env"] not in have:
            out.append(finding(
                "simulator_config", severity_of("simulator_config", opts),
                "the simulator %s (validation_simulator_module) reads %s/%s at import and asks with input() when it "
                "is missing (%s); validation_simulator_env does not set %s" % (
                    module, sim["config_env"], sim["config_file"], sim["source"], sim["config_env"]),
                "set %s in validation_simulator_env to a directory the image holds %s in, unless the image ships "
                "%s/%s" % (sim["config_env"], sim["config_file"], sim["config_default"], sim["config_file"]),
                file="inventory", path="validation_simulator_env", actual=False, expected=True, op="true"))
    return out
