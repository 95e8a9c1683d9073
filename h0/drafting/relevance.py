"""Which of what the vault and the owner's mail offer a reply is about the email: the rules drafting's context
(h0.drafting.context) applies to related notes, similar replies and the email's own words before matching.

- A note the index relates to the email (h0.vault.index.about) comes when the email names it, a code or a
  name of several words it holds; a single capitalised word brings it only when it is the owner's own or the
  person it is about is on the email, and it shares a second word with it; a note found through the email's
  people alone (a meeting with the sender, a colleague's note) only when it shares the email's topic too
  (`about_the_email`, `shares_topic`); in a hub only its lines about the email's people count (`is_hub`).
- A note the sender's People note links to comes, but for an email that only asks to meet and from a hub only
  when it shares the email's topic (`linked_for`).
- A similar reply, for someone the owner knows, comes only from their circle (`circle_of`, `in_circle`).
- Who writes is not what the email is about: the owner's name and the people's names are taken out of the
  text before it is matched, and their organisation out of its signature (`without_owner`, `without_names`,
  `without_signature_names`).
- The replies of the email's own conversation are known by its thread keys (`email_thread_keys`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from h0.drafting.commercial import parties
from h0.drafting.knowledgenotes import KnowledgeNote, KnowledgeSource, RelatedKnowledge, link_targets, tokens
from h0.drafting.pastreply import PastReply
from h0.vault.disclosure import thread_keys
from h0.vault.index.about import CODE_OR_NAME, organisations
from h0.vault.model import NoteFacts
from h0.vault.paths import link_key

MIN_TOPIC_WORDS = 2  # words a note found through the email's people alone must share with it
HUB_PEOPLE = 8  # People notes around a note (linking to it or linked from it) from which it is a hub, not a project
STRONG_TOPIC = CODE_OR_NAME  # a note's title or alias, a code, a name of several words: about the email by itself
# The properties of a People note that name the person's organisation (their signature names it too).
MAX_SIGNATURE_LINES = 8  # a closing paragraph longer than this is not a signature


def about_the_email(
    related: RelatedKnowledge,
    words: set[str],
    audience: frozenset[str],
    people: frozenset[str] = frozenset(),
    hub: Callable[[KnowledgeNote], bool] = lambda note: False,
) -> bool:
    """Whether a note the index relates to the email is about what the email is about, not only about its
    people. A note the email names — its title or alias, a code, a name of several words — comes. One sharing a
    single capitalised word with it comes too, unless it is another person's People note (a note with an address
    of its own that nobody on the email has): "EUR" or "Budget" (German capitalises every noun) never brings a
    third person's note along. A note found through the email's people alone comes when it also shares the
    email's topic: one naming the sender's address or linking to their People note (a meeting with them) when it
    holds at least MIN_TOPIC_WORDS of the email's words (`words`: the relatedness vocabulary, the people's names
    left out); a colleague's note (their organisation) never for that alone — it is someone else's. A single
    capitalised word needs a second shared word too. In a hub (`hub`, `is_hub`: a daily note naming everyone) only
    the lines linking to the email's people's notes (`people`: their link keys) count: the rest is about others."""
    if related.topic >= STRONG_TOPIC:
        return True
    if related.topic > 0:
        own = related.note.person.own_addresses
        return (not own or bool(own & audience)) and shares_topic(related.note.text, words)
    if not related.direct:
        return False
    return shares_topic(lines_about(related.note.text, people) if hub(related.note) else related.note.text, words)


def linked_for(note: KnowledgeNote, words: set[str], to_meet: bool, hub: Callable[[KnowledgeNote], bool]) -> bool:
    """Whether a note the sender's People note links to (`Working on: [[Kranich Portal]]`) comes with the email.
    It does, as what the person works on — unless the email only asks to meet (the calendar answers it, not the
    project), or the note is a hub (`hub`, `is_hub`: "Clients"): then only when it shares the email's topic
    (`shares_topic`)."""
    return (not to_meet and not hub(note)) or shares_topic(note.text, words)


def is_hub(knowledge: KnowledgeSource, note: KnowledgeNote) -> bool:
    """A note with HUB_PEOPLE People notes or more around it (linking to it or linked from it) — a category
    ("Clients", which every client's note links to), a daily note naming everyone it met — is about none of them
    in particular: a link between it and a person says nothing of their email. A project has a few people."""
    return knowledge.people_around(note.path, HUB_PEOPLE) >= HUB_PEOPLE


def shares_topic(text: str, words: set[str]) -> bool:
    """Whether a note's text holds at least MIN_TOPIC_WORDS of the email's `words` (`topic_words`): one shared word
    is chance, two are a topic."""
    return len(words.intersection(tokens(text))) >= MIN_TOPIC_WORDS


def lines_about(text: str, people: frozenset[str]) -> str:
    """The lines of a note that link to one of these notes (`people`: link keys, h0.vault.paths.link_key)."""
    return "\n".join(line for line in text.splitlines() if any(link_key(t) in people for t in link_targets(line)))


def circle_of(
    address: str, notes: Sequence[KnowledgeNote], resolve: Callable[[str], KnowledgeNote | None]
) -> tuple[frozenset[str], frozenset[str]]:
    """(addresses, domains) of the conversation's circle: the person the reply goes to, their organisation
    (an address's domain that is not a free-mail provider's), and the parties of the notes the context gives."""
    people = {address, *(a for note in notes for a in parties(note, resolve))}
    return frozenset(people), frozenset(organisations([address]))


def in_circle(reply: PastReply, circle: tuple[frozenset[str], frozenset[str]]) -> bool:
    people, domains = circle
    return any(a in people or a.rpartition("@")[2] in domains for a in reply.to)


def names_of(display_name: str, people: Sequence[KnowledgeNote]) -> list[str]:
    """Who the email's people are, as their email would name them: the sender's display name and first name,
    their People notes' titles and aliases (their organisation: `organisation_of`)."""
    names = [display_name, display_name.split()[0] if display_name.split() else ""]
    for note in people:
        names.append(note.title)
        names += note.person.aliases
    return [n for n in names if len(n.strip()) >= 3]


def organisation_of(people: Sequence[KnowledgeNote]) -> list[str]:
    """The organisation the People notes of the email's people name (`company:` and the like)."""
    return list(dict.fromkeys(n for note in people for n in _organisation(note) if len(n.strip()) >= 3))


def organisation_names(found: Sequence[RelatedKnowledge], sender: str) -> list[str]:
    """The names (`company:` and the like) the People notes among `found` give the sender's organisation: the
    notes with an address at the sender's domain, when that domain is an organisation's (not gmail.com & co.)."""
    domains = set(organisations([sender]))
    if not domains:
        return []
    colleagues = [
        related.note for related in found if {a.rpartition("@")[2] for a in related.note.person.own_addresses} & domains
    ]
    return organisation_of(colleagues)


def _organisation(note: KnowledgeNote) -> list[str]:
    return list(note.person.organisations)


def without_names(text: str, names: Sequence[str]) -> str:
    """The text without these names (whole, any case): who writes — their name, their People note's title — says
    nothing about what an email is about, and would tie it to every note of theirs or their colleagues'."""
    phrases = sorted({" ".join(n.split()) for n in names if n.strip()}, key=len, reverse=True)
    if not phrases:
        return text
    spelled = (r"\s+".join(re.escape(word) for word in phrase.split()) for phrase in phrases)
    return re.sub(r"(?<!\w)(?:" + "|".join(spelled) + r")(?!\w)", " ", text, flags=re.IGNORECASE)


def without_signature_names(text: str, names: Sequence[str]) -> str:
    """The text without these names in its closing lines (the last paragraph: the sign-off and the signature,
    "Kai Müller / Product designer, Brightline Labs"), where an organisation's name says who writes. In the body
    it may be what the email is about ("the Quanta dashboard"), and stays."""
    body, sep, closing = text.rstrip().rpartition("\n\n")
    if not sep or len(closing.splitlines()) > MAX_SIGNATURE_LINES:
        return text
    return f"{body}{sep}{without_names(closing, names)}"


def without_owner(text: str, owner: str) -> str:
    """The text without the owner's own name: "Hi Jonas", "Mr Berg" say nothing about what an email
    to Jonas Berg is about, and would tie it to every note that mentions him."""
    words = [w for w in re.findall(r"[^\W\d_]{2,}", owner or "") if len(w) >= 2]
    if not words:
        return text
    return re.sub(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b", " ", text, flags=re.IGNORECASE)


def email_thread_keys(email: NoteFacts) -> frozenset[str]:
    """The thread keys of an email note (h0.vault.disclosure.thread_keys), from its typed facts: its thread, its
    name, its provider's message id and its Message-ID (what a reply to it names as the message it answers)."""
    named = {"type": "email"} if email.path else {}  # a note's name is a key too; a text without a note has none
    own = thread_keys(email.path, {**named, "thread_id": email.thread_id, "message_id": email.message_id})
    return own | thread_keys("", {"message_id": email.rfc822_message_id})


def topic_words(text: str) -> set[str]:
    """The words of `text` a note must share with it to be about the same thing: the relatedness vocabulary
    (h0.drafting.knowledgenotes.tokens) without bare numbers — "2026" or "100" (of "1,100") name no topic; a code
    or an amount that does ("INV-2041") is matched as one by the index."""
    return {word for word in tokens(text) if not word.isdigit()}
