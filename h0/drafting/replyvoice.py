"""How one reply is written — its greeting and sign-off, its language, and how it addresses its reader — chosen
before the model writes (`choose_voice`) and enforced after it (`finish`).

- The greeting and sign-off are the owner's with this person (h0.drafting.voice), else the profile's, else H0's
  in the email's language and register (h0.drafting.register).
- **Bulk and automated senders get no personal greeting.** A newsletter signed "Design Weekly" is not a person
  called Design: mail the headers call automated (h0.mail.incoming.automated, asked of what the note holds), or
  whose sender's display name is their organisation's (the domain's own name, "Design Weekly" at
  designweekly.io, or a domain itself, "Amazon.de"), is greeted without a name ("Hello,", "Guten Tag,").
- **du / Sie and tu / vous agree.** Where the language has two ways to address the reader, the way is decided
  once: as the owner addresses this person in their replies, else as the email addresses the owner (people
  answer in kind), else formal when the email is. The greeting H0 chooses follows it, the prompt says it, and a
  reply body that addresses the reader the other way is asked for again once (with the language check: at most
  one extra call) and otherwise flagged.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import Message
from typing import TYPE_CHECKING

from h0.drafting.context import recipient_of
from h0.drafting.knowledgenotes import KnowledgeSource
from h0.drafting.ownvoice import in_owner_voice, split_model_reply
from h0.drafting.past import PastReplies
from h0.drafting.pastreply import PastReply
from h0.drafting.profile import Profile
from h0.drafting.register import Form, address_form, address_words, formal_register, impersonal_greeting
from h0.drafting.replylanguage import in_language
from h0.drafting.replytext import strip_quoted
from h0.drafting.voice import VOICE_WINDOW, Voice, language_of, voice_for
from h0.mail.incoming.automated import automated_kind
from h0.triage.prompt import new_nonce
from h0.vault.model import NoteFacts

if TYPE_CHECKING:
    from h0.triage.llm import LLMTriage

_SQUASH = re.compile(r"[^0-9a-zà-ÿ]+")
_DOMAIN_LIKE = re.compile(r"^[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}$", re.IGNORECASE)
# Second-level labels under a country code that are not the organisation's own name ("co.uk", "com.au").
_GENERIC_SECOND = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or"})


@dataclass(frozen=True, slots=True)
class ReplyVoice:
    """How one reply is written: its greeting and sign-off, its language and register."""

    voice: Voice
    language: str | None  # "de", …: the email's, else the person's (their People note's `language:`)
    formal: bool  # the reply is formal ("Dear Mr Berg," — or Sie, vous)
    form: Form | None = None  # du / Sie, tu / vous: "informal" or "formal" where the language has both
    bulk: bool = False  # the sender is no person (automated, or an organisation's name): no personal greeting

    @property
    def address(self) -> str:
        """How the prompt names the address form ("Sie (formal)", "tu (informal)"), "" where there is none."""
        word = address_words(self.language, self.form)
        return f"{word} ({self.form})" if word else ""


@dataclass(frozen=True, slots=True)
class FinishedReply:
    """A model's reply in the owner's voice and the right language, and what it took."""

    text: str
    extra_calls: int = 0  # model calls beyond the triage's own (a language or address re-ask: at most 1)
    flags: tuple[str, ...] = ()  # for the draft: what the owner must check before sending


def choose_voice(
    profile: Profile,
    past: PastReplies,
    knowledge: KnowledgeSource,
    reply_to: str | None,
    sender: str,
    text: str = "",
    email: NoteFacts | None = None,
) -> ReplyVoice:
    """The greeting, sign-off, language and address form of a reply to `reply_to` answering `text` from `sender`
    (`email`: the note's facts, when there is one: is the sender a person?)."""
    name, address = recipient_of(sender)
    address = (reply_to or address).strip().lower()
    words = strip_quoted(text) or text if text else ""
    language = (language_of(words) if words else None) or person_language(knowledge, address)
    history = past.addressed_to(address, VOICE_WINDOW)
    form = owners_form(history, language) or address_form(words, language)
    formal = form == "formal" if form is not None else (formal_register(words) if words else False)
    bulk = (email is not None and automated_sender(email)) or organisation_name(name, address)
    if bulk:
        voice = voice_for(address, "", profile, [], formal=formal, language=language)
        greeting = impersonal_greeting(language or (profile.languages[0] if profile.languages else "en"), formal)
        voice = dataclasses.replace(voice, greeting=greeting, source=f"{voice.source}; no name: {address} is no person")
        return ReplyVoice(voice, language, formal, form, bulk=True)
    voice = voice_for(address, name, profile, history, formal=formal, language=language)
    return ReplyVoice(voice, language, formal, form)


def owners_form(history: Sequence[PastReply], language: str | None) -> Form | None:
    """How the owner addresses this person (du / Sie, tu / vous) in their latest replies in `language`."""
    texts = [r.parts.body for r in history if r.parts.body and language_of(r.parts.body) == language]
    return address_form("\n".join(texts), language) if texts else None


def person_language(knowledge: KnowledgeSource, address: str) -> str | None:
    """The `language:` of this address's People note ("de", "German" is not understood: codes only)."""
    try:
        notes = knowledge.notes_for_address(address)
    except Exception:  # noqa: BLE001 - a broken note or index: the email's language decides
        return None
    for note in notes:
        if address not in note.person.own_addresses:
            continue  # a note that only mentions the address is not the person's
        if note.person.language:
            return note.person.language
    return None


def automated_sender(email: NoteFacts) -> bool:
    """Whether the mail's headers, as far as the note holds them (From, To, Subject), say no person wrote it
    (h0.mail.incoming.automated: the one rule; the note keeps no List-* or Auto-Submitted header)."""
    headers = Message()
    for name, value in (("From", email.sender_text), ("To", ", ".join(email.to)), ("Subject", email.subject)):
        if value:
            headers[name] = value
    return automated_kind(headers) is not None


def organisation_name(display_name: str, address: str) -> bool:
    """Whether the sender's display name is an organisation's, not a person's: a domain ("Amazon.de"), or the
    name of the address's own domain ("Design Weekly" at designweekly.io, "Slack" at slack.com, "Hetzner
    Online" at hetzner.com) — a first-name greeting would read "Hi Design,"."""
    name = display_name.strip().strip("\"'")
    if not name or "@" not in address:
        return False
    if " " not in name and _DOMAIN_LIKE.match(name):
        return True
    label = _own_label(address.rpartition("@")[2].lower())
    squashed = _SQUASH.sub("", name.lower())
    first = _SQUASH.sub("", name.split()[0].lower())
    return bool(label) and len(label) >= 3 and (squashed == label or first == label)


def _own_label(domain: str) -> str:
    """The organisation's own label of a domain: "designweekly" of designweekly.io, "adobe" of mail.adobe.com,
    "fernwood" of fernwood.co.uk."""
    labels = [part for part in domain.split(".") if part]
    if len(labels) < 2:
        return ""
    labels = labels[:-1]  # the top-level domain
    if len(labels) >= 2 and labels[-1] in _GENERIC_SECOND:
        labels = labels[:-1]
    return _SQUASH.sub("", labels[-1])


def finish(profile: Profile, reply: str, chosen: ReplyVoice, llm: LLMTriage | None = None) -> FinishedReply:
    """A model's reply made the owner's: its greeting and sign-off replaced by the owner's (never doubled), in the
    reply's language and addressing the reader as decided — asked once more when it is not, else flagged."""
    names = [n for n in (profile.name, profile.signature) if n]
    _, bare, _ = split_model_reply(reply, chosen.voice, names)  # the body alone, for the language check
    checked = in_language(bare, chosen.language, llm, new_nonce(), form=chosen.form)
    text = in_owner_voice(checked.text if checked.text != bare else reply, chosen.voice, names)
    return FinishedReply(text, checked.calls, (checked.flag,) if checked.flag else ())
