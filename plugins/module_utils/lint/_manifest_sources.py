# -*- coding: utf-8 -*-
# Copyright (c) rlstack.validation contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a repository writes manifests besides ``*.yaml`` files (issue 31): files found by their content
whatever they are called (``job.yaml-template``, ``pod.tpl``, ``job.yaml.j2``, ``job.yaml.in``, no extension),
heredocs of shell scripts (``cat <<EOF | kubectl apply -f -``, ``kubectl apply -f - <<'EOF'``,
``envsubst <<EOF | kubectl apply -f -``, ``cat > job.yaml <<EOF``) and of Terraform (``yaml_body = <<-YAML``, a
``local-exec`` command whose own shell heredoc applies a manifest).

Each heredoc is a segment: its text as the command receives it (``<<-`` strips leading tabs in the shell,
the common indentation in Terraform), the line of the file where its body starts and the column its text was
moved by, so that a finding is at the line of the file the user edits. How it is rendered is the linter's
business (``_manifest_lint``): a quoted shell delimiter is not expanded, an unquoted one is expanded by the
shell with the script's own assignments, an ``envsubst`` in the command renders it as envsubst does, a
Terraform ``${...}`` is a value known only at apply time.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import os
import re

# a Kubernetes object: apiVersion and kind at the start of a line (after `---` or a list dash, for apiVersion)
_API_VERSION = re.compile(r"(?m)^(?:---[ \t]*\n)?(?:-[ \t]+)?apiVersion:[ \t]*['\"]?[A-Za-z0-9][\w./-]*")
_KIND = re.compile(r"(?m)^(?:-[ \t]+|[ \t]{2})?kind:[ \t]*['\"]?[A-Z]\w*")
# files that are read for manifests by content: not code, not data, not documentation
SNIFF_SKIP_SUFFIXES = (".py", ".pyc", ".go", ".js", ".ts", ".java", ".c", ".h", ".cc", ".cpp", ".rs", ".rb",
                       ".json", ".ipynb", ".md", ".markdown", ".rst", ".html", ".css", ".svg", ".png", ".jpg",
                       ".jpeg", ".gif", ".pdf", ".gz", ".xz", ".zip", ".tar", ".whl", ".so", ".bin", ".pt",
                       ".safetensors", ".parquet", ".csv", ".lock", ".patch", ".diff", ".tf", ".tfvars", ".hcl")
SNIFF_MAX_BYTES = 1 << 20


def looks_like_manifest(text):
    """True when a text holds what looks like a Kubernetes object (an apiVersion and a kind line)."""
    text = str(text or "")
    return bool(_API_VERSION.search(text) and _KIND.search(text))


def template_reason(text, terraform=False):
    """Why a text that looks like a manifest cannot be rendered here, or '' when it can: Jinja or Go template
    syntax, Terraform template directives."""
    text = str(text or "")
    if "{%" in text or re.search(r"\{\{-?\s*[.$\w]", text):
        return "a Jinja or Go template ({{ ... }} / {% ... %}): render it with its tool, then lint the result"
    if terraform and "%{" in text:
        return "a Terraform template directive (%{ ... }) decides its text at apply time"
    return ""


def sniff(path):
    """'manifest' for a file whose content looks like a Kubernetes object, 'script' for a shell script
    without a .sh name (its #! line), else ''. Binary files and files over SNIFF_MAX_BYTES are not read."""
    lower = path.lower()
    if lower.endswith(SNIFF_SKIP_SUFFIXES):
        return ""
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_MAX_BYTES + 1)
    except (IOError, OSError):
        return ""
    if len(head) > SNIFF_MAX_BYTES or b"\0" in head[:8192]:
        return ""
    text = head.decode("utf-8", errors="replace")
    if re.match(r"#![ \t]*/\S*(?:env[ \t]+)?(?:ba|da|k|z)?sh\b", text):
        return "script"
    return "manifest" if looks_like_manifest(text) else ""


_SHELL_HEREDOC = re.compile(r"""(?<!<)<<(?P<strip>-?)[ \t]*(?P<q>['"]|\\)?(?P<tag>[A-Za-z_][A-Za-z0-9_]*)['"]?(?!<)""")


def shell_heredocs(text, first_line=1, column=0):
    """[segment] of the heredocs of a shell script: {text, line (file line of the body's first line), column,
    quoted, command (the line that opens it), origin 'shell'}. Comment lines open nothing."""
    lines = str(text).split("\n")
    out, index = [], 0
    while index < len(lines):
        line = lines[index]
        match = None if line.lstrip().startswith("#") else _SHELL_HEREDOC.search(line)
        if not match:
            index += 1
            continue
        strip, tag = bool(match.group("strip")), match.group("tag")
        body, end = [], index + 1
        while end < len(lines):
            candidate = lines[end].lstrip("\t") if strip else lines[end]
            if candidate.rstrip() == tag:
                break
            body.append(candidate)
            end += 1
        out.append({"text": "\n".join(body) + "\n", "line": first_line + index + 1, "column": column,
                    "quoted": bool(match.group("q")), "command": line.strip(), "origin": "shell"})
        index = end + 1
    return out


