"""What an MCP client of the vault server may see: the disclosure gate (h0.vault.disclosure) asked with the
server's live index — for threads, private people and, in listings, every note's privacy as the index
knows it. The daemon's own server, whose one client is H0 on this machine, sees everything."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from h0.errors import PermissionDenied
from h0.vault.disclosure import Disclosure, thread_keys
from h0.vault.index import VaultIndex
from h0.vault.note import Note


class ClientView:
    def __init__(self, gate: Disclosure, *, daemon_filing: bool, wait: Callable[[], VaultIndex]) -> None:
        self.daemon_filing = daemon_filing
        self.wait = wait  # the live index, waited for (a retryable error when it takes too long)
        # The gate, knowing the private people the live index holds (waited for: fail closed).
        self.gate = gate.with_people(lambda: self.wait().private_addresses())

    def private_keys(self, keys: frozenset[str], besides: str | None = None) -> frozenset[str]:
        """Those of these thread keys a private note holds, not counting the note at `besides` (the index
        answers; it is waited for)."""
        return self.wait().private_keys(keys, besides=besides) if keys else frozenset()

    def shown(self, note: Note) -> Note:
        """The note, when an MCP client may see it; else permission_denied with the reason."""
        if self.daemon_filing:
            return note
        # The thread first: the index is brought up to date by that look-up, and the gate is asked once.
        keys = self.private_keys(thread_keys(note.path, note.frontmatter), note.path)
        why = self.gate.why(note.path, note.frontmatter, keys, note.body)
        if why is not None:
            raise PermissionDenied(
                f"{note.path} is private: {why}. H0 never shows it to an MCP client; only its owner can share it, in "
                "Obsidian.",
                path=note.path,
                reason="private",
            )
        return note

    def listed(self, paths: Sequence[str]) -> list[str]:
        """Those of these listed notes an MCP client may see, in their order: the index's answer (a note it
        does not hold yet is read first, one it cannot read is private)."""
        if self.daemon_filing:
            return list(paths)
        return self.wait().shown(paths)
