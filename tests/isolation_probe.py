"""Run by tests/test_env_isolation.py in a child pytest (its name keeps it out of normal collection).

A module-scoped fixture runs before the function-scoped `_clean_env`; it opens a vault's state
database the way H0 does, so without session-wide isolation it would land in the real per-user
state folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.config import load_settings
from h0.state import StateDB


@pytest.fixture(scope="module")
def state_opened_at_module_scope(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("vault")
    settings = load_settings(vault_path=root)
    db = StateDB.for_vault(root, settings.h0_state_dir)
    db.close()
    return Path(db.directory)


def test_module_scoped_state_is_not_per_user(state_opened_at_module_scope: Path):
    assert state_opened_at_module_scope.exists()
