# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The pitfall rules of local mode, as one registry.

:data:`RULES` is the only list of rules: each :class:`Rule` carries its name, default severity, one-line
summary, fix and the function that finds it. The module's argument-spec ``choices``, the role's argument
spec and defaults, the docs table and the severity of every finding come from it (a unit test keeps the
YAML copies equal to it). To add a rule: write ``_rule_<name>(ctx)`` and add one ``Rule`` line. What the
rules look at (containers, images, scripts) is in ``_pitfall_objects``.

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

from ansible_collections.rlstack.validation.plugins.module_utils.lint import _node_groups, _shell_syntax
from ansible_collections.rlstack.validation.plugins.module_utils.gpu import _profiles
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain as _plain
from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import (
    SEVERITIES, LintError, finding, fmt_path, is_k8s_object, object_label)
# what the rules look at (also imported from here by callers and tests)
from ansible_collections.rlstack.validation.plugins.module_utils.lint._pitfall_objects import (
    Container, commands_of, containers, control_flow, effective_pull_policy, find_keys, gpu_count, parse_image,
    pod_specs, quantity, shell_script, split_script)
from ansible_collections.rlstack.validation.plugins.module_utils.lint._yaml_marks import line_of


class Rule:
    """One pitfall rule: name (its config switch and the name of its checks), default severity, summary
    (for the docs and SARIF), fix (what to do), scope ('container', 'pod' or 'object') and function."""

    def __init__(self, name, severity, summary, fix, scope, func):
        self.name, self.severity, self.summary, self.fix, self.scope, self.func = (
            name, severity, summary, fix, scope, func)


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
    python -c or a heredoc, a script named after it, an env-type argument such as --env.type=libero, a
    config name such as --config-name libero_spatial_ppo) or its env (the simulator's config variable, a
    CONFIG_NAME naming a config of it, as an evaluation Job's launcher reads it). Paths, model names and
    repository ids in arguments or env values are not signals."""
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
            if arg in _CONFIG_NAME_FLAGS and index + 1 < len(words) and _names_simulator(words[index + 1], word):
                signals.append("selects the %s config %s (%s)" % (simulator["name"], words[index + 1], arg))
            elif arg.split("=", 1)[0] in _CONFIG_NAME_FLAGS and "=" in arg and \
                    _names_simulator(arg.split("=", 1)[1], word):
                signals.append("selects the %s config %s" % (simulator["name"], arg))
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
    for name, value in sorted(env.items()):
        # a launcher's config name in the env (an eval Job's CONFIG_NAME=libero_spatial_eval_...), not a path
        if re.search(r"(?:^|_)CONFIG(?:_NAME)?$", name) and value and _names_simulator(value, word):
            signals.append("sets %s=%s (a %s config)" % (name, value, simulator["name"]))
    return sorted(set(signals), key=signals.index)


# Hydra's config-name flags (RLinf's launchers: examples/embodiment/*.py --config-name NAME)
_CONFIG_NAME_FLAGS = ("--config-name", "--config_name", "-cn")


def _names_simulator(value, word):
    """A config name (not a path, a model or a repository id) one of whose words is the simulator's."""
    value = str(value).strip("'\"")
    return "/" not in value and "$" not in value and word in re.split(r"[^a-z0-9]+", value.lower())


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


# Kubernetes API reference, Job v1 batch (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/
# job-v1/, from k8s.io/api batch/v1 types.go JobSpec): backoffLimit "Specifies the number of retries before
# marking this job failed. Defaults to 6"; activeDeadlineSeconds has no default (the Job may run for ever).
JOB_DEFAULT_BACKOFF_LIMIT = 6


def job_specs(doc):
    """(path, spec) of every batch/v1 Job spec of an object: a Job's own spec, a CronJob's (or any)
    jobTemplate.spec, a JobSet's replicatedJobs[].template.spec."""
    found = []
    if str(doc.get("kind") or "") == "Job" and isinstance(doc.get("spec"), dict):
        found.append((("spec",), doc["spec"]))
    for path, value in find_keys(doc, "jobTemplate"):
        if isinstance(value, dict) and isinstance(value.get("spec"), dict):
            found.append((path + ("spec",), value["spec"]))
    for path, value in find_keys(doc, "replicatedJobs"):
        for index, item in enumerate(value if isinstance(value, list) else []):
            template = item.get("template") if isinstance(item, dict) else None
            if isinstance(template, dict) and isinstance(template.get("spec"), dict):
                found.append((path + (index, "template", "spec"), template["spec"]))
    return found


def _rule_job_retries(obj, opts):
    for path, spec in job_specs(obj.doc):
        template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
        pod = template.get("spec") if isinstance(template.get("spec"), dict) else {}
        gpus = sum(gpu_count(data, opts["gpu_resources"]) for _p, data in containers(pod))
        if gpus <= 0:
            continue
        missing = [key for key in ("backoffLimit", "activeDeadlineSeconds") if key not in spec]
        if not missing:
            continue
        where = "Job" if path == ("spec",) else "Job template %s of" % fmt_path(path)
        what = []
        if "backoffLimit" in missing:
            what.append("no backoffLimit (Kubernetes then retries %d times, each retry buying the GPUs again)"
                        % JOB_DEFAULT_BACKOFF_LIMIT)
        if "activeDeadlineSeconds" in missing:
            what.append("no activeDeadlineSeconds (a hung run holds its GPUs until someone deletes it)")
        add = " and ".join("%s: %s" % (key, "0" if key == "backoffLimit" else "<longest expected run, s>")
                           for key in missing)
        yield ("%s %s requests %d GPU(s) and has %s" % (where, object_label(obj.doc), gpus, "; ".join(what)), path,
               {"actual": missing, "expected": [], "op": "eq",
                "fix": "add %s under %s of %s (%s)" % (add, fmt_path(path), object_label(obj.doc), "; ".join(
                    ["backoffLimit: 0 or 1 for a training run that cannot resume"] * ("backoffLimit" in missing)
                    + ["the deadline at least %d s: image pulls count" % opts["min_deadline_s"]]
                    * ("activeDeadlineSeconds" in missing)))})


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
    extra = {"actual": ref["tag"] or "untagged", "expected": ["latest", "untagged"], "op": "not_in"}
    if not defaulted:  # the container sets a policy: the fix speaks of that one, not of a missing one
        extra["fix"] = ("tag the image with a specific version or pin a digest (image@sha256:...): latest moves, "
                        "so what runs is not what was tested%s" % (
                            "; with imagePullPolicy: Always it is also pulled again on every start"
                            if policy == "Always" else ""))
    yield ("%s %s" % (ctr.title, text), ctr.path + ("image",), extra)


# Programs that share no memory between processes: a container that runs only these (a GPU check, an idle pod)
# needs no /dev/shm (issue 31: the nvidia-smi and sleep test pods of NVIDIA/deepops are not findings).
CHECK_PROGRAMS = ("nvidia-smi", "sleep", "echo", "true", "printf", "env", "printenv", "hostname")


def _only_checks(ctr, opts):
    """True when every command the container runs is a check: one of CHECK_PROGRAMS, or a one-line `python -c`
    program (`python -c 'import torch; print(torch.cuda.is_available())'`). An image's own entrypoint (no
    command) is not known, so it is not a check."""
    script = shell_script(ctr.argv(), opts["shells"])
    try:  # a one-line script that is one command: its words as the shell reads them (quotes kept whole)
        whole = shlex.split(script[1]) if script and "\n" not in script[1].strip() else None
    except ValueError:
        whole = None
    if whole and not set(whole) & set(("&&", "||", ";", "|")) and whole[0].startswith("python"):
        argvs, bodies = [whole], []
    else:
        argvs, bodies = commands_of(ctr, opts["shells"])
    if bodies or not any(argvs):
        return False
    for argv in argvs:
        program = os.path.basename(argv[0]) if argv else ""
        if program in CHECK_PROGRAMS:
            continue
        if re.match(r"^python[0-9.]*$", program) and len(argv) == 3 and argv[1] == "-c" and "\n" not in argv[2]:
            continue
        return False
    return True


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
        if not mounts and _only_checks(ctr, opts):
            continue  # needs none; a /dev/shm it does mount must still be memory-backed (it says it wants one)
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


def _script_item(ctr, body):
    """(path, where) of the argv item holding an inline script: `command` or `args`, and its index there."""
    for where in ("command", "args"):
        items = ctr.data.get(where) or []
        for index, item in enumerate(items if isinstance(items, list) else []):
            if item is not None and str(item) == body:
                return ctr.path + (where, index)
    return ctr.path + ("command",)


def _rule_shell_syntax(ctr, opts):
    script = shell_script(ctr.argv(), opts["shells"])
    if not script or script[0] not in ("bash", "sh"):
        return  # bash -n speaks for bash and the POSIX sh it extends, not for zsh or ksh
    shell, body = script
    errors = _shell_syntax.bash_n(body)
    if not errors:
        return  # none, or bash could not be run (not installed, timed out): no guess
    path = _script_item(ctr, body)
    for line, message in errors:
        yield ("%s runs `%s -c` with a script bash -n rejects%s: %s"
               % (ctr.title, shell, " at its line %d" % line if line else "", message), path,
               {"actual": message, "expected": "no syntax error", "op": "eq", "text_line": line})


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
        extra = {"actual": False, "expected": True, "op": "true"}
        # a config name alone says the workload uses the simulator, not how its image was built: framework
        # images that install LIBERO may write the config at build time (RLinf requirements/install.sh
        # reset_libero_config, a3816b59), so it is a note to check the image, not a warning
        if all(" config" in signal for signal in signals):
            extra["severity"] = "info"
        yield ("%s runs %s (%s) but nothing in the pod provides %s: importing %s then calls input() (%s); %s, "
               "unless the image ships that file"
               % (ctr.title, simulator["name"], "; ".join(signals), config_file, simulator["modules"][0],
                  simulator["source"], effect),
               ctr.path + ("env",), extra)


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
    Rule("job_retries", "warning", "A GPU Job without backoffLimit or activeDeadlineSeconds",
         "set backoffLimit (Kubernetes defaults to 6 retries, each re-buying the GPU time) and activeDeadlineSeconds "
         "(no default: a hung run holds its GPUs) in the spec of every Job whose pods request GPUs", "object",
         _rule_job_retries),
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
    Rule("shell_syntax", "error", "An inline `bash -c` / `sh -c` script that bash -n rejects",
         "fix the script's syntax at the line named (the container would exit at once with a syntax error); "
         "run `bash -n` on the rendered script to check", "container", _rule_shell_syntax),
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
    Rule("envsubst_clobbers", "warning", "Unrestricted envsubst empties the script's own shell variables",
         "render the file with the restricted form, envsubst '${A} ${B}' < file, naming only the variables meant "
         "for envsubst: the others then reach the container's shell as written", "file", None),
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
            extra = dict(extra)
            text_line = extra.pop("text_line", 0)  # a line inside a literal block scalar (an inline script)
            text = (marks or {}).get(tuple(str(p) if not isinstance(p, int) else p for p in path) + ("<text>",))
            if text_line and text:
                line, column = text[0] + text_line - 1, 0
            # a rule may lower one finding's severity (weak evidence); the user's severity setting still wins
            severity = (opts.get("severity") or {}).get(rule.name) or extra.pop("severity", None) or \
                severity_of(rule.name, opts)
            extra.pop("severity", None)
            fix = extra.pop("fix", None) or fix_of(rule.name, opts)  # a fix that fits this object better
            out.append(finding(rule.name, severity, message, fix, file=file,
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
        # every use, none cut: SARIF gives each its own location (_sarif relatedLocations)
        shown = ", ".join("%s:%d" % use for use in uses)
        found = finding("unset_variable", severity_of("unset_variable", opts),
                        "${%s} has no value; it is used at %s" % (name, shown), fix_of("unset_variable", opts),
                        file=first_file, line=first_line, path=name, actual=len(uses), expected=0, unit="uses")
        found["uses"] = [{"file": use[0], "line": int(use[1])} for use in uses]
        out.append(found)
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
