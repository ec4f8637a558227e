# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Offline checks of local mode (no cluster): the seed's pitfalls, schemas and reference integrity.

Three parts, each returning checks in the shape ``rlstack.validation.level_assert`` judges
(name, node, op, actual, expected, unit, hint, fail_msg, evidence_missing):

* **Pitfalls** (:func:`lint_document`, :func:`pitfall_checks`): what the seed's "Common Testing Pitfalls"
  warn about, found in a Kubernetes object: a Job/pod deadline under 600 s, ``imagePullPolicy: Always``,
  ``:latest`` or untagged images, a GPU pod without a memory-backed ``/dev/shm``, complex bash in a
  ``bash -c`` block scalar, and a simulator workload without the environment its simulator needs
  (LIBERO_DATASET_DIR: LIBERO calls ``input()`` at import and the pod hangs).
* **Schemas** (:class:`SchemaValidator`): Kubernetes objects against the schemas that kubernetes-validate
  ships (strict: unknown fields fail, as ``kubectl apply`` rejects them), custom resources against the
  ``openAPIV3Schema`` of their CRD through jsonschema, plus the API server and MPI operator rules that a
  schema cannot express (names and labels, MPIJob pod hostnames).
* **References** (:func:`find_references`, :func:`reference_checks`): every file a playbook, role task
  file or template names (include/import_tasks, include/import_role tasks_from, template/copy src,
  lookup('file'|'template'), ``{{ role_path }}/...``) exists.

Standard library only at import time, Python 3.8 syntax. PyYAML, jsonschema, referencing and
kubernetes-validate are imported when first needed, so the pitfall rules work without them.
"""

from __future__ import annotations

import copy
import fnmatch
import glob
import json
import os
import re
from ansible_collections.rlstack.validation.plugins.module_utils._data import plain as _plain

RULES = ("deadline", "image_pull_policy", "image_tag", "dev_shm", "inline_script", "simulator_env")

DEFAULT_OPTIONS = {
    "min_deadline_s": 600,
    "gpu_resources": ["nvidia.com/gpu"],
    "inline_script_tokens": [";", "&&", "||", "{", "}"],
    "inline_script_max_lines": 1,
    "shells": ["bash", "sh", "zsh", "dash", "ash", "ksh"],
    "simulator_env": [
        {"name": "LIBERO", "pattern": r"(?i)libero", "env": ["LIBERO_DATASET_DIR"]},
    ],
    "rules": list(RULES),
    "simulator_env_strict": False,
}

HINTS = {
    "deadline": ("set activeDeadlineSeconds to at least %(min)d s: images of 15-20 GB take 5-10 minutes to pull "
                 "the first time, and the deadline counts the pull (seed pitfall 3)"),
    "image_pull_policy": ("use imagePullPolicy: IfNotPresent: Always re-pulls a 15-20 GB image on every start "
                          "(seed pitfall 3)"),
    "image_tag": ("tag images with a specific version (or pin a digest): ':latest' and untagged images change "
                  "under you and make Kubernetes pull them on every start (seed pitfall 3)"),
    "dev_shm": ("mount an emptyDir with medium: Memory (and a sizeLimit such as 64Gi) at /dev/shm: the "
                "container default of 64 MiB breaks PyTorch DataLoader workers and NCCL"),
    "inline_script": ("keep inline bash to one simple command; put the logic in a script (Python or bash) "
                      "mounted from a ConfigMap or baked into the image (seed pitfall 4)"),
    "simulator_env": ("set the variables in the container's env (for the examples of validate.yml: the "
                      "example's env in validation_examples) and redirect stdin: the simulator calls input() "
                      "at import time and the pod hangs without an error (seed pitfall 1)"),
    "schema": ("fix the fields named above: `kubectl apply` (server-side field validation Strict) rejects the "
               "object as it is"),
    "schema_missing": ("give the schema of this kind with local_checks_crd_schemas, or set "
                       "local_checks_unknown_kinds=skip to accept kinds without a schema"),
    "yaml": "fix the YAML syntax (yamllint shows the line), or render templates before linting them",
    "references": ("create the missing file or fix the path; Ansible fails only when it reaches the task, "
                   "possibly in the middle of a run on a cluster"),
}

_GENERATED_ENV_HINT = (
    "%(var)s is only in the inventory's validation_simulator_env, which the level roles set in the L4 probe "
    "pod but not in this container; add it to the container's env unless the image sets it"
)


class LintError(ValueError):
    """An input cannot be linted (bad options, unreadable file); the text says what to fix."""


# --------------------------------------------------------------------------------------------------
# small helpers


def options_with_defaults(options=None):
    """The pitfall options with the defaults filled in; None values mean 'use the default'."""
    out = copy.deepcopy(DEFAULT_OPTIONS)
    for key, value in (_plain(options) or {}).items():
        if value is None:
            continue
        if key not in out:
            raise LintError("unknown pitfall option %r (known: %s)" % (key, ", ".join(sorted(out))))
        out[key] = value
    try:
        out["min_deadline_s"] = int(out["min_deadline_s"])
        out["inline_script_max_lines"] = int(out["inline_script_max_lines"])
    except (TypeError, ValueError):
        raise LintError("min_deadline_s and inline_script_max_lines must be integers")
    unknown = [r for r in out["rules"] if r not in RULES]
    if unknown:
        raise LintError("unknown pitfall rule(s) %s (known: %s)" % (", ".join(unknown), ", ".join(RULES)))
    for rule in out["simulator_env"]:
        if not isinstance(rule, dict) or not rule.get("pattern") or not rule.get("env"):
            raise LintError("each simulator_env rule needs a pattern and a list env, not %r" % (rule,))
        try:
            re.compile(rule["pattern"])
        except re.error as exc:
            raise LintError("simulator_env pattern %r is not a regular expression: %s" % (rule["pattern"], exc))
    return out


def fmt_path(path):
    """('spec', 'containers', 0, 'image') -> 'spec.containers[0].image'."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += "[%d]" % part
        else:
            text += ("." if text else "") + str(part)
    return text


