"""Leave H0's state database as a crash or another process would: through a connection of the test's own.

Tests that simulate a process dying mid-send change a row of the send ledger; they do it on the
database file, as the dead process left it, never through the object under test's private connection.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any


def crash_edit(database: Path, sql: str, params: tuple[Any, ...] = ()) -> int:
    """Run one statement on the state database file; the number of rows it changed."""
    with closing(sqlite3.connect(database, timeout=10, isolation_level=None)) as db:
        return db.execute(sql, params).rowcount


def crash_rows(database: Path, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
    """Read rows of the state database file as another process sees them."""
    with closing(sqlite3.connect(database, timeout=10, isolation_level=None)) as db:
        db.row_factory = sqlite3.Row
        return db.execute(sql, params).fetchall()
