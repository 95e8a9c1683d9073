"""An approved note the mail server did not send: the daemon does what the server's answer says (`H0Error.then`,
decided once by the mail server: h0.errors.then_of) — looks at it again, pauses sending for a cap or for
credentials, gives it back to Drafts/ with the reason written on it (the human fixes it and approves again),
archives it when the human rejected it, or files it: in Done/ as a copy of a message already sent (a sync
tool's copy: h0.mail.copies), in Done/ saying it may have been sent when nobody knows whether it went, in
Logs/failed/ when it bounced. One action for each answer; nothing here decides what a refusal means, and
nothing is sent."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from loguru import logger

from h0.errors import H0Error, NotFound, Refusal, Then
from h0.handlers.context import Action, HandlerContext, Outcome, OutcomeData
from h0.handlers.reject import archive_rejected
from h0.retry import Again
from h0.vault.audit import note_timestamp
from h0.vault.layout import DONE, DRAFTS, FAILED


def not_sent(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """What becomes of an approved note the mail server did not send: the action its answer names."""
    return ACTIONS[error.then](path, error, ctx)


def while_paused(path: str, ctx: HandlerContext) -> Outcome:
    """Sending is paused (said once when the pause began): the note waits in Approved/ without a word. Nothing
    is sent meanwhile, so reading it costs no second read of a send: a draft the human rejected is filed now."""
    filed = archive_rejected(path, ctx)
    if filed.action in (Action.REJECTED, Action.GONE):
        return filed
    data: OutcomeData = {"kind": ctx.state.pause_kind, **ctx.state.pause_facts}
    return Outcome(Action.PAUSED, ctx.state.pause_reason, retry_in=ctx.state.sends_paused_for(), data=data)


def _fields(path: str, error: H0Error) -> dict[str, Any]:
    """The note's To and subject as the server's answer names them (the daemon did not read the note)."""
    return {"path": path, "to": error.details.get("to"), "subject": error.details.get("subject")}


def _retry_after(error: H0Error) -> float | None:
    """A server's Retry-After from the answer, if it is a number of seconds: a fact the queue weighs."""
    value = error.details.get("retry_after")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _look_again(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """Still being written, changed since read, another process sending it: nothing wrong, look again."""
    retry_in = ctx.wait(path, Again.NOT_YET, _retry_after(error))
    reason = error.refusal or error.code
    logger.debug("{}: {} — looking again ({})", path, reason, ctx.retry_words(retry_in))
    return Outcome(Action.WAITING, reason, retry_in=retry_in, again=Again.NOT_YET)


def _retry(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """A try that failed with nothing sent (the provider, the mail server unreachable): the queue's backoff,
    or the Retry-After the server named."""
    retry_in = ctx.wait(path, Again.FAILED, _retry_after(error))
    unreachable = error.code == "mcp_unavailable"
    event = "mcp_unavailable" if unreachable else "send_failed"
    fields: dict[str, Any] = {"server": "mail"} if unreachable else {}
    fields |= _fields(path, error) | ctx.error_fields(error)
    ctx.audit.write(event, "error", retry_in=retry_in, **fields)
    if unreachable:
        logger.error(
            "{}: the mail server is unavailable; the draft stays in Approved/ ({})", path, ctx.retry_words(retry_in)
        )
    else:
        logger.error("{}: send failed ({}); {}", path, error.message, ctx.retry_words(retry_in))
    again = Again.FAILED if retry_in is not None else None
    return Outcome(
        Action.FAILED, error.code, retry_in=retry_in, data={"error": error, "retry_in": retry_in}, again=again
    )


def _pause_for_credentials(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """Credentials missing or refused: every send waits (a look a minute renews the pause), vault work goes on."""
    retry_in = ctx.wait(path, Again.CREDENTIALS)
    if ctx.state.pause_sends(retry_in or 0.0, error.message):
        ctx.audit.write(
            "sends_paused", "error", reason=error.message, **_fields(path, error), **ctx.error_fields(error)
        )
    if ctx.state.announce_pause(f"auth {error.message}", error.message):  # renewed every minute: said once
        logger.error(
            "sending paused: {} ({} and the drafts approved meanwhile wait in Approved/; vault work goes on)",
            error.message,
            path,
        )
    data: OutcomeData = {"error": error, "retry_in": retry_in}
    return Outcome(Action.FAILED, error.code, retry_in=retry_in, data=data, again=Again.CREDENTIALS)


def _pause_for_cap(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """A send cap is reached (or the provider asks H0 to slow down): pause every send until it frees and say so
    once, naming the setting and when sending resumes (local time). The drafts approved meanwhile wait."""
    retry_in = ctx.wait(path, Again.SEND_CAP, _retry_after(error)) or 0.0
    resumes_at = time.time() + retry_in
    setting = error.details.get("setting")
    if setting:
        window = error.details.get("window") or ""
        cap = error.details.get("cap")
        reason = f"the {window} send cap is reached ({setting}={cap}); sending resumes at {local_clock(resumes_at)}"
    else:
        reason = (
            f"the mail provider asks H0 to slow down ({error.message}); sending resumes at {local_clock(resumes_at)}"
        )
    resumes = note_timestamp(dt.datetime.fromtimestamp(resumes_at, dt.UTC))
    fields = _fields(path, error)
    ctx.audit.write(
        "send_deferred", "warning", retry_in=retry_in, resumes_at=resumes, **fields, **ctx.error_fields(error)
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
    data: OutcomeData = {"error": error, "retry_in": retry_in, "kind": "cap", "setting": setting}
    data["resumes_at"] = resumes_at
    return Outcome(Action.FAILED, error.code, retry_in=retry_in, again=Again.SEND_CAP, data=data)


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


# The status word a note given back to Drafts/ carries (None: its own word stands, it was the reason).
_BACK_AS = {Then.BACK_NOT_SENT: "not_sent", Then.BACK_HELD: "held", Then.BACK_AS_IS: None}


def _back_to_drafts(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """Nothing was sent and sending again would not help: give the note back to the human,
    with the reason on it. Approving it again (after fixing it) is a new approval."""
    then = error.then
    held = then is Then.BACK_HELD
    code = error.refusal.value if error.refusal is not None else error.code
    record: dict[str, Any] = {"h0_error": error.message, "h0_error_code": code, "h0_error_at": note_timestamp()}
    if _BACK_AS.get(then):
        record["status"] = _BACK_AS[then]
    try:
        back = ctx.notes.move_to_folder(path, DRAFTS, record).destination
    except NotFound:
        return Outcome(Action.GONE)
    except H0Error as move_error:  # cannot move it back: it stays in Approved/, said once per version
        text = f"{error.message} (and it could not be moved back to {DRAFTS}/: {move_error.message})"
        ctx.report(path, "send_refused", error.message, text, **ctx.error_fields(error))
        return Outcome(Action.FAILED, error.code, data={"error": error, "retry_in": None})
    details = {k: v for k, v in error.details.items() if k not in ("reason", "path", "then")}
    ctx.audit.write(
        "send_held" if held else "send_refused",
        "warning" if held else "error",
        path=path,
        returned_to=back,
        reason=code,
        message=error.message,
        **details,
    )
    (logger.warning if held else logger.error)("{}: not sent ({}) — back in {}: {}", path, code, back, error.message)
    ctx.state.succeeded(path)
    data: OutcomeData = {"error": error, "retry_in": None, "returned_to": back}
    return Outcome(Action.HELD if held else Action.REFUSED, back, data=data)


def _back_unread(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """An approved note H0 cannot read (frontmatter past a limit, invalid YAML) was not sent: it goes
    back to Drafts/ byte for byte — its frontmatter cannot carry h0_error — and the log says why."""
    try:
        back = ctx.notes.move_to_folder(path, DRAFTS).destination
    except NotFound:
        return Outcome(Action.GONE)
    except H0Error as move_error:
        text = f"{error.message} (and it could not be moved back to {DRAFTS}/: {move_error.message})"
        ctx.report(path, "read_error", "corrupt", text, **ctx.error_fields(error))
        return Outcome(Action.WAITING, "corrupt frontmatter")
    details = {k: v for k, v in error.details.items() if k not in ("path", "then")}
    ctx.audit.write(
        "send_refused", "error", path=path, returned_to=back, reason=error.code, message=error.message, **details
    )
    logger.error("{}: not sent ({}) — back in {}, unchanged: {}", path, error.code, back, error.message)
    ctx.state.succeeded(path)
    return Outcome(Action.REFUSED, back, data={"error": error, "retry_in": None, "returned_to": back})


def _archive(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """The human set `status: rejected` in Approved/: filed in Done/, never sent (h0.handlers.reject)."""
    return archive_rejected(path, ctx)


def _file_bounce(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
    """The provider refused the message for good: filed in Logs/failed/ with why."""
    record = {"status": "failed", "failed_at": note_timestamp(), "error": error.message}
    failed_path = ctx.notes.move_to_folder(path, FAILED, record).destination
    _record_filed(
        ctx, "email_delivery_failed", "error", path, error, failed_path=failed_path, **ctx.error_fields(error)
    )
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
        error,
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


def _file_unknown(path: str, error: H0Error, ctx: HandlerContext) -> Outcome:
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
        error,
        done_path=done_path,
        message=text,
        error=error.code,
        rfc822_message_id=rfc,
        idempotency_key=error.details.get("idempotency_key"),
    )
    logger.error("{}: the send's outcome is unknown — filed as {}: {}", path, done_path, error.message)
    ctx.state.succeeded(path)
    return Outcome(Action.FAILED, error.code, data={"error": error, "retry_in": None, "done_path": done_path})


def _record_filed(ctx: HandlerContext, event: str, severity: str, path: str, answer: H0Error, **facts: Any) -> None:
    """The one audit record of a draft filed away because its send did not go as a send: what it was (its To and
    subject, as the server's answer named them) and where it went and why (`facts`)."""
    fields = _fields(path, answer)
    ctx.audit.write(event, severity, path=path, to=fields["to"], subject=fields["subject"], **facts)


# One action for each answer of the mail server (h0.errors.Then): the whole of what the daemon does.
ACTIONS: dict[Then, Callable[[str, H0Error, HandlerContext], Outcome]] = {
    Then.LOOK_AGAIN: _look_again,
    Then.RETRY: _retry,
    Then.PAUSE_FOR_CAP: _pause_for_cap,
    Then.PAUSE_FOR_CREDENTIALS: _pause_for_credentials,
    Then.BACK_NOT_SENT: _back_to_drafts,
    Then.BACK_HELD: _back_to_drafts,
    Then.BACK_AS_IS: _back_to_drafts,
    Then.BACK_UNREAD: _back_unread,
    Then.ARCHIVE: _archive,
    Then.FILE_COPY: _file_copy,
    Then.FILE_UNKNOWN: _file_unknown,
    Then.FILE_BOUNCE: _file_bounce,
}