def object_label(doc):
    """'Job/name' (or 'Job/<no name>'); '' for something that is not a Kubernetes object."""
    if not isinstance(doc, dict):
        return ""
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = meta.get("name") or meta.get("generateName") or "<no name>"
    return "%s/%s" % (doc.get("kind") or "?", name)


def is_k8s_object(doc):
    return isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str) and isinstance(doc.get("kind"), str)


def check(name, node="", op="eq", actual=None, expected=None, hint="", message="", unit="",
          evidence_missing=False):
    """A check for rlstack.validation.level_assert."""
    return {"name": name, "node": node or "", "op": op, "actual": actual, "expected": expected, "hint": hint,
            "fail_msg": message, "unit": unit, "evidence_missing": bool(evidence_missing)}


# --------------------------------------------------------------------------------------------------
# walking pods and containers


def pod_specs(doc, path=()):
    """Every pod spec inside an object: (path, spec) for each dict with a list `containers`.

    Works for Pods, Jobs, CronJobs, Deployments, StatefulSets, DaemonSets, MPIJobs, PyTorchJobs and any
    other kind that embeds pod templates, without a table of kinds.
    """
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


def _container_title(container, cpath):
    kind = "init container" if "initContainers" in cpath else (
        "ephemeral container" if "ephemeralContainers" in cpath else "container")
    return "%s %s" % (kind, container.get("name") or fmt_path(cpath))


def _quantity(value):
    """GPU-like extended resources are integers; '8', 8 and '8.0' are 8, anything else 0."""
    if isinstance(value, bool) or value is None:
        return 0
    try:
        return int(float(str(value).strip()))
    except ValueError:
        return 0


def gpu_count(container, gpu_resources):
    resources = container.get("resources") if isinstance(container.get("resources"), dict) else {}
    best = 0
    for section in ("limits", "requests"):
        values = resources.get(section) if isinstance(resources.get(section), dict) else {}
        for name in gpu_resources:
            best = max(best, _quantity(values.get(name)))
    return best


def find_keys(doc, wanted, path=()):
    """(path, value) of every key named `wanted`, at any depth."""
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


# --------------------------------------------------------------------------------------------------
# images and shell scripts


def parse_image(image):
    """{'tag': 'v1'|'latest'|None, 'digest': 'sha256:...'|None, 'placeholder': bool} of an image reference."""
    text = str(image or "").strip()
    placeholder = (not text) or bool(re.search(r"\$\{?\w|<[^>]*>|\{\{", text))
    digest = None
    if "@" in text:
        text, digest = text.split("@", 1)
    last = text.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else None
    return {"tag": tag, "digest": digest, "placeholder": placeholder}


def shell_script(argv, shells):
    """The script of a `bash -c SCRIPT` style argv (command + args), or None.

    The shell may be a path (/bin/bash, /usr/bin/env bash); its option may combine flags (-c, -lc, -ec,
    -euxc, -o pipefail -c). Returns (shell, script).
    """
    argv = [str(a) for a in (argv or []) if a is not None]
    for index, arg in enumerate(argv):
        base = os.path.basename(arg)
        if base not in shells:
            continue
        rest = argv[index + 1:]
        position = 0
        has_c = False
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
            return base, rest[position]
        return None
    return None


def script_lines(script):
    """The lines of a script that do something (not blank, not comment-only)."""
    return [line for line in str(script).splitlines() if line.strip() and not line.strip().startswith("#")]


def script_tokens(script, tokens):
    """The tokens (of `tokens`) the code lines of the script use, in the order of `tokens`."""
    code = "\n".join(_strip_comment(line) for line in script_lines(script))
    return [token for token in tokens if token in code]


def _strip_comment(line):
    # a '#' that starts a word starts a comment (good enough for a lint: quoted '#' stays)
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


def env_names(container):
    names = set()
    for item in container.get("env") or []:
        if isinstance(item, dict) and item.get("name"):
            names.add(str(item["name"]))
    return names


def _argv_text(container):
    return " ".join(str(a) for a in (container.get("command") or []) + (container.get("args") or []))


# --------------------------------------------------------------------------------------------------
# the pitfall rules


def _finding(rule, doc, path, message, actual=None, expected=None, op="eq", unit="", hint=None, warning=False):
    return {"rule": rule, "object": object_label(doc), "path": fmt_path(path), "message": message,
            "actual": actual, "expected": expected, "op": op, "unit": unit,
            "hint": hint if hint is not None else HINTS[rule], "warning": bool(warning)}


