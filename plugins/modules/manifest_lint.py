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
  - Files are Kubernetes manifests when they hold a Kubernetes object (discovery by content); tool configuration
    (eksctl C(ClusterConfig), C(Kustomization), ...) and Helm chart templates are left out.
  - C(${VAR}) placeholders are rendered first with O(values) and O(env_file), with envsubst semantics (O(envsubst),
    O(envsubst_vars)); a variable without a value is one C(unset_variable) finding listing every line that uses it.
    YAML anchors, aliases and merge keys are resolved before any rule runs.
  - "Each object is linted for the pitfall rules of C(_pitfall_rules.RULES) (rule names in brackets): a deadline
    C(activeDeadlineSeconds) under O(pitfalls.min_deadline_s) [deadline], a GPU Job without C(backoffLimit) or
    C(activeDeadlineSeconds) [job_retries], C(imagePullPolicy: Always) [image_pull_policy], an image tagged
    C(latest) or untagged, with its effective pull policy [image_tag], a GPU container without a memory-backed
    C(/dev/shm) [dev_shm], a multi-line C(sh -c) script with control flow [inline_script], an inline C(bash -c) or
    C(sh -c) script that C(bash -n) rejects [shell_syntax], a simulator workload (LIBERO) whose import would ask for
    its config file on stdin [simulator_config], a GPU container with C(FI_PROVIDER=efa) but no EFA device, or more GPUs/EFA devices than
    its instance type has [gpu_efa_request], EFA without C(hugepages-2Mi) [efa_hugepages], a node selector that no
    node group of the repository labels [node_selector], a pod that tolerates the taints of none of the node groups
    it may run on [toleration], and unset placeholders [unset_variable]."
  - The node rules need the repository's node groups (eksctl C(ClusterConfig), Karpenter C(NodePool), Terraform
    node groups, see O(terraform_paths)); without any they report nothing.
  - Every finding has a severity (error, warning, info; O(pitfalls.severity) overrides the rule's), the file, line
    and column, the object and container, and the fix. Only errors fail a check.
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
            the level roles, the inventory's C(validation_simulator_env)).
        type: list
        elements: str
        default: []
  paths:
    description:
      - YAML files, and directories searched recursively for C(*.yml) and C(*.yaml) (hidden directories are
        skipped). Documents without C(apiVersion) and C(kind), such as Ansible playbooks, are left out.
      - A file that is not valid YAML fails its C(schema) check.
      - A file given by name that is not called C(*.yml)/C(*.yaml) (C(job.yaml-template), C(pod.tpl), C(job.yaml.in), no
        extension) is read when its content looks like a Kubernetes object (an C(apiVersion) and a C(kind) line);
        when it is a Jinja or Go template, or not YAML once rendered, it is listed as C(not_checked) (info), not failed.
    type: list
    elements: path
    default: []
  heredoc_paths:
    description:
      - Shell scripts and Terraform files (C(*.tf)) whose heredocs hold manifests (C(cat <<EOF | kubectl apply -f -),
        C(kubectl apply -f - <<'EOF'), C(yaml_body = <<-YAML), a C(local-exec) command's own heredoc). Each is linted
        at the lines of its file; a quoted delimiter is applied as written, an unquoted one as the shell expands it
        with the script's own assignments, an C(envsubst) in its command as envsubst renders it, a Terraform
        C(${...}) is a value known at apply time only. See C(plugins/module_utils/lint/_manifest_sources.py).
    type: list
    elements: path
    default: []
    version_added: 1.1.0
  terraform_paths:
    description:
      - Terraform files (C(*.tf)) read for the repository's node groups (C(eks_managed_node_groups),
        C(self_managed_node_groups), C(aws_eks_node_group), Karpenter NodePools in heredocs); with the eksctl
        C(ClusterConfig) and Karpenter C(NodePool) documents of O(paths) they are the context of the rules
        C(node_selector), C(toleration) and C(gpu_efa_request).
    type: list
    elements: path
    default: []
  instruction_paths:
    description:
      - "Scripts and docs whose C(envsubst) calls say how the repository renders each manifest of O(paths) (with the
        manifests' own comments). A file that any call restricts (C(envsubst '${A} ${B}' < file)) is rendered
        with the union of those names; see C(plugins/module_utils/lint/_render_plan.py). O(envsubst_vars) wins over them."
    type: list
    elements: path
    default: []
    version_added: 1.1.0
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
  values:
    description: Values of the C(${VAR}) placeholders (for example from the inventory or C(-e)); they win over O(env_file).
    type: dict
    default: {}
  env_file:
    description:
      - A C(.env) file with more values, read as the shell reads it (C(export), comments, quotes, C(${A}) and
        C(${A:-default}) expanded from earlier values); a value that needs a command (C($(...))) or a condition is
        unknown (an C(unknown_value) note), not missing. It wins over the C(.env) files of the repository's folders.
      - With O(base_dir), the C(.env) of each manifest's folder and of the folders above it (up to O(base_dir)) apply
        to that manifest, read the same way; the exported variables (O(use_environment)), O(env_file) and O(values)
        win over them.
    type: path
  use_environment:
    description:
      - Also use the variables exported in the controller's environment, as the user's own C(envsubst) would see
        them; O(env_file) and O(values) win over them.
    type: bool
    default: false
    version_added: 1.1.0
  envsubst:
    description:
      - Which files are rendered. V(auto) renders files that use a placeholder outside C(command), C(args), C(env)
        values and ConfigMap data (where it may be meant for the shell at run time); V(all) every file with a
        placeholder; V(off) none.
    type: str
    default: auto
    choices: [auto, all, "off"]
  envsubst_vars:
    description:
      - "The restricted form, C(envsubst '${A} ${B}'): only these variables are replaced (a list of names, or the
        SHELL-FORMAT text). Empty means every variable, as plain C(envsubst)."
    type: raw
  pitfalls:
    description: Settings of the pitfall rules.
    type: dict
    default: {}
    suboptions:
      rules:
        description: The rules to run (default all).
        type: list
        elements: str
        choices: [deadline, job_retries, image_pull_policy, image_tag, dev_shm, inline_script, shell_syntax,
                  simulator_config, gpu_efa_request, efa_hugepages, node_selector, toleration, unset_variable,
                  envsubst_clobbers]
      severity:
        description: Severity per rule (V(error), V(warning) or V(info)), over the rule's default.
        type: dict
      min_deadline_s:
        description: Smallest C(activeDeadlineSeconds) accepted (the seed's 600 s; images of 15-20 GB take 5-10 minutes to pull).
        type: int
      gpu_resources:
        description: Extended resources that make a container a GPU container (default V(nvidia.com/gpu)).
        type: list
        elements: str
      inline_script_max_lines:
        description: An inline script with more code lines than this (comments, blank lines and heredoc bodies not counted) may be reported.
        type: int
      inline_script_max_control_flow:
        description: Control-flow constructs (if, case, loops, functions) allowed in such a script (default 0).
        type: int
      shells:
        description: Program names treated as shells when looking for C(-c SCRIPT).
        type: list
        elements: str
      simulators:
        description:
          - "Simulators whose import asks for a config file on stdin: C({name, modules, word, config_env, config_default,
            config_file, source}). Default: LIBERO (libero 0.1.1 reads C($LIBERO_CONFIG_PATH/config.yaml))."
        type: list
        elements: dict
      efa_resources:
        description: Extended resources that are EFA devices (default V(vpc.amazonaws.com/efa)).
        type: list
        elements: str
      node_label_prefixes:
        description:
          - More node label prefixes that software on your nodes sets by itself (a node selector on them is never
            reported), beyond the kubelet's, the cloud provider's, EKS's, eksctl's, Karpenter's, HyperPod's, NFD's
            and GPU Feature Discovery's.
        type: list
        elements: str
      extended_resource_toleration:
        description:
          - Whether the cluster runs the C(ExtendedResourceToleration) admission plugin (EKS does since 1.19); a pod
            that requests C(nvidia.com/gpu) then tolerates C(nvidia.com/gpu:NoSchedule) taints without saying so.
        type: bool
  simulator:
    description:
      - The inventory's simulator (C(validation_simulator_module), C(validation_simulator_env)), checked
        against the O(pitfalls.simulators) (its checks have the node V(inventory)).
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
      rules: [deadline, dev_shm, inline_script, simulator_config]
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
      description: How many findings the object has.
      type: int
      sample: 2
