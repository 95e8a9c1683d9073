"""An approved note whose send did not go: looked at again after a pause or a send cap, given back to
Drafts/ with the reason written on it (the human fixes it and approves again), filed in Failed/ when
its message bounced, filed in Done/ as a copy when it is the same message as one already sent (a sync
tool's copy: h0.mail.copies), or filed in Done/ saying it may have been sent when nobody knows whether it
went (the server took it and its answer never came). Only the words and the note's place change here;
nothing is sent."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from loguru import logger

from h0.errors import (
    AuthRequired,
    H0Error,
    InvalidRequest,
    McpUnavailable,
    NotFound,
    ParseError,
    PermissionDenied,
    RateLimited,
    Refusal,
    SendFailed,
)
from h0.handlers.context import Action, HandlerContext, Outcome, OutcomeData
from h0.handlers.reject import archive_rejected
from h0.retry import Again
from h0.vault.audit import note_timestamp
from h0.vault.draft_state import DraftState
from h0.vault.layout import DONE, DRAFTS, FAILED


def send_failed(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """What becomes of an approved note the mail server did not send, from its typed error alone
    (the daemon did not read the note: the error names the note's state, its recipients, its subject)."""
    # Every wait is the work queue's (h0.retry.Waits, its backoff): the step says why (`Again`, with a
    # server's Retry-After as a fact) and asks when only to say it, or to pause sending that long.
    retry_in: float | None
    fields: dict[str, Any] = {"path": path, "to": error.details.get("to"), "subject": error.details.get("subject")}
    refusal = error.refusal
    if refusal is Refusal.NOT_SENDABLE_STATUS and error.details.get("state") == DraftState.REJECTED.value:
        return archive_rejected(path, ctx)  # the human set `status: rejected` in Approved/: filed, never sent
    if refusal is Refusal.COPY_OF_SENT:
        return _file_copy(path, error, fields, ctx)
    if isinstance(error, ParseError):
        return return_unreadable(path, error, ctx)
    if refusal is not None and refusal.looks_again:
        # Still being written, changed since read, or another process is sending it: look again.
        retry_in = ctx.wait(path, Again.NOT_YET, _seconds(error.details.get("retry_after")))
        logger.debug("{}: {} — looking again ({})", path, refusal, ctx.retry_words(retry_in))
        return Outcome(Action.WAITING, refusal, retry_in=retry_in, again=Again.NOT_YET)
    if refusal is not None or isinstance(error, (InvalidRequest, PermissionDenied, NotFound)):
        return return_to_drafts(path, error, ctx)
    if isinstance(error, McpUnavailable):
        retry_in = ctx.retry_delay(path)
        ctx.audit.write(
            "mcp_unavailable", "error", server="mail", retry_in=retry_in, **fields, **ctx.error_fields(error)
        )
        logger.error(
            "{}: the mail server is unavailable; the draft stays in Approved/ ({})", path, ctx.retry_words(retry_in)
        )
    elif isinstance(error, RateLimited):
        return _send_capped(path, error, fields, ctx)
    elif isinstance(error, AuthRequired):
        retry_in = ctx.wait(path, Again.CREDENTIALS)
        if ctx.state.pause_sends(retry_in or 0.0, error.message):
            ctx.audit.write("sends_paused", "error", reason=error.message, **fields, **ctx.error_fields(error))
        if ctx.state.announce_pause(f"auth {error.message}", error.message):  # renewed every minute: said once
            logger.error(
                "sending paused: {} ({} and the drafts approved meanwhile wait in Approved/; vault work goes on)",
                error.message,
                path,
            )
    elif isinstance(error, SendFailed) and error.details.get("bounce"):
        return _file_bounce(path, error, fields, ctx)
    elif isinstance(error, SendFailed) and error.details.get("outcome") == "unknown":
        return _file_unknown(path, error, fields, ctx)
    else:
        retry_in = ctx.retry_delay(path)
        ctx.audit.write("send_failed", "error", retry_in=retry_in, **fields, **ctx.error_fields(error))
        logger.error("{}: send failed ({}); {}", path, error.message, ctx.retry_words(retry_in))
    again = Again.CREDENTIALS if isinstance(error, AuthRequired) else Again.FAILED if retry_in is not None else None
    data: OutcomeData = {"error": error, "retry_in": retry_in}
    return Outcome(Action.FAILED, error.code, retry_in=retry_in, data=data, again=again)


def _seconds(value: object) -> float | None:
    """A Retry-After from an error's details, if it is a number of seconds."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _send_capped(path: str, error: RateLimited, fields: dict[str, Any], ctx: HandlerContext) -> Outcome:
    """A send cap is reached (or the provider asks H0 to slow down): pause every send until
    it frees and say so once, naming the setting and when sending resumes (local time).
    The drafts approved meanwhile wait in Approved/ without a line each."""
    retry_in = ctx.wait(path, Again.SEND_CAP, error.retry_after) or 0.0
    resumes_at = time.time() + retry_in
    setting = error.details.get("setting")
    if setting:
        window = error.details.get("window") or ""
        reason = (
            f"the {window} send cap is reached ({setting}={error.details.get('cap')}); "
            f"sending resumes at {local_clock(resumes_at)}"
        )
    else:
        reason = (
            f"the mail provider asks H0 to slow down ({error.message}); sending resumes at {local_clock(resumes_at)}"
        )
    ctx.audit.write(
        "send_deferred",
        "warning",
        retry_in=retry_in,
        resumes_at=note_timestamp(dt.datetime.fromtimestamp(resumes_at, dt.UTC)),
        **fields,
        **ctx.error_fields(error),
    )
    ctx.state.pause_sends(retry_in, reason, "cap", setting=setting, resumes_at=resumes_at)
    if ctx.state.announce_pause(f"cap {setting or 'provider'}", reason):
        then = "the first `h0 sweep` or `h0 watch` after that sends them" if ctx.one_pass else "H0 sends them then"
        logger.warning(
            "sending paused: {}. {} and the drafts approved meanwhile wait in Approved/; {}.", reason, path, then
        )
    else:
        logger.debug("{}: waits for the send cap", path)
    # "failed" (the send-failed report signal) for the draft the cap refused; those approved
    # meanwhile come back "paused" without a word.
    return Outcome(
        Action.FAILED,
        error.code,
        retry_in=retry_in,
        again=Again.SEND_CAP,
        data={"error": error, "retry_in": retry_in, "kind": "cap", "setting": setting, "resumes_at": resumes_at},
    )


def say_resumed(ctx: HandlerContext, path: str) -> None:
    if ctx.state.sends_paused_for() > 0:
        # This send was under way before the pause began (it took the cap's last slot while
        # the next drafts were refused): sending has not resumed, and the pause stays said.
        return
    pause = ctx.state.resumed()
    if pause:
        ctx.audit.write("sends_resumed", path=path, after=pause)
        logger.info("sending resumed ({} was sent); it had paused: {}", path, pause)


def local_clock(epoch: float) -> str:
    """A moment in the near future as a person reads it here (local time): 14:05, or Tue 09:30 if not today."""
    when = dt.datetime.fromtimestamp(epoch).astimezone()
    if when.date() == dt.date.today():
        return when.strftime("%H:%M")
    return when.strftime("%a %H:%M")


def return_to_drafts(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """Nothing was sent and sending again would not help: give the note back to the human,
    with the reason on it. Approving it again (after fixing it) is a new approval."""
    refusal = error.refusal
    held = refusal is not None and refusal.holds
    code = refusal.value if refusal is not None else error.code
    record = {
        "status": "held" if held else "not_sent",
        "h0_error": error.message,
        "h0_error_code": code,
        "h0_error_at": note_timestamp(),
    }
    if refusal is Refusal.NOT_SENDABLE_STATUS:
        del record["status"]  # the note's own word (sent, withdrawn, …) stands: it was the reason
    try:
        moved = ctx.notes.move_to_folder(path, DRAFTS, record)
    except NotFound:
        return Outcome(Action.GONE)
    except H0Error as move_error:
        # Cannot move it back: leave it in Approved/ and say so once per version.
        ctx.report(
            path,
            "send_refused",
            error.message,
            f"{error.message} (and it could not be moved back to {DRAFTS}/: {move_error.message})",
            **ctx.error_fields(error),
        )
        return Outcome(Action.FAILED, error.code, data={"error": error, "retry_in": None})
    back = moved.destination
    event = "send_held" if held else "send_refused"
    ctx.audit.write(
        event,
        "warning" if held else "error",
        path=path,
        returned_to=back,
        reason=code,
        message=error.message,
        **{k: v for k, v in error.details.items() if k not in ("reason", "path")},
    )
    log = logger.warning if held else logger.error
    log("{}: not sent ({}) — back in {}: {}", path, code, back, error.message)
    ctx.state.succeeded(path)
    return Outcome(
        Action.HELD if held else Action.REFUSED, back, data={"error": error, "retry_in": None, "returned_to": back}
    )


def return_unreadable(path: str, error: ParseError, ctx: HandlerContext) -> Outcome:
    """An approved note H0 cannot read (frontmatter past a limit, invalid YAML) was not sent: it goes
    back to Drafts/ byte for byte — its frontmatter cannot carry h0_error — and the log says why."""
    try:
        back = ctx.notes.move_to_folder(path, DRAFTS).destination
    except NotFound:
        return Outcome(Action.GONE)
    except H0Error as move_error:
        ctx.report(
            path,
            "read_error",
            "corrupt",
            f"{error.message} (and it could not be moved back to {DRAFTS}/: {move_error.message})",
            **ctx.error_fields(error),
        )
        return Outcome(Action.WAITING, "corrupt frontmatter")
    ctx.audit.write(
        "send_refused",
        "error",
        path=path,
        returned_to=back,
        reason=error.code,
        message=error.message,
        **{k: v for k, v in error.details.items() if k != "path"},
    )
    logger.error("{}: not sent ({}) — back in {}, unchanged: {}", path, error.code, back, error.message)
    ctx.state.succeeded(path)
    return Outcome(Action.REFUSED, back, data={"error": error, "retry_in": None, "returned_to": back})


def _file_bounce(path: str, error: SendFailed, fields: dict[str, Any], ctx: HandlerContext) -> Outcome:
    failed_path = ctx.notes.move_to_folder(
        path, FAILED, {"status": "failed", "failed_at": note_timestamp(), "error": error.message}
    ).destination
    _record_filed(
        ctx, "email_delivery_failed", "error", path, fields, failed_path=failed_path, **ctx.error_fields(error)
    )
    logger.error("{}: delivery failed ({}); filed in {}", path, error.message, failed_path)
    return Outcome(Action.BOUNCED, failed_path, data={"error": error, "retry_in": None, "failed_path": failed_path})


def _file_copy(path: str, error: H0Error, fields: dict[str, Any], ctx: HandlerContext) -> Outcome:
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
        done_path = ctx.notes.move_to_folder(path, DONE, record).destination
    except NotFound:
        return Outcome(Action.GONE)
    except H0Error as move_error:  # never sent either way; said once, looked at again
        text = f"{error.message} (and it could not be filed in {DONE}/: {move_error.message})"
        ctx.report(path, "copy_not_filed", str(copy_of), text, **ctx.error_fields(move_error))
        return Outcome(Action.FAILED, error.code, data={"error": error, "retry_in": None}, again=Again.FAILED)
    _record_filed(
        ctx,
        "copy_filed",
        "warning",
        path,
        fields,
        done_path=done_path,
        copy_of=copy_of,
        sent_at=error.details.get("sent_at"),
        outcome=error.details.get("outcome"),
        message=error.message,
    )
    logger.warning("{}: a copy of {}, not sent — filed as {}", path, copy_of, done_path)
    ctx.state.succeeded(path)
    data: OutcomeData = {"done_path": done_path, "error": error, "copy_of": str(copy_of)}
    return Outcome(Action.SKIPPED, done_path, data=data)


def _file_unknown(path: str, error: SendFailed, fields: dict[str, Any], ctx: HandlerContext) -> Outcome:
    """The server took the message and its answer never came (or the provider cannot say): it may have gone.
    Never sent again by itself, never looked at again: filed in Done/ with `status: outcome_unknown` and what
    to do, the ledger told where it went (a copy of it is then filed as a copy), one `send_outcome_unknown`."""
    rfc = error.details.get("rfc822_message_id")
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
        "idempotency_key": error.details.get("idempotency_key"),
    }
    try:
        done_path = ctx.notes.move_to_folder(path, DONE, record).destination
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
    _record_filed(
        ctx,
        "send_outcome_unknown",
        "error",
        path,
        fields,
        done_path=done_path,
        message=text,
        error=error.code,
        rfc822_message_id=rfc,
        idempotency_key=error.details.get("idempotency_key"),
    )
    logger.error("{}: the send's outcome is unknown — filed as {}: {}", path, done_path, error.message)
    ctx.state.succeeded(path)
    return Outcome(Action.FAILED, error.code, data={"error": error, "retry_in": None, "done_path": done_path})


def _record_filed(
    ctx: HandlerContext, event: str, severity: str, path: str, fields: dict[str, Any], **facts: Any
) -> None:
    """The one audit record of a draft filed away because its send did not go as a send: what it was (its To and
    subject, as the note said) and where it went and why (`facts`)."""
    ctx.audit.write(event, severity, path=path, to=fields["to"], subject=fields["subject"], **facts)
