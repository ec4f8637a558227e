# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The node groups a repository declares, and whether a pod fits one of them.

The repository context of the pitfall rules ``node_selector``, ``toleration`` and ``gpu_efa_request``:
what labels, taints and instance types the repository's own node groups give their nodes, read from

- eksctl ``ClusterConfig`` (``managedNodeGroups[]``, ``nodeGroups[]``: name, instanceType(s), labels, taints);
- Karpenter ``NodePool`` (karpenter.sh/v1beta1, v1; also EKS Auto Mode) and ``Provisioner`` (v1alpha5):
  ``spec.template.metadata.labels``, ``spec.template.spec.taints`` and ``requirements`` (an ``In``
  requirement is a label with one of its values, any other operator a label of any value), in YAML files and in
  Terraform heredocs (``kubectl_manifest`` ``yaml_body = <<-YAML``);
- Terraform: ``eks_managed_node_groups`` / ``self_managed_node_groups`` objects (terraform-aws-modules/eks; a
  conditional ``cond ? {...} : {...}`` gives the groups of both branches) and ``resource "aws_eks_node_group"``
  (``labels``, ``taint {}`` blocks, ``instance_types``), through a small HCL reader (:func:`parse_hcl`);
  ``_node_groups_tf.py`` reads the Terraform files (also Karpenter NodePools written in HCL,
  ``resource "kubernetes_manifest"``).

What cannot be known offline is *unknown*, never a finding: a label value that is an expression
(``var.environment``), labels or node groups passed as a variable (a group of unknown labels then matches every
selector), an instance type list from a variable. A reference such as ``eks_managed_node_groups =
var.eks_managed_node_groups`` in a local module that another directory calls is a pass-through, not a
declaration; in a root module it is a group nothing is known about.