_TF_HEREDOC = re.compile(r"<<(?P<strip>-?)(?P<tag>[A-Za-z_][A-Za-z0-9_]*)[ \t]*$")


def terraform_heredocs(text):
    """[segment] of the heredocs of a Terraform file that hold a manifest ({..., origin 'terraform'}), and
    those of the shell heredocs inside a Terraform heredoc (a local-exec command), origin 'shell' with
    terraform=True (Terraform interpolates their ${...} first)."""
    lines = str(text).split("\n")
    out, index = [], 0
    while index < len(lines):
        stripped = lines[index].strip()
        match = None if stripped.startswith(("#", "//")) else _TF_HEREDOC.search(lines[index])
        if not match:
            index += 1
            continue
        tag, body, end = match.group("tag"), [], index + 1
        while end < len(lines) and lines[end].strip() != tag:
            body.append(lines[end])
            end += 1
        # <<- strips the common indentation; a << body indented as a whole is the same YAML once dedented
        widths = [len(l) - len(l.lstrip(" \t")) for l in body if l.strip()]
        indent = min(widths) if widths else 0
        body = [l[indent:] for l in body]
        segment_text = "\n".join(body) + "\n"
        if looks_like_manifest(segment_text) and not _SHELL_HEREDOC.search(segment_text):
            out.append({"text": segment_text, "line": index + 2, "column": indent, "quoted": False,
                        "command": lines[index].strip(), "origin": "terraform"})
        else:
            for inner in shell_heredocs(segment_text, index + 2, indent):
                inner["terraform"] = True
                out.append(inner)
        index = end + 1
    return out


def manifest_segments(text, kind):
    """The heredoc segments that hold a manifest, of a script (kind 'shell') or Terraform file ('terraform')."""
    found = terraform_heredocs(text) if kind == "terraform" else shell_heredocs(text)
    return [s for s in found if looks_like_manifest(s["text"])]


def envsubst_names(command):
    """How the command that receives a heredoc renders it: False (no envsubst), None (plain envsubst,
    every variable) or the names of the restricted form."""
    match = re.search(r"""\benvsubst\b(?:[ \t]+(?P<q>['"])(?P<fmt>[^'"]*)(?P=q))?""", str(command))
    if not match:
        return False
    names = re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", match.group("fmt") or "")
    return names or None


_TEMPLATEFILE = re.compile(r'templatefile\(\s*"(?:\$\{path\.(?:module|root|cwd)\}/)?([^"$]+)"')


def terraform_templates(tf_texts):
    """{template path: Terraform file} of the files that Terraform renders with templatefile(): their ${name}
    are the call's variables (known at apply time), not envsubst placeholders. tf_texts: {path as shown: text}."""
    out = {}
    for where, text in tf_texts.items():
        for rel in _TEMPLATEFILE.findall(str(text)):
            out.setdefault(os.path.normpath(os.path.join(os.path.dirname(where), rel)), where)
    return out


def interpolations(text):
    """[(start, end, expression)] of the Terraform interpolations ``${...}`` of a text, nested ones and braces
    in quoted strings included (``${x != null ? "a: ${x}" : ""}`` is one); ``$${`` (the escape) is not one."""
    text, out, pos = str(text), [], 0
    while True:
        start = text.find("${", pos)
        if start < 0:
            return out
        if start > 0 and text[start - 1] == "$":
            pos = start + 2
            continue
        depth, index, quote = 0, start + 1, False
        while index < len(text):
            char = text[index]
            if char == '"' and text[index - 1] != "\\":
                quote = not quote
            elif char == "{" and not quote:
                depth += 1
            elif char == "}" and not quote:
                depth -= 1
                if depth == 0:
                    break
            elif char == "\n" and not quote and depth <= 1 and text[start:index].count("\n") > 20:
                break  # not an interpolation after all
            index += 1
        out.append((start, index + 1, text[start + 2:index]))
        pos = index + 1


def terraform_placeholders(text):
    """(text, names): every Terraform interpolation ``${expr}`` turned into a placeholder ``${TF_expr}`` (its
    value is known at apply time only), ``$${`` (Terraform's escape) left as a literal ``${``."""
    names, parts, pos = [], [], 0
    text = str(text)
    for start, end, expression in interpolations(text):
        name = "TF_" + (re.sub(r"\W+", "_", expression).strip("_") or "expr")[:60]
        if name not in names:
            names.append(name)
        parts.extend([text[pos:start], "${%s}" % name])
        pos = end
    parts.append(text[pos:])
    return "".join(parts).replace("$${", "${"), names