findings:
  description: Every finding, schema and pitfall, errors, warnings and notes.
  returned: always
  type: list
  elements: dict
  sample: [{rule: image_tag, severity: warning, file: k8s/train.yaml, line: 23, column: 18, object: Job/train,
            container: main, path: "spec.template.spec.containers[0].image",
            message: "container main of Job/train uses the tag latest ...", fix: "tag the image ..."}]
skipped:
  description:
    - Files and heredocs (C(file:line)) that look like manifests but were not checked, with the reason (Jinja, Go and
      Helm templates, text that is not YAML once rendered); each is also a C(not_checked) note in RV(findings).
  returned: always
  type: list
  elements: dict
  sample: [{file: chart/templates/job.yaml, why: "a Helm chart template (render it with helm template first)"}]
schema_checks:
  description: One C(schema) check per object (C(yaml) for a file that cannot be read), for M(rlstack.validation.level_assert).
  returned: always
  type: list
  elements: dict
  sample: [{name: schema, node: "L5 train libero-pi0 Job", op: eq, actual: 0, expected: 0, unit: errors,
            hint: "", fail_msg: "", evidence_missing: false}]
pitfall_checks:
  description:
    - One failing check per pitfall error (named after its rule, its node file:line:column, object and container),
      or one passing C(pitfalls) check for an object without any, for M(rlstack.validation.level_assert); plus
      C(simulator_config) checks of O(simulator) (node V(inventory)).
  returned: always
  type: list
  elements: dict
  sample: [{name: deadline, node: "jobs.yaml:7:3 Job/smoke", op: ge, actual: 300, expected: 600, unit: s,
            fail_msg: "Job/smoke spec.activeDeadlineSeconds is 300 s, under 600 s: ...", hint: "set ...",
            evidence_missing: false}]
