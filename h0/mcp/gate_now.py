"""The disclosure gate of this vault's private folders as they are at each call, for both MCP servers (the vault
server's ClientView, the mail server's MailView): the owner's edit of `.h0/private-folders` counts at the next
call, no restart."""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from h0.vault.disclosure import Disclosure
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