Labels no node group declares but that something sets on every node by itself are listed in
:data:`AUTO_LABELS` and :data:`AUTO_PREFIXES`, with their sources; values are checked only for the instance type
(against the group's instance types) and the Karpenter/EKS group name labels.

Standard library only (PyYAML through ``_yaml_marks`` for heredocs), Python 3.8 syntax.
"""

from __future__ import annotations

import re

from ansible_collections.rlstack.validation.plugins.module_utils.lint._lint_base import LintError

# Labels that the kubelet or the cloud provider set on every node (k8s.io/api core/v1 well_known_labels.go;
# the kubelet's initialNode in pkg/kubelet/kubelet_node_status.go sets hostname, os and arch; the AWS cloud
# provider sets instance type, zone and region, and topology.k8s.aws/zone-id), and Karpenter's well-known labels
# (kubernetes-sigs/karpenter pkg/apis/v1/labels.go WellKnownLabels, NodeInitialized/Registered).
AUTO_LABELS = (
    "kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os",
    "beta.kubernetes.io/arch", "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type",
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region", "topology.k8s.aws/zone-id", "node.kubernetes.io/windows-build",
)
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
# Label domains whose labels software sets on the nodes by itself: Karpenter (karpenter.sh/nodepool,
# capacity-type, ...; aws/karpenter-provider-aws pkg/apis/v1/labels.go: karpenter.k8s.aws/instance-family,
# instance-gpu-count, ...), EKS (eks.amazonaws.com/nodegroup, capacityType, nodegroup-image on managed node groups,
# Auto Mode's eks.amazonaws.com/*), eksctl (alpha.eksctl.io/nodegroup-name, cluster-name), SageMaker HyperPod
# (sagemaker.amazonaws.com/node-health-status, ...), Node Feature Discovery (feature.node.kubernetes.io/*) and
# NVIDIA GPU Feature Discovery (nvidia.com/gpu.product, nvidia.com/gpu.count, nvidia.com/cuda.*, nvidia.com/mig.*).
# Configurable: local_checks_node_label_prefixes adds more.
AUTO_PREFIXES = (
    "karpenter.sh/", "karpenter.k8s.aws/", "eks.amazonaws.com/", "alpha.eksctl.io/", "sagemaker.amazonaws.com/",
    "feature.node.kubernetes.io/", "nvidia.com/gpu.", "nvidia.com/cuda.", "nvidia.com/mig.", "nvidia.com/gfd.",
    "vpc.amazonaws.com/",
)
# Pods selecting these target SageMaker HyperPod nodes, whose instance groups this reader does not model.
HYPERPOD_PREFIX = "sagemaker.amazonaws.com/"

EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}


class Unknown(object):
    """A value that only exists once Terraform runs (a variable, a function call, an expression)."""

    def __init__(self, text="expression"):
        self.text = text

    def __repr__(self):
        return "<%s>" % self.text


def is_unknown(value):
    return isinstance(value, Unknown)


def _placeholder(value):
    """A value that is still a template placeholder (${X}, $X, {{ x }}, <x>, PLACEHOLDER_X)."""
    text = str(value)
    return bool(re.search(r"\$\{?\w|\{\{|<[^>]*>|PLACEHOLDER", text))


# --------------------------------------------------------------------------------------------------
# a node group


def node_group(name, kind, file, line, labels=None, instance_types=None, taints=None, any_value_keys=(),
               managed=False, karpenter=False):
    """labels: {key: [values] or None (any value)} or Unknown; instance_types: [types] or None (any/unknown);
    taints: [{key, value, effect}] or Unknown."""
    return {"name": name, "kind": kind, "file": file, "line": int(line or 0),
            "labels": labels if labels is not None else {}, "instance_types": instance_types,
            "taints": taints if taints is not None else [], "any_value_keys": list(any_value_keys),
            "managed": managed, "karpenter": karpenter, "name_known": True}


def _str_or_unknown(value):
    if value is None or is_unknown(value) or isinstance(value, (dict, list)):
        return None
    text = str(value)
    return None if _placeholder(text) else text


def _labels_map(value):
    """{key: [value] or None} from a label map; Unknown when the map itself is unknown."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        return Unknown("labels")
    out = {}
    for key, item in value.items():
        if is_unknown(key):
            return Unknown("labels")
        text = _str_or_unknown(item)
        out[str(key)] = [text] if text is not None else None
    return out


def _taint_list(value):
    """[{key, value, effect}] from a list of taint objects, an eksctl map (key: "value:Effect") or a Terraform map
    of objects; Unknown when anything about it is unknown."""
    if value is None:
        return []
    if is_unknown(value):
        return Unknown("taints")
    items = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict):
                items.append(item)
            elif isinstance(item, str):  # eksctl's older map form, key: "value:NoSchedule"
                val, _sep, effect = item.rpartition(":")
                items.append({"key": key, "value": val, "effect": effect})
            else:
                return Unknown("taints")
    elif isinstance(value, list):
        items = value
    else:
        return Unknown("taints")
    out = []
    for item in items:
        if not isinstance(item, dict):
            return Unknown("taints")
        key, effect = item.get("key"), item.get("effect")
        if key is None or is_unknown(key) or is_unknown(effect) or effect is None:
            return Unknown("taints")
        val = item.get("value")
        out.append({"key": str(key), "value": None if is_unknown(val) else ("" if val is None else str(val)),
                    "effect": EFFECTS.get(str(effect), str(effect))})
    return out


def _instance_types(*values):
    """A list of known instance types, or None (unknown, or any)."""
    found = []
    for value in values:
        if value is None:
            continue
        if is_unknown(value):
            return None
        for item in (value if isinstance(value, list) else [value]):
            text = _str_or_unknown(item)
            if text is None:
                return None
            found.append(text)
    return found or None


# --------------------------------------------------------------------------------------------------
# eksctl and Karpenter (YAML)


