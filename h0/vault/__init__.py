"""The vault domain: notes, frontmatter, confinement, atomic writes, listing, search, audit.

No MCP and no watchdog here; everything above builds on this package.
"""

from h0.vault.audit import AuditLog
from h0.vault.filters import Filter
from h0.vault.layout import FOLDERS, init_vault
from h0.vault.listing import Listed, Listing
from h0.vault.note import Note
from h0.vault.store import Moved, Vault

__all__ = ["FOLDERS", "AuditLog", "Filter", "Listed", "Listing", "Moved", "Note", "Vault", "init_vault"]
