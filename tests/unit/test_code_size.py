# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Files under ~800 lines, functions under ~80 (the project's code style, issue 27 item 5), for the Python of
plugins/ and sim/; the file bound holds for the tests, benchmarks and tools too (fixtures and vendored repositories
aside). The functions that were longer when this test came stay listed with the length they had then:
they may shrink, not grow, and no other function may pass 80 lines."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80
# (file, function): its length when this test was added; split them when you next change them.
LONGER = {
    ("/_checks.py", "l0_checks"): 113,
    ("/simctl.py", "up"): 127,
}
SOURCES = sorted(p for top in ("plugins", "sim") for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)
# Test code: files only (a test's table of cases may be long); what the checkout's users do not run is left out.
NOT_CODE = {"__pycache__", "fixtures", "output", "repos"}
TEST_SOURCES = sorted(p for top in ("tests", "benchmarks", "tools") for p in (ROOT / top).rglob("*.py")
                      if not NOT_CODE & set(p.relative_to(ROOT).parts))


@pytest.mark.parametrize("path", SOURCES + TEST_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_file_over_800_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_FILE_LINES, "%s has %d lines (at most %d): split it by job" % (
        path.relative_to(ROOT), lines, MAX_FILE_LINES)


def test_no_function_over_80_lines():
    too_long = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                key = next((k for k in LONGER if str(path).endswith(k[0]) and k[1] == node.name), None)
                limit = LONGER[key] if key else MAX_FUNCTION_LINES
                if length > limit:
                    where = path.relative_to(ROOT)
                    too_long.append("%s: %s has %d lines (at most %d)" % (where, node.name, length, limit))
    assert not too_long, "\n".join(too_long)