kubernetes_version:
  description: The version of the Kubernetes schemas used; empty with O(schema=false).
  returned: always
  type: str
  sample: "1.34.0"
files:
  description: The manifest files read from O(paths) (YAML files without a Kubernetes object are left out).
  returned: always
  type: list
  elements: str
  sample: [manifests/nccl.yaml]
node_groups:
  description:
    - The node groups the repository declares (eksctl, Karpenter, Terraform), one line each with where, instance
      types, labels and taints; the context of the rules C(node_selector), C(toleration) and C(gpu_efa_request).
  returned: always
  type: list
  elements: str
  sample: ["p5-ocdr (eksctl managed node group, eks.yaml:30; p5.48xlarge; labels: none; no taints)"]
"""

import os

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.rlstack.validation.plugins.module_utils.lint import (
    _k8s_schema,
    _node_groups,
    _pitfall_rules,
    _shell_env,
)
from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import (
    LintError, check, finding_checks, finding_node, is_k8s_object)
from ansible_collections.rlstack.validation.plugins.module_utils.lint._manifest_lint import (
    ENVSUBST_MODES, ManifestLinter, manifest_files, split_by_row)
from ansible_collections.rlstack.validation.plugins.module_utils.lint._yaml_marks import load_plain


def argument_spec():
    return dict(
        manifests=dict(type="list", elements="dict", default=[], options=dict(
            source=dict(type="str", required=True),
            definition=dict(type="raw", required=True),
            data_files=dict(type="dict", default={}),
            provided_env=dict(type="list", elements="str", default=[]),
        )),
        paths=dict(type="list", elements="path", default=[]),
        terraform_paths=dict(type="list", elements="path", default=[]),
        instruction_paths=dict(type="list", elements="path", default=[]),
        heredoc_paths=dict(type="list", elements="path", default=[]),
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
        values=dict(type="dict", default={}),
        env_file=dict(type="path"),
        use_environment=dict(type="bool", default=False),
        envsubst=dict(type="str", default="auto", choices=list(ENVSUBST_MODES)),
        envsubst_vars=dict(type="raw"),
        pitfalls=dict(type="dict", default={}, options=dict(
            rules=dict(type="list", elements="str", choices=list(_pitfall_rules.RULE_NAMES)),
            severity=dict(type="dict"),
            min_deadline_s=dict(type="int"),
            gpu_resources=dict(type="list", elements="str"),
            inline_script_max_lines=dict(type="int"),
            inline_script_max_control_flow=dict(type="int"),
            shells=dict(type="list", elements="str"),
            simulators=dict(type="list", elements="dict"),
            efa_resources=dict(type="list", elements="str"),
            node_label_prefixes=dict(type="list", elements="str"),
            extended_resource_toleration=dict(type="bool"),
        )),
        simulator=dict(type="dict", options=dict(
            module=dict(type="str"),
            env=dict(type="dict", default={}),
        )),
    )


def _inline_object(item):
    definition = item["definition"]
    if isinstance(definition, str):
        docs = [d for d in load_plain(definition, item["source"]) if d is not None]
        if len(docs) != 1:
            raise LintError("%s: definition must be one YAML document, not %d" % (item["source"], len(docs)))
        definition = docs[0]
    if not is_k8s_object(definition):
        raise LintError("%s: definition is not a Kubernetes object (apiVersion and kind)" % item["source"])
    if item.get("data_files"):
        definition = dict(definition)
        data = dict(definition.get("data") or {})
        for key, path in item["data_files"].items():
            try:
                with open(path, "rb") as handle:
                    data[key] = handle.read().decode("utf-8", errors="replace")
            except (IOError, OSError) as exc:
                raise LintError("%s: cannot read %s for data key %s: %s" % (item["source"], path, key, exc))
        definition["data"] = data
    return definition


def _value_layers(params):
    """(exported environment, env file values, env file unknown names, --set values)."""
    # the module runs on the controller (local connection): os.environ is the user's exported variables
    environ = dict(os.environ) if params["use_environment"] else {}
    file_values, file_unknown = {}, {}
    if params["env_file"]:
        try:
            with open(params["env_file"], "r", encoding="utf-8", errors="replace") as handle:
                read, file_unknown, _missing = _shell_env.read(handle.read(), environ, params["env_file"])
        except (IOError, OSError) as exc:
            raise LintError("cannot read the env file %s: %s" % (params["env_file"], exc))
        file_values = dict((k, v) for k, v in read.items() if k not in environ or environ[k] != v)
    return environ, file_values, file_unknown, params["values"]


def _checks(findings, documents, passing_name, rules):
    """Failing checks of the errors; a passing check for each object without an error of these rules."""
    checks = finding_checks(findings)
    failed_sources = set(f.get("source") for f in findings if f["severity"] == "error")
    for entry in documents:
        if entry["source"] not in failed_sources:
            notes = len([f for f in findings if f.get("source") == entry["source"] and f["rule"] in rules])
            checks.append(check(passing_name, entry["source"], op="eq", actual=0, expected=0,
                                unit="errors" + (" (%d warnings or notes)" % notes if notes else "")))
    return checks


def run(module):
    params = module.params
    base = params["base_dir"]
    validator = None
    if params["schema"]:
        crds = dict(((c["api_version"], c["kind"]), _k8s_schema.load_schema_file(c["path"]))
                    for c in params["crd_schemas"])
        try:
            validator = _k8s_schema.SchemaValidator(params["kubernetes_version"], params["strict"], crds)
        except ImportError as exc:
            module.fail_json(msg=missing_required_lib("kubernetes-validate and jsonschema"), exception=str(exc))
        for note in validator.notes:
            module.warn(note)
    layers = _value_layers(params)
    linter = ManifestLinter(validator, params["pitfalls"] or {}, params["unknown_kinds"], {},
                            params["envsubst"], params["envsubst_vars"], base or "")
    linter.set_value_layers(*layers)
    yaml_files = manifest_files(params["paths"])
    linter.read_render_plan(yaml_files, params["instruction_paths"])
    node_groups = linter.collect_node_groups(yaml_files, params["terraform_paths"])
    for item in params["manifests"]:
        linter.lint_object(_inline_object(item), item["source"], provided_env=item.get("provided_env") or [])
    for path in yaml_files:
        linter.lint_file(path)
    for path in params["heredoc_paths"]:
        linter.lint_heredocs(path, "terraform" if path.endswith(".tf") else "shell")
    findings = linter.finish()
    simulator = params.get("simulator") or {}
    if simulator.get("module"):
        findings.extend(_pitfall_rules.simulator_inventory_findings(simulator["module"], simulator.get("env") or {},
                                                                    params["pitfalls"] or {}))
    schema, pitfalls = split_by_row(findings)
    schema_checks = _checks(schema, linter.documents, "schema", ("schema", "schema_missing"))
    pitfall_checks = _checks(pitfalls, linter.documents, "pitfalls", _pitfall_rules.RULE_NAMES)
    if simulator.get("module") and not [f for f in pitfalls if f.get("file") == "inventory"]:
        pitfall_checks.append(check("simulator_config", "inventory", op="eq", actual=0, expected=0))
    for item in findings:
        item["node"] = finding_node(item)
    return dict(changed=False, documents=linter.documents, findings=findings, schema_checks=schema_checks,
                pitfall_checks=pitfall_checks, kubernetes_version=validator.version if validator is not None else "",
                files=linter.files, node_groups=[_node_groups.describe(g) for g in node_groups], skipped=[{"file": f, "why": w} for f, w in linter.skipped])


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    try:
        result = run(module)
    except LintError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
