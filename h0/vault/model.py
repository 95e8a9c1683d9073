"""What a note says, typed: an email, a draft, a sent note — read and validated once, where it is read.

A note's frontmatter is written by H0, by the owner in Obsidian, by agents through MCP and by anything
with file access, so every value may be missing, of the wrong type, or spelled another way. Every part
of H0 that decides something from a note asks this model instead of reading the dict:

- `kind`: what `type:` says (`email`, `sent_email`, `follow_up`, …), trimmed and case-folded once; `status`:
  the draft state (`h0.vault.draft_state`: `Rejected`, ` REJECTED ` and `rejected` are one state everywhere);
- `to` / `cc` / `bcc` / `sender`: the real addresses, display names dropped, exactly as the send path splits them;
- `source`: the email note a draft answers as one key, whatever the spelling (`[[EMAIL_1]]`,
  `[[Needs_Action/EMAIL_1.md|the email]]`, `Needs_Action/EMAIL_1.md`);
- `private`: the note's own words say it is private (a `private:` key in any case with a true word, a private tag
  in its properties or, when its text was read, in its text: h0.vault.tags); folders, threads and private people
  are the disclosure gate's (`h0.vault.disclosure.Disclosure`), which takes this answer as its first;
- dates as epochs (`received`, `sent_at`, `drafted_at`), with a bad date one typed problem;
- an email's `automated:` (the machine-made kind ingest found: h0.mail.incoming.automated); flags (`send_anyway`;
  `suspicion`, triage's suspected attack: h0.vault.suspicion); the identifiers (`message_id`, …) as clean text.

What only some consumers ask is read on first use, by idea (h0.vault.marks): `stale`, `follow_up_marks`,
`snooze`, `model_wait`, `returned`, `triage`, `revisions`, `email`, `sending_claim`, `rule_timeouts`. Each value is read by the one reader
of its kind (h0.vault.values: flag, addresses, words, identifiers; h0.vault.dates: dates, a time without
an offset in the owner's zone). A draft's strict view, what it sends, is `h0.vault.sendable`.

The raw frontmatter stays on the `Note` for writing back and for showing what the person wrote; the
model is built lazily on first use (`Note.facts`) and never raises: what cannot be read is absent,
and `problems` says why. No part of H0 outside h0/vault/ reads a raw key (tests/test_note_reads.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from functools import cached_property
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

from h0.errors import InvalidRequest
from h0.vault import marks
from h0.vault.dates import note_epoch
from h0.vault.draft_state import DraftState, Status, draft_status, status_word
from h0.vault.paths import link_key
from h0.vault.suspicion import Suspicion, suspicion_of
from h0.vault.tags import PRIVATE, TAG_KEYS, private_tag, property_tags, text_private
from h0.vault.values import (
    RECIPIENT_FIELDS,
    addresses,
    clean,
    flag,
    identifier,
    line,
    listed,
    named_addresses,
    recipient_lists,
    source_path,
    word,
)

__all__ = [
    "WORD_FIELDS",
    "Kind",
    "NoteFacts",
    "is_mail",
    "kind_of",
    "marked_private",
    "note_facts",
]

# The fields the model reads as words: compared trimmed and case-folded (`status: Needs_Info` is
# `needs_info` to the sweep, the reports and a listing's filter alike).
WORD_FIELDS = frozenset({"type", "status", "decision", "priority", "follow_up", "awaiting"})
_NOT_AUTOMATED = frozenset({"", "no", "false", "none", "null", "person"})
R = TypeVar("R")


class Kind(StrEnum):
    """What a note is, by its `type:` (compared trimmed and case-folded)."""

    EMAIL = "email"  # a received message, in Needs_Action/ or filed
    SENT_EMAIL = "sent_email"  # a message the owner sent (imported history)
    FOLLOW_UP = "follow_up"  # a nudge H0 wrote for an answer the owner awaits
    OTHER = "other"  # anything else: a draft (no type), a person, a project, a hand-written note


MAIL_KINDS = frozenset({Kind.EMAIL, Kind.SENT_EMAIL})


def _on_first_use(reader: Callable[[Mapping[str, Any]], R]) -> cached_property[R]:
    """A property of NoteFacts that `reader` reads from the raw frontmatter the first time it is asked."""

    def read(facts: NoteFacts) -> R:
        return reader(facts._raw)

    return cached_property(read)


class NoteFacts(BaseModel):
    """The typed reading of one note's frontmatter (see the module's docstring)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    path: str
    kind: Kind
    type_word: str  # `type:` as written, trimmed and case-folded ("" when absent)
    status: Status
    subject: str
    sender: str  # the real address of `from:` ("" when none)
    sender_text: str  # `from:` as written, controls removed
    to: tuple[str, ...]
    cc: tuple[str, ...]
    bcc: tuple[str, ...]
    source: str | None  # the email note answered, as a vault path (a bare [[name]] is in Needs_Action/)
    source_key: str | None  # how two `source`s are compared (h0.vault.paths.link_key)
    private: bool
    thread_id: str | None
    message_id: str | None  # the provider's message id (`message_id:`)
    rfc822_message_id: str | None
    reply_to_message_id: str | None
    draft_id: str | None
    received: float | None
    sent_at: float | None
    drafted_at: float | None
    send_anyway: bool
    problems: tuple[str, ...]
    decision: str  # triage's `decision:` (urgent, needs_info, delegate, …), trimmed and case-folded
    priority: str  # a draft's `priority:` (urgent), trimmed and case-folded
    follow_up: str  # `follow_up:` (reply_owed, reply_awaited, replied, draft), trimmed and case-folded
    drafted_by: str  # who wrote a draft's text (`rules`, a provider's name), as written
    reply_to: tuple[str, ...] = ()  # the real addresses of `reply_to:` (where a reply goes before `from:`)
    date: str = ""  # an email's Date header as written: its offset is the sender's zone (h0.drafting.scheduling)
    suspicion: Suspicion | None = None  # triage's suspected attack (`suspected_phishing:` and its reason)
    meeting_request: bool = False  # a reply to a request to meet: its times kept current (h0.handlers.reschedule)
    proposed_slots: tuple[str, ...] = ()  # the times such a draft proposes, ISO 8601 with their offset
    automated: str = ""  # an email's `automated:` kind (auto_reply, bounce, list, notification); "" for a person's
    gmail_message_id: str | None = None  # the provider's id of a message H0 sent (written when it is filed)
    idempotency_key: str | None = None  # the key of H0's send of this note (written when it is filed)
    _raw: Mapping[str, Any] = PrivateAttr(default_factory=dict)  # read by the parts above (h0.vault.marks)

    @property
    def is_email(self) -> bool:
        return self.kind is Kind.EMAIL

    @property
    def rejected(self) -> bool:
        return self.status.state is DraftState.REJECTED

    @property
    def recipients(self) -> dict[str, list[str]]:
        return {"to": list(self.to), "cc": list(self.cc), "bcc": list(self.bcc)}

    @property
    def all_recipients(self) -> tuple[str, ...]:
        return (*self.to, *self.cc, *self.bcc)

    @property
    def looks_like_draft(self) -> bool:
        """A reply draft, wherever it is kept: recipients, a subject and a status of its own."""
        return _draft_like(self.kind, self.to, self.subject, self.status.word)

    @property
    def addressed(self) -> tuple[tuple[str, str], ...]:
        """(display name as written, address) of each `to:` and `cc:` recipient: whom a greeting names."""
        return tuple(named_addresses(self._raw.get("to")) + named_addresses(self._raw.get("cc")))

    # Read on first use, by idea (h0.vault.marks).
    stale = _on_first_use(marks.stale)
    follow_up_marks = _on_first_use(marks.follow_up)
    snooze = _on_first_use(marks.snooze)
    model_wait = _on_first_use(marks.model_wait)
    returned = _on_first_use(marks.returned)
    triage = _on_first_use(marks.triage_marks)
    revisions = _on_first_use(marks.revisions)
    email = _on_first_use(marks.email_marks)
    sending_claim = _on_first_use(marks.sending_claim)

    @property
    def rule_timeouts(self) -> tuple[str, ...]:
        return marks.rule_timeouts(self._raw)

    def answers(self, email_path: str) -> bool:
        """This note's `source` names the email note at `email_path` (any spelling of the link)."""
        return self.source_key is not None and self.source_key == link_key(email_path)

    @property
    def is_mail(self) -> bool:
        """An email (received or sent) or a reply draft: a stranger's words or H0's, never what the owner
        knows (the index and the knowledge notes leave its words out of what a note is about)."""
        return self.kind in MAIL_KINDS or self.looks_like_draft


