"""Listing notes: a folder's notes walked in path order, filtered on frontmatter read from the head
of each file only and cached by (mtime_ns, size), so a warm filtered listing of 10,000 notes costs
one stat each. A cold cache may be lent the vault index's parses (`FrontmatterCache.lend`), taken for
a file whose signature is the one the index read."""

from __future__ import annotations

import json
import marshal
import os
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from h0.errors import InvalidRequest, ParseError
from h0.platform.fileio import typed_os_error
from h0.platform.fs import regular_file
from h0.vault import frontmatter
from h0.vault.filters import AnyOf
from h0.vault.note import MAX_NOTE_BYTES, decode
from h0.vault.paths import NOTE_SUFFIX, VaultPath

FRONTMATTER_PROBE = 16 * 1024
_SIGNATURE = struct.Struct("<qq")  # (mtime_ns, size): a cached parse is valid while both are the same
CACHE_LIMIT = 200_000
# Another reader's parse of one note (the vault index's): (mtime_ns, size, inode, frontmatter JSON) as it read
# the file, or None. Taken only while the file still has that signature.
Lender = Callable[[str], tuple[int, int, int, str] | None]
MAX_FOLDER_DEPTH = 128  # folders below a listed one; deeper notes are not listed (nor indexed, nor searched)


@dataclass(slots=True)
class Listed:
    path: str
    frontmatter: dict[str, Any] | None = None


@dataclass(slots=True)
class Listing:
    notes: list[Listed]
    total: int
    truncated: bool
    skipped: list[dict[str, str]] = field(default_factory=list)


def walk_order(rel: str) -> tuple[tuple[int, str], ...]:
    """The order `walk_notes` yields paths in: in each folder its notes by name, then its
    sub-folders by name (so 'A/z.md' comes before 'A/B/a.md')."""
    parts = rel.split("/")
    return (*((1, part) for part in parts[:-1]), (0, parts[-1]))


def list_folder(
    folder: VaultPath,
    flt: AnyOf | None,
    cache: FrontmatterCache,
    *,
    recursive: bool,
    limit: int | None,
    with_frontmatter: bool,
    mentioning: tuple[bytes, ...] = (),
) -> Listing:
    """The notes of an existing folder, sorted by path, those matching `flt` if there is one
    (`Vault.list_notes` checks the arguments); with `mentioning`, only notes whose frontmatter's text
    holds one of these words (a look at the bytes, before any parse)."""
    need_fm = flt is not None or with_frontmatter
    needle = flt.needle() if flt is not None and not with_frontmatter else None
    if not need_fm:
        notes = [Listed(rel) for rel, _, _ in walk_notes(folder, recursive, stat=False)]
        shown = notes if limit is None else notes[:limit]
        return Listing(shown, len(notes), len(shown) < len(notes))
    # Filtered: walk in directory order and sort only what matched (sorting every entry of
    # a 10,000-note vault to keep a handful was a tenth of a thread look-up).
    matched: list[Listed] = []
    skipped: list[dict[str, str]] = []
    for rel, abs_path, st in walk_notes(folder, recursive, stat=True, ordered=False):
        assert st is not None  # walked with stat=True
        if mentioning and not cache.mentions(abs_path, rel, st, mentioning):
            continue
        cached = cache.get(abs_path, rel, st)
        if isinstance(cached, ParseError):
            skipped.append({"path": rel, "error": cached.code, "message": cached.message})
            continue
        if needle is not None and needle.search(cached) is None:
            continue
        data = marshal.loads(cached)
        if flt is not None and not flt.matches(data):
            continue
        matched.append(Listed(rel, data if with_frontmatter else None))
    matched.sort(key=lambda item: walk_order(item.path))
    skipped.sort(key=lambda item: walk_order(item["path"]))
    shown = matched if limit is None else matched[:limit]
    return Listing(shown, len(matched), len(shown) < len(matched), skipped)


def walk_notes(
    folder: VaultPath,
    recursive: bool,
    *,
    stat: bool = True,
    ordered: bool = True,
    skip_top: frozenset[str] = frozenset(),
) -> Iterator[tuple[str, str, os.stat_result | None]]:
    """Yield (rel, absolute path as str, stat or None) for each note: a folder's notes sorted by
    name, then its sub-folders' (`ordered=False`: in the order the OS lists them).

    Iterative, and at most MAX_FOLDER_DEPTH folders deep: a 1,000-deep tree answers (its
    deepest notes unlisted) instead of exhausting Python's recursion. Only regular files are
    yielded (a FIFO, socket or device named *.md never is), and no symlink is followed.
    Plain strings, not Path objects: building a Path per note was a fifth of a warm
    filtered listing. `stat=False` skips the per-note stat (DirEntry's d_type is enough). `skip_top`:
    casefolded names of `folder`'s own sub-folders not entered (the vault index leaves out Logs/).
    """
    stack: list[tuple[str, str, int]] = [(f"{folder.rel}/" if folder.rel else "", str(folder.abs), 0)]
    while stack:
        prefix, directory, depth = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name) if ordered else list(it)
        except FileNotFoundError:
            continue
        except OSError as exc:
            if depth:
                continue  # a sub-folder that vanished or refuses listing: the rest still answers
            raise typed_os_error(exc, f"list {folder.rel or '/'}", folder.rel) from exc
        subfolders = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if recursive and depth < MAX_FOLDER_DEPTH and not (depth == 0 and name.casefold() in skip_top):
                        subfolders.append((f"{prefix}{name}/", entry.path, depth + 1))
                    continue
                if not name.endswith(NOTE_SUFFIX) or not entry.is_file(follow_symlinks=False):
                    continue
                st = entry.stat(follow_symlinks=False) if stat else None
            except OSError:
                continue
            yield prefix + name, entry.path, st
        stack.extend(reversed(subfolders))  # depth first, in name order: the listing's order


