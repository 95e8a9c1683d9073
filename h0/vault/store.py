"""The vault: read, write, list, move and count notes inside one confined root.

This is the one implementation of vault operations: the vault MCP server adapts it,
and H0's handlers call it directly as the fallback when the server is unavailable.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from h0.errors import Conflict, H0Error, InvalidRequest, NotFound, PermissionDenied
from h0.platform.fileio import atomic_write, typed_os_error
from h0.platform.fs import fsync_dir, rename_noreplace
from h0.vault import frontmatter
from h0.vault.filters import AnyOf
from h0.vault.layout import NOTE_FOLDERS
from h0.vault.listing import FrontmatterCache, Lender, Listing, list_folder, walk_notes
from h0.vault.note import Lent, Note, content_hash, parse
from h0.vault.notefile import composed, read_note_bytes
from h0.vault.paths import NOTE_SUFFIX, PathResolver, VaultPath
from h0.vault.search import SearchHit, check_query, search_files

_pending = threading.local()


def _merged(frontmatter: Mapping[str, Any], changes: Mapping[str, Any], remove: Sequence[str] = ()) -> dict[str, Any]:
    """A frontmatter update: `frontmatter` without the keys in `remove`, then `changes` set over it."""
    result = {k: v for k, v in frontmatter.items() if k not in remove}
    result.update(changes)
    return result  # folders whose fsync `Vault.batch` defers to its end


@dataclass(slots=True)
class Moved:
    source: str
    destination: str
    moved_hash: str | None = None  # the note's content hash as it was moved
    hash: str | None = None  # after `set_frontmatter` was applied
    warning: str | None = None  # set when the move happened but the frontmatter could not be updated


class Vault:
    """One vault root. Thread-safe; every path goes through PathResolver first.

    Every failure is a typed `H0Error`: an OSError (a full disk, a read-only vault, a
    name too long) becomes one through `typed_os_error`, never escapes as itself.
    Existence checks use `os.path` (False on any OSError) rather than `Path.exists`,
    which raises on EACCES or ENAMETOOLONG.
    """

    def __init__(self, root: Path) -> None:
        self.paths = PathResolver(Path(root))
        self.root = self.paths.root
        self._frontmatter = FrontmatterCache()
        self._write_locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    # ------------------------------------------------------------------ durability

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Inside, each write and move is made durable as always (the file fsynced before its
        rename), but each folder's entry list is fsynced once, when the block ends — before the
        caller answers anyone — instead of once per note: a batch of 200 notes into two folders
        costs two folder fsyncs, not 400. Per thread; nested blocks join the outer one."""
        if getattr(_pending, "dirs", None) is not None:
            yield
            return
        _pending.dirs = set()
        try:
            yield
        finally:
            dirs, _pending.dirs = _pending.dirs, None
            for directory in sorted(dirs):
                fsync_dir(Path(directory))

    @staticmethod
    def _sync_dir(directory: Path) -> None:
        dirs = getattr(_pending, "dirs", None)
        if dirs is None:
            fsync_dir(directory)
        else:
            dirs.add(str(directory))

    # ------------------------------------------------------------------ resolve

    def resolve(self, path: object, *, write: bool = False) -> VaultPath:
        return self.paths.resolve(path, write=write, note=True)

    def exists(self, path: str) -> bool:
        try:
            return os.path.isfile(self.resolve(path).abs)
        except (InvalidRequest, PermissionDenied):
            return False

    # ------------------------------------------------------------------ read

    def read_note(self, path: object, *, lent: Lent | None = None) -> Note:
        """The note at `path`, read carefully (h0.vault.notefile) and parsed (`lent`: h0.vault.note.parse)."""
        target = self.resolve(path)
        data, mtime_ns = self._read_bytes(target)
        return parse(data, target.rel, mtime_ns, lent=lent)

    @staticmethod
    def _read_bytes(target: VaultPath) -> tuple[bytes, int]:
        return read_note_bytes(target)

    # ------------------------------------------------------------------ write

    def write_note(
        self,
        path: object,
        frontmatter_data: Mapping[str, Any],
        body: str,
        *,
        if_match: str | None = None,
        create_only: bool = False,
        read: bytes | None = None,
    ) -> Note:
        """Write a note atomically, keeping untouched frontmatter keys byte for byte.

        `if_match` is the hash a previous read returned: if the note changed since (or
        vanished), nothing is written and Conflict is raised. `read` may be the bytes of that
        read: the new bytes are composed over them instead of reading the note again, and the
        check right before the rename still catches a change. `create_only` refuses to
        replace an existing note.
        """
        target = self.resolve(path, write=True)
        if not isinstance(body, str):
            raise InvalidRequest("body must be a string.", path=target.rel)
        if "\x00" in body:
            raise InvalidRequest("The body contains a NUL byte.", path=target.rel)
        if not isinstance(frontmatter_data, Mapping):
            raise InvalidRequest("frontmatter must be a mapping of keys to values.", path=target.rel)
        with self._lock_for(target.rel):
            old_bytes: bytes | None = None
            if read is not None and if_match is not None and content_hash(read) == if_match:
                old_bytes = read  # the caller's read; `_write_over` checks the file still holds it
            elif os.path.exists(target.abs):
                if create_only:
                    raise Conflict(f"A note already exists at {target.rel}.", path=target.rel)
                old_bytes, _ = self._read_bytes(target)
            return parse(self._write_over(target, old_bytes, frontmatter_data, body, if_match), target.rel)

    def _write_over(
        self,
        target: VaultPath,
        old_bytes: bytes | None,
        frontmatter_data: Mapping[str, Any],
        body: str,
        if_match: str | None,
    ) -> bytes:
        """Write the note over `old_bytes` (None: there is no note yet), read under the path's lock:
        untouched frontmatter kept byte for byte, `if_match` checked against them and again right
        before the rename. Returns the bytes written: a caller that answers with the note parses
        them (what a reader will read), one that needs only their hash does not."""
        data = composed(target, old_bytes, frontmatter_data, body, if_match)
        self._ensure_folder(target)
        if if_match is not None:
            # Re-check right before the rename: the window left is microseconds.
            now = self._current_hash(target)
            if now != if_match:
                raise Conflict(f"{target.rel} changed while it was being written.", path=target.rel)
        try:
            atomic_write(target.abs, data, sync_dir=False)
            self._sync_dir(target.abs.parent)
        except OSError as exc:
            raise typed_os_error(exc, f"write {target.rel}", target.rel) from exc
        return data

    def update_frontmatter(
        self,
        path: object,
        changes: Mapping[str, Any],
        *,
        remove: tuple[str, ...] = (),
        if_match: str | None = None,
    ) -> Note:
        """Merge `changes` into a note's frontmatter (keys in `remove` dropped); body untouched. The note is
        read once, under the path's lock, and written over what was read."""
        target = self.resolve(path, write=True)
        return parse(self._update(target, changes, remove, if_match)[1], target.rel)

    def _update(
        self, target: VaultPath, changes: Mapping[str, Any], remove: tuple[str, ...], if_match: str | None = None
    ) -> tuple[str, bytes]:
        """update_frontmatter on a resolved path: (the hash of the note as it was read, the bytes written)."""
        with self._lock_for(target.rel):
            data, mtime_ns = self._read_bytes(target)
            note = parse(data, target.rel, mtime_ns)
            if if_match is not None and note.hash != if_match:
                raise Conflict(f"{note.path} changed since it was read.", path=note.path)
            if "\x00" in note.body:
                raise InvalidRequest("The body contains a NUL byte.", path=target.rel)
            return note.hash, self._write_over(
                target, data, _merged(note.frontmatter, changes, remove), note.body, note.hash
            )

    def _current_hash(self, target: VaultPath) -> str | None:
        try:
            data, _ = self._read_bytes(target)
        except NotFound:
            return None
        return content_hash(data)

    def _ensure_folder(self, target: VaultPath) -> None:
        folder = target.abs.parent
        if os.path.isdir(folder):
            return
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise InvalidRequest(f"{target.rel}: a parent is a file, not a folder.", path=target.rel) from None
        except OSError as exc:
            raise typed_os_error(exc, f"create the folder for {target.rel}", target.rel) from exc

    def _lock_for(self, rel: str) -> threading.Lock:
        with self._locks_guard:
            lock = self._write_locks.get(rel)
            if lock is None:
                if len(self._write_locks) > 10_000:
                    self._write_locks = {k: v for k, v in self._write_locks.items() if v.locked()}
                lock = self._write_locks[rel] = threading.Lock()
            return lock

    # ------------------------------------------------------------------ move

    def move_note(
        self,
        source: object,
        destination: object,
        *,
        overwrite: bool = False,
        rename_if_exists: bool = False,
        set_frontmatter: Mapping[str, Any] | None = None,
    ) -> Moved:
        """Rename a note atomically; the destination may be a folder (ending in '/').

        An existing destination is a Conflict, unless `overwrite` (replace it) or
        `rename_if_exists` (use 'name (2).md', 'name (3).md', …). `set_frontmatter` merges
        keys into the moved note's frontmatter right after the move (filing a note in one
        call); it is checked before anything moves.
        """
        src = self.resolve(source, write=True)
        if not os.path.isfile(src.abs):
            raise NotFound(f"No note at {src.rel}.", path=src.rel)
        if set_frontmatter:
            frontmatter.check_representable(set_frontmatter)
        dst = self.destination_for(destination, src)
        if dst.abs == src.abs:
            return Moved(src.rel, dst.rel)
        self._ensure_folder(dst)
        # Numbered alternatives are resolved only when a name is taken (each resolve costs a realpath).
        numbered = (self._numbered(dst, n) for n in range(2, 1000)) if rename_if_exists else iter(())
        for target in itertools.chain([dst], numbered):
            try:
                if overwrite:
                    os.replace(src.abs, target.abs)
                else:
                    rename_noreplace(src.abs, target.abs)
            except FileExistsError:
                continue
            except FileNotFoundError:
                raise NotFound(f"{src.rel} vanished before it could be moved.", path=src.rel) from None
            except IsADirectoryError:
                raise InvalidRequest(f"{target.rel} is a folder.", path=target.rel) from None
            except OSError as exc:
                error = typed_os_error(exc, f"move {src.rel} to {target.rel}", src.rel)
                error.details.setdefault("destination", target.rel)
                raise error from exc
            dst = target
            break
        else:
            raise Conflict(
                f"A note already exists at {dst.rel}; pass overwrite to replace it.", path=dst.rel, source=src.rel
            )
        self._sync_dir(dst.abs.parent)
        if dst.abs.parent != src.abs.parent:
            self._sync_dir(src.abs.parent)
        moved = Moved(src.rel, dst.rel)
        if set_frontmatter:
            # One read serves both hashes: the note as it arrived (`moved_hash`) and as it was written.
            try:
                moved.moved_hash, written = self._update(dst, set_frontmatter, ())
                moved.hash = content_hash(written)  # only the hash is answered: the bytes need no parse
            except NotFound:
                raise
            except H0Error as exc:  # e.g. parse_error, conflict, the disk filled up: the move stands
                moved.warning = f"moved, but the frontmatter was not updated: {exc.message}"
                moved.moved_hash = self._current_hash(dst)
        return moved

    def _numbered(self, target: VaultPath, n: int) -> VaultPath:
        stem = target.rel[: -len(NOTE_SUFFIX)]
        return self.paths.resolve(f"{stem} ({n}){NOTE_SUFFIX}", write=True, note=True)

    def destination_for(self, destination: object, src: VaultPath) -> VaultPath:
        if not isinstance(destination, str):
            raise InvalidRequest("destination must be a string.")
        as_folder = destination.endswith("/")
        if not as_folder:
            folder = self.paths.resolve(destination, write=True, allow_root=True)
            as_folder = os.path.isdir(folder.abs) or not folder.rel.lower().endswith(NOTE_SUFFIX)
            if not as_folder:
                return self.paths.resolve(destination, write=True, note=True)
        folder = self.paths.resolve(destination, write=True, allow_root=True)
        joined = f"{folder.rel}/{src.abs.name}" if folder.rel else src.abs.name
        return self.paths.resolve(joined, write=True, note=True)

    # ------------------------------------------------------------------ list

    def lend_parses(self, parses: Iterable[tuple[str, int, int, int, str]]) -> None:
        """Frontmatter parsed elsewhere (the vault index's rows: path, mtime_ns, size, inode, JSON), for the
        listings to take where a file is still as it was read (h0.vault.listing.FrontmatterCache.lend)."""
        self._frontmatter.lend(parses)

    def lend_parses_from(self, lender: Lender | None) -> None:
        """Ask `lender` (path -> the signature and frontmatter JSON another reader parsed) whenever a listing
        lacks a note's parse (h0.vault.listing.FrontmatterCache.lend_from)."""
        self._frontmatter.lend_from(lender)

    def list_notes(
        self,
        directory: object = "",
        filter: str | Sequence[str] | None = None,
        *,
        recursive: bool = False,
        limit: int | None = None,
        with_frontmatter: bool = False,
        mentioning: tuple[str, ...] = (),
    ) -> Listing:
        """List `.md` notes of a folder (sorted by path), optionally filtered on frontmatter.

        `filter` is one 'field:value' or a list of them, any of which a note must match (the
        notes of 200 threads in one walk of the vault instead of 200 walks).
        Frontmatter is read from the head of each file only and cached by
        (mtime_ns, size), so a warm filtered listing of 10,000 notes costs one stat each.
        Notes whose frontmatter cannot be read are reported in `skipped`, not hidden. `mentioning`: only
        notes whose frontmatter's text holds one of these words (key names), told from the bytes before
        any parse — what a report looking for a few keys among thousands of notes needs.
        """
        folder = self.paths.resolve(directory, allow_root=True)
        if not os.path.exists(folder.abs):
            raise NotFound(f"No folder at {folder.rel or '/'}.", path=folder.rel)
        if not os.path.isdir(folder.abs):
            raise InvalidRequest(f"{folder.rel} is a note, not a folder.", path=folder.rel)
        flt = AnyOf.parse(filter)
        if limit is not None and limit < 1:
            raise InvalidRequest("limit must be at least 1.", limit=limit)
        return list_folder(
            folder,
            flt,
            self._frontmatter,
            recursive=recursive,
            limit=limit,
            with_frontmatter=with_frontmatter,
            mentioning=tuple(word.encode("utf-8") for word in mentioning),
        )

    # ------------------------------------------------------------------ search

    def search_notes(self, query: str, *, directory: object = "", limit: int = 50) -> tuple[list[SearchHit], bool]:
        """Literal, case-insensitive search of bodies and frontmatter values."""
        check_query(query)
        if limit < 1:
            raise InvalidRequest("limit must be at least 1.", limit=limit)
        folder = self.paths.resolve(directory, allow_root=True)
        if not os.path.isdir(folder.abs):
            if os.path.exists(folder.abs):
                raise InvalidRequest(f"{folder.rel} is a note, not a folder.", path=folder.rel)
            raise NotFound(f"No folder at {folder.rel or '/'}.", path=folder.rel)
        files = ((rel, abs_path) for rel, abs_path, _ in walk_notes(folder, True, stat=False))
        return search_files(files, query, limit)

    # ------------------------------------------------------------------ counts

    def counts(self) -> dict[str, int]:
        """Number of notes directly inside each H0 folder (missing folders count 0)."""
        result: dict[str, int] = {}
        for name in NOTE_FOLDERS:
            folder = self.root / name
            try:
                with os.scandir(folder) as it:
                    result[name] = sum(
                        1 for e in it if e.name.endswith(NOTE_SUFFIX) and not e.name.startswith(".") and e.is_file()
                    )
            except OSError:
                result[name] = 0
        return result