def note_facts(path: str, frontmatter: Mapping[str, Any], body: str | None = None) -> NoteFacts:
    """The typed reading of a note; never raises (see `NoteFacts.problems`). `body`: its text, when read
    (a `#private` tag there makes it private)."""
    problems: list[str] = []
    type_word = word(frontmatter.get("type"))
    sender_text = clean(frontmatter.get("from"))
    senders = addresses(sender_text)
    source = source_path(frontmatter.get("source"))
    lists = recipient_lists(*(frontmatter.get(name) for name in RECIPIENT_FIELDS))
    facts = NoteFacts(
        path=path,
        kind=_kind(type_word),
        type_word=type_word,
        status=draft_status(frontmatter),
        subject=clean(frontmatter.get("subject")).strip(),
        sender=senders[0].lower() if senders else "",
        sender_text=sender_text.strip(),
        to=tuple(lists["to"]),
        cc=tuple(lists["cc"]),
        bcc=tuple(lists["bcc"]),
        source=source,
        source_key=link_key(source) if source else None,
        private=marked_private(frontmatter, body),
        thread_id=identifier(frontmatter.get("thread_id")),
        message_id=identifier(frontmatter.get("message_id")),
        rfc822_message_id=identifier(frontmatter.get("rfc822_message_id")),
        reply_to_message_id=identifier(frontmatter.get("reply_to_message_id")),
        draft_id=identifier(frontmatter.get("draft_id")),
        received=_epoch(frontmatter, "received", problems),
        sent_at=_epoch(frontmatter, "sent_at", problems),
        drafted_at=_epoch(frontmatter, "drafted_at", problems),
        send_anyway=flag(frontmatter.get("send_anyway")),
        problems=tuple(problems),
        decision=word(frontmatter.get("decision")),
        priority=word(frontmatter.get("priority")),
        follow_up=word(frontmatter.get("follow_up")),
        drafted_by=line(frontmatter.get("drafted_by")),
        reply_to=tuple(addresses(frontmatter.get("reply_to"))),
        date=line(frontmatter.get("date")),
        suspicion=suspicion_of(frontmatter),
        meeting_request=flag(frontmatter.get("meeting_request")),
        proposed_slots=tuple(line(v) for v in listed(frontmatter.get("proposed_slots"))[:10]),
        automated="" if (kind := word(frontmatter.get("automated"))) in _NOT_AUTOMATED else kind[:40],
        gmail_message_id=identifier(frontmatter.get("gmail_message_id")),
        idempotency_key=identifier(frontmatter.get("idempotency_key")),
    )
    facts._raw = frontmatter
    return facts


