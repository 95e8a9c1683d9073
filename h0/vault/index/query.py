"""A literal search through the index: which notes may hold the phrase (a superset, from the words of
the phrase), ranked by BM25, then each candidate checked against the note's bytes by the very rule of
the full scan (h0.vault.search.Matcher) — so the answer is the full scan's set, ranked, paged.

How the phrase's words narrow the candidates: a phrase's inner words are whole words of the note;
its first word may be the end of a longer one (`voice` in `invoice`) unless the phrase starts with a
space or punctuation, its last word the start of one (`invoi` in `invoice`) unless the phrase ends
with one. "Ends with" and "contains" come from the trigram table of every indexed word; a word too
common to narrow anything (hundreds of terms, one or two letters) is simply not used as a filter.
"""

from __future__ import annotations

from dataclasses import dataclass

from h0.vault.index.db import IndexDB

MAX_EXPANSION = 200  # terms one fragment may stand for before it stops narrowing anything


@dataclass(frozen=True, slots=True)
class Plan:
    """How to find the candidates: an FTS5 expression, None (every note is a candidate), or `empty`
    (a word of the phrase occurs in no note: nothing can match)."""

    expression: str | None
    empty: bool = False


def plan(db: IndexDB, query: str) -> Plan:
    tokens = db.tokens(query)
    if not tokens:
        return Plan(None)  # punctuation only: no word to narrow by
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
            return Plan(None, empty=True)
        if group is not None:
            groups.append(group)
    if not groups:
        return Plan(None)
    return Plan(" AND ".join(groups))


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
