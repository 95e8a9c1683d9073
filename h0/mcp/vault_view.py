"""What an MCP client of the vault server may see: the disclosure gate (h0.vault.disclosure) asked with the
server's live index — for threads, private people and, in listings, every note's privacy as the index
knows it — and with this vault's private folders as they are at the call (`GateNow`). The daemon's own
server, whose one client is H0 on this machine, sees everything."""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from h0.errors import PermissionDenied
from h0.vault.disclosure import Disclosure, thread_keys
from h0.vault.index import VaultIndex
from h0.vault.note import Note
from h0.vault.private_folders import DAILY_NOTES_SETTINGS, RECORD_FILE

# A file changed this recently may change again within the same tick of the file system's clock and keep its
# signature: it is not trusted, the gate is built again (as git treats a "racily clean" file).
RACY_NS = 2_000_000_000

Signature = tuple[int, int, int, int, int]


class GateNow:
    """The gate for this vault's private folders as they are now: `Disclosure.for_vault`, built again whenever
    what names them changed since — `.h0/private-folders`, and while there is none, the vault's top-level
    folders and Obsidian's daily-notes settings (the diary folders) — judged by their signatures (inode, size,
    mtime and ctime in ns), a stat each a call. A record the owner edits counts at the next call, no restart."""

    def __init__(self, root: Path, setting: str = "", *, clock: Callable[[], int] = time.time_ns) -> None:
        self.root = root
        self.setting = setting
        self.clock = clock  # the wall clock in ns, as the file system stamps files
        self._record = os.path.join(root, *RECORD_FILE)
        self._inputs = (self._record, os.fspath(root), os.path.join(root, *DAILY_NOTES_SETTINGS))
        self._lock = threading.Lock()
        self._seen: tuple[Signature | None, ...] | None = None
        self._gate = Disclosure.for_vault(root, setting)

    def __call__(self) -> Disclosure:
        seen = self._signatures()  # before reading: a change during the read is seen at the next call
        if seen is not None and seen == self._seen:
            return self._gate
        with self._lock:
            gate = Disclosure.for_vault(self.root, self.setting)
            self._seen, self._gate = seen, gate
        return gate

    def _signatures(self) -> tuple[Signature | None, ...] | None:
        """The inputs' signatures (None for one that does not exist); None when one cannot be trusted: it
        changed in the last RACY_NS, or it cannot be looked at (then the gate says why, fail closed)."""
        found: list[Signature | None] = []
        oldest = self.clock() - RACY_NS
        for path in self._inputs:
            try:
                info = os.stat(path)
            except (FileNotFoundError, NotADirectoryError):
                found.append(None)
                continue
            except OSError:
                return None
            if max(info.st_mtime_ns, info.st_ctime_ns) > oldest:
                return None
            found.append((stat.S_IFMT(info.st_mode), info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns))
            if path == self._record:
                break  # a record decides alone: the diary folders count only while there is none
        return tuple(found)


class ClientView:
    def __init__(self, gates: Callable[[], Disclosure], *, daemon_filing: bool, wait: Callable[[], VaultIndex]) -> None:
        self.daemon_filing = daemon_filing
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

    def shown(self, note: Note) -> Note:
        """The note, when an MCP client may see it; else permission_denied with the reason."""
        if self.daemon_filing:
            return note
        # One look at the private folders and the index a read: the thread first (the index is brought up to
        # date by that look-up), then the index's gate, which knows its private people, asked once.
        index = self.index()
        keys = thread_keys(note.path, note.frontmatter)
        private_keys = index.private_keys(keys, besides=note.path) if keys else frozenset()
        why = index.gate.why(note.path, note.frontmatter, private_keys, note.body)
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
        return self.index().shown(paths)