def marked_private(frontmatter: Mapping[str, Any], body: str | None = None) -> bool:
    """The note's own words say it is private: a `private` key (any case) that is true, yes, y, 1 or on; a
    private tag in `tags:` (`private`, `#Private`, nested `private/health`); or, when its text is given, a
    private tag in its text as Obsidian reads tags (`#private`, `#private/health`: h0.vault.tags)."""
    for key, value in frontmatter.items():
        name = str(key).strip().casefold()
        if name == PRIVATE and flag(value):
            return True
        if name in TAG_KEYS and any(private_tag(tag) for tag in property_tags(value)):
            return True
    return text_private(body)


def _kind(text: str) -> Kind:
    try:
        return Kind(text)
    except ValueError:
        return Kind.OTHER


def _epoch(frontmatter: Mapping[str, Any], field: str, problems: list[str]) -> float | None:
    try:
        return note_epoch(frontmatter.get(field), field)
    except InvalidRequest as error:
        problems.append(error.message)
        return None


def kind_of(value: Any) -> Kind:
    """What a `type:` value says a note is (trimmed, case-folded; anything unknown is OTHER)."""
    return _kind(word(value))


def is_mail(frontmatter: Mapping[str, Any]) -> bool:
    """`NoteFacts.is_mail` from the frontmatter alone, without building the model: the index asks it of
    every note it reads."""
    kind = kind_of(frontmatter.get("type"))
    if kind in MAIL_KINDS:
        return True
    subject = clean(frontmatter.get("subject")).strip()
    return _draft_like(kind, addresses(frontmatter.get("to")), subject, status_word(frontmatter))


def _draft_like(kind: Kind, to: Sequence[str], subject: str, status: str) -> bool:
    return bool(to) and bool(subject or status) and kind is not Kind.EMAIL
