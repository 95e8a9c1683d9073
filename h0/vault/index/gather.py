"""The notes the index holds, gathered: the walk of the vault (what is indexable and what never is), and
their reading and extraction, spread over processes for a large rebuild."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from loguru import logger

from h0.errors import H0Error
from h0.vault import listing
from h0.vault.index.db import IndexDB, pack
from h0.vault.index.extract import Extracted, Signature, read_note_file
from h0.vault.layout import LOGS
from h0.vault.listing import MAX_FOLDER_DEPTH
from h0.vault.paths import NOTE_SUFFIX, VaultPath, nfc

INDEX_FILE = "index.db"
BATCH = 500  # notes written per transaction while (re)building
PARALLEL_FROM = 2000  # notes to (re)index before the reading and parsing are spread over processes
CHILD_FROM = 2000  # notes to (re)index before the whole build moves to a child process (build_in_child)
_SKIPPED_TOP = frozenset({LOGS.casefold()})


def indexable(rel: str) -> bool:
    """Whether the index holds the note at this vault-relative path: no hidden folder, not in Logs/, a
    `.md` name, at most MAX_FOLDER_DEPTH folders deep."""
    parts = rel.split("/")
    if any(part.startswith(".") for part in parts) or parts[0].casefold() in _SKIPPED_TOP:
        return False
    return len(parts) - 1 <= MAX_FOLDER_DEPTH + 1 and parts[-1].endswith(NOTE_SUFFIX)


def extract_all(todo: list[tuple[str, str]]) -> Iterator[list[Extracted]]:
    """The notes of `todo` ((absolute path, rel) pairs) read and extracted in batches; a large rebuild
    spreads the reading and parsing over a process per CPU while this one writes the index."""
    chunks = [todo[i : i + BATCH] for i in range(0, len(todo), BATCH)]
    workers = min(os.cpu_count() or 1, 4)
    if len(todo) < PARALLEL_FROM or workers < 2:
        for chunk in chunks:
            yield _extract_chunk(chunk)
        return
    import concurrent.futures
    import multiprocessing

    # forkserver (or spawn): never fork this process itself, whose other threads may hold locks.
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    try:
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            yield from pool.map(_extract_chunk, chunks)
    except (OSError, concurrent.futures.process.BrokenProcessPool) as exc:  # no processes to be had: in this one
        logger.warning("indexing in one process ({})", exc)
        for chunk in chunks:
            yield _extract_chunk(chunk)


def compare(db: IndexDB, root: Path) -> tuple[list[tuple[str, str]], list[str], Reconciled]:
    """What the index `db` lacks of the vault at `root`, by each note's signature: the notes to read ((absolute
    path, rel) pairs), the paths gone, and the count of those unchanged."""
    known = {path: Signature(m, s, i) for path, m, s, i in db.rows("SELECT path, mtime_ns, size, ino FROM docs")}
    report = Reconciled()
    todo: list[tuple[str, str]] = []
    seen: set[str] = set()
    for rel, abs_path, info in walk_notes(root):
        seen.add(rel)
        if known.get(rel) == Signature.of(info):
            report.unchanged += 1
        else:
            todo.append((abs_path, rel))
    return todo, [path for path in known if path not in seen], report


def take_in(db: IndexDB, todo: list[tuple[str, str]], gone: list[str], report: Reconciled) -> None:
    """Read `todo`'s notes into the index `db` (in batches, spread over processes when many) and drop `gone`."""
    for batch in extract_all(todo):
        db.write(batch, (), learn=False)
        report.indexed += len(batch)
    db.write([], gone, learn=False)
    report.removed = len(gone)
    if report.indexed:
        db.learn_all_terms()
    if report.indexed + report.removed >= BATCH:
        db.checkpoint()


def build_in_child(root: Path, db_path: Path, timeout: float = 3600.0) -> bool:
    """Index the notes of `root` that the index file at `db_path` lacks, in a child process (VaultIndex._reconcile
    hands it a large build): the parsed notes live and die there. Whether the child did it (False: the caller
    builds them itself)."""
    import multiprocessing

    # forkserver (or spawn): never fork this process itself, whose other threads may hold locks.
    forkserver = "forkserver" in multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver") if forkserver else multiprocessing.get_context("spawn")
    try:
        child = context.Process(target=_build, args=(str(root), str(db_path)), name="h0-index-build")
        child.start()
    except OSError as exc:
        logger.warning("the vault index is built in this process ({})", exc)
        return False
    child.join(timeout)
    if child.is_alive():
        child.kill()
        child.join()
    return bool(child.exitcode == 0)


def _build(root: str, db_path: str) -> None:
    """The child's work: the notes the index file lacks read into it; nothing written to stdout (the parent's may be
    an MCP stream)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    db = IndexDB(Path(db_path))
    todo, gone, report = compare(db, Path(root))
    take_in(db, todo, gone, report)


def _extract_chunk(chunk: list[tuple[str, str]]) -> list[Extracted]:
    notes = [read_note_file(abs_path, rel) for abs_path, rel in chunk]
    for note in notes:
        if note is not None:
            note.packed = pack(note)  # compressed here, in the worker, not in the writer
    return [note for note in notes if note is not None]


def walk_notes(root: Path) -> Iterator[tuple[str, str, os.stat_result]]:
    """Every note the index holds: (vault-relative path, absolute path, lstat), as h0.vault.listing.walk_notes
    finds them (regular files only, no symlink followed, no hidden folder, at most MAX_FOLDER_DEPTH deep),
    without Logs/ and in the order the OS lists them. A vault root that cannot be listed holds none."""
    try:
        for rel, abs_path, info in listing.walk_notes(
            VaultPath("", str(root)), True, ordered=False, skip_top=_SKIPPED_TOP
        ):
            if info is not None:  # always, with `stat`
                yield nfc(rel), abs_path, info
    except H0Error:
        return


def relative_path(path: str, root: Path, prefix: str) -> str | None:
    """`path` (vault-relative, or absolute) as the vault-relative path of a note below `root` (`prefix`: the
    root and its separator); None for the root itself or anything outside it."""
    text = str(path)
    if text.startswith(prefix) and f"{os.sep}." not in text[len(prefix) - 1 :]:
        # A watcher's path below the root with no dot component ("..", ".", hidden): no need to normalise.
        return nfc(text[len(prefix) :].replace(os.sep, "/")).strip("/") or None
    if os.path.isabs(text):
        try:
            text = os.path.relpath(text, root)
        except ValueError:
            return None
    rel = nfc(text.replace(os.sep, "/")).strip("/")
    return None if not rel or rel == ".." or rel.startswith("../") else rel


@dataclass(slots=True)
class Reconciled:
    indexed: int = 0
    removed: int = 0
    unchanged: int = 0


def index_file(root: Path, state_dir: Path | None) -> Path | None:
    """The index's file in the vault's state folder, or None (kept in memory) when that cannot be written."""
    from h0.state import state_dir_for

    directory = state_dir_for(root, state_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        probe = directory / f".{INDEX_FILE}.probe"
        probe.write_bytes(b"")
        probe.unlink()
        return directory / INDEX_FILE
    except OSError as exc:
        logger.warning("cannot keep the vault index in {} ({}); keeping it in memory", directory, exc)
        return None
