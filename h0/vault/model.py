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

The raw frontmatter stays on the `Note` for writing back and for showing what the person wrote; the
model is built lazily on first use (`Note.facts`) and never raises: what cannot be read is absent,
and `problems` says why.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from email.utils import getaddresses
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from h0.errors import H0Error, InvalidRequest
from h0.vault.dates import note_epoch
from h0.vault.draft_state import DraftState, Status, draft_status, status_word
from h0.vault.layout import NEEDS_ACTION
from h0.vault.paths import PathResolver, link_key
from h0.vault.suspicion import Suspicion, suspicion_of
from h0.vault.tags import PRIVATE, TAG_KEYS, private_tag, property_tags, text_private

__all__ = [
    "WORD_FIELDS",
    "Kind",
    "NoteFacts",
    "addresses",
    "awaiting",
    "field_word",
    "identifier",
    "is_mail",
    "kind_of",
    "note_facts",
    "note_kind",
    "note_thread",
    "recipient_lists",
    "source_key",
    "source_path",
]

MAX_ID = 998  # an identifier longer than a header line is not one
# The fields the model reads as words: compared trimmed and case-folded (`status: Needs_Info` is
# `needs_info` to the sweep, the reports and a listing's filter alike).
WORD_FIELDS = frozenset({"type", "status", "decision", "priority", "follow_up", "awaiting"})
_AWAITING = {"true": True, "yes": True, "false": False, "no": False}
RECIPIENT_FIELDS = ("to", "cc", "bcc")
# Line-like controls become a space (two addresses stay two), every other control goes.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1b\x7f-\x9f]")
_LINE_LIKE = re.compile(r"[\t\n\v\f\r\x1c-\x1f\x85\u2028\u2029]")
_TRUE = frozenset({"true", "yes", "y", "1", "on"})
_NOT_AUTOMATED = frozenset({"", "no", "false", "none", "null", "person"})
# The two shapes nearly every address field has, read without the full parser (~10x cheaper): a bare
# address, and a plain name before an <address>. Anything else goes through email.utils.getaddresses.
_BARE = re.compile(r"[^\s\"<>,;:()\\\[\]@]+@[^\s\"<>,;:()\\\[\]@]+")
_NAMED = re.compile(r"[\w' -]*<([^\s\"<>,;:()\\\[\]@]+@[^\s\"<>,;:()\\\[\]@]+)>\s*")


class Kind(StrEnum):
    """What a note is, by its `type:` (compared trimmed and case-folded)."""

    EMAIL = "email"  # a received message, in Needs_Action/ or filed
    SENT_EMAIL = "sent_email"  # a message the owner sent (imported history)
    FOLLOW_UP = "follow_up"  # a nudge H0 wrote for an answer the owner awaits
    OTHER = "other"  # anything else: a draft (no type), a person, a project, a hand-written note


MAIL_KINDS = frozenset({Kind.EMAIL, Kind.SENT_EMAIL})


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
    type_word = _word(frontmatter.get("type"))
    sender_text = _clean(frontmatter.get("from"))
    senders = addresses(sender_text)
    source = source_path(frontmatter.get("source"))
    lists = recipient_lists(*(frontmatter.get(name) for name in RECIPIENT_FIELDS))
    return NoteFacts(
        path=path,
        kind=_kind(type_word),
        type_word=type_word,
        status=draft_status(frontmatter),
        subject=_clean(frontmatter.get("subject")).strip(),
        sender=senders[0].lower() if senders else "",
        sender_text=sender_text.strip(),
        to=tuple(lists["to"]),
        cc=tuple(lists["cc"]),
        bcc=tuple(lists["bcc"]),
        source=source,
        source_key=link_key(source) if source else None,
        private=marked_private(frontmatter, body),
        thread_id=_ident(frontmatter.get("thread_id")),
        message_id=_ident(frontmatter.get("message_id")),
        rfc822_message_id=_ident(frontmatter.get("rfc822_message_id")),
        reply_to_message_id=_ident(frontmatter.get("reply_to_message_id")),
        draft_id=_ident(frontmatter.get("draft_id")),
        received=_epoch(frontmatter, "received", problems),
        sent_at=_epoch(frontmatter, "sent_at", problems),
        drafted_at=_epoch(frontmatter, "drafted_at", problems),
        send_anyway=flag(frontmatter.get("send_anyway")),
        problems=tuple(problems),
        decision=_word(frontmatter.get("decision")),
        priority=_word(frontmatter.get("priority")),
        follow_up=_word(frontmatter.get("follow_up")),
        drafted_by=_clean(frontmatter.get("drafted_by")).strip()[:MAX_ID],
        reply_to=tuple(addresses(frontmatter.get("reply_to"))),
        date=_clean(frontmatter.get("date")).strip()[:MAX_ID],
        suspicion=suspicion_of(frontmatter),
        meeting_request=flag(frontmatter.get("meeting_request")),
        proposed_slots=tuple(_clean(v).strip()[:MAX_ID] for v in _listed(frontmatter.get("proposed_slots"))[:10]),
        automated="" if (kind := _word(frontmatter.get("automated"))) in _NOT_AUTOMATED else kind[:40],
    )


def recipient_lists(to: Any = None, cc: Any = None, bcc: Any = None) -> dict[str, list[str]]:
    """{"to": [...], "cc": [...], "bcc": [...]}: each recipient's real address, in order, no display name.

    Each value may be a string ("a@x.com, Bo <b@y.org>"), a list of such strings, or None; split exactly as
    the send path splits (h0.mail.compose.addresses.parse_recipients), so a report never shows fewer recipients
    than a message has."""
    return {field: addresses(value) for field, value in zip(RECIPIENT_FIELDS, (to, cc, bcc))}


