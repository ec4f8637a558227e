# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Move top-level definitions of one Python module into a new module VERBATIM (issue 27 item 5).

  split_module.py SRC DEST "docstring of DEST" NAME [NAME ...]

Each NAME's statement moves with the comment lines right above it, byte for byte. DEST gets SRC's licence
header, the docstring, SRC's imports that the moved code uses, and `from SRC import x` for the names the moved
code still needs from SRC (so a move must not make SRC need DEST: the script refuses). Unused imports left in
SRC are dropped. Callers are not touched: rewrite them with --callers (files where `SRCMOD.NAME` becomes
`DESTMOD.NAME`, with the import of DESTMOD added next to the one of SRCMOD).
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path


def top_level(src_text):
    tree = ast.parse(src_text)
    lines = src_text.splitlines(keepends=True)
    spans = []  # (names, start, end) with 0-based line indices, end exclusive
    body = tree.body
    for i, node in enumerate(body):
        names = []
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        start = (node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno) - 1
        while start > 0 and lines[start - 1].lstrip().startswith("#"):
            start -= 1
        end = node.end_lineno
        spans.append((names, start, end, node))
    return tree, lines, spans


def used_names(text):
    """The names the code reads (imports, docstrings and comments do not count)."""
    return {n.id for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Name)}


def import_text(node, keep):
    """The import statement `node` with only the names in `keep` (by bound name), or "" when none is left."""
    aliases = [a for a in node.names if (a.asname or a.name).split(".")[0] in keep]
    if not aliases:
        return ""
    parts = [a.name + (" as " + a.asname if a.asname else "") for a in aliases]
    if isinstance(node, ast.Import):
        return "".join("import %s\n" % p for p in parts)
    head = "from %s%s import " % ("." * node.level, node.module or "")
    line = head + ", ".join(parts) + "\n"
    if len(line) <= 120:
        return line
    return head + "(\n" + "".join("    %s,\n" % p for p in parts) + ")\n"


def import_lines(tree, lines):
    """[(start, end, bound names)] of top-level imports (try/except import blocks included)."""
    out = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                continue
            names = [(a.asname or a.name).split(".")[0] for a in node.names]
            out.append((node.lineno - 1, node.end_lineno, names, node))
        elif isinstance(node, ast.Try) and all(isinstance(b, (ast.Import, ast.ImportFrom)) for b in node.body):
            names = [(a.asname or a.name).split(".")[0] for b in node.body for a in b.names]
            out.append((node.lineno - 1, node.end_lineno, names, node))
    return out


