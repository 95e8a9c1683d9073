"""H0's own durable bookkeeping, outside the notes: one SQLite database per vault (h0.state.db)
holding the send ledger, idempotency keys, cap counters, attachment hashes, note writes and the
mail sync cursors, and the per-installation secret they derive from."""

from __future__ import annotations

from h0.state.connection import DB_FILE
from h0.state.db import StateDB, default_state_root, state_dir_for
from h0.state.ledger import Cap, Claim

__all__ = ["DB_FILE", "Cap", "Claim", "StateDB", "default_state_root", "state_dir_for"]
