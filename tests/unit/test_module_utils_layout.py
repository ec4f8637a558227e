# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""plugins/module_utils/ is grouped into sub-packages by domain (tools/dev/module_utils_layout.py): no module is
left at an old flat path, nothing imports or names one, and every sub-package says what it owns."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("module_utils_layout", ROOT / "tools" / "dev" / "module_utils_layout.py")
layout = importlib.util.module_from_spec(spec)
spec.loader.exec_module(layout)


def test_nothing_uses_an_old_flat_path(capsys):
    assert layout.main_check() == 0, capsys.readouterr().out


def test_every_sub_package_says_what_it_owns():
    for sub, doc in layout.SUBPACKAGES.items():
        init = ROOT / "plugins" / "module_utils" / sub / "__init__.py"
        assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) == doc.strip(), init