class FrontmatterCache:
    """Each note's parsed frontmatter, marshalled, by path, valid while (mtime_ns, size) are the same.

    marshal bytes rather than dicts: ~0.5 KB a note instead of ~4.5 KB (10,000 email
    notes: ~6 MB instead of ~45 MB), and a filter first tests the value's bytes against
    them, so only candidate notes are unmarshalled. The signature is the entry's first 16
    bytes, not a tuple of two ints beside it: another ~130 B a note less.
    """

    def __init__(self) -> None:
        self._notes: dict[str, bytes | tuple[bytes, ParseError]] = {}
        self._lent: dict[str, tuple[int, int, int, str]] = {}  # rel -> (mtime_ns, size, inode, frontmatter JSON)
        self._lender: Lender | None = None

    def lend_from(self, lender: Lender | None) -> None:
        """Ask `lender` for a note's parse whenever one is missing (the vault server's live index: a first
        filtered listing of 10,000 notes takes the index's parses instead of parsing each note's YAML)."""
        self._lender = lender

    def _lent_parse(self, rel: str) -> tuple[int, int, int, str] | None:
        lent = self._lent.pop(rel, None)
        return lent if lent is not None or self._lender is None else self._lender(rel)

    def lend(self, parses: Iterable[tuple[str, int, int, int, str]]) -> None:
        """Parses made elsewhere of these notes (the vault index's: the same parser's answer, as JSON), each
        taken when its file's (mtime_ns, size, inode) are still those it was read at; else the note is read.
        Replaces what was lent before."""
        self._lent = {rel: (mtime_ns, size, ino, text) for rel, mtime_ns, size, ino, text in parses}

    def get(self, abs_path: str, rel: str, st: os.stat_result) -> bytes | ParseError:
        signature = _SIGNATURE.pack(st.st_mtime_ns, st.st_size)
        hit = self._notes.get(rel)
        if isinstance(hit, bytes):
            if hit.startswith(signature):
                return hit[_SIGNATURE.size :]
        elif hit is not None and hit[0] == signature:
            return hit[1]
        lent = self._lent_parse(rel)
        try:
            if lent is not None and lent[:3] == (st.st_mtime_ns, st.st_size, st.st_ino):
                value: bytes | ParseError = marshal.dumps(json.loads(lent[3]))
            else:
                value = marshal.dumps(read_frontmatter(abs_path, rel))
        except ParseError as exc:
            value = exc
        except OSError as exc:
            return ParseError(typed_os_error(exc, f"read {rel}", rel).message, path=rel)
        except (InvalidRequest, ValueError) as exc:
            return ParseError(str(exc), path=rel)
        if len(self._notes) >= CACHE_LIMIT:
            self._notes.clear()
        self._notes[rel] = (signature, value) if isinstance(value, ParseError) else signature + value
        return value

    def mentions(self, abs_path: str, rel: str, st: os.stat_result, words: tuple[bytes, ...]) -> bool:
        """Whether the note's frontmatter text may hold one of `words` (bytes of a key's name): its cached
        parse if it has one, else the raw head of the file — a note that cannot be read, or whose
        frontmatter runs past the probe, may (it is parsed, and its problem said, as always)."""
        hit = self._notes.get(rel)
        signature = _SIGNATURE.pack(st.st_mtime_ns, st.st_size)
        if isinstance(hit, tuple) and hit[0] == signature:
            return True  # a note whose frontmatter cannot be read may (its problem is said, as always)
        if isinstance(hit, bytes) and hit.startswith(signature):
            return any(hit.find(word, _SIGNATURE.size) >= 0 for word in words)
        lent = self._lent.get(rel)
        if lent is not None and lent[:3] == (st.st_mtime_ns, st.st_size, st.st_ino):
            return any(word.decode() in lent[3] for word in words)
        try:
            with regular_file(abs_path) as handle:
                head = handle.read(FRONTMATTER_PROBE)
        except OSError:
            return True
        close = head.find(b"\n---", 3)
        if close < 0:
            return len(head) == FRONTMATTER_PROBE or any(word in head for word in words)
        return any(word in head[:close] for word in words)


def read_frontmatter(abs_path: str | Path, rel: str) -> dict[str, Any]:
    """Parse only the frontmatter block, reading just the head of the file."""
    with regular_file(abs_path) as handle:
        head = handle.read(FRONTMATTER_PROBE)
        text_head = head.lstrip(b"\xef\xbb\xbf")
        if not text_head.startswith(b"---"):
            return {}
        if not _has_close(text_head) and len(head) == FRONTMATTER_PROBE:
            head += handle.read(MAX_NOTE_BYTES)
    text = decode(head, rel) if len(head) < FRONTMATTER_PROBE else _decode_prefix(head, rel)
    try:
        parts = frontmatter.split(text)
        return frontmatter.load(parts.yaml)
    except ParseError as exc:
        raise ParseError(exc.message, path=rel) from None


def _has_close(head: bytes) -> bool:
    return b"\n---" in head[3:] or b"\n..." in head[3:]


def _decode_prefix(head: bytes, rel: str) -> str:
    # The probe may end inside a multi-byte character; only the frontmatter matters here.
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 4:
            return head[: exc.start].decode("utf-8")
        raise ParseError(f"The note is not UTF-8 text (bad byte at offset {exc.start}).", path=rel) from None
