"""Send an approved draft (user story 1), exactly once, then file it and its source in Done/.

Order of events, so that a crash anywhere is recovered without a second send:
1. re-read the draft from Approved/ (level-triggered: act on what is there now);
2. call the mail server's `send_email` with the draft's idempotency key and its
   deterministic Message-ID — the server writes its pre-send record first, and answers
   `already_sent` if that key went out before (its ledger, or the provider by Message-ID);
3. record `email_sent` in H0's own log;
4. move the draft to Done/ and mark it `status: sent`; move the source email to Done/;
5. record `email_filed`. A crash between 3 and 5 is finished by `finish_interrupted_filings`,
   which the daemon runs at start: it finds the moved draft by name and content hash.
A failure leaves the draft in Approved/ with the reason logged, and the pipeline looks
again after a backoff. Only the mail server can send; it has no fallback.
"""

from __future__ import annotations

import datetime as dt
import time

from loguru import logger

from h0.errors import (
    AuthRequired,
    H0Error,
    InvalidRequest,
    McpUnavailable,
    NotFound,
    ParseError,
    RateLimited,
    SendFailed,
)
from h0.handlers.context import HandlerContext, NoteView, Outcome
from h0.handlers.drafts import DraftMessage, read_draft
from h0.handlers.reject import archive_rejected
from h0.vault.audit import note_timestamp, utcnow
from h0.vault.layout import DONE, FAILED, NEEDS_ACTION

AUTH_PAUSE_SECONDS = 60.0


def send_approved_draft(path: str, ctx: HandlerContext) -> Outcome:
    note = ctx.read_note(path)
    if isinstance(note, Outcome):
        return note
    if str(note.frontmatter.get("status", "")).strip().lower() == "rejected":
        return archive_rejected(path, ctx)

    draft, problems = read_draft(note)
    if draft is None:
        ctx.report(path, "invalid_draft", note.hash, "; ".join(problems), problems=problems)
        return Outcome("waiting", "; ".join(problems))

    paused = ctx.state.sends_paused_for()
    if paused > 0:
        return Outcome("paused", ctx.state.pause_reason, retry_in=paused)
    if ctx.mail is None:
        raise McpUnavailable("No mail server is configured.")

    started = time.perf_counter()
    try:
        result = ctx.mail.call_tool("send_email", draft.send_arguments(_domain(ctx)))
    except H0Error as error:
        return _send_failed(path, note, draft, error, ctx)

    elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    ctx.state.succeeded(path)
    ctx.audit.write(
        "email_sent",
        path=path,
        note_hash=note.hash,
        to=draft.to,
        subject=draft.subject,
        idempotency_key=draft.key,
        message_id=result.get("message_id"),
        rfc822_message_id=result.get("rfc822_message_id"),
        thread_id=result.get("thread_id"),
        already_sent=bool(result.get("already_sent")),
        backend=result.get("backend"),
        elapsed_ms=elapsed_ms,
    )
    done_path = _file_sent_draft(path, note, draft, result, ctx)
    verb = "was already sent" if result.get("already_sent") else "sent"
    logger.info("✉ {} {} → {} ({} ms), filed as {}", verb, path, ", ".join(draft.to), elapsed_ms, done_path)
    data = {
        "done_path": done_path, "to": draft.to, "message_id": result.get("message_id"),
        "already_sent": bool(result.get("already_sent")), "elapsed_ms": elapsed_ms,
    }
    return Outcome("sent", done_path, data=data)


def _domain(ctx: HandlerContext) -> str:
    sender = ctx.settings.smtp_from or ctx.settings.smtp_user or ""
    return sender.rsplit("@", 1)[-1].strip(" >") if "@" in sender else "h0.local"


def _file_sent_draft(path: str, note: NoteView, draft: DraftMessage, result: dict, ctx: HandlerContext) -> str:
    """Move the sent draft to Done/ with its send record (one call); then its source email."""
    record = {
        "status": "sent",
        "sent_at": _note_time(result.get("sent_at")),
        "gmail_message_id": result.get("message_id"),
        "thread_id": result.get("thread_id") or draft.thread_id,
        "rfc822_message_id": result.get("rfc822_message_id"),
        "idempotency_key": draft.key,
    }
    moved = ctx.notes.move_to_folder(path, DONE, {k: v for k, v in record.items() if v is not None})
    done_path = moved["destination"]
    if moved.get("moved_hash") and moved["moved_hash"] != note.hash:
        # The human saved while the message was going out: what was sent is the version
        # read before the send; say so rather than pretend the note is what went out.
        ctx.notes.update(done_path, {"edited_during_send": True, "sent_version_hash": note.hash})
        ctx.audit.write("draft_edited_during_send", "warning", path=path, done_path=done_path, sent_version_hash=note.hash)
        logger.warning("{} was edited while being sent; the version read before sending went out", path)
    if moved.get("warning"):
        ctx.audit.write("filing_incomplete", "warning", path=path, done_path=done_path, message=moved["warning"])
    _file_source(note, done_path, ctx)
    ctx.audit.write("email_filed", path=path, done_path=done_path, idempotency_key=draft.key)
    return done_path


