"""The vault's watcher on Linux: inotify read and dispatched by one thread, at a fraction of watchdog's cost.

Watchdog's own inotify observer hands every kernel event through a reader thread, a move-pairing
queue that holds each "moved from" up to half a second, an emitter thread and a dispatcher thread.
In a triage burst the daemon's watcher sees ~7 events a note, most of them the temp files of atomic
writes (H0's own, `h0.platform.fileio.atomic_write`), and those hand-offs were ~17 % of the daemon's
CPU. This observer reads the kernel's queue itself (`inotify(7)` through libc), pairs a move's two
halves by their cookie as they arrive (the kernel queues them next to each other), drops the
creates, writes and closes of temp files (no watcher acts on them; their rename into place is
reported as a move from the temp name, as before), and calls the handler with watchdog's own event
types, from its one thread: the handlers see what they saw before, in the same order.

Recursive: every folder below the root is watched (never through a symlink); a folder created or
moved in is watched at once and what it already holds is reported as created. A lost event (the
kernel's queue overflowing, a watch that could not be added) is a warning on this module's logger,
which the watchers listen to: they reconcile everything (the sweep).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import select
import struct
import threading

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)

from h0.platform.fileio import is_temp_name

logger = logging.getLogger(__name__)  # a warning here: events were lost (the watchers reconcile)

IN_MODIFY = 0x2
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONTFOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
WATCH_FLAGS = IN_ONLYDIR | IN_DONTFOLLOW | IN_EXCL_UNLINK
# Events never dropped for a temp file's name: a move (its rename into place), a folder's, the queue's own.
KEPT = IN_MOVED_FROM | IN_MOVED_TO | IN_ISDIR | IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF
STRUCTURE = IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
HEADER = struct.Struct("iIII")  # wd, mask, cookie, length of the name that follows
READ_SIZE = 1 << 16

_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        lib.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        _libc = lib
    return _libc


def available() -> bool:
    """Whether this process can read inotify itself (Linux with libc's inotify calls)."""
    try:
        fd = _lib().inotify_init1(os.O_CLOEXEC)
    except (OSError, AttributeError):
        return False
    if fd < 0:
        return False
    os.close(fd)
    return True


def _mask_for(event_filter: frozenset[type[FileSystemEvent]] | None) -> int:
    """The kernel events asked for: the folder structure always (moves, creates, deletes keep the
    watches right), writes and closes only when a handler wants them."""
    mask = STRUCTURE
    if event_filter is None or FileModifiedEvent in event_filter:
        mask |= IN_MODIFY
    if event_filter is None or FileClosedEvent in event_filter:
        mask |= IN_CLOSE_WRITE
    return mask


class InotifyObserver(threading.Thread):
    """One recursive watch on a folder, read and dispatched by this thread (see the module docstring).
    Used as watchdog's observers are: `schedule`, `start`, `stop`, `join`, `is_alive`."""

    def __init__(self, timeout: float = 1.0) -> None:
        super().__init__(name="h0-inotify", daemon=True)
        self.timeout = timeout  # how long a wait for events lasts before it looks whether to stop
        self._stopping = threading.Event()
        self._handler: FileSystemEventHandler | None = None
        self._wanted: tuple[type[FileSystemEvent], ...] | None = None
        self._mask = _mask_for(None)
        self._root = ""
        self._fd = -1
        self._wake_r, self._wake_w = -1, -1
        self._lock = threading.Lock()  # the wake-up's write never meets its pipe being closed
        self._folders: dict[int, str] = {}  # watch descriptor → the folder it watches
        self._wds: dict[str, int] = {}
        self._moved_from: tuple[int, str, bool] | None = None  # (cookie, path, is a folder) awaiting its pair
        self._poll: select.poll | None = None

    def schedule(
        self,
        handler: FileSystemEventHandler,
        path: str,
        *,
        recursive: bool = True,
        event_filter: list[type[FileSystemEvent]] | None = None,
    ) -> None:
        """Watch `path` and everything below it for `handler` (the events of `event_filter`'s types)."""
        if self._handler is not None or not recursive:
            raise ValueError("this observer keeps one recursive watch")
        self._handler = handler
        self._wanted = tuple(event_filter) if event_filter is not None else None
        self._mask = _mask_for(frozenset(event_filter) if event_filter is not None else None)
        self._root = os.path.abspath(os.fsdecode(path))

    def start(self) -> None:
        """Watch every folder now (a change made once this returns is seen), then read on the thread."""
        if self._handler is None:
            raise RuntimeError("schedule a handler before starting")
        self._open()
        super().start()

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            if self._wake_w >= 0:
                with contextlib.suppress(OSError):
                    os.write(self._wake_w, b"x")  # ends the read's wait at once

    def run(self) -> None:
        try:
            while not self._stopping.is_set():
                self._read(self.timeout)
        finally:
            self._close()

    def _emit(self, event: FileSystemEvent) -> None:
        if self._handler is not None and (self._wanted is None or isinstance(event, self._wanted)):
            self._handler.dispatch(event)

    def _open(self) -> None:
        fd = _lib().inotify_init1(os.O_CLOEXEC | os.O_NONBLOCK)
        if fd < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        self._fd = fd
        self._wake_r, self._wake_w = os.pipe()
        self._poll = select.poll()  # not select(): a busy process's descriptors may be numbered past 1024
        self._poll.register(self._fd, select.POLLIN)
        self._poll.register(self._wake_r, select.POLLIN)
        self._watch_tree(self._root)

    def _read(self, timeout: float) -> None:
        if self._fd < 0 or self._poll is None:
            return
        try:
            ready = {fd for fd, _ in self._poll.poll(timeout * 1000)}
        except OSError:
            return
        if self._wake_r in ready or self._stopping.is_set():
            return
        if not ready:
            self._unpaired()
            return
        try:
            data = os.read(self._fd, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            logger.warning("inotify read failed: events may be lost")
            return
        self._handle(data)
        if self._moved_from is not None:
            # A "moved from" whose pair did not come in this read: its pair comes next if at all.
            try:
                more = self._poll.poll(10)
            except OSError:
                more = []
            if not any(fd == self._fd for fd, _ in more):
                self._unpaired()

    def _handle(self, data: bytes) -> None:
        offset, size = 0, len(data)
        unpack = HEADER.unpack_from
        while offset + HEADER.size <= size:
            wd, mask, cookie, length = unpack(data, offset)
            start = offset + HEADER.size
            name = data[start : start + length].rstrip(b"\0")
            offset = start + length
            if not mask & KEPT and is_temp_name(name):
                continue  # a temp file's create, write, close or delete (see `_one`), told apart before decoding
            self._one(wd, mask, cookie, os.fsdecode(name))

    def _one(self, wd: int, mask: int, cookie: int, name: str) -> None:
        if mask & IN_Q_OVERFLOW:
            logger.warning("inotify queue overflowed: events were lost")
            return
        folder = self._folders.get(wd)
        if mask & IN_IGNORED:
            if folder is not None:
                self._forget(wd)
            return
        if folder is None:
            return
        is_dir = bool(mask & IN_ISDIR)
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
            if folder == self._root:
                self._emit(DirDeletedEvent(folder))
            return
        path = os.path.join(folder, name) if name else folder
        if self._moved_from is not None and not (mask & IN_MOVED_TO and cookie == self._moved_from[0]):
            self._unpaired()
        if mask & IN_MOVED_FROM:
            self._moved_from = (cookie, path, is_dir)
        elif mask & IN_MOVED_TO:
            source = ""
            if self._moved_from is not None:
                source, self._moved_from = self._moved_from[1], None
            if is_dir:
                self._moved_folder(source, path)
            else:
                self._emit(FileMovedEvent(source, path))
        elif is_dir:
            if mask & IN_CREATE:
                self._watch_tree(path, report=DirCreatedEvent(path))
            elif mask & IN_DELETE:
                self._emit(DirDeletedEvent(path))
        elif is_temp_name(name):
            return  # a temp file's create, write, close or delete: nothing watches those (its rename is a move)
        elif mask & IN_CLOSE_WRITE:
            self._emit(FileClosedEvent(path))
        elif mask & IN_MODIFY:
            self._emit(FileModifiedEvent(path))
        elif mask & IN_CREATE:
            self._emit(FileCreatedEvent(path))
        elif mask & IN_DELETE:
            self._emit(FileDeletedEvent(path))

    def _unpaired(self) -> None:
        """A "moved from" with no "moved to": the file or folder left the watched tree."""
        if self._moved_from is None:
            return
        _, path, is_dir = self._moved_from
        self._moved_from = None
        if is_dir:
            for wd in [wd for folder, wd in self._wds.items() if _within(folder, path)]:
                self._unwatch(wd)
            self._emit(DirDeletedEvent(path))
        else:
            self._emit(FileDeletedEvent(path))

    def _moved_folder(self, source: str, path: str) -> None:
        """A folder renamed within the tree keeps its watches (renamed with it); one from outside is
        watched now and its files reported as created."""
        if source and source in self._wds:
            for folder, wd in list(self._wds.items()):
                if _within(folder, source):
                    moved = path + folder[len(source) :]
                    del self._wds[folder]
                    self._wds[moved] = wd
                    self._folders[wd] = moved
            self._emit(DirMovedEvent(source, path))
            return
        self._watch_tree(path, report=DirMovedEvent(source, path))

    def _watch_tree(self, top: str, *, report: FileSystemEvent | None = None) -> None:
        """Watch `top` and every folder below it (no symlinks followed). `report`: the event that made
        it appear, queued with what the folders hold only once all of them are watched — whoever
        sees that event and then writes into the folder is seen."""
        found: list[FileSystemEvent] = [report] if report is not None else []

        def failed(error: OSError) -> None:
            if error.errno not in (errno.ENOENT, errno.ENOTDIR):
                logger.warning("could not list %s: %s", error.filename, error.strerror)

        for folder, dirs, files in os.walk(top, onerror=failed):
            if not self._add(folder):
                dirs[:] = []
                continue
            if report is not None:
                found += [DirCreatedEvent(os.path.join(folder, name)) for name in dirs]
                found += [FileCreatedEvent(os.path.join(folder, name)) for name in files if not is_temp_name(name)]
        for event in found:
            self._emit(event)

    def _add(self, folder: str) -> bool:
        flags = self._mask | WATCH_FLAGS
        if folder == self._root:
            flags &= ~IN_DONTFOLLOW  # the vault's own path may be a symlink; nothing below it is followed
        wd = _lib().inotify_add_watch(self._fd, os.fsencode(folder), flags)
        if wd < 0:
            code = ctypes.get_errno()
            if code not in (errno.ENOENT, errno.ENOTDIR):  # gone already, or a symlink: not a loss
                logger.warning("cannot watch %s: %s", folder, os.strerror(code))
            return False
        old = self._folders.get(wd)
        if old is not None and old != folder:
            self._wds.pop(old, None)
        self._folders[wd] = folder
        self._wds[folder] = wd
        return True

    def _unwatch(self, wd: int) -> None:
        with contextlib.suppress(OSError):
            _lib().inotify_rm_watch(self._fd, wd)
        self._forget(wd)

    def _forget(self, wd: int) -> None:
        folder = self._folders.pop(wd, None)
        if folder is not None and self._wds.get(folder) == wd:
            del self._wds[folder]

    def _close(self) -> None:
        with self._lock:
            for fd in (self._fd, self._wake_r, self._wake_w):
                if fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(fd)
            self._fd = self._wake_r = self._wake_w = -1
            self._poll = None
        self._folders.clear()
        self._wds.clear()


def _within(folder: str, top: str) -> bool:
    return folder == top or folder.startswith(top + os.sep)
