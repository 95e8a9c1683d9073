"""What is marked on a note besides the message it is: H0's bookkeeping and the owner's marks, by idea.

The parts of `NoteFacts` (h0.vault.model) that only some consumers ask, each read once on first use from
the note's frontmatter, never raising: a draft whose thread moved on (`Stale`), the follow-up pass's
marks and the owner's snooze (`FollowUp`, `Snooze`), an email waiting for the model (`ModelWait`), a
draft H0 gave back (`Returned`), triage's words on an email (`TriageMarks`), a draft's revisions
(`Revisions`), the headers ingest kept on an email (`EmailMarks`), and which computer claims sending
(`SendingClaim`, the claim note's: h0.vault.sending_computer).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from h0.errors import InvalidRequest
from h0.vault.dates import date_problem, note_epoch, stamp_epoch
from h0.vault.values import clean, count, flag, identifier, line, texts, word

SNOOZE = "snooze_until"
SNOOZE_HOW = "write a date like 2026-05-12, or a date and time like 2026-05-12 09:00"
STALE_REASON = "a newer message arrived in this thread"
_AWAITING = {"true": True, "yes": True, "false": False, "no": False}
MAX_REASON = 300
# The keys of an email waiting for the model (h0.handlers.llmwait writes them).
WAITING_KEY, SINCE_KEY, ATTEMPTS_KEY, RETRY_AT_KEY = (
    "h0_waiting",
    "h0_waiting_since",
    "h0_model_attempts",
    "h0_retry_at",
)
WAIT_KEYS = (WAITING_KEY, SINCE_KEY, ATTEMPTS_KEY, RETRY_AT_KEY)
INSTRUCTION_KEY = "h0"  # the owner's order for a rewrite, as a property (h0.drafting.instructions)
TEXT_HASH_KEY = "h0_text_hash"  # the hash of the text H0 last wrote in a draft (h0.drafting.learning)
RULE_TIMEOUTS_KEY = "h0_rule_timeouts"  # on the rules note: the rules that ran out of time (h0.triage.rulereport)


@dataclass(frozen=True, slots=True)
class Stale:
    """Ingest or the follow-up pass marked a draft `stale: true`: its thread moved on after the email it answers."""

    stale: bool  # `stale:` is a yes (h0.vault.values.flag)
    reason: str  # `stale_reason:`, else the usual reason
    since: str  # `stale_since:` as written: the [[link]] of the newer email, or when the owner replied elsewhere


@dataclass(frozen=True, slots=True)
class FollowUp:
    """The follow-up pass's marks on an email (h0.handlers.followup) and the owner's `awaiting:`."""

    draft: str  # `draft:`: the draft an email waits for (or was answered with), a vault path as written
    replied_with: str  # `replied_with:`: the sent reply an email was filed with, as written
    reply_owed_since: float | None
    asked_at: float | None
    awaiting_from: str  # whom the owner waits on, as written ("Name <address>", joined by commas)
    awaiting: bool | None  # the owner's `awaiting:` (true/yes, false/no): None when absent or another word
    date_error: str  # the `date_error:` the pass wrote last ("" when none)
    date_problem: InvalidRequest | None  # the first date of the note that is malformed or out of range (now)


@dataclass(frozen=True, slots=True)
class Snooze:
    """`snooze_until:` — hidden until then (h0.followup.snooze); a broken value hides nothing."""

    until: float | None  # the epoch it means; None when absent or broken
    problem: InvalidRequest | None  # why the value cannot be read, saying how to write it
    written: str  # the value as written, for messages
    error: str  # the `snooze_error:` H0 wrote last ("" when none)
    woke_at: float | None  # `snooze_woke_at:`: when the snooze ended
    woke_at_written: str
    woke_reason: str

    @property
    def set(self) -> bool:
        return bool(self.written)


@dataclass(frozen=True, slots=True)
class ModelWait:
    """An email whose model could not answer (h0.handlers.llmwait): `h0_waiting` and its companions."""

    keys: tuple[str, ...]  # which of the wait's keys the note carries (a decision removes them)
    reason: str  # `h0_waiting:` ("" when not waiting)
    since: float | None
    since_written: str
    attempts: int
    retry_at: float | None


@dataclass(frozen=True, slots=True)
class Returned:
    """A draft H0 gave back with a reason (`h0_error`, its code and when)."""

    given_back: bool  # the note carries `h0_error:` at all
    code: str
    reason: str
    at: str


@dataclass(frozen=True, slots=True)
class TriageMarks:
    """Triage's words on an email, shown to the owner: the problem it found, its reasoning, whom to ask."""

    problem: str
    reasoning: str
    delegate_to: str


@dataclass(frozen=True, slots=True)
class Revisions:
    """A draft's revision bookkeeping (h0.drafting.revise, h0.drafting.learning)."""

    count: int  # `revisions:`
    text_hash: str  # `h0_text_hash:`: the hash of the text H0 wrote last ("" when none)
    instruction: str  # the `h0:` property: the owner's order for a rewrite, one line ("" when none)


@dataclass(frozen=True, slots=True)
class EmailMarks:
    """What ingest kept of an email's headers besides the model's fields, as triage's rules read them."""

    to_written: tuple[str, ...]  # `to:` as written, display names kept
    cc_written: tuple[str, ...]
    received_written: str  # `received:` as the email said it
    labels: tuple[str, ...]
    has_attachments: bool
    attachment_names: tuple[str, ...]
    auth: Mapping[str, str] | None  # the provider's SPF/DKIM/DMARC verdicts, lower-case words; None: unknown


