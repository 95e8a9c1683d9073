"""The notes an email is about: found through what it names — its people (addresses), the notes
linking to their People notes (a meeting with them), their organisation (the address's domain), the notes it names by title or alias, the codes and
capitalised names it shares with a note (`INV-2041`, `Quanta Dashboard`) — never through a
shared common word. Each note comes with why, in words, and a score that ranks it.

Every signal is a look-up in a table the index keeps per note (addresses, entities: computed once
when the note changed, h0.vault.index.entities), so an email costs a few queries, whatever the
size of the vault. A capitalised word alone ("Quanta") counts only when few notes hold it; a
word many notes hold ("Friday" is never a name at all) tells nothing about what the email is
about.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from h0.state.binds import chunks, marks
from h0.vault.index.db import VISIBLE
from h0.vault.index.entities import (
    ENTITY,
    MAX_PHRASE_WORDS,
    NAME,
    Names,
    named,
    phrase_words,
    phrases,
    text_entities,
)
from h0.vault.index.extract import HEADER_FIELDS
from h0.vault.paths import link_key

if TYPE_CHECKING:
    from h0.vault.index import VaultIndex

PERSON = 6.0  # a People note naming one of the email's addresses in its frontmatter
NAMES_ADDRESS = 3.0  # any other note naming the address
NAMED = 5.0  # the email names the note (its title or an alias)
CODE_OR_NAME = 4.0  # a shared code or a capitalised name of several words
RARE_WORD = 2.0  # a shared capitalised word few notes hold
LINKS_TO_PERSON = 3.0  # a note linking to the People note of someone in the email (a meeting with them)
ORGANISATION = 1.5  # a People note of someone at the sender's organisation (the address's domain)
RARE_SHARE = 0.02  # a single capitalised word counts when at most this share of notes hold it…
RARE_AT_LEAST = 3  # …or this many, in a small vault
MAX_ORGANISATION = 5  # colleagues' People notes taken from one domain
MAX_KEYS = 2_000
CHUNK = 400
# Domains anyone can have an address at: sharing one says nothing about an organisation.
FREE_MAIL = frozenset(
    """gmail.com googlemail.com outlook.com hotmail.com live.com msn.com yahoo.com ymail.com icloud.com me.com
    mac.com aol.com gmx.de gmx.net gmx.at web.de t-online.de posteo.de mailbox.org proton.me protonmail.com
    pm.me mail.com zoho.com yandex.com fastmail.com hey.com orange.fr free.fr laposte.net""".split()
)


def outside_folders(select: str, where: str, args: Sequence[Any], skip: Sequence[str]) -> tuple[str, list[Any]]:
    """`select … WHERE where` over the rows whose `folder` is none of `skip` (lower-cased folder names), as one
    range a gap between them: an index on (…, folder) then seeks past the skipped folders' rows (a sender's
    thousands of emails) instead of reading each one to leave it out."""
    folders = sorted(set(skip))
    if not folders:
        return f"{select} WHERE {where}", list(args)
    gaps = [("folder < ?", [folders[0]])]
    gaps += [("folder > ? AND folder < ?", [low, high]) for low, high in pairwise(folders)]
    gaps.append(("folder > ?", [folders[-1]]))
    sql = " UNION ALL ".join(f"{select} WHERE {where} AND {gap}" for gap, _ in gaps)
    return sql, [value for _, bounds in gaps for value in (*args, *bounds)]


@dataclass(slots=True)
class About:
    path: str
    score: float = 0.0
    why: list[str] = field(default_factory=list)
    person: bool = False
    topic: float = 0.0  # the part of `score` from what the email names (a title, a code, a name): not its people
    direct: bool = False  # it names one of the email's addresses or links to their People note (not a colleague's)


def notes_about(
    index: VaultIndex,
    *,
    text: str,
    addresses: Sequence[str],
    skip_folders: Iterable[str] = (),
    limit: int = 10,
) -> list[About]:
    """The notes `text` (an email: subject, body, the thread) and its `addresses` (From, To, Cc) are
    about, best first. Private notes and notes in `skip_folders` (top-level folder names) are left out."""
    skip = sorted({f.lower() for f in skip_folders if f})
    # The folder test first, on the index entries (`addresses.folder`, `entities.folder`: a sender's thousands of
    # emails are never read); the gate's (a Python function and a thread look-up a row) only for what is left.
    outside = f" NOT IN ({marks(len(skip))})" if skip else ""

    def where(folder: str) -> str:
        return (f" AND {folder}{outside}" if skip else "") + f" AND {VISIBLE}"

    wanted = list(dict.fromkeys(a.strip().lower() for a in addresses if a and "@" in a))[:50]
    people: list[tuple[str, bool, str]] = []
    colleagues: list[tuple[str, str]] = []
    if wanted:
        hits, args = outside_folders(
            "SELECT doc, field, address FROM addresses",
            f"address IN ({marks(len(wanted))}) AND field NOT IN ({marks(len(HEADER_FIELDS))})",
            [*wanted, *HEADER_FIELDS],
            skip,
        )
        for path, person, source, address in index.db.rows(
            f"SELECT docs.path, docs.person, hits.field, hits.address FROM ({hits}) AS hits "
            f"JOIN docs ON docs.id = hits.doc WHERE {VISIBLE}",
            args,
        ):
            people.append((path, bool(person) and source != "body", address))
        for domain in organisations(wanted):
            colleagues += [
                (path, domain)
                for (path,) in index.db.rows(  # People notes are few: from them (docs_person), not the addresses
                    "SELECT DISTINCT docs.path FROM docs CROSS JOIN addresses ON addresses.doc = docs.id "
                    "WHERE docs.person = 1 AND addresses.field != 'body' "
                    f"AND substr(addresses.address, instr(addresses.address, '@') + 1) = ?{where('addresses.folder')} LIMIT ?",
                    (domain, *skip, MAX_ORGANISATION),
                )
            ]
    backlinks: list[tuple[str, str]] = []
    named = sorted({link_key(path) for path, about, _ in people if about})
    if named:
        backlinks = index.db.rows(
            "SELECT DISTINCT docs.path, links.target FROM links JOIN docs ON docs.id = links.doc "
            f"WHERE links.target IN ({marks(len(named))}){where('lower(docs.folder)')}",
            (*named, *skip),
        )
    entities = text_entities(text)
    keys = looked_up(text, entities, index.names.current())
    rows: list[tuple[str, str, str]] = []
    for chunk in chunks(keys, CHUNK):
        rows += index.db.rows(
            "SELECT docs.path, entities.key, entities.kind FROM entities JOIN docs ON docs.id = entities.doc "
            f"WHERE entities.key IN ({marks(len(chunk))}){where('entities.folder')}",
            (*chunk, *skip),
        )
    return rank(people, colleagues, backlinks, rows, entities, index.count(), limit)


def looked_up(text: str, entities: set[str], names: Names | None) -> list[str]:
    """The keys an email's notes are looked up by: its phrases (a note's NAME may be any of them) and its
    `entities`, sorted, the first MAX_KEYS. When every phrase fits (at most 4 a word), only the phrases
    that are some note's name (`names`, all of the index's) are looked up: a phrase no note is named by
    finds no NAME row, and an ENTITY row counts only for the email's own `entities` (`rank`)."""
    if not text.strip():
        return []
    if names is not None:
        words = phrase_words(text)
        if MAX_PHRASE_WORDS * len(words) + len(entities) <= MAX_KEYS:
            return sorted(named(words, names) | entities)
    return sorted(phrases(text) | entities)[:MAX_KEYS]


