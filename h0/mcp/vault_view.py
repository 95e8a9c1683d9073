"""What an MCP client of the vault server may see: the disclosure gate (h0.vault.disclosure) asked
with the server's live index for threads. The daemon's own server, whose one client is H0 on this
machine, sees everything."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from h0.errors import PermissionDenied
from h0.vault.disclosure import Disclosure, thread_keys
from h0.vault.index import VaultIndex
from h0.vault.note import Note


class ClientView:
    def __init__(
        self,
        gate: Disclosure,
        *,
        daemon_filing: bool,
        ready: Callable[[], VaultIndex | None],
        wait: Callable[[], VaultIndex],
    ) -> None:
        self.gate = gate
        self.daemon_filing = daemon_filing
        self.ready = ready  # the live index if it is built, else None
        self.wait = wait  # the live index, waited for (a retryable error when it takes too long)

    def private_keys(self, keys: frozenset[str], besides: str | None = None) -> frozenset[str]:
        """Those of these thread keys a private note holds, not counting the note at `besides` (the index
        answers; it is waited for)."""
        return self.wait().private_keys(keys, besides=besides) if keys else frozenset()

    def shown(self, note: Note) -> Note:
        """The note, when an MCP client may see it; else permission_denied with the reason."""
        if self.daemon_filing:
            return note
        why = self.gate.why(note.path, note.frontmatter)
        if why is None:
            keys = self.private_keys(thread_keys(note.path, note.frontmatter), note.path)
            why = self.gate.why(note.path, note.frontmatter, keys)
        if why is not None:
            raise PermissionDenied(
                f"{note.path} is private: {why}. H0 never shows it to an MCP client; only its owner can share it, in "
                "Obsidian.",
                path=note.path,
                reason="private",
            )
        return note

    def visible(self, notes: list[tuple[str, Mapping[str, Any] | None]]) -> set[str]:
        """Which of these notes an MCP client may see: their threads judged by the index when it is built,
        else by the notes given."""
        if self.daemon_filing:
            return {rel for rel, _ in notes}
        own = {rel for rel, fm in notes if fm is not None and not self.gate.own_private(rel, fm)}
        keys: frozenset[str] = frozenset()
        for rel, fm in notes:
            if rel in own and fm is not None:
                keys |= thread_keys(rel, fm)
        index = self.ready()
        found = index.private_keys(keys) if index is not None else self.gate.private_keys(notes)
        return {rel for rel, fm in notes if rel in own and not self.gate.private(rel, fm, found)}
