"""What a handler did: `Outcome` (an `Action` of the whole vocabulary, a line for the human, when to look
again, and the facts the pipeline announces), the one answer every handler returns (h0.handlers.context
gives handlers what they work with; this module is what they give back)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypedDict

from h0.errors import H0Error
from h0.retry import Again


class OutcomeData(TypedDict, total=False):
    """An Outcome's facts: its report signal's keywords (h0.pipeline.signals), what the pass tally counts."""

    done_path: str  # sent, rejected: where the note was filed in Done/
    to: str  # sent: the To addresses the message went to
    recipients: dict[str, list[str]]  # sent: every recipient by real address (h0.mail.compose.recipients)
    message_id: str  # sent: the provider's id
    already_sent: bool  # sent: it had gone out before (a crash between send and filing)
    elapsed_ms: float  # sent, revised
    error: H0Error  # failed, refused, held, bounced
    retry_in: float | None  # failed: when the pipeline looks again (None: not retried)
    kind: str  # failed, paused: "cap" (frees by itself), "auth" (needs the human), "elsewhere" (another computer sends)
    sent_from: str  # paused, "elsewhere": the computer that sends this vault's drafts
    setting: str | None  # a send cap's setting (RATE_LIMIT_PER_HOUR, …)
    resumes_at: float  # a send cap: when sending resumes (epoch seconds)
    returned_to: str  # refused, held: where the draft went back to in Drafts/
    failed_path: str  # bounced: where the draft was filed in Logs/failed/
    decision: str  # triaged, rejected
    confidence: float  # triaged
    draft_path: str | None  # triaged: the reply draft written, if any
    outcomes: int  # learned: how many drafts were compared
    copy_of: str  # skipped: the sent note this one is a copy of (filed in Done/, never sent)


class Action(StrEnum):
    """What a handler did: the whole outcome vocabulary. The values are what logs and JSON carry."""

    SENT = "sent"  # the message went out (or had gone out before) and the draft is filed in Done/
    FAILED = "failed"  # a try that did not work: the work queue looks again after its backoff
    BOUNCED = "bounced"  # the provider refused the message for good: filed in Logs/failed/
    PAUSED = "paused"  # sending is paused (credentials, a send cap): the draft waits in Approved/
    REFUSED = "refused"  # not sendable as it is: back in Drafts/ with the reason on it
    HELD = "held"  # not sent until the human looks again (changed before approval, a second reply, …)
    REJECTED = "rejected"  # the human rejected it: filed in Done/, never sent
    TRIAGED = "triaged"  # an email was decided
    DEFERRED = "deferred"  # the model could not triage now: retried with backoff
    WAITING = "waiting"  # not yet (still being written, unreadable, waiting for a model): looked at again
    GONE = "gone"  # the note is no longer there
    SKIPPED = "skipped"  # nothing to do
    LEARNED = "learned"  # drafts compared with what was sent
    REVISED = "revised"  # a draft rewritten on the human's instruction
    RESCHEDULED = "rescheduled"  # a waiting draft's proposed times made current from the calendar
    NOT_REVISED = "not_revised"  # the instruction could not be carried out


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a handler did. `retry_in` asks the pipeline to look again after that many seconds;
    `data` carries the facts the pipeline announces (e.g. on its `email-sent` signal). `retry_in` is
    a fact the handler knows (until a draft is quiet) or the queue's own answer it asked for (`wait`)."""

    action: Action
    detail: str = ""
    retry_in: float | None = None
    data: OutcomeData = field(default_factory=lambda: OutcomeData())
    again: Again | None = None  # why it is looked at again; with no `retry_in`, the queue says when