def lint_document(doc, options=None, provided_env=None):
    """Findings of the pitfall rules in one Kubernetes object (a list of dicts, see :func:`_finding`).

    provided_env: names of variables that something outside the object provides (for the rendered
    manifests: the inventory's validation_simulator_env); a simulator variable found only there is a
    warning, not a failure, unless the option simulator_env_strict is true.
    """
    opts = options_with_defaults(options)
    rules = set(opts["rules"])
    doc = _plain(doc)
    if not is_k8s_object(doc):
        return []
    label = object_label(doc)
    found = []

    if "deadline" in rules:
        for path, value in find_keys(doc, "activeDeadlineSeconds"):
            seconds = _quantity(value) if not isinstance(value, bool) else 0
            if isinstance(value, (int, float, str)) and not isinstance(value, bool) and seconds < opts["min_deadline_s"]:
                found.append(_finding(
                    "deadline", doc, path,
                    "%s %s is %s s, under %d s: the pod is killed while a large image is still being pulled"
                    % (label, fmt_path(path), value, opts["min_deadline_s"]),
                    actual=seconds, expected=opts["min_deadline_s"], op="ge", unit="s",
                    hint=HINTS["deadline"] % {"min": opts["min_deadline_s"]}))

    provided = set(provided_env or [])
    for spath, spec in pod_specs(doc):
        gpu_containers = []
        for cpath, container in containers(spec, spath):
            title = "%s of %s" % (_container_title(container, cpath), label)
            image = container.get("image")
            if "image_pull_policy" in rules and str(container.get("imagePullPolicy") or "") == "Always":
                found.append(_finding(
                    "image_pull_policy", doc, cpath + ("imagePullPolicy",),
                    "%s pulls its image on every start (imagePullPolicy: Always)" % title,
                    actual="Always", expected="Always", op="ne"))
            if "image_tag" in rules and image is not None:
                ref = parse_image(image)
                problem = None
                if ref["placeholder"]:
                    problem = "placeholder"
                    text = "uses the image placeholder %r, not a pinned tag" % str(image)
                elif ref["digest"]:
                    problem = None
                elif ref["tag"] is None:
                    problem = "untagged"
                    text = "uses the untagged image %r (Kubernetes reads it as :latest)" % str(image)
                elif ref["tag"] == "latest":
                    problem = "latest"
                    text = "uses the image %r" % str(image)
                if problem:
                    if problem != "placeholder" and not container.get("imagePullPolicy"):
                        text += ", so Kubernetes pulls it on every start"
                    found.append(_finding("image_tag", doc, cpath + ("image",), "%s %s" % (title, text),
                                          actual=problem, expected=["latest", "untagged", "placeholder"],
                                          op="not_in"))
            if "inline_script" in rules:
                argv = list(container.get("command") or []) + list(container.get("args") or [])
                script = shell_script(argv, opts["shells"])
                if script:
                    shell, body = script
                    lines = script_lines(body)
                    tokens = script_tokens(body, opts["inline_script_tokens"])
                    if len(lines) > opts["inline_script_max_lines"] and tokens:
                        found.append(_finding(
                            "inline_script", doc, cpath + ("command",),
                            "%s runs `%s -c` with a %d-line inline script using %s"
                            % (title, shell, len(lines), " ".join(tokens)),
                            actual=tokens, expected=[], op="eq"))
            if "simulator_env" in rules:
                text = _argv_text(container)
                have = env_names(container)
                for rule in opts["simulator_env"]:
                    if not re.search(rule["pattern"], text):
                        continue
                    if container.get("envFrom"):
                        continue  # a ConfigMap/Secret may provide them; not knowable offline
                    missing = [v for v in rule["env"] if v not in have]
                    hard = [v for v in missing if v not in provided or opts["simulator_env_strict"]]
                    soft = [v for v in missing if v not in hard]
                    name = rule.get("name") or rule["pattern"]
                    if hard:
                        found.append(_finding(
                            "simulator_env", doc, cpath + ("env",),
                            "%s runs a %s workload without %s in its env: the simulator asks for it with "
                            "input() at import time and the pod hangs" % (title, name, ", ".join(hard)),
                            actual=hard, expected=[], op="eq"))
                    for var in soft:
                        found.append(_finding(
                            "simulator_env", doc, cpath + ("env",),
                            "%s runs a %s workload without %s in its env" % (title, name, var),
                            actual=[], expected=[], op="eq", hint=_GENERATED_ENV_HINT % {"var": var},
                            warning=True))
            if gpu_count(container, opts["gpu_resources"]) > 0:
                gpu_containers.append((cpath, container))
        if "dev_shm" in rules and gpu_containers and not spec.get("hostIPC"):
            volumes = dict((v.get("name"), v) for v in spec.get("volumes") or [] if isinstance(v, dict))
            for cpath, container in gpu_containers:
                title = "%s of %s" % (_container_title(container, cpath), label)
                gpus = gpu_count(container, opts["gpu_resources"])
                mounts = [m for m in container.get("volumeMounts") or []
                          if isinstance(m, dict) and str(m.get("mountPath") or "").rstrip("/") == "/dev/shm"]
                problem = None
                if not mounts:
                    problem = "%s requests %d GPU(s) but mounts nothing at /dev/shm" % (title, gpus)
                else:
                    volume = volumes.get(mounts[0].get("name")) or {}
                    empty = volume.get("emptyDir") if isinstance(volume.get("emptyDir"), dict) else None
                    if empty is None or str(empty.get("medium") or "") != "Memory":
                        problem = ("%s mounts volume %r at /dev/shm, which is not an emptyDir with medium: Memory"
                                   % (title, mounts[0].get("name")))
                if problem:
                    found.append(_finding("dev_shm", doc, cpath + ("volumeMounts",), problem,
                                          actual=False, expected=True, op="true"))
    return found