def from_import(module, names):
    """The import of `names` from the module at path `module`: dotted from the collection's module_utils, plain
    in sim/ (its scripts put their own directory on sys.path)."""
    if not names:
        return ""
    pkg = "ansible_collections.rlstack.validation.plugins.module_utils"
    where = "%s.%s" % (pkg, module.stem) if "module_utils" in module.parts else module.stem
    line = "from %s import %s\n" % (where, ", ".join(names))
    if len(line) <= 120:
        return line
    return "from %s import (\n%s)\n" % (where, "".join("    %s,\n" % n for n in names))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dest")
    ap.add_argument("doc")
    ap.add_argument("names", nargs="+")
    ap.add_argument("--callers", nargs="*", default=[])
    ap.add_argument("--copy", nargs="*", default=[], help="names whose statement DEST gets a copy of and SRC keeps "
                    "(a path both compute from __file__)")
    args = ap.parse_args()
    src, dest = Path(args.src), Path(args.dest)
    text = src.read_text()
    tree, lines, spans = top_level(text)
    moving = set(args.names) | set(args.copy)
    moved, kept_idx = [], set(range(len(lines)))
    all_top = {n for s in spans for n in s[0]}
    unknown = moving - all_top
    if unknown:
        sys.exit("not top-level in %s: %s" % (src, sorted(unknown)))
    prev_end = None  # where the last moved statement ended, while the statements moved are consecutive
    for names, start, end, node in spans:
        if names and set(names) <= moving:
            gap = lines[prev_end:start] if prev_end is not None else None
            if gap is not None and all(not g.strip() for g in gap):
                moved[-1] += "".join(gap) + "".join(lines[start:end])  # neighbours stay as they were
            else:
                moved.append("".join(lines[start:end]))
            if not set(names) & set(args.copy):
                kept_idx -= set(range(start, end))
            prev_end = end
        else:
            prev_end = None
    moved_text = "\n\n".join(m.strip("\n") + "\n" for m in moved)
    # separate functions by two blank lines, as the style wants
    moved_text = re.sub(r"\n\n(?=(def |class |@))", "\n\n\n", moved_text)
    kept = [lines[i] for i in sorted(kept_idx)]
    kept_text = re.sub(r"\n{4,}", "\n\n\n", "".join(kept))
    kept_used = used_names(kept_text)
    needs_back = sorted((all_top - moving) & used_names(moved_text))
    needs_fwd = sorted((moving - set(args.copy)) & kept_used)
    if needs_back and needs_fwd:
        sys.exit("a cycle: %s would need %s from %s, which needs %s back" % (src, needs_fwd, dest, needs_back))
    # imports of the moved code
    imps = import_lines(tree, lines)
    dest_imports = []
    moved_used = used_names(moved_text)
    for start, end, names, node in imps:
        if set(names) & moved_used:
            dest_imports.append("".join(lines[start:end]) if isinstance(node, ast.Try)
                                else import_text(node, moved_used))
    header = []
    for line in lines:
        if line.startswith("#"):
            header.append(line)
        else:
            break
    srcmod, destmod = src.stem, dest.stem
    back = from_import(src, needs_back)
    out = "".join(header) + '"""%s"""\n\nfrom __future__ import annotations\n\n' % args.doc
    out += "".join(dest_imports) + back + "\n\n" + moved_text
    dest.write_text(re.sub(r"\n{4,}", "\n\n\n", out))
    # drop imports SRC no longer uses (single-line plain imports only; others are left for a human)
    final = kept_text
    for start, end, names, node in imps:
        block = "".join(lines[start:end])
        if block in final and not set(names) <= kept_used:
            if isinstance(node, ast.Try):
                if not set(names) & kept_used:
                    final = final.replace(block, "", 1)
            else:
                final = final.replace(block, import_text(node, kept_used), 1)
    if needs_fwd:  # SRC takes the moved names it still uses from DEST, after its last top-level import
        last = [n for n in ast.parse(final).body if isinstance(n, (ast.Import, ast.ImportFrom))][-1]
        flines = final.splitlines(keepends=True)
        flines.insert(last.end_lineno, from_import(dest, needs_fwd))
        final = "".join(flines)
    src.write_text(re.sub(r"\n{4,}", "\n\n\n", final).rstrip("\n") + "\n")
    for caller in args.callers:
        p = Path(caller)
        t = p.read_text()
        new = re.sub(r"\b%s\.(%s)\b" % (re.escape(srcmod), "|".join(map(re.escape, sorted(moving)))),
                     destmod + r".\1", t)
        if new != t and not re.search(r"\b%s\b" % re.escape(destmod) + r"(?!\.)", new.replace(destmod + ".", "")):
            new = re.sub(r"^(\s*)from (\S+) import %s\b(.*)$" % re.escape(srcmod),
                         lambda m: "%sfrom %s import %s%s\n%sfrom %s import %s" % (
                             m.group(1), m.group(2), srcmod, m.group(3), m.group(1), m.group(2), destmod),
                         new, count=1, flags=re.M)
        if new != t:
            p.write_text(new)
            print("rewrote", p)
    print("moved %d definitions to %s; it imports back %s; %s imports %s" % (len(moved), dest, needs_back, src, needs_fwd))


if __name__ == "__main__":
    main()
