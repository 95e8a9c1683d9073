"""The notes most related to a note or a piece of text (an email), ranked, each with why.

Three signals, added up:
- **the same person**: a note naming an address the text names (From, To, Cc, the body). A People
  note (the address in its `email`/`emails`/`aliases`) weighs most: it is what the owner knows
  about that person;
- **links**: a note the text links to (`[[Atlas]]`), and a note that links to the source note;
- **shared terms**: BM25 over the text's most telling words (by tf·idf: rare in the vault, frequent
  in the text), weighted toward a note's title and frontmatter.
Private notes (h0.vault.disclosure: marked, in a private folder, in a private thread) are left out
unless the caller asks (drafting and MCP clients never do).
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from h0.state.binds import marks
from h0.vault.index.db import VISIBLE, unpack
from h0.vault.index.extract import WIKILINK, read_note_file
from h0.vault.index.gather import relative_path
from h0.vault.paths import link_key
from h0.vault.values import ADDRESS

if TYPE_CHECKING:
    from h0.vault.index import VaultIndex


@dataclass(frozen=True, slots=True)
class Related:
    """A note related to a note or a text, with its score and why (people, links, telling words)."""

    path: str
    score: float
    why: list[str] = field(default_factory=list)


TOP_TERMS = 16
CANDIDATES = 60
PERSON_WEIGHT = 3.0
MENTION_WEIGHT = 1.0
LINK_WEIGHT = 2.0
BACKLINK_WEIGHT = 1.0
MAX_TEXT = 200_000  # characters of the source considered
_COMMON = 0.3  # a term in more than this share of notes tells nothing (in a vault of MIN_VAULT notes or more)
MIN_VAULT = 20
_NUMBER = re.compile(r"\d+")
# Words that tell nothing about what an email or a note is about (English and mail's own vocabulary).
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "hi",
        "hello",
        "hey",
        "dear",
        "thanks",
        "thank",
        "regards",
        "best",
        "cheers",
        "please",
        "re",
        "fwd",
        "fw",
        "subject",
        "sent",
        "wrote",
        "email",
        "mail",
        "message",
        "com",
        "org",
        "net",
        "www",
        "http",
        "https",
    ]
)


def related_notes(
    index: VaultIndex, *, text: str | None, path: str | None, limit: int, include_private: bool
) -> list[Related]:

    source_rel, source_text, addresses, links = _source(index, text, path)
    if not source_text and not addresses and not links:
        return []
    scores: dict[str, float] = {}
    why: dict[str, list[str]] = {}

    def add(rel: str, score: float, reason: str) -> None:
        if rel == source_rel:
            return
        scores[rel] = scores.get(rel, 0.0) + score
        reasons = why.setdefault(rel, [])
        if reason not in reasons:
            reasons.append(reason)

    private = "" if include_private else f" AND {VISIBLE}"
    for address in addresses:
        for rel, person in index.db.rows(
            "SELECT DISTINCT docs.path, docs.person FROM addresses JOIN docs ON docs.id = addresses.doc "
            f"WHERE addresses.address = ?{private}",
            (address,),
        ):
            add(rel, PERSON_WEIGHT if person else MENTION_WEIGHT, f"{'about' if person else 'names'} {address}")
    if links:
        placeholders = marks(len(links))
        for (rel,) in index.db.rows(f"SELECT path FROM docs WHERE name IN ({placeholders}){private}", links):
            add(rel, LINK_WEIGHT, f"linked as [[{link_key(rel)}]]")
    if source_rel is not None:
        name = link_key(source_rel)
        for (rel,) in index.db.rows(
            f"SELECT DISTINCT docs.path FROM links JOIN docs ON docs.id = links.doc WHERE links.target = ?{private}",
            (name,),
        ):
            add(rel, BACKLINK_WEIGHT, f"links to [[{name}]]")
    terms = _telling_terms(index, source_text)
    if terms:
        expression = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        ranked = index.db.rows(
            "SELECT docs.path, bm25(fts, 4.0, 2.0, 1.0), docs.packed FROM fts JOIN docs ON docs.id = fts.rowid "
            f"WHERE fts MATCH ?{private} ORDER BY bm25(fts, 4.0, 2.0, 1.0) LIMIT ?",
            (expression, CANDIDATES),
        )
        best = max((-row[1] for row in ranked), default=0.0) or 1.0
        wanted = set(terms)
        for rel, rank, packed in ranked:
            if rel == source_rel:
                continue
            shared = _shared(packed, wanted, index)
            reason = "shares " + ", ".join(sorted(shared)[:5]) if shared else "similar words"
            add(rel, -rank / best, reason)
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [Related(rel, round(score, 4), why[rel]) for rel, score in ordered]


def _source(index: VaultIndex, text: str | None, path: str | None) -> tuple[str | None, str, list[str], list[str]]:
    """(the source note's path, its text, the addresses it names, its link targets)."""
    if path is not None:
        rel = relative_path(path, index.root, os.path.join(str(index.root), ""))
        note = read_note_file(os.path.join(index.root, *rel.split("/")), rel) if rel else None
        if note is None:
            return rel, "", [], []
        words = f"{note.title}\n{note.meta}\n{note.body}"[:MAX_TEXT]
        return rel, words, [a for a, _ in note.addresses], note.links
    body = (text or "")[:MAX_TEXT]
    addresses = list(dict.fromkeys(m.group().lower() for m in ADDRESS.finditer(body)))[:50]
    links = sorted({link_key(m.group(1)) for m in WIKILINK.finditer(body)})[:50]
    return None, body, addresses, links


def _telling_terms(index: VaultIndex, text: str) -> list[str]:
    """The source's most telling words: frequent in it, rare in the vault (tf·idf), not numbers."""
    words = ADDRESS.sub(" ", text)  # an address is the person signal's, not a word
    tokens = [t for t in index.db.tokens(words) if len(t) >= 3 and t not in STOPWORDS and not _NUMBER.fullmatch(t)]
    if not tokens:
        return []
    counts = Counter(tokens)
    total = max(1, index.count())
    common = _COMMON if total >= MIN_VAULT else 1.0
    placeholders = marks(len(counts))
    frequency = dict(index.db.rows(f"SELECT term, doc FROM fts_vocab WHERE term IN ({placeholders})", list(counts)))
    scored = []
    for term, tf in counts.items():
        df = frequency.get(term, 0)
        if df == 0 or df / total > common:
            continue
        scored.append((tf * math.log(1 + total / df), term))
    return [term for _, term in sorted(scored, reverse=True)[:TOP_TERMS]]


def _shared(packed: bytes, wanted: set[str], index: VaultIndex) -> set[str]:
    title, meta, body = unpack(packed)
    return wanted & set(index.db.tokens(f"{title}\n{meta}\n{body}"[:20_000]))