def organisations(addresses: Iterable[str]) -> list[str]:
    """The domains of these addresses that name an organisation (not a free-mail provider)."""
    domains = (a.rsplit("@", 1)[1].lower() for a in addresses if "@" in a)
    return [d for d in dict.fromkeys(domains) if d and d not in FREE_MAIL]


def rank(
    people: Iterable[tuple[str, bool, str]],
    colleagues: Iterable[tuple[str, str]],
    backlinks: Iterable[tuple[str, str]],
    rows: Iterable[tuple[str, str, str]],
    entities: set[str],
    total: int,
    limit: int,
) -> list[About]:
    """The one rule of what an email is about, from what was looked up: `people` (path, a People note
    about the address?, the address), `colleagues` (path, domain), `backlinks` (path, the name of the
    People note it links to), `rows` (path, key, kind) of the
    notes' keys found among the email's phrases and `entities`; `total` notes in the vault."""
    found: dict[str, About] = {}

    def add(
        path: str, score: float, reason: str, person: bool = False, topic: bool = False, direct: bool = False
    ) -> None:
        item = found.setdefault(path, About(path))
        item.score += score
        item.topic += score if topic else 0.0
        item.person = item.person or person
        item.direct = item.direct or direct
        if reason not in item.why:
            item.why.append(reason)

    for path, about, address in people:
        add(path, PERSON if about else NAMES_ADDRESS, f"{'about' if about else 'names'} {address}", about, direct=True)
    for path, domain in colleagues:
        add(path, ORGANISATION, f"someone at {domain}")
    for path, name in backlinks:
        add(path, LINKS_TO_PERSON, f"links to [[{name}]]", direct=True)
    rows = list(rows)
    holders: dict[str, int] = {}
    for _, key, kind in rows:
        if kind == ENTITY:
            holders[key] = holders.get(key, 0) + 1
    rare = max(RARE_AT_LEAST, int(total * RARE_SHARE))
    for path, key, kind in rows:
        if kind == NAME:
            add(path, NAMED, f"the email names “{key}”", topic=True)
        elif key not in entities:
            continue
        elif " " in key or any(ch.isdigit() for ch in key):
            add(path, CODE_OR_NAME, f"both name “{key}”", topic=True)
        elif holders.get(key, 0) <= rare:
            add(path, RARE_WORD, f"both name “{key}”", topic=True)
    return sorted(found.values(), key=lambda a: (-a.score, a.path))[:limit]