def stale(fm: Mapping[str, Any]) -> Stale:
    return Stale(
        flag(fm.get("stale")), line(fm.get("stale_reason"), MAX_REASON) or STALE_REASON, line(fm.get("stale_since"))
    )


def follow_up(fm: Mapping[str, Any]) -> FollowUp:
    value = fm.get("awaiting")
    return FollowUp(
        draft=line(fm.get("draft")),
        replied_with=line(fm.get("replied_with")),
        reply_owed_since=stamp_epoch(fm.get("reply_owed_since")),
        asked_at=stamp_epoch(fm.get("asked_at")),
        awaiting_from=", ".join(texts(fm.get("awaiting_from"), 100)),
        awaiting=value if isinstance(value, bool) else _AWAITING.get(word(value)),
        date_error=line(fm.get("date_error")),
        date_problem=date_problem(fm),
    )


def snooze(fm: Mapping[str, Any]) -> Snooze:
    value = fm.get(SNOOZE)
    until: float | None = None
    problem: InvalidRequest | None = None
    if value is not None and not (isinstance(value, str) and not value.strip()):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)  # a number is no date: said as written
        try:
            until = note_epoch(value, SNOOZE, how=SNOOZE_HOW)
        except InvalidRequest as error:
            problem = error
    return Snooze(
        until=until,
        problem=problem,
        written=" ".join(str(value).split())[:80] if value is not None else "",
        error=line(fm.get("snooze_error")),
        woke_at=stamp_epoch(fm.get("snooze_woke_at")),
        woke_at_written=line(fm.get("snooze_woke_at")),
        woke_reason=line(fm.get("snooze_woke_reason")),
    )


def model_wait(fm: Mapping[str, Any]) -> ModelWait:
    return ModelWait(
        keys=tuple(key for key in WAIT_KEYS if key in fm),
        reason=line(fm.get(WAITING_KEY)) if fm.get(WAITING_KEY) else "",
        since=stamp_epoch(fm.get(SINCE_KEY)),
        since_written=line(fm.get(SINCE_KEY)),
        attempts=count(fm.get(ATTEMPTS_KEY)),
        retry_at=stamp_epoch(fm.get(RETRY_AT_KEY)),
    )


def returned(fm: Mapping[str, Any]) -> Returned:
    return Returned(
        "h0_error" in fm, line(fm.get("h0_error_code")), line(fm.get("h0_error")), line(fm.get("h0_error_at"))
    )


def triage_marks(fm: Mapping[str, Any]) -> TriageMarks:
    return TriageMarks(line(fm.get("problem")), line(fm.get("reasoning")), line(fm.get("delegate_to")))


def revisions(fm: Mapping[str, Any]) -> Revisions:
    value = fm.get(INSTRUCTION_KEY)
    instruction = "" if isinstance(value, bool) or not isinstance(value, (str, int, float)) else clean(value)
    return Revisions(count(fm.get("revisions")), line(fm.get(TEXT_HASH_KEY)), " ".join(instruction.split()))


def email_marks(fm: Mapping[str, Any]) -> EmailMarks:
    auth = fm.get("auth")
    names = texts(fm.get("attachment_names"), 100)
    return EmailMarks(
        to_written=_written(fm.get("to")),
        cc_written=_written(fm.get("cc")),
        received_written=line(fm.get("received")),
        labels=texts(fm.get("labels"), 100),
        has_attachments=flag(fm.get("has_attachments")) or bool(names),  # named attachments exist, whatever a flag says
        attachment_names=names,
        auth=(
            {str(k).strip().lower()[:16]: str(v).strip().lower()[:16] for k, v in list(auth.items())[:8]}
            if isinstance(auth, dict)
            else None
        ),
    )


@dataclass(frozen=True, slots=True)
class SendingClaim:
    """What the claim note `Logs/H0_Sender.md` says (h0.vault.sending_computer): which computer sends."""

    machine: str  # `machine:`, the claiming computer's id ("" when absent or not one: nobody's claim)
    host: str  # `host:`, its name as shown to the owner ("" when absent)
    seen: float | None  # `seen:`, when it last said it sends, as an epoch; None when absent or unreadable
    sends_from: float | None  # `sends_from:`, when its sending begins (a claim that changed hands settles first)


def sending_claim(fm: Mapping[str, Any]) -> SendingClaim:
    return SendingClaim(
        identifier(fm.get("machine")) or "",
        line(fm.get("host"), 64),
        stamp_epoch(fm.get("seen")),
        stamp_epoch(fm.get("sends_from")),
    )


def rule_timeouts(fm: Mapping[str, Any]) -> tuple[str, ...]:
    """The lines H0 wrote on the rules note about rules that ran out of time, as they stand now."""
    value = fm.get(RULE_TIMEOUTS_KEY)
    return tuple(str(v) for v in value) if isinstance(value, list) else ((str(value),) if value else ())


def _written(value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, (list, tuple)) else [] if value is None or value == "" else [value]
    return tuple(str(v) for v in items if v is not None and str(v) != "" and not isinstance(v, (dict, list)))