def simulator_inventory_findings(module, env, options=None):
    """The inventory's simulator (validation_simulator_module / _env) against the simulator_env rules."""
    opts = options_with_defaults(options)
    if "simulator_env" not in opts["rules"] or not module:
        return []
    have = set((_plain(env) or {}).keys())
    out = []
    for rule in opts["simulator_env"]:
        if not re.search(rule["pattern"], str(module)):
            continue
        missing = [v for v in rule["env"] if v not in have]
        if missing:
            out.append({
                "rule": "simulator_env", "object": "", "path": "validation_simulator_env",
                "message": "the simulator %s (validation_simulator_module) needs %s, which validation_simulator_env "
                           "does not set: the L4 probe would hang at import" % (module, ", ".join(missing)),
                "actual": missing, "expected": [], "op": "eq",
                "hint": "add %s to validation_simulator_env in the inventory" % ", ".join(missing),
                "warning": False,
            })
    return out


def pitfall_checks(node, findings):
    """Checks of one manifest: one failing check per finding, or one passing `pitfalls` check."""
    checks = []
    for item in findings:
        if item.get("warning"):
            continue
        checks.append(check(item["rule"], node, op=item["op"], actual=item["actual"], expected=item["expected"],
                            unit=item.get("unit") or "", hint=item["hint"], message=item["message"]))
    if not checks:
        warnings = len([f for f in findings if f.get("warning")])
        checks.append(check("pitfalls", node, op="eq", actual=0, expected=0,
                            unit="findings" + (" (%d warnings)" % warnings if warnings else "")))
    return checks


# --------------------------------------------------------------------------------------------------
# API server rules a schema cannot express

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
# kinds whose name must be a DNS-1123 label (<= 63): the name becomes a label value or a host name
_LABEL_NAMED = ("Namespace", "Service", "Job")
CONFIGMAP_MAX_BYTES = 1024 * 1024


def _dns_label_errors(text, where, max_len=63, pattern=_DNS_LABEL, what="a DNS-1123 label"):
    errors = []
    if len(text) > max_len:
        errors.append("%s: %r is %d characters, more than %d" % (where, text, len(text), max_len))
    if not pattern.match(text):
        errors.append("%s: %r is not %s (lower case letters, digits and '-', starting and ending with a letter "
                      "or digit)" % (where, text, what))
    return errors


def _label_errors(labels, where):
    errors = []
    if not isinstance(labels, dict):
        return errors
    for key, value in labels.items():
        key = str(key)
        prefix, _sep, name = key.rpartition("/")
        if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
            errors.append("%s: label key %r has an invalid prefix (a DNS subdomain)" % (where, key))
        if len(name) > 63 or not _LABEL_NAME.match(name):
            errors.append("%s: label key %r is not a valid name (<= 63 characters, alphanumeric, '-', '_', '.')"
                          % (where, key))
        if value is None or isinstance(value, (bool, dict, list)):
            errors.append("%s: label %r must be a string, not %s" % (where, key, type(value).__name__))
            continue
        value = str(value)
        if len(value) > 63 or not _LABEL_VALUE.match(value):
            errors.append("%s: label %r value %r is not a valid label value (<= 63 characters, alphanumeric, '-', "
                          "'_', '.')" % (where, key, value))
    return errors


def api_rule_errors(doc):
    """What the API server (or the MPI operator) rejects although the OpenAPI schema allows it."""
    doc = _plain(doc)
    if not is_k8s_object(doc):
        return []
    errors = []
    kind = doc.get("kind")
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = meta.get("name")
    if not name and not meta.get("generateName"):
        errors.append("metadata.name: required")
    elif isinstance(name, str):
        if kind in _LABEL_NAMED:
            errors.extend(_dns_label_errors(name, "metadata.name"))
        elif kind == "CronJob":
            errors.extend(_dns_label_errors(name, "metadata.name", max_len=52))
        else:
            if len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
                errors.append("metadata.name: %r is not a DNS-1123 subdomain (<= 253 characters, lower case "
                              "letters, digits, '-' and '.')" % name)
    if isinstance(meta.get("namespace"), str):
        errors.extend(_dns_label_errors(meta["namespace"], "metadata.namespace"))
    errors.extend(_label_errors(meta.get("labels"), "metadata.labels"))
    for spath, spec in pod_specs(doc):
        template_meta = _template_metadata(doc, spath)
        if template_meta is not None:
            errors.extend(_label_errors(template_meta.get("labels"), fmt_path(spath[:-1] + ("metadata", "labels"))))
        for cpath, container in containers(spec, spath):
            cname = container.get("name")
            if isinstance(cname, str):
                errors.extend(_dns_label_errors(cname, fmt_path(cpath + ("name",))))
        for index, volume in enumerate(spec.get("volumes") or []):
            if isinstance(volume, dict) and isinstance(volume.get("name"), str):
                errors.extend(_dns_label_errors(volume["name"], fmt_path(spath + ("volumes", index, "name"))))
    if kind == "ConfigMap":
        size = sum(len(str(k)) + len(str(v).encode("utf-8")) for k, v in (doc.get("data") or {}).items())
        size += sum(len(str(k)) + len(str(v)) for k, v in (doc.get("binaryData") or {}).items())
        if size > CONFIGMAP_MAX_BYTES:
            errors.append("data: %d bytes, more than the %d a ConfigMap may hold" % (size, CONFIGMAP_MAX_BYTES))
    if kind == "MPIJob" and str(doc.get("apiVersion", "")).startswith("kubeflow.org/"):
        errors.extend(_mpijob_errors(doc))
    return errors


