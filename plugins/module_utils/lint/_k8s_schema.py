# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Kubernetes schemas of local mode: built-in kinds against the schemas that kubernetes-validate ships
(strict: unknown fields fail, as ``kubectl apply`` with server-side field validation Strict rejects them),
custom resources against the ``openAPIV3Schema`` of their CRD through jsonschema, plus the API server's and
the MPI operator's rules that a schema cannot express (names and labels, MPIJob worker host names).

Errors are ``(path, message)`` pairs, the path a tuple of keys and indexes, so that a finding can name
its line. Standard library at import time; jsonschema, referencing and kubernetes-validate are imported
by :class:`SchemaValidator` (Python 3.8 syntax).
"""

from __future__ import annotations

import copy
import json
import os
import re

from ansible_collections.rlstack.validation.plugins.module_utils._data import plain as _plain
from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import (
    LintError, fmt_path, is_k8s_object)
from ansible_collections.rlstack.validation.plugins.module_utils.lint._pitfall_rules import containers, pod_specs
from ansible_collections.rlstack.validation.plugins.module_utils.lint._yaml_marks import load_plain

# Kinds that configure a tool and are never applied to a cluster: no schema, not reported as unknown.
TOOL_CONFIG_KINDS = (
    ("eksctl.io/", "ClusterConfig"),
    ("kustomize.config.k8s.io/", "Kustomization"),
    ("kustomize.config.k8s.io/", "Component"),
    ("kind.x-k8s.io/", "Cluster"),
    ("skaffold/", "Config"),
    # kwok's own configuration is config.kwok.x-k8s.io/v1alpha1 (sim/kwok.yaml.in, found by content since issue 31)
    ("config.kwok.x-k8s.io/", "KwokConfiguration"),
    ("config.kwok.x-k8s.io/", "KwokctlConfiguration"),
    ("kwok.x-k8s.io/", "KwokConfiguration"),
    ("kwok.x-k8s.io/", "KwokctlConfiguration"),
)


def is_tool_config(doc):
    """True for an eksctl/kustomize/kind/skaffold/kwok configuration document (not a cluster object)."""
    api_version, kind = str(doc.get("apiVersion") or ""), str(doc.get("kind") or "")
    return any(api_version.startswith(prefix) and kind == name for prefix, name in TOOL_CONFIG_KINDS)


_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_path(text):
    """'spec.containers[0].name' -> ('spec', 'containers', 0, 'name') (the inverse of fmt_path)."""
    out = []
    for name, index in _PATH_PART.findall(str(text)):
        out.append(int(index) if index else name)
    return tuple(out)


def split_error(text):
    """(path, message) of an error line 'spec.x[0]: message' ((), text when it has no path)."""
    head, sep, tail = str(text).partition(": ")
    if sep and re.match(r"^[\w.\[\]/-]+$", head) and head != "(object)":
        return parse_path(head), tail
    return (), str(text)


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
            errors.extend(resource_errors(container.get("resources"), cpath + ("resources",)))
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


_STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage", "storage")


def _overcommit_allowed(name):
    """Kubernetes helper.IsOvercommitAllowed: not for extended resources (a domain prefix outside
    kubernetes.io, e.g. nvidia.com/gpu, vpc.amazonaws.com/efa) nor hugepages-*."""
    name = str(name)
    extended = "/" in name and not name.split("/", 1)[0].endswith("kubernetes.io") and not name.startswith("requests.")
    return not (extended or name.startswith("hugepages-"))


def _number(value):
    try:
        return float(str(value).strip())
    except ValueError:
        return None  # a quantity with a unit, or a placeholder: left to the schema


def resource_errors(resources, path):
    """What ValidateResourceRequirements (Kubernetes pkg/apis/core/validation/validation.go) rejects for
    resources that cannot be overcommitted: a request without a limit ("Limit must be set for non
    overcommitable resources"), a request that differs from its limit ("must be equal to ... limit of ..."),
    a fractional extended resource ("must be an integer"), and hugepages without cpu or memory ("HugePages
    require cpu or memory")."""
    if not isinstance(resources, dict):
        return []
    requests = resources.get("requests") if isinstance(resources.get("requests"), dict) else {}
    limits = resources.get("limits") if isinstance(resources.get("limits"), dict) else {}
    errors = []
    for section, values in (("requests", requests), ("limits", limits)):
        for name, value in values.items():
            number = _number(value)
            if not _overcommit_allowed(name) and not str(name).startswith("hugepages-") and number is not None \
                    and number != int(number):
                errors.append("%s: %s must be an integer" % (fmt_path(path + (section, name)), value))
    for name, value in requests.items():
        if _overcommit_allowed(name):
            continue
        if name not in limits:
            errors.append("%s: Limit must be set for non overcommitable resources (%s is requested without a limit)"
                          % (fmt_path(path + ("limits",)), name))
            continue
        low, high = _number(value), _number(limits[name])
        if low is not None and high is not None and low != high:
            errors.append("%s: %s must be equal to %s limit of %s" % (fmt_path(path + ("requests", name)), value, name,
                                                                      limits[name]))
    names = set(requests) | set(limits)
    if any(str(n).startswith("hugepages-") for n in names) and not names & {"cpu", "memory"}:
        errors.append("%s: HugePages require cpu or memory" % fmt_path(path))
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
            message = error.message
            if len(message) > 240:
                message = message[:237] + "..."
            errors.append((tuple(prefix) + tuple(error.absolute_path), message))
        return errors

    def validate(self, doc):
        """(schema name, errors): the schema used ('Kubernetes 1.34 (strict)', 'CRD kubeflow.org/v2beta1
        MPIJob') and the errors as (path, message), schema errors first, then API rules. Raises
        SchemaNotFound for a kind without a schema."""
        doc = without_nulls(_plain(doc))
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
        errors.extend(split_error(text) for text in api_rule_errors(doc))
        return used, errors


def without_nulls(node):
    """The object as the API server decodes it: a field set to null (`command:` with no value) is unset
    (Go's JSON decoding leaves an optional field nil), so the schema must not see it."""
    if isinstance(node, dict):
        return dict((k, without_nulls(v)) for k, v in node.items() if v is not None)
    if isinstance(node, list):
        return [without_nulls(v) for v in node]
    return node


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
        data = load_plain(text, path)[0] if text.strip() else None
    if isinstance(data, dict) and data.get("kind") == "CustomResourceDefinition":
        versions = (data.get("spec") or {}).get("versions") or []
        for version in versions:
            if version.get("served", True) and (version.get("schema") or {}).get("openAPIV3Schema"):
                return version["schema"]["openAPIV3Schema"]
        raise LintError("the CRD in %s has no openAPIV3Schema" % path)
    if not isinstance(data, dict):
        raise LintError("%s does not hold a JSON schema object" % path)
    return data