def from_eksctl(doc, file, marks=None, first_line=0):
    """The node groups of an eksctl ClusterConfig."""
    out = []
    for section, managed in (("managedNodeGroups", True), ("nodeGroups", False)):
        for index, group in enumerate(doc.get(section) or []):
            if not isinstance(group, dict):
                continue
            line = (marks or {}).get((section, index), (first_line, 0))[0]
            distribution = group.get("instancesDistribution") if isinstance(group.get("instancesDistribution"), dict) else {}
            out.append(node_group(
                str(group.get("name") or "%s[%d]" % (section, index)),
                "eksctl %s" % ("managed node group" if managed else "node group"), file, line,
                labels=_labels_map(group.get("labels")),
                instance_types=_instance_types(group.get("instanceType"), group.get("instanceTypes"),
                                               distribution.get("instanceTypes")),
                taints=_taint_list(group.get("taints")), managed=managed))
    return out


def _requirements(reqs, labels):
    """Karpenter requirements -> labels (In: one of its values; other operators: any value) and instance types."""
    any_keys, types = [], None
    if is_unknown(reqs) or not isinstance(reqs, (list, type(None))):
        return any_keys, types, False
    for req in reqs or []:
        if not isinstance(req, dict) or not isinstance(req.get("key"), str):
            continue
        key, operator, values = req["key"], str(req.get("operator") or ""), req.get("values")
        known = isinstance(values, list) and all(_str_or_unknown(v) is not None for v in values)
        if operator == "In" and known:
            if isinstance(labels, dict):
                labels[key] = [str(v) for v in values]
            if key in INSTANCE_TYPE_LABELS:
                types = [str(v) for v in values]
        elif operator not in ("NotIn", "DoesNotExist"):
            any_keys.append(key)
    return any_keys, types, True


def from_karpenter(doc, file, marks=None, first_line=0):
    """The node group of a Karpenter NodePool (v1beta1, v1) or Provisioner (v1alpha5); [] for other objects."""
    api = str(doc.get("apiVersion") or "")
    kind = doc.get("kind")
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    name = str((doc.get("metadata") or {}).get("name") or "<no name>")
    if api.startswith("karpenter.sh/") and kind == "NodePool":
        template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
        meta = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
        tspec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
        labels, taints, reqs = _labels_map(meta.get("labels")), _taint_list(tspec.get("taints")), tspec.get("requirements")
        labels_of_name = {"karpenter.sh/nodepool": [name]}
    elif api.startswith("karpenter.sh/") and kind == "Provisioner":
        labels, taints, reqs = _labels_map(spec.get("labels")), _taint_list(spec.get("taints")), spec.get("requirements")
        labels_of_name = {"karpenter.sh/provisioner-name": [name]}
    else:
        return []
    if isinstance(labels, dict):
        labels.update(labels_of_name)
    any_keys, types, _ok = _requirements(reqs, labels)
    return [node_group(name, "Karpenter %s" % kind, file, first_line, labels=labels, instance_types=types,
                       taints=taints, any_value_keys=any_keys, karpenter=True)]


def from_yaml_document(doc, file, marks=None, first_line=0):
    """Node groups of one YAML document (eksctl ClusterConfig, Karpenter NodePool/Provisioner)."""
    if not isinstance(doc, dict):
        return []
    if str(doc.get("apiVersion") or "").startswith("eksctl.io/") and doc.get("kind") == "ClusterConfig":
        return from_eksctl(doc, file, marks, first_line)
    return from_karpenter(doc, file, marks, first_line)