def _template_metadata(doc, spec_path):
    """metadata of the pod template that holds the spec at spec_path (…template.spec -> …template.metadata)."""
    if not spec_path or spec_path[-1] != "spec" or len(spec_path) < 2:
        return None
    node = doc
    for part in spec_path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    meta = node.get("metadata") if isinstance(node, dict) else None
    return meta if isinstance(meta, dict) else None


def _mpijob_errors(doc):
    """The MPI operator's own validation (pkg/apis/kubeflow/validation in kubeflow/mpi-operator v0.8.0)."""
    errors = []
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    replica_specs = spec.get("mpiReplicaSpecs") if isinstance(spec.get("mpiReplicaSpecs"), dict) else {}
    worker = replica_specs.get("Worker") if isinstance(replica_specs.get("Worker"), dict) else None
    replicas = 1
    if worker and isinstance(worker.get("replicas"), int) and worker["replicas"] > 0:
        replicas = worker["replicas"]
    name = (doc.get("metadata") or {}).get("name")
    if isinstance(name, str):
        host = "%s-worker-%d" % (name, replicas - 1)
        if len(host) > 63 or not _DNS_1035.match(host):
            errors.append("metadata.name: %r gives the worker pod host name %r, which is not a DNS-1035 label "
                          "(<= 63 characters, starting with a letter): the MPI operator rejects the MPIJob"
                          % (name, host))
    launcher = replica_specs.get("Launcher")
    if not isinstance(launcher, dict):
        errors.append("spec.mpiReplicaSpecs.Launcher: required")
    for role in ("Launcher", "Worker"):
        item = replica_specs.get(role)
        if not isinstance(item, dict):
            continue
        where = "spec.mpiReplicaSpecs.%s" % role
        if item.get("replicas") is None:
            errors.append("%s.replicas: required" % where)
        elif role == "Launcher" and item.get("replicas") != 1:
            errors.append("%s.replicas: must be 1, not %r" % (where, item.get("replicas")))
        elif role == "Worker" and isinstance(item.get("replicas"), int) and item["replicas"] < 1:
            errors.append("%s.replicas: must be at least 1, not %r" % (where, item["replicas"]))
        policy = item.get("restartPolicy")
        if policy is not None and policy not in ("Never", "OnFailure"):
            errors.append("%s.restartPolicy: %r is not Never or OnFailure" % (where, policy))
        pod = ((item.get("template") or {}).get("spec") or {})
        if not pod.get("containers"):
            errors.append("%s.template.spec.containers: at least one container is required" % where)
    return errors


# --------------------------------------------------------------------------------------------------
# schemas


class SchemaNotFound(LintError):
    """No schema for this apiVersion/kind."""