def _note_time(value: object) -> str:
    """The provider's send time, to the second (so it is a YAML timestamp), or now."""
    if isinstance(value, str):
        try:
            return note_timestamp(dt.datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            pass
    return note_timestamp()


def finish_interrupted_filings(ctx: HandlerContext, *, days: int = 7) -> int:
    """Finish filing drafts that were sent and moved to Done/ but not yet marked (a crash between)."""
    since = utcnow() - dt.timedelta(days=days)
    sent: dict[str, dict] = {}
    filed: set[str] = set()
    for record in ctx.audit.records(since=since):
        key = record.get("idempotency_key")
        if record.get("event") == "email_sent" and key:
            sent[key] = record
        elif record.get("event") == "email_filed" and key:
            filed.add(key)
    finished = 0
    for key, record in sent.items():
        if key in filed or ctx.notes.vault.exists(record["path"]):
            continue  # filed already, or still in Approved/ (the normal pass re-files it without resending)
        done_path = _find_unfiled(record, ctx)
        if done_path is None:
            continue
        note = ctx.notes.read(done_path)
        changes = {
            "status": "sent",
            "sent_at": note_timestamp(),
            "gmail_message_id": record.get("message_id"),
            "thread_id": record.get("thread_id"),
            "rfc822_message_id": record.get("rfc822_message_id"),
            "idempotency_key": key,
        }
        ctx.notes.patch(note, {k: v for k, v in changes.items() if v is not None})
        _file_source(note, done_path, ctx)
        ctx.audit.write("email_filed", path=record["path"], done_path=done_path, idempotency_key=key, recovered=True)
        logger.info("finished filing {} as {} (interrupted after sending)", record["path"], done_path)
        finished += 1
    return finished


def _find_unfiled(record: dict, ctx: HandlerContext) -> str | None:
    name = record["path"].rsplit("/", 1)[-1]
    stem = name[:-3]
    for n in range(1, 50):
        candidate = f"{DONE}/{name}" if n == 1 else f"{DONE}/{stem} ({n}).md"
        if not ctx.notes.vault.exists(candidate):
            if n > 1:
                return None
            continue
        try:
            note = ctx.notes.read(candidate)
        except (NotFound, ParseError):
            continue
        if note.frontmatter.get("status") == "sent":
            continue
        if note.hash == record.get("note_hash") or (
            note.frontmatter.get("subject") == record.get("subject")
            and str(note.frontmatter.get("to", "")).strip() in {", ".join(record.get("to") or []), *(record.get("to") or [])}
        ):
            return candidate
    return None


def _file_source(note: NoteView, done_path: str, ctx: HandlerContext) -> None:
    source = note.frontmatter.get("source")
    if not isinstance(source, str) or not source.strip():
        return
    source = source.strip().removeprefix("[[").removesuffix("]]")
    if not source.startswith(f"{NEEDS_ACTION}/"):
        return
    try:
        moved = ctx.notes.move_to_folder(source, DONE, {"status": "done", "replied_with": done_path})
        ctx.audit.write("source_filed", path=source, done_path=moved["destination"], reply=done_path)
    except NotFound:
        pass  # already filed (by an earlier pass) or removed by the human


def _send_failed(path: str, note: NoteView, draft: DraftMessage, error: H0Error, ctx: HandlerContext) -> Outcome:
    settings = ctx.settings
    base = settings.retry_delay_ms / 1000.0
    retry_in: float | None
    fields = {"path": path, "to": draft.to, "subject": draft.subject, "idempotency_key": draft.key}
    if isinstance(error, McpUnavailable):
        retry_in = ctx.state.backoff(path, max(base, 1.0), settings.retry_backoff_multiplier)
        ctx.audit.write("mcp_unavailable", "error", server="mail", retry_in=retry_in, **fields, **ctx.error_fields(error))
        logger.error("{}: the mail server is unavailable; the draft stays in Approved/ (retry in {:.0f}s)", path, retry_in)
    elif isinstance(error, RateLimited):
        retry_in = max(error.retry_after, 1.0)
        ctx.audit.write("send_deferred", "warning", retry_in=retry_in, **fields, **ctx.error_fields(error))
        logger.warning("{}: rate limited; retry in {:.0f}s", path, retry_in)
    elif isinstance(error, AuthRequired):
        retry_in = AUTH_PAUSE_SECONDS
        if ctx.state.pause_sends(AUTH_PAUSE_SECONDS, error.message):
            ctx.audit.write("sends_paused", "error", reason=error.message, **fields, **ctx.error_fields(error))
            logger.error("sending paused: {} (vault work goes on)", error.message)
    elif isinstance(error, SendFailed) and error.details.get("bounce"):
        return _file_bounce(path, draft, error, ctx)
    elif isinstance(error, SendFailed) and error.details.get("outcome") == "unknown":
        ctx.report(path, "send_outcome_unknown", note.hash, error.message, **fields, **ctx.error_fields(error))
        retry_in = None
    elif isinstance(error, InvalidRequest):
        ctx.report(path, "invalid_draft", note.hash, error.message, **fields, **ctx.error_fields(error))
        retry_in = None
    else:
        retry_in = ctx.state.backoff(path, max(base, 1.0), settings.retry_backoff_multiplier)
        ctx.audit.write("send_failed", "error", retry_in=retry_in, **fields, **ctx.error_fields(error))
        logger.error("{}: send failed ({}); retry in {:.0f}s", path, error.message, retry_in)
    return Outcome("failed", error.code, retry_in=retry_in, data={"error": error, "retry_in": retry_in})


def _file_bounce(path: str, draft: DraftMessage, error: SendFailed, ctx: HandlerContext) -> Outcome:
    failed_path = ctx.notes.move_to_folder(
        path, FAILED, {"status": "failed", "failed_at": note_timestamp(), "error": error.message}
    )["destination"]
    ctx.audit.write(
        "email_delivery_failed", "error", path=path, failed_path=failed_path, to=draft.to,
        subject=draft.subject, **ctx.error_fields(error),
    )
    logger.error("{}: delivery failed ({}); filed in {}", path, error.message, failed_path)
    return Outcome("bounced", failed_path, data={"error": error, "retry_in": None, "failed_path": failed_path})
