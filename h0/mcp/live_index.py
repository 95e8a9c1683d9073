"""The vault index as a server keeps it: reconciled on a background thread when the server starts,
then kept fresh by a watcher on the vault (h0.platform.watch.TreeWatcher) and by the server's own
writes. Until it is ready a search is answered by the full scan (as complete, only slower), except
right after start, when an existing index is being checked: then a search waits for it, briefly.

`lazy` (the daemon's own server): nothing is opened, walked or watched until a tool first asks for the
index. The daemon keeps its own index (h0.drafting) and never asks its server's; a second watcher on
the vault cost that server a quarter of its CPU in a triage burst, for nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from loguru import logger

from h0.platform.watch import NATIVE, TreeWatcher
from h0.state import state_dir_for
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex

READY_WAIT_S = 5.0  # how long a search waits for an existing index's start-up check
BUILD_WAIT_S = 60.0  # how long related notes wait for a first build (10,000 notes: a few seconds)


class LiveIndex:
    def __init__(
        self,
        root: Path,
        state_dir: Path | None,
        disclosure: Disclosure | None = None,
        *,
        watcher: str = NATIVE,
        lazy: bool = False,
    ) -> None:
        self.root = root
        self.lazy = lazy
        self._started = False  # start() was called (the server is serving)
        self._start_lock = threading.Lock()
        self.state_dir = state_dir
        self.disclosure = disclosure
        self.watcher_kind = watcher
        self._index: VaultIndex | None = None
        self._watcher: TreeWatcher | None = None
        self._ready = threading.Event()
        self._existed = False
        self._thread: threading.Thread | None = None
        self._stopped = False

    def start(self) -> LiveIndex:
        self._started = True
        if not self.lazy:
            self._begin()
        return self

    def _begin(self) -> None:
        """Open, reconcile and watch, on a background thread (once)."""
        with self._start_lock:
            if self._thread is not None or self._stopped:
                return
            self._existed = (state_dir_for(self.root, self.state_dir) / "index.db").exists()
            self._thread = threading.Thread(target=self._open, name="h0-vault-index", daemon=True)
            self._thread.start()

    def _open(self) -> None:
        try:
            index = VaultIndex.open(self.root, self.state_dir, self.disclosure, reconcile=False)
            watcher: TreeWatcher | None = None
            candidate = TreeWatcher(str(self.root), index.changed, index.everything_changed, kind=self.watcher_kind)
            try:
                candidate.start()  # before the walk: nothing changed during it goes unseen
                watcher = candidate
            except OSError as exc:  # e.g. no inotify instance left: results are still checked on disk
                logger.warning("the vault index cannot watch {} ({}); it reconciles before each search", self.root, exc)
            index.reconcile()
            if self._stopped:
                if watcher is not None:
                    watcher.stop()
                return
            self._index, self._watcher = index, watcher
        except Exception:  # noqa: BLE001 - without an index the server still answers (the full scan)
            logger.exception("the vault index could not be opened; searches scan the vault")
        finally:
            self._ready.set()

    def get(self) -> VaultIndex | None:
        """The index, if ready (waiting a moment for an existing one's start-up check); None: scan instead."""
        if self._started and self._thread is None:
            self._begin()  # lazy: the first ask builds it
        if not self._ready.is_set() and self._existed:
            self._ready.wait(READY_WAIT_S)
        index = self._index
        if index is not None and self._watcher is None:
            index.everything_changed()  # no watcher: reconcile before answering
        elif index is not None and self._watcher is not None and not self._watcher.alive():
            index.everything_changed()
        return index

    def ready(self) -> VaultIndex | None:
        """The index if it is open now; never starts, waits for or reconciles it (for a reader that only borrows
        from it when it can: h0.vault.index.VaultIndex.frontmatter_read)."""
        return self._index

    def wait(self, timeout: float) -> VaultIndex | None:
        """The index once ready, waiting up to `timeout` seconds for its first build."""
        if self._started and self._thread is None:
            self._begin()
        if not self._ready.is_set():  # (a set Event's wait still takes its lock)
            self._ready.wait(timeout)
        return self.get()

    def watching(self) -> bool:
        """True while a live watcher reports the vault's changes to the index."""
        return self._watcher is not None and self._watcher.alive()

    def changed(self, paths: Iterable[str]) -> None:
        """The server wrote these notes: the next answer reflects them, whatever the watcher's timing."""
        if self._index is not None:
            self._index.changed(paths)

    def stop(self) -> None:
        self._stopped = True
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop()