def strict_crd_schema(schema):
    """A CRD openAPIV3Schema made strict like the API server with field validation Strict: objects with
    `properties` reject unknown fields (unless x-kubernetes-preserve-unknown-fields), `nullable` allows
    null, and `metadata` is left to the ObjectMeta schema."""
    schema = copy.deepcopy(schema)

    def visit(node, top=False):
        if isinstance(node, list):
            for item in node:
                visit(item)
            return
        if not isinstance(node, dict):
            return
        if node.get("nullable") is True and isinstance(node.get("type"), str):
            node["type"] = [node["type"], "null"]
        if (isinstance(node.get("properties"), dict) and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")):
            node["additionalProperties"] = False
        for key, value in node.items():
            if key in ("properties", "patternProperties", "definitions", "$defs"):
                if isinstance(value, dict):
                    for sub in value.values():
                        visit(sub)
            elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
                visit(value)
    visit(schema, top=True)
    return schema


class SchemaValidator:
    """Validates Kubernetes objects: built-in kinds with kubernetes-validate's schemas, custom kinds with
    their CRD's openAPIV3Schema (crd_schemas: {(apiVersion, kind): schema dict})."""

    def __init__(self, kubernetes_version="1.34", strict=True, crd_schemas=None, max_errors=5):
        try:
            import jsonschema  # noqa: F401 pylint: disable=unused-import
            import kubernetes_validate.utils as kv_utils
            from referencing import Registry, Resource
        except ImportError as exc:  # the module turns this into missing_required_lib
            raise ImportError(str(exc))
        self._jsonschema = jsonschema
        self._registry_cls = Registry
        self._resource_cls = Resource
        self.strict = bool(strict)
        self.max_errors = int(max_errors)
        self.notes = []
        self.requested_version = str(kubernetes_version or "").lstrip("v")
        self.version = self._pick_version(kv_utils.all_versions(), self.requested_version)
        self._base = os.path.join(os.path.dirname(os.path.abspath(kv_utils.__file__)), "kubernetes-json-schema",
                                  "v%s-local%s" % (self.version, "-strict" if self.strict else ""))
        self._definitions = None
        self._registry = None
        self._validators = {}
        self._crds = {}
        for (api_version, kind), schema in (crd_schemas or {}).items():
            if self.strict:
                schema = strict_crd_schema(schema)
            self._crds[(str(api_version), str(kind))] = schema

    def _pick_version(self, versions, wanted):
        def key(text):
            return tuple(int(p) for p in re.findall(r"\d+", text)[:3])
        if not versions:
            raise LintError("kubernetes-validate ships no schemas")
        versions = sorted(versions, key=key)
        if not wanted:
            return versions[-1]
        if not re.match(r"^\d+\.\d+", wanted):
            raise LintError("kubernetes_version %r is not a version such as 1.34" % wanted)
        wanted_key = key(wanted)[:2]
        fitting = [v for v in versions if key(v)[:2] <= wanted_key]
        if not fitting:
            raise LintError("kubernetes-validate has no schemas for Kubernetes %s or older (oldest: %s)"
                            % (wanted, versions[0]))
        if key(fitting[-1])[:2] != wanted_key:
            self.notes.append("kubernetes-validate has no schemas for Kubernetes %s; using %s, the newest it has"
                              % (wanted, fitting[-1]))
        return fitting[-1]

    @property
    def version_label(self):
        return "Kubernetes %s%s" % (".".join(self.version.split(".")[:2]), " (strict)" if self.strict else "")

    def _load(self, name):
        path = os.path.join(self._base, name)
        try:
            with open(path, "r", encoding="utf-8") as handle:
                return json.load(handle)
        except (IOError, OSError):
            return None

    def _k8s_validator(self, api_version, kind):
        key = (api_version, kind)
        if key in self._validators:
            return self._validators[key]
        group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
        schema = self._load("%s-%s.json" % (kind.lower(), group_version.lower()))
        if schema is None:
            self._validators[key] = None
            return None
        validator = self._jsonschema.validators.Draft202012Validator(schema, registry=self._get_registry(schema))
        self._validators[key] = validator
        return validator

    def _get_registry(self, schema=None):
        if self._registry is None:
            self._definitions = self._load("_definitions.json")
            if self._definitions is None:
                raise LintError("kubernetes-validate's _definitions.json is missing in %s" % self._base)
            self._registry = self._resource_cls.from_contents(self._definitions) @ self._registry_cls()
        if schema is not None and schema.get("$id"):
            return self._resource_cls.from_contents(schema) @ self._registry
        return self._registry

    def _object_meta_validator(self):
        key = ("__meta__", "ObjectMeta")
        if key not in self._validators:
            self._get_registry()
            meta_id = "https://kubernetes.io/api/_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
            self._validators[key] = self._jsonschema.validators.Draft202012Validator(
                {"$ref": meta_id}, registry=self._registry)
        return self._validators[key]

    def _errors(self, validator, doc, prefix=()):
        errors = []
        for error in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
            path = fmt_path(tuple(prefix) + tuple(error.absolute_path)) or "(object)"
            message = error.message
            if len(message) > 240:
                message = message[:237] + "..."
            errors.append("%s: %s" % (path, message))
        return errors

    def validate(self, doc):
        """(schema name, errors): the schema used ('Kubernetes 1.34 (strict)', 'CRD kubeflow.org/v2beta1
        MPIJob') and the error lines (path: message), schema errors first, then API rules. Raises
        SchemaNotFound for a kind without a schema."""
        doc = _plain(doc)
        api_version, kind = doc.get("apiVersion"), doc.get("kind")
        crd = self._crds.get((api_version, kind))
        if crd is not None:
            key = ("crd", api_version, kind)
            if key not in self._validators:
                self._validators[key] = self._jsonschema.validators.Draft202012Validator(crd)
            errors = self._errors(self._validators[key], doc)
            if isinstance(doc.get("metadata"), dict):
                errors.extend(self._errors(self._object_meta_validator(), doc["metadata"], ("metadata",)))
            used = "CRD schema %s %s%s" % (api_version, kind, " (strict)" if self.strict else "")
        else:
            validator = self._k8s_validator(api_version, kind)
            if validator is None:
                raise SchemaNotFound("no schema for %s %s in %s or the CRD schemas given"
                                     % (api_version, kind, self.version_label))
            errors = self._errors(validator, doc)
            used = self.version_label
        errors.extend(api_rule_errors(doc))
        return used, errors


def load_schema_file(path):
    """A JSON (or YAML) schema file; a CRD file gives the openAPIV3Schema of its first served version."""
    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read()
    except (IOError, OSError) as exc:
        raise LintError("cannot read the schema file %s: %s" % (path, exc))
    try:
        data = json.loads(text)
    except ValueError:
        data = _yaml_load_all(text, path)[0] if text.strip() else None
    if isinstance(data, dict) and data.get("kind") == "CustomResourceDefinition":
        versions = (data.get("spec") or {}).get("versions") or []
        for version in versions:
            if version.get("served", True) and (version.get("schema") or {}).get("openAPIV3Schema"):
                return version["schema"]["openAPIV3Schema"]
        raise LintError("the CRD in %s has no openAPIV3Schema" % path)
    if not isinstance(data, dict):
        raise LintError("%s does not hold a JSON schema object" % path)
    return data


def schema_checks(node, doc, validator, unknown_kinds="fail"):
    """(checks, note, schema used) of one object: one `schema` check; the note says why a kind without a
    schema was skipped (unknown_kinds=skip)."""
    label = object_label(doc)
    try:
        used, errors = validator.validate(doc)
    except SchemaNotFound as exc:
        if unknown_kinds == "skip":
            return ([check("schema", node, op="eq", actual=0, expected=0, unit="errors")],
                    "%s: %s; not validated (unknown_kinds=skip)" % (label, exc), "")
        return ([check("schema", node, op="eq", actual=1, expected=0, unit="errors",
                       message="%s: %s" % (label, exc), hint=HINTS["schema_missing"])], None, "")
    shown = errors[:validator.max_errors]
    more = len(errors) - len(shown)
    message = ""
    if errors:
        message = "%s is not valid against the %s: %s%s" % (
            label, used, "; ".join(shown), (" (and %d more)" % more) if more > 0 else "")
    return ([check("schema", node, op="eq", actual=len(errors), expected=0, unit="errors", message=message,
                   hint=HINTS["schema"] if errors else "")], None, used)


# --------------------------------------------------------------------------------------------------
# reading manifest files


def _yaml_load_all(text, where):
    try:
        import yaml
    except ImportError:
        raise LintError("PyYAML is needed to read %s" % where)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return list(yaml.load_all(text, Loader=loader))
    except yaml.YAMLError as exc:
        raise LintError("%s is not valid YAML: %s" % (where, str(exc).replace("\n", " ")))


YAML_SUFFIXES = (".yml", ".yaml")


def manifest_files(paths):
    """The YAML files of the given files and directories (directories recursively, hidden ones skipped),
    sorted; a path that does not exist raises LintError."""
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


def read_manifests(path, display=None):
    """(documents, error): the Kubernetes objects of one YAML file as (source, object) pairs; YAML
    documents that are not Kubernetes objects (no apiVersion/kind) are left out. `display` is the name
    shown in checks (default: the path)."""
    display = display or path
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace")
    except (IOError, OSError) as exc:
        return [], "cannot read %s: %s" % (display, exc)
    try:
        docs = _yaml_load_all(text, display)
    except LintError as exc:
        return [], str(exc)
    out = []
    for index, doc in enumerate(docs, start=1):
        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            for sub, item in enumerate(doc["items"]):
                if is_k8s_object(item):
                    out.append(("%s#%d.items[%d] %s" % (display, index, sub, object_label(item)), item))
        elif is_k8s_object(doc):
            out.append(("%s#%d %s" % (display, index, object_label(doc)), doc))
    return out, None


# --------------------------------------------------------------------------------------------------
# reference integrity

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
                docs = _yaml_load_all(text, path)
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


def reference_checks(root, collection="", paths=("roles", "playbooks")):
    """(checks, references): one `references` check per file that refers to files, and every reference."""
    scanner = ReferenceScanner(root, collection)
    checks = []
    refs = []
    for path in scanner.files(paths):
        found = scanner.scan_file(path)
        if not found:
            continue
        rel = os.path.relpath(path, scanner.root)
        for item in found:
            item["file"] = rel
        refs.extend(found)
        missing = [r for r in found if r["status"] == "missing"]
        static = [r for r in found if r["status"] in ("ok", "missing")]
        message = ""
        if missing:
            message = "%s refers to %d missing file(s): %s" % (rel, len(missing), "; ".join(
                "line %d: %s %s (looked in %s)" % (r["line"], r["kind"], r["ref"], r["where"]) for r in missing[:5]))
        checks.append(check("references", rel, op="eq", actual=len(missing), expected=0,
                            unit="missing of %d" % len(static), hint=HINTS["references"] if missing else "",
                            message=message))
    return checks, refs


# --------------------------------------------------------------------------------------------------
# files to lint and the output of shellcheck / yamllint -> checks

PRUNED_DIRS = (".git", ".venv*", "venv", ".tox", ".nox", ".cache", ".collections", ".ansible", ".sim",
               "node_modules", "__pycache__", ".terraform", ".pytest_cache", ".hypothesis", ".mypy_cache")


def pruned(name):
    """True for a directory name that is never searched (tool state, virtual environments, caches)."""
    return any(fnmatch.fnmatch(name, pattern) for pattern in PRUNED_DIRS)


def exclude_match(rel_path, patterns):
    """True when a relative path is one of the excluded paths, under one, or matches one of the globs."""
    rel = rel_path.replace(os.sep, "/")
    while rel.startswith("./"):
        rel = rel[2:]
    for pattern in patterns or []:
        pattern = str(pattern).strip().rstrip("/")
        while pattern.startswith("./"):
            pattern = pattern[2:]
        if not pattern:
            continue
        if rel == pattern or rel.startswith(pattern + "/") or fnmatch.fnmatch(rel, pattern):
            return True
    return False


def git_files(directory):
    """The files git knows under a directory of a work tree (tracked, and untracked but not ignored),
    as absolute paths; None when the directory is not in a git work tree or git is missing."""
    import subprocess  # only here: filters run on the controller, never in a module
    try:
        proc = subprocess.run(["git", "-C", directory, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    names = proc.stdout.decode("utf-8", errors="replace").split("\0")
    return [os.path.join(directory, name) for name in names if name]


def _walk_files(directory):
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not pruned(d))
        for name in sorted(files):
            yield os.path.join(root, name)


def lint_files(paths, exclude=(), base="", patterns=None, use_git=True):
    """Files to lint, by kind: {'shell': [...], 'yaml': [...]} (absolute paths, sorted).

    paths: files and directories. In a directory of a git work tree the files are those git knows
    (tracked, or untracked and not ignored by .gitignore); elsewhere every file. Directories named in
    PRUNED_DIRS (tool state such as .git, .venv*, .collections, .ansible) are never searched, nor what
    `exclude` names (paths relative to `base`, or globs). A file given explicitly is always kept.
    patterns: {'shell': ['*.sh', '*.bash'], 'yaml': ['*.yml', '*.yaml']} by default.
    """
    patterns = patterns or {"shell": ["*.sh", "*.bash"], "yaml": ["*.yml", "*.yaml"]}
    base = os.path.abspath(base or os.getcwd())
    out = dict((kind, []) for kind in patterns)

    def classify(path):
        name = os.path.basename(path)
        for kind, globs in patterns.items():
            if any(fnmatch.fnmatch(name, g) for g in globs):
                out[kind].append(os.path.abspath(path))
                return

    for path in paths or []:
        path = os.path.abspath(os.path.join(base, str(path)))
        if os.path.isfile(path):
            classify(path)
            continue
        if not os.path.isdir(path):
            raise LintError("%s does not exist" % path)
        files = git_files(path) if use_git else None
        if files is None:
            files = _walk_files(path)
        for full in files:
            rel_dir = os.path.relpath(os.path.dirname(full), path)
            if rel_dir != "." and any(pruned(part) for part in rel_dir.split(os.sep)):
                continue
            if not os.path.isfile(full):
                continue  # a link to a directory, or a deleted file git still tracks
            if not exclude_match(os.path.relpath(full, base), exclude):
                classify(full)
    return dict((kind, sorted(set(items))) for kind, items in out.items())


def display_path(path, base):
    """A path relative to base when it is below base, else as given."""
    path = str(path)
    try:
        rel = os.path.relpath(path, base)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def shellcheck_checks(output, files, base="", severity="warning"):
    """One `shellcheck` check per file from `shellcheck --format=json1` output."""
    try:
        data = json.loads(output)
    except (TypeError, ValueError):
        raise LintError("shellcheck printed no JSON (%s)" % (str(output)[:300] or "no output at all"))
    comments = data.get("comments", []) if isinstance(data, dict) else data
    by_file = {}
    for item in comments or []:
        by_file.setdefault(os.path.abspath(str(item.get("file"))), []).append(item)
    checks = []
    for path in files:
        items = sorted(by_file.get(os.path.abspath(str(path)), []), key=lambda c: (c.get("line", 0), c.get("code", 0)))
        shown = display_path(path, base)
        message = ""
        if items:
            message = "%d finding(s) at severity %s or above: %s" % (len(items), severity, "; ".join(
                "line %s SC%s (%s): %s" % (c.get("line"), c.get("code"), c.get("level"), c.get("message"))
                for c in items[:5]) + ("; ..." if len(items) > 5 else ""))
        checks.append(check("shellcheck", shown, op="eq", actual=len(items), expected=0, unit="findings",
                            message=message,
                            hint="fix them or, where a finding is intended, add a `# shellcheck disable=SCxxxx` "
                                 "line with the reason (https://www.shellcheck.net/wiki/)" if items else ""))
    return checks


_YAMLLINT_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): \[(?P<level>\w+)\] (?P<msg>.*)$")


def yamllint_checks(output, files, base=""):
    """One `yamllint` check per file from `yamllint --format parsable` output; errors fail, warnings are
    counted in the message of the check."""
    by_file = {}
    for line in str(output or "").splitlines():
        match = _YAMLLINT_LINE.match(line.strip())
        if match:
            by_file.setdefault(os.path.abspath(match.group("file")), []).append(match.groupdict())
    checks = []
    for path in files:
        items = by_file.get(os.path.abspath(str(path)), [])
        errors = [i for i in items if i["level"] == "error"]
        warnings = [i for i in items if i["level"] != "error"]
        shown = display_path(path, base)
        message = ""
        if errors:
            message = "%d error(s)%s: %s" % (len(errors), (" and %d warning(s)" % len(warnings)) if warnings else "",
                                             "; ".join("line %s: %s" % (i["line"], i["msg"]) for i in errors[:5])
                                             + ("; ..." if len(errors) > 5 else ""))
        checks.append(check("yamllint", shown, op="eq", actual=len(errors), expected=0,
                            unit="errors" + (" (%d warnings)" % len(warnings) if warnings else ""),
                            message=message,
                            hint="fix the lines above; the rules are in the yamllint configuration the run "
                                 "used (local_checks_yamllint_config)" if errors else ""))
    return checks
