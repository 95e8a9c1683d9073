"""What an MCP client of the vault server may see: the disclosure gate (h0.vault.disclosure) asked with the
server's live index — for threads, private people and, in listings, every note's privacy as the index
knows it — and with this vault's private folders as they are at the call (h0.mcp.gate_now.GateNow). The daemon's own
server, whose one client is H0 on this machine, sees everything."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from h0.errors import PermissionDenied
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex
from h0.vault.index.reads import why_private
from h0.vault.note import Lent, Note
from h0.vault.store import Vault


class ClientView:
    def __init__(
        self,
        gates: Callable[[], Disclosure],
        *,
        daemon_filing: bool,
        wait: Callable[[], VaultIndex],
        lend: Lent | None = None,
    ) -> None:
        self.daemon_filing = daemon_filing
        self.lend = lend  # the daemon's own reads: the index's parse when it is open, never waited for
        self.gates = gates  # the gate of the private folders as they are now (GateNow)
        self.wait = wait  # the live index, waited for (a retryable error when it takes too long)

    def index(self) -> VaultIndex:
        """The live index (waited for: fail closed), judging by the private folders of now."""
        index = self.wait()
        index.use_disclosure(self.gates())
        return index

    def judging(self, index: VaultIndex | None) -> VaultIndex | None:
        """`index` (when there is one), judging by the private folders of now."""
        if index is not None:
            index.use_disclosure(self.gates())
        return index

    def gate(self) -> Disclosure:
        """The gate as it is now, knowing the private people the live index holds (waited for: fail closed)."""
        return self.gates().with_people(lambda: self.index().private_addresses())

    def private_keys(self, keys: frozenset[str], besides: str | None = None) -> frozenset[str]:
        """Those of these thread keys a private note holds, not counting the note at `besides` (the index
        answers; it is waited for)."""
        return self.index().private_keys(keys, besides=besides) if keys else frozenset()

    def read(self, vault: Vault, path: object) -> Note:
        """The note at `path`, read from disk, when an MCP client may see it; else permission_denied with the
        reason. The index is brought up to date once, then lends its parse of these very bytes when it holds
        them (no YAML parse) and, holding them, answers whether they are private as a listing does."""
        if self.daemon_filing:
            return vault.read_note(path, lent=self.lend)
        check = self.index().checking()
        note = vault.read_note(path, lent=check.lend)
        return _refused(note, check.why_private(note.path, note.frontmatter, note.body))

    def shown(self, note: Note) -> Note:
        """The note, when an MCP client may see it; else permission_denied with the reason."""
        if self.daemon_filing:
            return note
        index = self.index()
        index.sync()
        return _refused(note, why_private(index, note.path, note.frontmatter, note.body, as_held=False))

    def listed(self, paths: Sequence[str]) -> list[str]:
        """Those of these listed notes an MCP client may see, in their order: the index's answer (a note it
        does not hold yet is read first, one it cannot read is private)."""
        if self.daemon_filing:
            return list(paths)
        return self.index().shown(paths)


def _refused(note: Note, why: str | None) -> Note:
    """The note, when it is not private (`why` None); else permission_denied with the reason."""
    if why is not None:
        raise PermissionDenied(
            f"{note.path} is private: {why}. H0 never shows it to an MCP client; only its owner can share it, in "
            "Obsidian.",
            path=note.path,
            reason="private",
        )
    return note
