# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Make ``ansible_collections.rlstack.validation`` importable from a checkout (.collections symlink)."""

from __future__ import annotations

import os
import sys

_COLLECTIONS = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".collections"))
if os.path.isdir(_COLLECTIONS) and _COLLECTIONS not in sys.path:
    sys.path.insert(0, _COLLECTIONS)