def addresses(value: Any) -> list[str]:
    """The real addresses a header-like value names, in order (display names dropped)."""
    if value is None or value == "" or isinstance(value, (bool, dict)):
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    texts = [_clean(item) for item in items if item is not None and not isinstance(item, (bool, dict, list))]
    if len(texts) == 1:
        text = texts[0].strip()
        if _BARE.fullmatch(text):
            return [text]
        if named := _NAMED.fullmatch(text):
            return [named.group(1)]
    found: list[str] = []
    for name, addr in getaddresses(texts):
        address = (addr or name).strip()
        if address:
            found.append(address)
    return found


def source_path(value: Any) -> str | None:
    """The vault path a `source:` names: a path, or a [[wikilink]] with or without folder, `|alias`,
    `#heading` or `.md` (a bare name is a note in Needs_Action/). Only text: confinement is the
    reader's (`inbox_source` resolves it on disk). An unquoted `source: [[EMAIL_1]]`,
    which YAML reads as a list in a list, is the link it looks like."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list) and len(value[0]) == 1:
        value = f"[[{value[0][0]}]]" if isinstance(value[0][0], str) else None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
        if not text:
            return None
        if "/" not in text:
            text = f"{NEEDS_ACTION}/{text}"
        if not text.lower().endswith(".md"):
            text += ".md"
    return text.replace("\\", "/")


def inbox_source(paths: PathResolver, value: Any) -> str | None:
    """The email note a draft answers, as a path confined to Needs_Action/ (None otherwise).

    `source:` is written by triage but editable by anyone: it must resolve — `..`, symlinks and all —
    to a note directly in Needs_Action/, so it can never file or mark another note (the rules file, a
    draft). The daemon's handlers and the mail server's filing both ask this."""
    text = source_path(value)
    if text is None:
        return None
    try:
        target = paths.resolve(text, note=True)
    except H0Error:
        return None
    parts = target.rel.split("/")
    if len(parts) != 2 or parts[0] != NEEDS_ACTION or os.path.islink(target.abs):
        return None
    try:
        if not os.path.samefile(target.abs.parent, paths.root / NEEDS_ACTION):
            return None
    except OSError:
        return None
    return target.rel


def source_key(value: Any) -> str | None:
    """How `source:` values are compared: `[[EMAIL_1]]` and `Needs_Action/EMAIL_1.md` are one email."""
    path = source_path(value)
    return link_key(path) if path else None


def flag(value: Any) -> bool:
    """A yes/no property: true, yes, y, 1 or on (any case) is yes; anything else is no."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value == 1
    return isinstance(value, str) and value.strip().casefold() in _TRUE


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


def _kind(word: str) -> Kind:
    try:
        return Kind(word)
    except ValueError:
        return Kind.OTHER


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None or isinstance(value, (bool, dict)) else [value]


def _word(value: Any) -> str:
    return value.strip().casefold() if isinstance(value, str) else ""


def _clean(value: Any) -> str:
    if value is None or isinstance(value, (bool, dict, list)):
        return ""
    return _CONTROLS.sub("", _LINE_LIKE.sub(" ", str(value)))


def _ident(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = _clean(value).strip()
    return text[:MAX_ID] if text else None


def _epoch(frontmatter: Mapping[str, Any], field: str, problems: list[str]) -> float | None:
    try:
        return note_epoch(frontmatter.get(field), field)
    except InvalidRequest as error:
        problems.append(error.message)
        return None


def field_word(value: Any) -> str:
    """A word field's text (`WORD_FIELDS`) as the model compares it: trimmed and case-folded."""
    return _word(value)


def kind_of(value: Any) -> Kind:
    """What a `type:` value says a note is (trimmed, case-folded; anything unknown is OTHER)."""
    return _kind(_word(value))


def identifier(value: Any) -> str | None:
    """An identifier property (`thread_id`, `message_id`, …) as clean text; None when it is not one."""
    return _ident(value)


def note_kind(frontmatter: Mapping[str, Any]) -> Kind:
    """`NoteFacts.kind` from the frontmatter alone, without building the model (a pass sorting every note)."""
    return kind_of(frontmatter.get("type"))


def note_status(frontmatter: Mapping[str, Any]) -> Status:
    """`NoteFacts.status` from the frontmatter alone, without building the model (a pass over many rows)."""
    return draft_status(frontmatter)


def note_thread(frontmatter: Mapping[str, Any]) -> str | None:
    """`NoteFacts.thread_id` from the frontmatter alone, without building the model."""
    return _ident(frontmatter.get("thread_id"))


def awaiting(frontmatter: Mapping[str, Any]) -> bool | None:
    """The owner's `awaiting:` on a note (true/yes, false/no, any case): whether H0 waits for an answer in
    its thread, overriding what the follow-ups judged; None when absent or not one of those words."""
    value = frontmatter.get("awaiting")
    if isinstance(value, bool):
        return value
    return _AWAITING.get(_word(value))


def is_mail(frontmatter: Mapping[str, Any]) -> bool:
    """`NoteFacts.is_mail` from the frontmatter alone, without building the model: the index asks it of
    every note it reads."""
    kind = kind_of(frontmatter.get("type"))
    if kind in MAIL_KINDS:
        return True
    subject = _clean(frontmatter.get("subject")).strip()
    return _draft_like(kind, addresses(frontmatter.get("to")), subject, status_word(frontmatter))


def _draft_like(kind: Kind, to: Sequence[str], subject: str, status: str) -> bool:
    return bool(to) and bool(subject or status) and kind is not Kind.EMAIL
