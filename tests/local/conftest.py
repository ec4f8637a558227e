# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures of the local mode tests (helpers in local_helpers.py). No cluster needed.

RLSTACK_LOCAL_TEST_INVENTORY points the project tests at another inventory (default inventories/sim).
"""

from __future__ import annotations

import pytest

from local_helpers import materialize_bad_set


@pytest.fixture(scope="session")
def bad_set(tmp_path_factory):
    """tests/local/bad_manifests without the .bad suffixes, in a temporary directory."""
    return materialize_bad_set(tmp_path_factory.mktemp("local") / "bad")
