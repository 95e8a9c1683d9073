"""Which thread keys the vault's private notes hold: what a message that is not a note needs to be judged.

A provider's message, a message kept as history, the owner's sent mail and a thread's context are not
notes, so the disclosure gate (h0.vault.disclosure) judges them by their thread keys alone: private when a
key of theirs is held by a note private by itself — marked private, tagged, or in a private folder —
anywhere in the vault (`Disclosure.thread_private`). This module finds those keys, two ways with one answer:

- `IndexThreads`: the vault index (h0.vault.index): a look-up in the private notes' keys it keeps, never a walk;
- `ScannedThreads`: a walk of the vault's notes (their frontmatter cached by file signature), for a process
  without an index.

Either answers None when it cannot tell (the index is damaged, the vault cannot be listed): the gate then
keeps the message private.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from loguru import logger

from h0.errors import H0Error
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex
from h0.vault.index.db import Damaged
from h0.vault.index.gather import indexable
from h0.vault.store import Vault


class PrivateThreads(Protocol):
    def private_keys(self, keys: Iterable[str]) -> frozenset[str] | None:
        """Those of `keys` a note private by itself holds; None when that cannot be told (then: private)."""
        ...


class IndexThreads:
    """The vault index's answer. Its freshness is the index's: a watcher's, or its owner's `freshen`."""

    def __init__(self, index: VaultIndex) -> None:
        self.index = index

    def private_keys(self, keys: Iterable[str]) -> frozenset[str] | None:
        try:
            return self.index.private_keys(keys)
        except (H0Error, Damaged, sqlite3.Error) as exc:
            logger.warning("the vault index cannot say which threads are private ({}): kept private", exc)
            return None


class ScannedThreads:
    """The vault's notes as they are now, walked on each question (for a process without an index): the notes
    the index would hold (`indexable`: not Logs/, no hidden folder), so both ways count the same notes."""

    def __init__(self, root: Path, gate: Disclosure) -> None:
        self.vault = Vault(root)  # its frontmatter cache makes a second walk one stat a note
        self.gate = gate

    def private_keys(self, keys: Iterable[str]) -> frozenset[str] | None:
        wanted = frozenset(keys)
        if not wanted:
            return frozenset()
        try:
            listing = self.vault.list_notes("", recursive=True, with_frontmatter=True)
        except H0Error as error:
            logger.warning("the vault cannot be listed ({}): its threads are kept private", error.message)
            return None
        return self.gate.private_keys((n.path, n.frontmatter) for n in listing.notes if indexable(n.path)) & wanted
