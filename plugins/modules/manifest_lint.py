#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
---
module: manifest_lint
short_description: Validate Kubernetes manifests against their schemas and lint them for the seed's pitfalls
version_added: 1.0.0
description:
  - Checks Kubernetes objects without a cluster, given inline (O(manifests), for example the manifests the
    level roles would apply, rendered from their templates) or read from YAML files (O(paths)).
  - Each object is validated against the schema of its kind, built-in kinds with the schemas that
    C(kubernetes-validate) ships for O(kubernetes_version), custom resources such as the Kubeflow MPIJob
    against the C(openAPIV3Schema) of their CRD (O(crd_schemas)) through C(jsonschema). With O(strict=true)
    unknown fields fail, as C(kubectl apply) rejects them. The API server's and the MPI operator's own rules
    that a schema cannot express (names and labels, a ConfigMap over 1 MiB, an MPIJob whose worker host
    names are not DNS-1035 labels) are checked as well.
  - "Each object is linted for the pitfalls of the original C(validate.sh) (rule names in brackets):
    a Job or pod deadline C(activeDeadlineSeconds) under O(pitfalls.min_deadline_s) [deadline],
    C(imagePullPolicy: Always) [image_pull_policy], C(:latest), untagged or placeholder images [image_tag],
    a container that requests a GPU without an C(emptyDir) of medium C(Memory) at C(/dev/shm) [dev_shm],
    C(bash -c) with a multi-line script using C(;), C(&&), C(||) or braces [inline_script], and a simulator
    workload (for example LIBERO) without the environment variables its simulator needs [simulator_env]."
  - Returns one check per object and group in the shape M(rlstack.validation.level_assert) judges.
  - Read-only; always returns C(changed=false).
author:
  - rlstack.validation maintainers (@rlstack)
extends_documentation_fragment:
  - rlstack.validation._attributes
  - rlstack.validation._attributes.info_module
