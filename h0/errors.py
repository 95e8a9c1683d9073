"""The typed errors every H0 layer raises and every MCP tool returns.

Each error carries one of the codes of ARCHITECTURE.md, a message a person can act on,
and a `details` mapping of plain JSON values. `to_dict()` is the wire shape
`{"error", "message", "details"}`; a few fields the spec shows at top level
(`retry_after`, `path`) are repeated there.

A refusal to send an approved note carries a `Refusal` (its value in `details["reason"]`, the
wire format), worded for the human from `WORDING`, the one table of what a person reads when a note
was not sent (`refuse()` builds the error). What becomes of that note is a `Then` (its value in
`details["then"]`): the mail server decides it for every error of a send, here, next to the
refusals (`then_of`), and the daemon's send step only acts on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar

_PROMOTED = ("retry_after", "path")


class H0Error(Exception):
    """Base class: an expected failure with a code, a message and JSON details."""

    code: ClassVar[str] = "internal_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = {k: v for k, v in details.items() if v is not None}

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"error": self.code, "message": self.message, "details": self.details}
        for key in _PROMOTED:
            if key in self.details:
                body[key] = self.details[key]
        return body

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, {self.details!r})"

    @property
    def refusal(self) -> Refusal | None:
        """Why an approved note was not sent, when this error is such a refusal (read from the wire's reason)."""
        reason = self.details.get("reason")
        try:
            return Refusal(reason) if isinstance(reason, str) else None
        except ValueError:
            return None

    @property
    def then(self) -> Then:
        """What becomes of the approved note this error answers: as the mail server's answer says it, else as
        `then_of` decides from the error itself (the server never answered: `mcp_unavailable`, tried again)."""
        value = self.details.get("then")
        try:
            return Then(value) if isinstance(value, str) else then_of(self)
        except ValueError:
            return then_of(self)


class AuthRequired(H0Error):
    code = "auth_required"


class NotFound(H0Error):
    code = "not_found"


class RateLimited(H0Error):
    code = "rate_limited"

    @property
    def retry_after(self) -> float:
        return float(self.details.get("retry_after", 0))


class PermissionDenied(H0Error):
    code = "permission_denied"


class ParseError(H0Error):
    code = "parse_error"


class SendFailed(H0Error):
    code = "send_failed"


class InvalidRequest(H0Error):
    code = "invalid_request"


class Conflict(H0Error):
    code = "conflict"


class NotSupported(H0Error):
    code = "not_supported"


class McpUnavailable(H0Error):
    code = "mcp_unavailable"


class InternalError(H0Error):
    code = "internal_error"


_BY_CODE: dict[str, type[H0Error]] = {
    cls.code: cls
    for cls in (
        AuthRequired,
        NotFound,
        RateLimited,
        PermissionDenied,
        ParseError,
        SendFailed,
        InvalidRequest,
        Conflict,
        NotSupported,
        McpUnavailable,
        InternalError,
    )
}


def error_from_dict(body: dict[str, Any]) -> H0Error:
    """Rebuild a typed error from its wire shape (used by the MCP client)."""
    cls = _BY_CODE.get(str(body.get("error")), InternalError)
    details = body.get("details") or {}
    if not isinstance(details, dict):
        details = {"details": details}
    for key in _PROMOTED:
        if key in body and key not in details:
            details[key] = body[key]
    return cls(str(body.get("message", "")), **details)


class Refusal(StrEnum):
    """Why the mail server did not send an approved note; the value is the wire's `details["reason"]`."""

    # Nothing is wrong with the note: look again soon.
    NOT_SETTLED = "not_settled"  # written in Approved/ moments ago: the human may still be typing
    NOTE_CHANGED = "note_changed"  # changed since the caller read it
    IN_PROGRESS = "in_progress"  # another H0 process is sending it right now
    STILL_SENDING = "still_sending"  # this process is sending it and the provider has not answered yet
    ORIGINAL_WAITING = "copy_waits_for_original"  # a copy whose original is in Approved/ or being filed
    # The same message as one already sent (or whose send's outcome is unknown): filed in Done/ as a copy.
    COPY_OF_SENT = "copy_of_sent"
    # Not sendable as it is: back in Drafts/ as `not_sent`, with the reason on it.
    NOT_SENDABLE_STATUS = "status_not_sendable"  # its own status: does not say "send me"
    INVISIBLE_TEXT = "invisible_text"  # text that renders as nothing
    ATTACHMENT_CHANGED = "attachment_changed"  # an attachment changed after the approval
    KEY_CONTENT_MISMATCH = "key_content_mismatch"  # its key was already used for other content
    # Held for the human to look again: back in Drafts/ as `held`.
    CHANGED_BEFORE_APPROVAL = "changed_before_approval"
    ATTACHMENT_CHANGED_BEFORE_APPROVAL = "attachment_changed_before_approval"
    REAPPEARED_AFTER_SEND = "reappeared_after_send"
    ALREADY_ANSWERED = "already_answered"
    NEWER_IN_THREAD = "thread_has_newer_message"
    LOOKALIKE_DOMAIN = "lookalike_domain"
    LINK_TEXT_MISMATCH = "link_text_mismatch"
    SUSPECTED_ATTACK = "suspected_attack"  # a reply to an email triage suspected (h0.vault.suspicion)

    @property
    def looks_again(self) -> bool:
        return self in _LOOK_AGAIN

    @property
    def holds(self) -> bool:
        return self in _HOLDS


_LOOK_AGAIN = frozenset(
    {Refusal.NOT_SETTLED, Refusal.NOTE_CHANGED, Refusal.IN_PROGRESS, Refusal.STILL_SENDING, Refusal.ORIGINAL_WAITING}
)
_HOLDS = frozenset(
    {
        Refusal.CHANGED_BEFORE_APPROVAL,
        Refusal.ATTACHMENT_CHANGED_BEFORE_APPROVAL,
        Refusal.REAPPEARED_AFTER_SEND,
        Refusal.ALREADY_ANSWERED,
        Refusal.NEWER_IN_THREAD,
        Refusal.LOOKALIKE_DOMAIN,
        Refusal.LINK_TEXT_MISMATCH,
        Refusal.SUSPECTED_ATTACK,
    }
)

_AGAIN = "then move it to Approved/ again"
_MOVED_ON = (
    "so the reply may be out of date. It was not sent. Read the new message, edit the draft if needed, "
    "then set `send_anyway: true` (or approve a new draft) to send it."
)
# What the human reads when an approved note was not sent, by refusal ({fields} from `refuse`'s words).
# A status refusal is worded by the note's state (h0.vault.draft_state.DraftState's values).
WORDING: dict[Refusal, str | Mapping[str, str]] = {
    Refusal.NOT_SETTLED: (
        "{path} was written in Approved/ less than {settle_s:.0f} s ago and may still be being typed; it is sent "
        "once it has been unchanged that long (APPROVAL_SETTLE_SECONDS)."
    ),
    Refusal.NOTE_CHANGED: "{path} changed since it was read; read it again (nothing was sent).",
    Refusal.IN_PROGRESS: "This message is being sent by another H0 process right now.",
    Refusal.STILL_SENDING: (
        "This message is still being sent: the mail provider has not answered yet. The send goes on; look "
        "again in a moment (it is never sent twice)."
    ),
    Refusal.ORIGINAL_WAITING: (
        "{name} is a copy of {original} (a sync tool's, or the same message approved twice), which is in "
        "Approved/ or being sent right now: it waits until that one has gone, so that only one is ever sent."
    ),
    Refusal.COPY_OF_SENT: (
        "This note is a copy of a message {what} ({original}), so H0 did not send it again; it is filed in "
        "Done/ as a copy. To send the same message a second time on purpose, set `send_anyway: true` and "
        "`status: pending_approval` in its frontmatter, then move it to Approved/ again."
    ),
    Refusal.NOT_SENDABLE_STATUS: {
        "sent": (
            "This note says it was already sent{since} (status: sent), so H0 did not send it again. To send a "
            "new message from it, change `status:` to `pending_approval` and change its text or its file name "
            f"(H0 never sends the same message twice), {_AGAIN}."
        ),
        "withdrawn": (
            "H0 withdrew this draft{because} (status: withdrawn), so it is never sent. Write a new draft if "
            "you still want to send something."
        ),
        "rejected": (
            "This note is marked rejected (status: rejected), so it is never sent; H0 files it in Done/. To send "
            f"it after all, change `status:` to `pending_approval`, {_AGAIN}."
        ),
        "unknown": (
            "This note's status is `{shown}`, which does not say it awaits sending, so H0 did not send it. If it is "
            "a reply you want sent, change `status:` to `pending_approval` (or delete the line), "
            f"{_AGAIN}."
        ),
    },
    Refusal.INVISIBLE_TEXT: "{problems_text}",
    Refusal.ATTACHMENT_CHANGED: (
        "The attachment {names} changed after {after}, so it is not what you approved; nothing was sent. "
        "Check {check}, then move the draft to Approved/ again."
    ),
    Refusal.KEY_CONTENT_MISMATCH: (
        "This idempotency key was already used for a message with different content; nothing was sent. "
        "'Already sent' is only ever answered for the same content."
    ),
    Refusal.CHANGED_BEFORE_APPROVAL: (
        "This draft changed {gap} you approved it, {changed_by}, so you may not have read this "
        f"version. It was not sent. Read it, {_AGAIN}."
    ),
    Refusal.ATTACHMENT_CHANGED_BEFORE_APPROVAL: (
        "The attachment {attachment} changed {gap} you approved this draft, so you may not have seen "
        "this version of it. It was not sent. Check the file, then move the draft to Approved/ again."
    ),
    Refusal.REAPPEARED_AFTER_SEND: (
        "A draft named {name} was sent at {sent_at}, and this note appeared in Approved/ "
        "without being moved there (an editor saving it again?). It was not sent. Check it, then move it "
        "into Approved/ again to send it as a new message."
    ),
    Refusal.ALREADY_ANSWERED: (
        "H0 already sent a reply to this email ({answered}, {answered_at}). Nothing was sent. Set `send_anyway: "
        "true` in the draft's frontmatter to send a second reply."
    ),
    Refusal.NEWER_IN_THREAD: "The conversation moved on{how}, " + _MOVED_ON,
    Refusal.LOOKALIKE_DOMAIN: (
        "Not sent: {shown} looks like {shown_like}, a domain you have corresponded with, but it is a "
        "different domain{others} — a look-alike can be an impostor. Check the address. If you really mean "
        "{domain_as_written}, add `confirm_domains: [{domain}]` to the frontmatter, then approve again."
    ),
    Refusal.SUSPECTED_ATTACK: (
        "Not sent: it answers {source}, which H0 flagged — {headline}: {why}. Check it first (a payment change: "
        "by phone, on a number you already have). If you still mean to send this reply, add `send_anyway: true` "
        "to the frontmatter, then approve again."
    ),
    Refusal.LINK_TEXT_MISMATCH: (
        'Not sent: the link shown as "{text}" opens {goes}, not {shows}{others} — a link that shows one '
        "address and opens another is how phishing works. Make the link's text match where it goes, or use "
        "words. If you really mean it, add `confirm_domains: [{confirm}]` to the frontmatter, then approve again."
    ),
}


def wording(refusal: Refusal, words: Mapping[str, object]) -> str:
    """The human's words for `refusal`, its fields filled from `words` (a status refusal: by its `state`)."""
    template = WORDING[refusal]
    if not isinstance(template, str):
        template = template.get(str(words.get("state")), template["unknown"])
    return template.format(**words)


def refuse(refusal: Refusal, words: Mapping[str, object] | None = None, **details: Any) -> H0Error:
    """The typed error for a refusal: a Conflict to look again or hold, an InvalidRequest otherwise.
    `words` fill the wording only; `details` go on the wire (with `reason`, `then`, and `hold` when it holds)."""
    message = wording(refusal, {**details, **(words or {})})
    if refusal.holds:
        error: H0Error = Conflict(message, reason=refusal.value, hold=True, **details)
    elif refusal.looks_again or refusal in (Refusal.KEY_CONTENT_MISMATCH, Refusal.COPY_OF_SENT):
        error = Conflict(message, reason=refusal.value, **details)
    else:
        error = InvalidRequest(message, reason=refusal.value, **details)
    error.details["then"] = then_of(error).value
    return error


class Then(StrEnum):
    """What becomes of an approved note the mail server did not send; the value is the wire's `details["then"]`.
    The daemon's send step has one action for each (h0.handlers.send); nothing else decides."""

    LOOK_AGAIN = "look_again"  # nothing wrong with it: looked at again soon (at `retry_after` when named)
    RETRY = "retry"  # a try that failed, nothing sent: again after the queue's backoff (or the `retry_after` named)
    PAUSE_FOR_CAP = "pause_for_cap"  # a send cap, or the provider asks to slow down: every send waits `retry_after`
    PAUSE_FOR_CREDENTIALS = "pause_for_credentials"  # every send waits until the credentials work
    BACK_NOT_SENT = "back_not_sent"  # to Drafts/ as `not_sent`, the reason on it
    BACK_HELD = "back_held"  # to Drafts/ as `held`, for the human to look again
    BACK_AS_IS = "back_as_is"  # to Drafts/ with the reason, its own status word kept (sent, withdrawn, …)
    BACK_UNREAD = "back_unread"  # to Drafts/ byte for byte: its frontmatter cannot be read, so it cannot be marked
    ARCHIVE = "archive"  # `status: rejected`: filed in Done/ with `decision: rejected`
    FILE_COPY = "file_copy"  # the same message as one already sent: Done/ as `status: copy`
    FILE_UNKNOWN = "file_unknown"  # the server took it and never answered: Done/ as `status: outcome_unknown`
    FILE_BOUNCE = "file_bounce"  # the provider refused it for good: Logs/failed/

    @property
    def leaves_approved(self) -> bool:
        """Whether the note leaves Approved/ (its next approval is a new one)."""
        return self not in (Then.LOOK_AGAIN, Then.RETRY, Then.PAUSE_FOR_CAP, Then.PAUSE_FOR_CREDENTIALS)


def then_of(error: H0Error) -> Then:
    """What becomes of an approved note whose send raised `error`: the one place that decides it."""
    refusal = error.refusal
    if refusal is Refusal.NOT_SENDABLE_STATUS:
        return Then.ARCHIVE if error.details.get("state") == "rejected" else Then.BACK_AS_IS
    if refusal is Refusal.COPY_OF_SENT:
        return Then.FILE_COPY
    if refusal is not None:
        return Then.LOOK_AGAIN if refusal.looks_again else Then.BACK_HELD if refusal.holds else Then.BACK_NOT_SENT
    if isinstance(error, ParseError):
        return Then.BACK_UNREAD
    if isinstance(error, (InvalidRequest, PermissionDenied, NotFound)):
        return Then.BACK_NOT_SENT
    if isinstance(error, RateLimited):
        return Then.PAUSE_FOR_CAP
    if isinstance(error, AuthRequired):
        return Then.PAUSE_FOR_CREDENTIALS
    if error.details.get("bounce"):
        return Then.FILE_BOUNCE
    if error.details.get("outcome") == "unknown":
        return Then.FILE_UNKNOWN
    return Then.RETRY
