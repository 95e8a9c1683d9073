"""A literal search through the index: which notes may hold the phrase (a superset, from the words of
the phrase), ranked by BM25, then each candidate checked against the note's bytes by the very rule of
the full scan (h0.vault.search.PhraseMatcher) — so the answer is the full scan's set, ranked, paged.

How the phrase's words narrow the candidates: a phrase's inner words are whole words of the note;
its first word may be the end of a longer one (`voice` in `invoice`) unless the phrase starts with a
space or punctuation, its last word the start of one (`invoi` in `invoice`) unless the phrase ends
with one. "Ends with" and "contains" come from the trigram table of every indexed word; a word too
common to narrow anything (hundreds of terms, one or two letters) is simply not used as a filter.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from h0.errors import InternalError
from h0.state.binds import marks
from h0.vault.index.db import VISIBLE, IndexDB
from h0.vault.index.extract import Signature
from h0.vault.search import PhraseMatcher, SearchHit, read_file

if TYPE_CHECKING:
    from h0.vault.index import VaultIndex

MAX_EXPANSION = 200  # terms one fragment may stand for before it stops narrowing anything
MAX_BATCH = 4096  # candidates ranked per query of a search (SQLite binds up to 32,766 values)


@dataclass(frozen=True, slots=True)
class SearchPage:
    hits: list[SearchHit]
    more: bool  # more notes match past this page
    offset: int = 0


def search_page(
    index: VaultIndex, matcher: PhraseMatcher, folder: str, limit: int, offset: int, include_private: bool
) -> SearchPage:
    """`VaultIndex.search` on a synced index: the notes holding the phrase, best first, `limit` of them
    from `offset`; each candidate checked against the note's bytes on disk now (and re-indexed later
    when they changed)."""
    found = plan(index.db, matcher.query)
    if found.empty:
        return SearchPage([], False, offset)
    where, args = _scope(folder, include_private)
    if found.expression is None:
        sql = f"SELECT path, mtime_ns, size, ino FROM docs WHERE {where} ORDER BY path"
        rows = _guarded(index, every_row(index.db, sql, args))
    else:
        rows = _guarded(index, ranked(index.db, found.expression, where, args, first=offset + limit + 16))
    hits: list[SearchHit] = []
    stale: list[str] = []
    skipped = 0
    more = False
    for path, mtime_ns, size, ino in rows:
        read = read_file(os.path.join(index.root, *path.split("/")))
        if read is None:
            stale.append(path)
            continue
        data, info = read
        if Signature.of(info) != Signature(mtime_ns, size, ino):
            stale.append(path)  # answered from what is on disk now; re-indexed below
        hit = matcher.first(data)
        if hit is None:
            continue
        if skipped < offset:
            skipped += 1
            continue
        if len(hits) == limit:
            more = True
            break
        hits.append(SearchHit(path, hit[0], hit[1]))
    if stale:
        index.changed(stale)
    return SearchPage(hits, more, offset)


def _scope(folder: str, include_private: bool) -> tuple[str, list[object]]:
    clauses: list[str] = ["1"]
    args: list[object] = []
    if folder:
        clauses.append("(docs.path LIKE ? ESCAPE '\\')")
        args.append(_like_prefix(folder.strip("/")) + "/%")
    if not include_private:
        clauses.append(VISIBLE)
    return " AND ".join(clauses), args


def _guarded(index: VaultIndex, rows: Iterator[tuple[str, int, int, int]]) -> Iterator[tuple[str, int, int, int]]:
    """Rows read from the index; on a damaged file it is rebuilt at the next sync (a retryable error now)."""
    try:
        yield from rows
    except sqlite3.DatabaseError as exc:
        index.everything_changed()
        raise InternalError(
            f"The vault index could not be read ({exc}); it is being rebuilt, ask again.", retryable=True
        ) from exc


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """How to find the candidates: an FTS5 expression, None (every note is a candidate), or `empty`
    (a word of the phrase occurs in no note: nothing can match)."""

    expression: str | None
    empty: bool = False


def plan(db: IndexDB, query: str) -> QueryPlan:
    tokens = db.tokens(query)
    if not tokens:
        return QueryPlan(None)  # punctuation only: no word to narrow by
    opens_word = bool(db.tokens(query[:1]))  # the phrase may start inside a word
    closes_word = bool(db.tokens(query[-1:]))  # …and end inside one
    groups: list[str] = []
    last = len(tokens) - 1
    for position, token in enumerate(tokens):
        starts_inside = position == 0 and opens_word
        ends_inside = position == last and closes_word
        if starts_inside:
            group = _containing(db, token)  # the end of a word (or, alone, any part of one)
        elif ends_inside:
            group = _prefix(token)
        else:
            group = _quoted(token)
        if group == "":
            return QueryPlan(None, empty=True)
        if group is not None:
            groups.append(group)
    if not groups:
        return QueryPlan(None)
    return QueryPlan(" AND ".join(groups))


def _containing(db: IndexDB, token: str) -> str | None:
    terms = db.terms_containing(token, MAX_EXPANSION)
    if terms is None:
        return None  # too common to narrow
    if not terms:
        return ""  # no indexed word contains it
    return "(" + " OR ".join(_quoted(term) for term in terms) + ")"


def _prefix(token: str) -> str | None:
    return None if len(token) < 2 else f"{_quoted(token)}*"


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def ranked(
    db: IndexDB, expression: str, where: str, args: Sequence[object], first: int
) -> Iterator[tuple[str, int, int, int]]:
    """The candidates best first (BM25, then insertion order), in growing batches: FTS5 ranks the top N
    of its own table with a bounded sort, several times faster than ordering the whole match joined with
    `docs` (a common word matches most of the vault). Each batch's notes are then looked up in `docs`,
    filtered by `where` (folder, privacy), and yielded in rank order as (path, mtime_ns, size, ino).
    Raises sqlite3.DatabaseError on a damaged file."""
    done, size = 0, min(max(first, 64), MAX_BATCH)
    connection = db.db()
    while True:
        ids = [
            row[0]
            for row in connection.execute(
                "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts, 4.0, 2.0, 1.0), rowid LIMIT ? OFFSET ?",
                [expression, size, done],
            )
        ]
        found = (
            {
                row[0]: tuple(row[1:])
                for row in connection.execute(
                    f"SELECT docs.id, docs.path, docs.mtime_ns, docs.size, docs.ino FROM docs WHERE docs.id IN "
                    f"({marks(len(ids))}) AND {where}",
                    (*ids, *args),
                )
            }
            if ids
            else {}
        )
        for doc in ids:
            if doc in found:
                yield found[doc]
        if len(ids) < size:
            return
        done += len(ids)
        size = min(size * 4, MAX_BATCH)


def every_row(db: IndexDB, sql: str, args: Sequence[object]) -> Iterator[tuple[str, int, int, int]]:
    """The rows of `sql`, fetched in batches (a search that needs only its first page stops early)."""
    cursor = db.db().execute(sql, args)
    while batch := cursor.fetchmany(64):
        yield from batch
