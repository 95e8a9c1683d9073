"""The notes of one folder (not its subfolders), kept up to date cheaply: which appeared, changed or went.

Without a watcher the folder is listed whenever its mtime changes, and the notes already known are
stat'ed again at most every RESTAT_SECONDS (an edit leaves the folder's mtime alone). While a watcher
of this process reports every note of the vault (`watched()`), the folder is listed once and then only
the names reported are looked at: a folder H0 files hundreds of notes a second into (Done/, in a burst)
is never listed again note by note. A report of None (events were lost), or of a path spelled otherwise
than the listing's, lists the folder again.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from h0.vault.paths import NOTE_SUFFIX

RESTAT_SECONDS = 2.0  # how often the notes already known are stat'ed again for edits (no watcher)

# (mtime_ns, size) of a note's file
Signature = tuple[int, int]


class FolderFiles:
    """The notes of `folder`. Not thread-safe but for `changed` (the caller serialises `poll`)."""

    def __init__(self, folder: Path, watched: Callable[[], bool] = lambda: False) -> None:
        self.folder = Path(folder)
        self._spelled = os.path.abspath(self.folder)  # as the watcher reports its notes
        self.watched = watched
        self.known: dict[str, Signature] = {}
        self._lock = threading.Lock()
        self._reported: set[str] | None = None  # names reported since the last look; None: list the folder
        self._listed_watched = False  # the last listing was made while watched: the reports carry on from it
        self._mtime: int | None = None
        self._restat_at = 0.0

    def changed(self, path: str | None) -> None:
        """A watcher's report: this note (absolute path) changed, appeared or went; None: any may have."""
        with self._lock:
            if self._reported is None:
                return
            if path is None:
                self._reported = None
                return
            parent, name = os.path.split(path)
            if parent == self._spelled:
                self._reported.add(name)
            elif os.path.basename(parent).casefold() == self.folder.name.casefold():
                self._reported = None  # maybe this folder, spelled otherwise than the listing's: list it again

    def poll(self) -> tuple[dict[str, os.stat_result], list[str]]:
        """({name: its status} of the notes new or changed since the last poll, [names of those that went])."""
        watched = self.watched()
        with self._lock:
            reported = self._reported
            if reported is None or not (watched and self._listed_watched):
                self._reported = set()  # the listing below covers what was reported until now
                reported = None
            else:
                self._reported = set()
        if reported is not None:
            self._mtime = None  # should the watcher stop, the folder is listed again
            looked = {name: _lstat(self.folder / name) for name in reported if _is_note(name)}
            return self._compare(looked, gone_unless_seen=False)
        # Watched, the reports take over from this listing: every note is stat'ed (an edit made before the
        # watcher started, or whose event was lost, leaves the folder's mtime alone).
        everything = watched
        self._listed_watched = watched
        try:
            mtime = os.stat(self.folder).st_mtime_ns
        except OSError:
            self._mtime = None
            return self._compare({}, gone_unless_seen=True)
        if mtime == self._mtime and not everything:
            return {}, []
        self._mtime = mtime
        now = time.monotonic()
        restat = everything or now - self._restat_at >= RESTAT_SECONDS
        if restat:
            self._restat_at = now
        seen: dict[str, os.stat_result | None] = {}
        try:
            with os.scandir(self.folder) as it:
                for entry in it:
                    if not _is_note(entry.name):
                        continue
                    if not restat and entry.name in self.known:
                        seen[entry.name] = None  # known, and not stat'ed again this time
                        continue
                    try:
                        seen[entry.name] = entry.stat(follow_symlinks=False)
                    except OSError:
                        seen[entry.name] = None
        except OSError:
            pass
        return self._compare(seen, gone_unless_seen=True)

    def _compare(
        self, looked: dict[str, os.stat_result | None], *, gone_unless_seen: bool
    ) -> tuple[dict[str, os.stat_result], list[str]]:
        updated: dict[str, os.stat_result] = {}
        gone: list[str] = []
        for name, st in looked.items():
            if st is None:
                if not gone_unless_seen and name in self.known:  # a reported name no longer there
                    del self.known[name]
                    gone.append(name)
                continue
            signature = (st.st_mtime_ns, st.st_size)
            if self.known.get(name) != signature:
                self.known[name] = signature
                updated[name] = st
        if gone_unless_seen:
            for name in [n for n in self.known if n not in looked]:
                del self.known[name]
                gone.append(name)
        return updated, gone


def _is_note(name: str) -> bool:
    return name.endswith(NOTE_SUFFIX) and not name.startswith(".")


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None
