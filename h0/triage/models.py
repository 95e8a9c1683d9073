"""Triage's data: the email it sees, the decision it makes, and the outcome it reports.

`TriageDecision` is also the *only* shape an LLM answer can take: five decisions and a few
text fields. Nothing in it names a recipient, a tool or an action, so whatever a model is
talked into saying, the most it can do is pick one of the five and write text a human reviews.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from h0.printable import one_line
from h0.vault.model import NoteFacts
from h0.vault.values import flag, named_addresses

Decision = Literal["draft_reply", "archive", "needs_info", "urgent", "delegate"]
DECISIONS: tuple[str, ...] = ("draft_reply", "archive", "needs_info", "urgent", "delegate")
DRAFTING_DECISIONS = frozenset({"draft_reply", "urgent"})  # these become a note in Drafts/

MAX_REASONING_CHARS = 300
MAX_REPLY_CHARS = 20_000
MAX_DELEGATE_CHARS = 200

# C0/C1 controls except tab and newline: they have no place in a draft a human edits in Obsidian.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


MAX_QUESTIONS = 8
MAX_QUESTION_CHARS = 300
MAX_SOURCES = 20


def _short_list(value: Any, limit: int, chars: int) -> list[str]:
    """A model's list of short strings: a string alone becomes a list; others dropped; each one line."""
    if value is None or value == "":
        return []
    items = value if isinstance(value, (list, tuple)) else [value]
    out = [one_line(str(item), chars) for item in items if isinstance(item, (str, int, float)) and str(item).strip()]
    return list(dict.fromkeys(out))[:limit]


class TriageDecision(BaseModel):
    """What to do with one email. `reply_body` is set exactly for draft_reply and urgent.

    The first five fields are the whole answer a model must give (an answer with only them is
    valid). `questions` (what the reply needs that the owner's notes do not say) and `sources`
    (the labels of the owner's notes the reply used) are optional, for drafts."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    decision: Decision
    confidence: float = Field(ge=0.0, le=1.0)
    reasoning: str = Field(min_length=1)
    reply_body: str | None = None
    delegate_to: str | None = None
    questions: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)

    @field_validator("questions", mode="before")
    @classmethod
    def _questions(cls, value: Any) -> list[str]:
        return _short_list(value, MAX_QUESTIONS, MAX_QUESTION_CHARS)

    @field_validator("sources", mode="before")
    @classmethod
    def _sources(cls, value: Any) -> list[str]:
        return _short_list(value, MAX_SOURCES, 200)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        decision = data.get("decision")
        if isinstance(decision, str):
            # Models write "Draft Reply" or "needs-info"; still only the five values get through.
            decision = decision.strip().lower().replace("-", "_").replace(" ", "_")
            data["decision"] = decision
        # Stray fields are dropped rather than refused: they mean nothing for other decisions.
        if decision not in DRAFTING_DECISIONS:
            data["reply_body"] = None
        if decision != "delegate":
            data["delegate_to"] = None
        return data

    @field_validator("reasoning", mode="before")
    @classmethod
    def _one_line_reasoning(cls, value: Any) -> Any:
        return one_line(value, MAX_REASONING_CHARS) if isinstance(value, str) else value

    @field_validator("reply_body", mode="before")
    @classmethod
    def _clean_reply(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        text = _CONTROL.sub("", value.replace("\r\n", "\n")).strip()
        if len(text) > MAX_REPLY_CHARS:
            text = text[:MAX_REPLY_CHARS].rstrip() + "\n[… draft cut by H0]"
        return text or None

    @field_validator("delegate_to", mode="before")
    @classmethod
    def _one_line_delegate(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        return one_line(value, MAX_DELEGATE_CHARS) or None

    @model_validator(mode="after")
    def _fields_fit_decision(self) -> TriageDecision:
        if self.decision in DRAFTING_DECISIONS and not self.reply_body:
            raise ValueError(f"reply_body: a non-empty draft reply is required when decision is {self.decision}")
        if self.decision == "delegate" and not self.delegate_to:
            raise ValueError("delegate_to: say who should handle it when decision is delegate")
        return self


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value if v is not None)
    return str(value)


def _text_list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None and str(v) != ""]
    return [str(value)]


# What a note may hold where text belongs (None, a number, a list), read as that text without raising.
Text = Annotated[str, BeforeValidator(_text)]
TextList = Annotated[list[str], BeforeValidator(_text_list)]
OptionalText = Annotated[
    str | None, BeforeValidator(lambda value: None if value is None or value == "" else str(value))
]
Flag = Annotated[bool, BeforeValidator(flag)]  # the one reading of a yes/no (h0.vault.values)


class EarlierMessage(BaseModel):
    """One message before the email in its conversation (oldest first in `EmailInput.conversation`)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    sender: Text = ""
    date: Text = ""
    text: Text = ""
    own: bool = False  # the owner's reply (H0 sent it), not a stranger's message