# --------------------------------------------------------------------------------------------------
# a small HCL reader (what node groups need: blocks, attributes, literals; every expression is Unknown)

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+|\\\n)
  | (?P<nl>\n)
  | (?P<comment>\#[^\n]*|//[^\n]*|/\*.*?\*/)
  | (?P<heredoc><<-?(?P<tag>[A-Za-z_][A-Za-z0-9_]*)[ \t]*\n)
  | (?P<string>")
  | (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_-]*)
  | (?P<op>==|!=|>=|<=|&&|\|\||=>|\.\.\.|[{}\[\]()=:,?.!<>+\-*/%])
""", re.X | re.S)


def _tokens(text):
    """[(kind, value, line)]; strings keep their raw text and whether they interpolate."""
    out, pos, line = [], 0, 1
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match:
            raise LintError("line %d: cannot read %r" % (line, text[pos:pos + 20]))
        kind = match.lastgroup if match.lastgroup != "tag" else "heredoc"
        if match.group("heredoc"):
            kind = "heredoc"
        start_line = line
        if kind == "heredoc":
            tag = match.group("tag")
            end = re.compile(r"^[ \t]*%s[ \t]*$" % re.escape(tag), re.M).search(text, match.end())
            body = text[match.end():end.start() if end else len(text)]
            out.append(("heredoc", body, start_line))
            line += text.count("\n", pos, end.end() if end else len(text))
            pos = end.end() if end else len(text)
            continue
        if kind == "string":
            index, depth, raw = match.end(), 0, []
            while index < len(text):
                char = text[index]
                if char == "\\" and index + 1 < len(text):
                    raw.append(text[index:index + 2])
                    index += 2
                    continue
                if text.startswith("${", index) or text.startswith("%{", index):
                    depth += 1
                    raw.append(text[index:index + 2])
                    index += 2
                    continue
                if char == "}" and depth:
                    depth -= 1
                elif char == '"' and not depth:
                    break
                raw.append(char)
                index += 1
            value = "".join(raw)
            out.append(("string", value, start_line))
            line += value.count("\n")
            pos = index + 1
            continue
        value = match.group(0)
        line += value.count("\n")
        pos = match.end()
        if kind in ("ws", "comment"):
            continue
        out.append((kind, value, start_line))
    out.append(("eof", "", line))
    return out


class _Parser(object):
    def __init__(self, text):
        self.toks = _tokens(text)
        self.pos = 0
        self.heredocs = []  # (text, line)

    def peek(self, offset=0):
        return self.toks[min(self.pos + offset, len(self.toks) - 1)]

    def next(self):
        tok = self.toks[self.pos]
        self.pos = min(self.pos + 1, len(self.toks) - 1)
        return tok

    def skip_nl(self):
        while self.peek()[0] == "nl" or self.peek()[1] == ",":
            self.next()

    def body(self, close=None):
        """{'attrs': {name: (value, line)}, 'blocks': [(labels, body, line)]}."""
        out = {"attrs": {}, "blocks": []}
        while True:
            self.skip_nl()
            kind, value, line = self.peek()
            if kind == "eof" or (close and value == close):
                if close:
                    self.next()
                return out
            if kind not in ("ident", "string"):
                self.next()  # something this reader does not model; resynchronise
                continue
            self.next()
            if self.peek()[1] == "=" and kind == "ident":
                self.next()
                out["attrs"][value] = (self.expression(), line)
                continue
            labels = [value]
            while self.peek()[0] in ("string", "ident") and self.peek()[1] != "{":
                labels.append(self.next()[1])
            if self.peek()[1] == "{":
                self.next()
                out["blocks"].append((tuple(labels), self.body(close="}"), line))

    # expressions: literals, objects, lists; everything else is Unknown
    def expression(self):
        value = self.binary()
        if self.peek()[1] == "?":
            self.next()
            left = self.expression()
            while self.peek()[0] == "nl":
                self.next()
            if self.peek()[1] == ":":
                self.next()
            right = self.expression()
            return ("cond", left, right)
        return value

    def binary(self):
        value = self.postfix()
        while self.peek()[1] in ("==", "!=", ">=", "<=", "&&", "||", "<", ">", "+", "-", "*", "/", "%"):
            self.next()
            self.postfix()
            value = Unknown("expression")
        return value

    def postfix(self):
        value = self.primary()
        while True:
            tok = self.peek()
            if tok[1] == "." and self.peek(1)[0] in ("ident", "number", "op"):
                self.next()
                if self.peek()[1] == "*":
                    self.next()
                else:
                    self.next()
                value = Unknown("reference")
            elif tok[1] == "[" :
                self.next()
                self.until("]")
                value = Unknown("reference")
            else:
                return value

    def until(self, close):
        """Skip to the matching close bracket."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        depth = 1
        while depth:
            kind, value, _line = self.next()
            if kind == "eof":
                return
            if kind == "heredoc":
                self.heredocs.append((value, _line))
            if value in pairs:
                depth += 1
            elif value in pairs.values():
                depth -= 1

    def primary(self):
        while self.peek()[0] == "nl":
            self.next()
        kind, value, line = self.next()
        if kind == "string":
            return Unknown("interpolation") if ("${" in value or "%{" in value) else _unescape(value)
        if kind == "heredoc":
            self.heredocs.append((value, line))
            return Unknown("heredoc")
        if kind == "number":
            return float(value) if "." in value else int(value)
        if kind == "ident":
            if value in ("true", "false"):
                return value == "true"
            if value == "null":
                return None
            if self.peek()[1] == "(":
                self.next()
                self.until(")")
                return Unknown("%s()" % value)
            return Unknown(value)
        if value == "!" or value == "-":
            self.primary()
            return Unknown("expression")
        if value == "(":
            inner = self.expression()
            self.until(")")
            return inner
        if value == "[":
            if self.peek()[1] == "for":
                self.until("]")
                return Unknown("for")
            items = []
            while True:
                self.skip_nl()
                if self.peek()[1] == "]":
                    self.next()
                    return items
                if self.peek()[0] == "eof":
                    return items
                items.append(self.expression())
        if value == "{":
            if self.peek()[1] == "for":
                self.until("}")
                return Unknown("for")
            obj = _Object()
            while True:
                self.skip_nl()
                if self.peek()[1] == "}":
                    self.next()
                    return obj
                if self.peek()[0] == "eof":
                    return obj
                key_kind, key, key_line = self.peek()
                if key_kind in ("ident", "string"):
                    self.next()
                    key = Unknown("key") if "${" in key else key
                else:
                    key = self.expression()
                    key = key if isinstance(key, str) else Unknown("key")
                if self.peek()[1] in ("=", ":"):
                    self.next()
                    obj[key] = self.expression()
                    obj.lines[key] = key_line
                else:
                    self.skip_nl()
        return Unknown("expression")


class _Object(dict):
    """An HCL object; .lines has the line of each key."""

    def __init__(self):
        dict.__init__(self)
        self.lines = {}


def _unescape(text):
    return text.replace('\\"', '"').replace("\\\\", "\\").replace("\\n", "\n")


def parse_hcl(text, where=""):
    """(body {'attrs', 'blocks'}, heredocs [(text, line)]) of an HCL file."""
    parser = _Parser(text)
    try:
        body = parser.body()
    except (LintError, IndexError, RecursionError) as exc:
        raise LintError("%s: %s" % (where or "HCL", exc))
    return body, parser.heredocs


# --------------------------------------------------------------------------------------------------
# does a pod fit a node group


def label_state(group, key, value, extra_prefixes=()):
    """True when nodes of the group can carry key=value (value None: the key with any value)."""
    labels = group["labels"]
    if is_unknown(labels):
        return True
    if key in labels:
        allowed = labels[key]
        return allowed is None or value is None or str(value) in allowed
    if key in group["any_value_keys"]:
        return True
    if key in INSTANCE_TYPE_LABELS:
        types = group["instance_types"]
        return types is None or value is None or str(value) in types
    if key in ("karpenter.sh/nodepool", "karpenter.sh/provisioner-name"):
        return False  # set only by Karpenter, to the pool's own name (in labels above)
    if key.startswith("karpenter.sh/") or key.startswith("karpenter.k8s.aws/"):
        return group["karpenter"]
    if key == "eks.amazonaws.com/nodegroup":
        return group["managed"] and (value is None or not group["name_known"] or str(value) == group["name"])
    if key in AUTO_LABELS:
        return True
    return any(key.startswith(prefix) for prefix in tuple(AUTO_PREFIXES) + tuple(extra_prefixes or ()))


def pod_selectors(spec):
    """(nodeSelector {key: value}, [[(key, operator, values)] per required node affinity term])."""
    selector = spec.get("nodeSelector") if isinstance(spec.get("nodeSelector"), dict) else {}
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {}) if isinstance(spec.get("affinity"), dict) else {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(affinity, dict) else None
    terms = []
    for term in (required or {}).get("nodeSelectorTerms") or [] if isinstance(required, dict) else []:
        if isinstance(term, dict):
            terms.append([(str(e.get("key")), str(e.get("operator")), e.get("values") or [])
                          for e in term.get("matchExpressions") or [] if isinstance(e, dict) and e.get("key")])
    return dict((str(k), v) for k, v in selector.items()), terms


def _term_fits(group, term, extra):
    for key, operator, values in term:
        if operator == "In":
            if any(_placeholder(v) for v in values):
                continue
            if not any(label_state(group, key, v, extra) for v in values):
                return False
        elif operator == "Exists":
            if not label_state(group, key, None, extra):
                return False
    return True


def fits(group, selector, terms, extra=()):
    """Whether the node selector and the required node affinity allow the group's nodes."""
    for key, value in selector.items():
        if _placeholder(value) or (key in INSTANCE_TYPE_LABELS and re.search(r"[A-Z]", str(value))):
            continue
        if not label_state(group, key, value, extra):
            return False
    return not terms or any(_term_fits(group, term, extra) for term in terms)


def targets_hyperpod(selector, terms):
    keys = list(selector) + [key for term in terms for key, _op, _v in term]
    values = [str(v) for k, v in selector.items() if k in INSTANCE_TYPE_LABELS]
    values += [str(v) for term in terms for key, _op, vals in term if key in INSTANCE_TYPE_LABELS for v in vals]
    return any(k.startswith(HYPERPOD_PREFIX) for k in keys) or any(v.startswith("ml.") for v in values)


def tolerates(tolerations, taint):
    """Kubernetes ToleratesTaint (k8s.io/api core/v1 toleration.go): an empty effect matches every effect, an
    empty key with operator Exists every key; Exists ignores the value, Equal (the default) compares it."""
    for tol in tolerations:
        if not isinstance(tol, dict):
            continue
        effect = tol.get("effect") or ""
        if effect and effect != taint["effect"]:
            continue
        key = tol.get("key") or ""
        operator = tol.get("operator") or "Equal"
        if not key:
            if operator == "Exists":
                return True
            continue
        if key != taint["key"]:
            continue
        if operator == "Exists":
            return True
        if taint["value"] is None or str(tol.get("value") or "") == taint["value"]:
            return True
    return False


def untolerated(group, tolerations):
    """The group's NoSchedule/NoExecute taints the tolerations do not tolerate ([] when its taints are unknown)."""
    taints = group["taints"]
    if is_unknown(taints):
        return []
    return [t for t in taints if t["effect"] in ("NoSchedule", "NoExecute") and not tolerates(tolerations, t)]


def describe(group):
    """'p5-ocdr (eksctl managed node group, eks.yaml:35; p5.48xlarge; labels: none; no taints)'."""
    labels = group["labels"]
    if is_unknown(labels):
        shown = "labels unknown"
    else:
        items = ["%s=%s" % (k, "|".join(v) if v else "*") for k, v in sorted(labels.items())
                 if k not in ("karpenter.sh/nodepool", "karpenter.sh/provisioner-name")]
        shown = "labels: " + (", ".join(items) if items else "none")
    taints = group["taints"]
    if is_unknown(taints):
        taint_text = "taints unknown"
    else:
        taint_text = ("taints: " + ", ".join("%s=%s:%s" % (t["key"], t["value"] if t["value"] is not None else "*",
                                                           t["effect"]) for t in taints)) if taints else "no taints"
    types = ", ".join(group["instance_types"]) if group["instance_types"] else "any instance type"
    where = "%s:%d" % (group["file"], group["line"]) if group["line"] else group["file"]
    return "%s (%s, %s; %s; %s; %s)" % (group["name"], group["kind"], where, types, shown, taint_text)