options:
  manifests:
    description: Kubernetes objects given inline.
    type: list
    elements: dict
    default: []
    suboptions:
      source:
        description: What the object is, shown as the node of its checks, for example V(L5 train libero-pi0 Job).
        type: str
        required: true
      definition:
        description: The object, as a dict or as YAML text of one document.
        type: raw
        required: true
      data_files:
        description:
          - Keys of the object's C(data) read from files, as C(kubectl create configmap --from-file) does
            (for a ConfigMap, the probe scripts). An unreadable file fails the module.
        type: dict
        default: {}
      provided_env:
        description:
          - Names of environment variables that something outside the object provides (for the manifests of
            the level roles, the inventory's C(validation_simulator_env)). A simulator variable found only
            here is reported as a warning, not a failure, unless O(pitfalls.simulator_env_strict=true).
        type: list
        elements: str
        default: []
  paths:
    description:
      - YAML files, and directories searched recursively for C(*.yml) and C(*.yaml) (hidden directories are
        skipped). Documents without C(apiVersion) and C(kind), such as Ansible playbooks, are left out.
      - A file that is not valid YAML fails its C(schema) check.
    type: list
    elements: path
    default: []
  base_dir:
    description: File names below this directory are shown relative to it.
    type: path
  schema:
    description: Validate the objects against their schemas. V(false) runs the pitfall rules only.
    type: bool
    default: true
  kubernetes_version:
    description:
      - Kubernetes version of the schemas, for example V(1.34). When C(kubernetes-validate) has no schemas for
        it, the newest version it has that is older is used, with a warning.
    type: str
    default: "1.34"
  strict:
    description: Use the strict schemas, in which unknown fields fail.
    type: bool
    default: true
  crd_schemas:
    description: Schemas of custom resources.
    type: list
    elements: dict
    default: []
    suboptions:
      api_version:
        description: The C(apiVersion), for example V(kubeflow.org/v2beta1).
        type: str
        required: true
      kind:
        description: The C(kind), for example V(MPIJob).
        type: str
        required: true
      path:
        description:
          - A JSON or YAML file holding the C(openAPIV3Schema), or a whole C(CustomResourceDefinition) (its
            first served version with a schema is used).
        type: path
        required: true
  unknown_kinds:
    description:
      - What to do with a kind that has no schema. V(fail) fails its C(schema) check; V(skip) passes it and warns.
    type: str
    default: fail
    choices: [fail, skip]
  pitfalls:
    description: Settings of the pitfall rules.
    type: dict
    default: {}
    suboptions:
      rules:
        description: The rules to run.
        type: list
        elements: str
        choices: [deadline, image_pull_policy, image_tag, dev_shm, inline_script, simulator_env]
      min_deadline_s:
        description: Smallest C(activeDeadlineSeconds) accepted (the seed's 600 s; images of 15-20 GB take 5-10 minutes to pull).
        type: int
      gpu_resources:
        description: Extended resources that make a container a GPU container (default V(nvidia.com/gpu)).
        type: list
        elements: str
      inline_script_tokens:
        description: Shell constructs that make an inline script complex (default V(;), V(&&), V(||), V({), V(})).
        type: list
        elements: str
      inline_script_max_lines:
        description: An inline script with more code lines than this (comments and blank lines not counted) and a complex construct is reported.
        type: int
      shells:
        description: Program names treated as shells when looking for C(-c SCRIPT).
        type: list
        elements: str
      simulator_env:
        description:
          - "Rules C({name, pattern, env}): a container whose command and arguments match the regular
            expression C(pattern) must set every variable of C(env). Default: LIBERO needs C(LIBERO_DATASET_DIR)."
        type: list
        elements: dict
      simulator_env_strict:
        description: Fail, not warn, when a simulator variable is only in O(manifests[].provided_env).
        type: bool
  simulator:
    description:
      - The inventory's simulator (C(validation_simulator_module), C(validation_simulator_env)), checked
        against the O(pitfalls.simulator_env) rules like a container (its checks have the node V(inventory)).
    type: dict
    suboptions:
      module:
        description: The Python module the L4 probe imports, for example V(libero.libero).
        type: str
      env:
        description: The environment the L4 probe pod gets.
        type: dict
        default: {}
notes:
  - Needs C(kubernetes-validate) and C(jsonschema) (and PyYAML for O(paths)) on the host where it runs, which in
    local mode is the controller; with O(schema=false) only PyYAML.
  - The MPIJob schema of the collection is C(roles/local_checks/files/mpijob-v2beta1-schema.json) (kubeflow/mpi-operator
    v0.8.0); the role C(rlstack.validation.local_checks) passes it in O(crd_schemas).
requirements:
  - kubernetes-validate
  - jsonschema
  - PyYAML
seealso:
  - module: rlstack.validation.level_assert
  - name: Local mode of rlstack.validation
    description: The role and playbook that use this module (docs/local-mode.md in the collection).
    link: https://github.com/rlstack/validation/blob/main/docs/local-mode.md
"""

EXAMPLES = r"""
- name: Lint the team's manifests for the seed's pitfalls and validate them (Kubernetes 1.34, strict)
  rlstack.validation.manifest_lint:
    paths:
      - infrastructure/manifests
    crd_schemas:
      - api_version: kubeflow.org/v2beta1
        kind: MPIJob
        path: "{{ role_path }}/files/mpijob-v2beta1-schema.json"
  register: lint

- name: Judge the pitfalls
  rlstack.validation.level_assert:
    id: local_pitfalls
    level: LOCAL
    name: Pitfalls
    checks: "{{ lint.pitfall_checks }}"

- name: Check one inline Job with a stricter deadline and without the image rules
  rlstack.validation.manifest_lint:
    schema: false
    pitfalls:
      min_deadline_s: 900
      rules: [deadline, dev_shm, inline_script, simulator_env]
    manifests:
      - source: training smoke test
        definition: "{{ lookup('ansible.builtin.file', 'test-training-job.yaml') | from_yaml }}"
"""

RETURN = r"""
documents:
  description: One entry per object checked.
  returned: always
  type: list
  elements: dict
  contains:
    source:
      description: The O(manifests[].source), or C(file#document Kind/name) for a file.
      type: str
      sample: "manifests/nccl.yaml#1 MPIJob/nccl-tests"
    api_version:
      description: The C(apiVersion).
      type: str
      sample: kubeflow.org/v2beta1
    kind:
      description: The C(kind).
      type: str
      sample: MPIJob
    name:
      description: The C(metadata.name).
      type: str
      sample: nccl-tests
    schema:
      description: The schema used; empty when none was.
      type: str
      sample: "CRD schema kubeflow.org/v2beta1 MPIJob (strict)"
    findings:
      description: The pitfalls found (rule, object, path, message, hint, warning).
      type: list
      elements: dict
      sample: [{rule: deadline, object: Job/smoke, path: spec.activeDeadlineSeconds, warning: false,
                message: "Job/smoke spec.activeDeadlineSeconds is 300 s, under 600 s: ..."}]
schema_checks:
  description: One C(schema) check per object (C(yaml) for a file that cannot be read), for M(rlstack.validation.level_assert).
  returned: always
  type: list
  elements: dict
  sample: [{name: schema, node: "L5 train libero-pi0 Job", op: eq, actual: 0, expected: 0, unit: errors,
            hint: "", fail_msg: "", evidence_missing: false}]
pitfall_checks:
  description:
    - One failing check per pitfall (named after its rule), or one passing C(pitfalls) check for an object without
      any, for M(rlstack.validation.level_assert); plus C(simulator_env) checks of O(simulator) (node V(inventory)).
  returned: always
  type: list
  elements: dict
  sample: [{name: deadline, node: "jobs.yaml#1 Job/smoke", op: ge, actual: 300, expected: 600, unit: s,
            fail_msg: "Job/smoke spec.activeDeadlineSeconds is 300 s, under 600 s: ...", hint: "set ...",
            evidence_missing: false}]
kubernetes_version:
  description: The version of the Kubernetes schemas used; empty with O(schema=false).
  returned: always
  type: str
  sample: "1.34.0"
files:
  description: The YAML files read from O(paths).
  returned: always
  type: list
  elements: str
  sample: [manifests/nccl.yaml]
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.rlstack.validation.plugins.module_utils import _pitfalls


def argument_spec():
    return dict(
        manifests=dict(type="list", elements="dict", default=[], options=dict(
            source=dict(type="str", required=True),
            definition=dict(type="raw", required=True),
            data_files=dict(type="dict", default={}),
            provided_env=dict(type="list", elements="str", default=[]),
        )),
        paths=dict(type="list", elements="path", default=[]),
        base_dir=dict(type="path"),
        schema=dict(type="bool", default=True),
        kubernetes_version=dict(type="str", default="1.34"),
        strict=dict(type="bool", default=True),
        crd_schemas=dict(type="list", elements="dict", default=[], options=dict(
            api_version=dict(type="str", required=True),
            kind=dict(type="str", required=True),
            path=dict(type="path", required=True),
        )),
        unknown_kinds=dict(type="str", default="fail", choices=["fail", "skip"]),
        pitfalls=dict(type="dict", default={}, options=dict(
            rules=dict(type="list", elements="str", choices=list(_pitfalls.RULES)),
            min_deadline_s=dict(type="int"),
            gpu_resources=dict(type="list", elements="str"),
            inline_script_tokens=dict(type="list", elements="str", no_log=False),
            inline_script_max_lines=dict(type="int"),
            shells=dict(type="list", elements="str"),
            simulator_env=dict(type="list", elements="dict"),
            simulator_env_strict=dict(type="bool"),
        )),
        simulator=dict(type="dict", options=dict(
            module=dict(type="str"),
            env=dict(type="dict", default={}),
        )),
    )


def _inline_object(item):
    definition = item["definition"]
    if isinstance(definition, str):
        docs = [d for d in _pitfalls._yaml_load_all(definition, item["source"]) if d is not None]
        if len(docs) != 1:
            raise _pitfalls.LintError("%s: definition must be one YAML document, not %d" % (item["source"], len(docs)))
        definition = docs[0]
    if not _pitfalls.is_k8s_object(definition):
        raise _pitfalls.LintError("%s: definition is not a Kubernetes object (apiVersion and kind)" % item["source"])
    if item.get("data_files"):
        definition = dict(definition)
        data = dict(definition.get("data") or {})
        for key, path in item["data_files"].items():
            try:
                with open(path, "rb") as handle:
                    data[key] = handle.read().decode("utf-8", errors="replace")
            except (IOError, OSError) as exc:
                raise _pitfalls.LintError("%s: cannot read %s for data key %s: %s" % (item["source"], path, key, exc))
        definition["data"] = data
    return definition


def run(module):
    params = module.params
    options = params["pitfalls"] or {}
    options = _pitfalls.options_with_defaults(options)
    base = params["base_dir"]

    objects = []  # (source, object, provided_env)
    schema_checks, pitfall_checks, files = [], [], []
    for item in params["manifests"]:
        objects.append((item["source"], _inline_object(item), item.get("provided_env") or []))
    for path in _pitfalls.manifest_files(params["paths"]):
        shown = _pitfalls.display_path(path, base) if base else path
        files.append(shown)
        found, error = _pitfalls.read_manifests(path, shown)
        if error:
            schema_checks.append(_pitfalls.check("yaml", shown, op="eq", actual=1, expected=0, unit="errors",
                                                 message=error, hint=_pitfalls.HINTS["yaml"]))
        for source, obj in found:
            objects.append((source, obj, []))

    validator = None
    if params["schema"]:
        crds = dict(((c["api_version"], c["kind"]), _pitfalls.load_schema_file(c["path"]))
                    for c in params["crd_schemas"])
        try:
            validator = _pitfalls.SchemaValidator(params["kubernetes_version"], params["strict"], crds)
        except ImportError as exc:
            module.fail_json(msg=missing_required_lib("kubernetes-validate and jsonschema"), exception=str(exc))
        for note in validator.notes:
            module.warn(note)

    documents = []
    for source, obj, provided in objects:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        entry = {"source": source, "api_version": obj.get("apiVersion"), "kind": obj.get("kind"),
                 "name": meta.get("name") or "", "schema": "", "findings": []}
        if validator is not None:
            checks, note, entry["schema"] = _pitfalls.schema_checks(source, obj, validator, params["unknown_kinds"])
            schema_checks.extend(checks)
            if note:
                module.warn(note)
        findings = _pitfalls.lint_document(obj, options, provided)
        entry["findings"] = findings
        for item in findings:
            if item["warning"]:
                module.warn("%s: %s (%s)" % (source, item["message"], item["hint"]))
        pitfall_checks.extend(_pitfalls.pitfall_checks(source, findings))
        documents.append(entry)

    simulator = params.get("simulator") or {}
    if simulator.get("module"):
        findings = _pitfalls.simulator_inventory_findings(simulator["module"], simulator.get("env") or {}, options)
        for item in findings:
            pitfall_checks.append(_pitfalls.check("simulator_env", "inventory", op=item["op"], actual=item["actual"],
                                                  expected=item["expected"], hint=item["hint"],
                                                  message=item["message"]))
        if not findings:
            pitfall_checks.append(_pitfalls.check("simulator_env", "inventory", op="eq", actual=[], expected=[]))

    return dict(changed=False, documents=documents, schema_checks=schema_checks, pitfall_checks=pitfall_checks,
                kubernetes_version=validator.version if validator is not None else "", files=files)


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    try:
        result = run(module)
    except _pitfalls.LintError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