class EmailInput(BaseModel):
    """The email as triage sees it. Everything is optional; missing text is an empty string.
    `conversation` holds the messages before it in its thread, as the vault knows them."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")

    sender: Text = Field(default="", alias="from")
    to: TextList = Field(default_factory=list)
    cc: TextList = Field(default_factory=list)
    subject: Text = ""
    body: Text = ""
    received: OptionalText = None
    labels: TextList = Field(default_factory=list)
    has_attachments: Flag = False
    attachment_names: TextList = Field(default_factory=list)
    message_id: OptionalText = None
    conversation: list[EarlierMessage] = Field(default_factory=list)
    # The receiving provider's SPF/DKIM/DMARC verdicts (the note's `auth:`), each a lower-case word; None: unknown.
    auth: dict[str, str] | None = None
    # What the caller found out at the edge (h0.handlers.triage_plan): the kind of machine-made mail it is
    # ("" for a person's: h0.mail.incoming.automated), and the sentence of the sender's own words that asks the
    # owner something ("" when none: h0.followup.asks). The rules' `automated` and `asks` conditions.
    automated: Text = ""
    asks: Text = ""

    @model_validator(mode="before")
    @classmethod
    def _named_attachments_exist(cls, data: Any) -> Any:
        # A note that names attachments has them, whatever a hand-edited flag says.
        if isinstance(data, dict) and data.get("attachment_names"):
            data = {**data, "has_attachments": True}
        return data

    @field_validator("auth", mode="before")
    @classmethod
    def _as_verdicts(cls, value: Any) -> dict[str, str] | None:
        if not isinstance(value, dict):
            return None
        return {str(k).strip().lower()[:16]: str(v).strip().lower()[:16] for k, v in list(value.items())[:8]}

    @classmethod
    def from_note(cls, facts: NoteFacts, body: str) -> EmailInput:
        """Build from what an email note says (the note model, which reads odd values — numbers, nulls, a
        string where a list belongs — without raising, because notes may be written by hand) and its body."""
        email = facts.email
        return cls.model_validate(
            {
                "from": facts.sender_text,
                "to": list(email.to_written),
                "cc": list(email.cc_written),
                "subject": facts.subject,
                "body": body,
                "received": email.received_written or None,
                "labels": list(email.labels),
                "has_attachments": email.has_attachments,
                "attachment_names": list(email.attachment_names),
                "message_id": facts.message_id,
                "auth": dict(email.auth) if email.auth is not None else None,
            }
        )

    @cached_property
    def _parsed_sender(self) -> tuple[str, str]:
        # Parsing is slow next to the rules themselves; parse once per email.
        found = named_addresses(self.sender)
        return found[0] if found else ("", "")

    @property
    def sender_name(self) -> str:
        return self._parsed_sender[0].strip()

    @property
    def sender_address(self) -> str:
        address = self._parsed_sender[1].strip().lower()
        return address if "@" in address else self.sender.strip().lower()

    @property
    def sender_domain(self) -> str:
        address = self.sender_address
        return address.rsplit("@", 1)[1].strip(" >") if "@" in address else ""


class OwnerNote(BaseModel):
    """A piece of the owner's own knowledge shown to the model (a People note, a past reply, …),
    labelled so the model can name what it used (`TriageDecision.sources`)."""

    model_config = ConfigDict(frozen=True)

    label: str  # how the model names it, e.g. "[[Dana Rivera]]"
    kind: str  # profile, lessons, person, linked, related, past_reply, similar_reply
    text: str
    why: str = ""  # why it was chosen ("the sender's People note", "the email mentions “Atlas”")


class ReplyContext(BaseModel):
    """What the owner's vault adds to a reply (assembled by h0.drafting): how it opens and
    closes, and the owner's notes the model may draw on. Triage without one writes the same
    drafts as before, minus the voice."""

    model_config = ConfigDict(frozen=True)

    greeting: str = ""  # "Hi Dana,"
    sign_off: str = ""  # "Cheers,\nAlex"
    notes: list[OwnerNote] = Field(default_factory=list)
    language: str | None = None
    # The free times a reply to a request to meet may propose (h0.calendar.proposal.prompt_text):
    # times only, never an event's title.
    schedule: str = ""
    briefing: str = ""  # rules mode: what the owner's notes say on each question (h0.drafting.briefing)
    # "Today is Tuesday, 2026-03-10, 14:05 in the owner's time zone (Europe/Berlin)." (h0.triage.prompt.today_line)
    today: str = ""
    address: str = ""  # how the reply addresses its reader where a language has two ways: "Sie (formal)", "du"


class TriageOutcome(BaseModel):
    """A decision plus how it was reached.

    `provider`/`model` name the configured decider. When `fallback` is True the LLM did not
    produce a usable answer and the rules engine decided instead; `fallback_reason` says why.
    `attempts` counts requests to the LLM (1 for the rules engine). `rule` names the rule that
    matched when the rules engine decided; `warnings` carries problems worth showing a human
    (a broken rules file, a safety override, a truncated answer).
    """

    model_config = ConfigDict(frozen=True)

    decision: TriageDecision
    provider: str
    model: str | None = None
    latency_ms: float
    fallback: bool = False
    fallback_reason: str | None = None
    attempts: int = 1
    rule: str | None = None
    warnings: list[str] = Field(default_factory=list)
    # The model could not answer *now* (unavailable, timed out, refused): the decision is the rules'
    # stand-in, and a caller that can wait (the triage handler) leaves the email pending and asks later.
    deferred: str | None = None
    retry_after: float | None = None  # seconds the server asked for before the next try, if it named them
    truncated: bool = False  # the answer was cut off at the token limit (its draft carries a placeholder)
