"""Send an approved draft (user story 1): the send step, one call to the mail server, and what becomes of the note.

The daemon does not read the note: its mail server reads it once, in the real Approved/, builds the
message from that read, sends it exactly once (claim in H0's state database, pre-send record, provider,
the one `email_sent` record) and files that same read in Done/ (`status: sent`, the "Sent on … to …"
line, the source email, the filing journal, `email_filed`: h0.mail.filing). Here, three ways out of the
step: sending is paused (the context's `SendingPause` answers); the note was sent (an Outcome from the typed
result, which says where it was filed); or it was not, and the daemon does what the server's answer says
(`H0Error.then`, decided once by the mail server, next to the refusal: h0.errors.then_of) — one function for
each kind of answer, reached from one table (`ACTIONS`):
- it stays in Approved/ (`_stay`): looked at again soon, retried after the queue's backoff, or every send
  pauses, for a send cap or for credentials (`SendingPause.begin` records it, says it once and answers);
- it leaves Approved/: back to Drafts/ with the reason written on it (`_back`: the human fixes it and approves
  again), or filed — in Done/ as a copy of a message already sent (`_file_copy`: a sync tool's copy,
  h0.mail.copies), in Done/ saying it may have been sent when nobody knows whether it went (`_file_unknown`),
  in Logs/failed/ when it bounced (`_file_bounce`);
- the human rejected it: filed by the reject step (`_archive`: h0.handlers.reject.file_rejected), from what the
  server read.
Nothing here decides what a refusal means. A crash between send and filing is finished without a second
send: a note still in Approved/ is answered "already sent" and filed, one moved but not marked by
`finish_interrupted_filings` at the daemon's start. Only the mail server can send.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from loguru import logger

from h0.errors import H0Error, InternalError, McpUnavailable, NotFound, Refusal, Then
from h0.handlers.context import HandlerContext, Pause
from h0.handlers.outcome import Action, Outcome, OutcomeData
from h0.handlers.reject import archive_rejected, file_rejected
from h0.mail.compose.recipients import describe_recipients
from h0.mail.filing import Filing
from h0.retry import Again, retry_words
from h0.vault import Vault
from h0.vault.audit import note_timestamp
from h0.vault.layout import DONE, DRAFTS, FAILED


def send_approved_draft(path: str, ctx: HandlerContext) -> Outcome:
    """The send step, straight: sending paused? → one call to the mail server, which reads, checks, sends and
    files the note → an Outcome from its answer. Three ways out: paused, not sent (the action its answer names:
    `ACTIONS`), sent."""
    paused = ctx.state.sending.waiting()  # said once when the pause began; drafts approved meanwhile wait silently
    if paused is not None:
        filed = archive_rejected(path, ctx)  # nothing is sent meanwhile: a draft the human rejected is filed now
        return filed if filed.action in (Action.REJECTED, Action.GONE) else paused
    if ctx.mail is None:
        raise McpUnavailable("No mail server is configured.")
    started = time.perf_counter()
    try:
        # No hash: the daemon's own server reads the note itself; the approval checks bind it to what the
        # human saw (docs/decisions.md, "One read per send").
        result = ctx.mail.send_approved_draft(path, None, ctx.arrival(path))
    except H0Error as error:
        return ACTIONS[error.then](path, error, ctx)
    elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    pause = ctx.state.sent(path)  # the pause this send ended, if one was said
    if pause:
        ctx.audit.write("sends_resumed", path=path, after=pause)
        logger.info("sending resumed ({} was sent); it had paused: {}", path, pause)
    done_path = result.filed_as
    if done_path is None:  # the mail went out; the next look is answered "already sent" and files it
        raise InternalError(f"{path} was sent but not filed: {result.filing_error}", path=path)
    recipients = result.recipients  # the envelope the message was built with, not the note re-read
    verb = "was already sent" if result.already_sent else "sent"
    logger.info("✉ {} {} → {} ({} ms), filed as {}", verb, path, describe_recipients(recipients), elapsed_ms, done_path)
    data: OutcomeData = {
        "done_path": done_path,
        "to": ", ".join(recipients.get("to") or ()),
        "recipients": recipients,
        "message_id": result.message_id,
        "already_sent": result.already_sent,
        "elapsed_ms": elapsed_ms,
    }
    return Outcome(Action.SENT, done_path, data=data)


def local_clock(epoch: float) -> str:
    """A moment in the near future as a person reads it here (local time): 14:05, or Tue 09:30 if not today."""
    when = dt.datetime.fromtimestamp(epoch).astimezone()
    if when.date() == dt.date.today():
        return when.strftime("%H:%M")
    return when.strftime("%a %H:%M")


def _facts(path: str, error: H0Error) -> dict[str, Any]:
    """What a record of an unsent note says: its path, its To and subject as the server's answer names them (the
    daemon did not read the note), and the answer (its code, message and details, as `HandlerContext.error_fields`
    gives any error)."""
    details = error.details
    return {
        "path": path,
        "to": details.get("to"),
        "subject": details.get("subject"),
        "error": error.code,
        "message": error.message,
        "details": details or None,
    }


# -- it stays in Approved/ ------------------------------------------------------------------------------------

# Why each answer that keeps the note in Approved/ looks at it again (h0.retry.Again: the queue says when).
_AGAIN = {
    Then.LOOK_AGAIN: Again.NOT_YET,
    Then.RETRY: Again.FAILED,
    Then.PAUSE_FOR_CAP: Again.SEND_CAP,
    Then.PAUSE_FOR_CREDENTIALS: Again.CREDENTIALS,
}


def _stay(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """Nothing was sent and the note stays in Approved/: the queue says when it is looked at again (a server's
    Retry-After is a fact it weighs). Still being written, changed since read, another process sending it: look
    again without a word. A try that failed (the provider, the mail server unreachable): said, then the queue's
    backoff. Credentials missing or refused, or a send cap reached: every send pauses that long (`SendingPause`)."""
    then = error.then
    value = error.details.get("retry_after")  # seconds, when the answer names a number
    named = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    retry_in = ctx.retries.wait(path, _AGAIN[then], None if then is Then.PAUSE_FOR_CREDENTIALS else named)
    if then is Then.LOOK_AGAIN:
        reason = error.refusal or error.code
        logger.debug("{}: {} — looking again ({})", path, reason, retry_words(retry_in, ctx.one_pass))
        return Outcome(Action.WAITING, reason, retry_in=retry_in, again=Again.NOT_YET)
    if then is Then.PAUSE_FOR_CREDENTIALS:
        pause = Pause("auth", retry_in or 0.0, error.message)
        return ctx.state.sending.begin(path, error, pause, _facts(path, error), ctx)
    if then is Then.PAUSE_FOR_CAP:  # say which cap, and when sending resumes (local time)
        seconds = retry_in or 0.0
        resumes_at = time.time() + seconds
        setting = error.details.get("setting")
        if setting:
            window, cap = error.details.get("window") or "", error.details.get("cap")
            reason = f"the {window} send cap is reached ({setting}={cap})"
        else:
            reason = f"the mail provider asks H0 to slow down ({error.message})"
        pause = Pause("cap", seconds, f"{reason}; sending resumes at {local_clock(resumes_at)}", setting, resumes_at)
        return ctx.state.sending.begin(path, error, pause, _facts(path, error), ctx)
    unreachable = error.code == "mcp_unavailable"
    server: dict[str, Any] = {"server": "mail"} if unreachable else {}
    event = "mcp_unavailable" if unreachable else "send_failed"
    ctx.audit.write(event, "error", retry_in=retry_in, **server, **_facts(path, error))
    words = retry_words(retry_in, ctx.one_pass)
    if unreachable:
        logger.error("{}: the mail server is unavailable; the draft stays in Approved/ ({})", path, words)
    else:
        logger.error("{}: send failed ({}); {}", path, error.message, words)
    again = Again.FAILED if retry_in is not None else None
    return Outcome(
        Action.FAILED, error.code, retry_in=retry_in, data={"error": error, "retry_in": retry_in}, again=again
    )


# -- it leaves Approved/ --------------------------------------------------------------------------------------

# The status word a note given back to Drafts/ carries (None: its own word stands, it was the reason).
_BACK_AS = {Then.BACK_NOT_SENT: "not_sent", Then.BACK_HELD: "held", Then.BACK_AS_IS: None, Then.BACK_UNREAD: None}


def _back(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """Nothing was sent and sending again would not help: the note goes back to the human in Drafts/, the reason
    on it (approving it again, after fixing it, is a new approval). A note whose frontmatter cannot be read
    (past a limit, invalid YAML) cannot carry the reason: it goes back byte for byte, and the log says why."""
    then = error.then
    held = then is Then.BACK_HELD
    code = error.refusal.value if error.refusal is not None else error.code
    record: dict[str, Any] | None = None
    if then is not Then.BACK_UNREAD:
        record = {"h0_error": error.message, "h0_error_code": code, "h0_error_at": note_timestamp()}
        if _BACK_AS[then]:
            record["status"] = _BACK_AS[then]
    try:
        back = ctx.notes.move(path, f"{DRAFTS}/", rename_if_exists=True, set_frontmatter=record).destination
    except NotFound:
        return Outcome(Action.GONE)
    except H0Error as move_error:  # cannot move it back: it stays in Approved/, said once per version
        text = f"{error.message} (and it could not be moved back to {DRAFTS}/: {move_error.message})"
        if record is None:
            ctx.report(path, "read_error", "corrupt", text, **ctx.error_fields(error))
            return Outcome(Action.WAITING, "corrupt frontmatter")
        ctx.report(path, "send_refused", error.message, text, **ctx.error_fields(error))
        return Outcome(Action.FAILED, error.code, data={"error": error, "retry_in": None})
    hidden = ("path", "then") if record is None else ("reason", "path", "then")
    details = {k: v for k, v in error.details.items() if k not in hidden}
    event, severity = ("send_held", "warning") if held else ("send_refused", "error")
    ctx.audit.write(event, severity, path=path, returned_to=back, reason=code, message=error.message, **details)
    unchanged = ", unchanged" if record is None else ""
    (logger.warning if held else logger.error)(
        "{}: not sent ({}) — back in {}{}: {}", path, code, back, unchanged, error.message
    )
    ctx.state.succeeded(path)
    data: OutcomeData = {"error": error, "retry_in": None, "returned_to": back}
    return Outcome(Action.HELD if held else Action.REFUSED, back, data=data)


def _file_bounce(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """The provider refused the message for good: filed in Logs/failed/ with why."""
    record = {"status": "failed", "failed_at": note_timestamp(), "error": error.message}
    failed_path = ctx.notes.move(path, f"{FAILED}/", rename_if_exists=True, set_frontmatter=record).destination
    ctx.audit.write("email_delivery_failed", "error", failed_path=failed_path, **_facts(path, error))
    logger.error("{}: delivery failed ({}); filed in {}", path, error.message, failed_path)
    return Outcome(Action.BOUNCED, failed_path, data={"error": error, "retry_in": None, "failed_path": failed_path})


def _file_copy(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """The same message as one already sent (or whose send's outcome is unknown): never sent again, filed in
    Done/ as a copy with the reason on it and one `copy_filed` record, which `h0 status` shows once."""
    copy_of = error.details.get("copy_of")
    record = {
        "status": "copy",
        "copy_of": copy_of,
        "h0_error": error.message,
        "h0_error_code": Refusal.COPY_OF_SENT.value,
        "h0_error_at": note_timestamp(),
    }
    try:
        done_path = ctx.notes.move(path, f"{DONE}/", rename_if_exists=True, set_frontmatter=record).destination
    except NotFound:
        return Outcome(Action.GONE)
    except H0Error as move_error:  # never sent either way; said once, looked at again
        text = f"{error.message} (and it could not be filed in {DONE}/: {move_error.message})"
        ctx.report(path, "copy_not_filed", str(copy_of), text, **ctx.error_fields(move_error))
        return Outcome(Action.FAILED, error.code, data={"error": error, "retry_in": None}, again=Again.FAILED)
    sent_at, outcome = error.details.get("sent_at"), error.details.get("outcome")
    facts = _facts(path, error) | {"done_path": done_path, "copy_of": copy_of, "sent_at": sent_at, "outcome": outcome}
    ctx.audit.write("copy_filed", "warning", **facts)
    logger.warning("{}: a copy of {}, not sent — filed as {}", path, copy_of, done_path)
    ctx.state.succeeded(path)
    data: OutcomeData = {"done_path": done_path, "error": error, "copy_of": str(copy_of)}
    return Outcome(Action.SKIPPED, done_path, data=data)


def _file_unknown(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """The server took the message and its answer never came (or the provider cannot say): it may have gone.
    Never sent again by itself, never looked at again: filed in Done/ with `status: outcome_unknown` and what
    to do, the ledger told where it went (a copy of it is then filed as a copy), one `send_outcome_unknown`."""
    rfc, key = error.details.get("rfc822_message_id"), error.details.get("idempotency_key")
    checked = " H0 asked the mailbox for it and it is not there yet." if error.details.get("provider_checked") else ""
    text = (
        f"This message may have been sent — check your Sent folder (Message-ID {rfc}). {error.message}{checked} "
        "H0 will not send it again by itself: if it is not in Sent, set `status: pending_approval` and "
        "`send_anyway: true` here, then move this note to Approved/ again."
    )
    record = {
        "status": "outcome_unknown",
        "h0_error": text,
        "h0_error_code": "send_outcome_unknown",
        "h0_error_at": note_timestamp(),
        "rfc822_message_id": rfc,
        "idempotency_key": key,
    }
    try:
        done_path = ctx.notes.move(path, f"{DONE}/", rename_if_exists=True, set_frontmatter=record).destination
    except NotFound:
        return Outcome(Action.GONE)
    except H0Error as move_error:  # it stays in Approved/, where every next try is refused the same way
        ctx.report(path, "send_outcome_unknown", str(rfc), f"{text} (It could not be filed: {move_error.message})")
        return Outcome(Action.FAILED, error.code, data={"error": error, "retry_in": None})
    if isinstance(rfc, str) and ctx.state_db is not None:
        try:
            ctx.state_db.mark_filed(rfc, done_path)
        except H0Error as journal_error:
            logger.error("{}: filed as {} but not recorded: {}", path, done_path, journal_error.message)
    facts = _facts(path, error) | {"done_path": done_path, "message": text, "error": error.code}
    ctx.audit.write("send_outcome_unknown", "error", **facts, rfc822_message_id=rfc, idempotency_key=key)
    logger.error("{}: the send's outcome is unknown — filed as {}: {}", path, done_path, error.message)
    ctx.state.succeeded(path)
    return Outcome(Action.FAILED, error.code, data={"error": error, "retry_in": None, "done_path": done_path})


def _archive(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """The human rejected it (`status: rejected`, as the mail server read it): never sent, filed by the reject step
    with the email it answered as the answer names it (the daemon does not read the note again)."""
    return file_rejected(path, ctx, error.details.get("source"))


# One action for each answer of the mail server (h0.errors.Then): the whole of what the daemon does.
ACTIONS: dict[Then, Callable[[str, H0Error, HandlerContext], Outcome]] = {
    **dict.fromkeys(_AGAIN, _stay),
    **dict.fromkeys(_BACK_AS, _back),
    Then.ARCHIVE: _archive,
    Then.FILE_COPY: _file_copy,
    Then.FILE_UNKNOWN: _file_unknown,
    Then.FILE_BOUNCE: _file_bounce,
}


def finish_interrupted_filings(ctx: HandlerContext, *, days: int = 7) -> int:
    """Finish filing drafts that were sent and moved to Done/ but not yet marked (a crash between):
    the filing's own recovery (h0.mail.filing), on this vault, with the daemon's state database."""
    if ctx.state_db is None:
        return 0
    return Filing(Vault(ctx.paths.root), ctx.state_db, ctx.audit).finish_interrupted(days=days)
