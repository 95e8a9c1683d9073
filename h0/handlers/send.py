"""Send an approved draft (user story 1), exactly once, then file it and its source in Done/.

Order of events, so that a crash anywhere is recovered without a second send:
1. re-read the draft from Approved/ (level-triggered: act on what is there now);
2. ask the mail server to `send_approved_draft(path, hash)`: it re-reads the note itself,
   builds the message, claims the send in H0's state database and writes its pre-send
   record first — or answers `already_sent` when that exact message went out before;
3. (the mail server records `email_sent`, the one record of a send, where it happened);
4. move the draft to Done/ and mark it `status: sent`; move the source email to Done/;
5. record the filing in the state database (the filing journal) and `email_filed` in the log.
   A crash between 2 and 5 is finished by `finish_interrupted_filings` at the daemon's start.
A note the mail server refuses for good (invalid, hidden text, an unedited template, a
changed attachment, a second reply, the thread moved on) goes back to Drafts/ with the
reason written on it: the human fixes it and approves again. A transient failure leaves it
in Approved/ and the pipeline looks again after a backoff. Only the mail server can send.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from loguru import logger

from h0.drafting.revise import REVISE_HINT
from h0.errors import (
    H0Error,
    McpUnavailable,
    NotFound,
    ParseError,
)
from h0.handlers.context import Action, HandlerContext, Outcome, OutcomeData, source_note
from h0.handlers.reject import archive_rejected
from h0.handlers.send_failed import ERROR_KEYS, return_unreadable, say_resumed, send_failed
from h0.mail.compose.drafts import CUTOFF, NEXT_STEP
from h0.mail.compose.recipients import describe_recipients
from h0.mail.models import SendEmailResult
from h0.vault import Note
from h0.vault.audit import note_timestamp
from h0.vault.draft_state import is_rejected
from h0.vault.layout import DONE


def send_approved_draft(path: str, ctx: HandlerContext) -> Outcome:
    try:
        note = ctx.notes.read(path)
    except NotFound:
        return Outcome(Action.GONE)
    except ParseError as error:
        return return_unreadable(path, error, ctx)
    if is_rejected(note.frontmatter):
        return archive_rejected(path, ctx)
    arrival = ctx.arrival(path)
    if ctx.state.first_report(path, "draft_approved", "seen"):  # once per stay in Approved/ (`h0 log` shows it)
        ctx.audit.write("draft_approved", path=path, arrival=arrival.kind, note_hash=note.hash)

    paused = ctx.state.sends_paused_for()
    if paused > 0:  # said once when the pause began; the drafts that wait meanwhile wait silently
        return Outcome(
            Action.PAUSED,
            ctx.state.pause_reason,
            retry_in=paused,
            data={"kind": ctx.state.pause_kind, **ctx.state.pause_facts},
        )
    if ctx.mail is None:
        raise McpUnavailable("No mail server is configured.")

    started = time.perf_counter()
    try:
        result = ctx.mail.send_approved_draft(path, note.hash, arrival)
    except H0Error as error:
        return send_failed(path, note, error, ctx)

    elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
    ctx.state.succeeded(path)
    say_resumed(ctx, path)
    recipients = result.recipients  # the envelope the message was built with, not the note re-read
    if result.already_sent:  # nothing went out: the mail server wrote no `email_sent`; say why it is filed
        ctx.audit.write(
            "already_sent",
            path=path,
            note_hash=note.hash,
            idempotency_key=result.idempotency_key,
            message_id=result.message_id,
            rfc822_message_id=result.rfc822_message_id,
            backend=result.backend,
        )
    done_path = _file_sent_draft(path, note, result, ctx, describe_recipients(recipients))
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


def _file_sent_draft(path: str, note: Note, result: SendEmailResult, ctx: HandlerContext, to: str = "") -> str:
    """Move the sent draft to Done/ with its send record (one call); then its source email. H0's own
    line below the cut-off then says what happened ("Sent on … to …"), not what to do next."""
    record = {
        "status": "sent",
        "sent_at": _note_time(result.sent_at),
        "gmail_message_id": result.message_id,
        "thread_id": result.thread_id or note.frontmatter.get("thread_id"),
        "rfc822_message_id": result.rfc822_message_id,
        "idempotency_key": result.idempotency_key,
    }
    moved = ctx.notes.move_to_folder(path, DONE, {k: v for k, v in record.items() if v is not None})
    done_path = moved.destination
    if any(key in note.frontmatter for key in ERROR_KEYS):
        ctx.notes.update(done_path, {}, remove=ERROR_KEYS)  # the problem it once had is fixed
    elif moved.hash and moved.moved_hash == note.hash:  # filed as read: its text is known, no need to read it
        filed = {**note.frontmatter, **{k: v for k, v in record.items() if v is not None}}
        _say_sent(done_path, filed, note.body, moved.hash, record["sent_at"], to, ctx)
    if moved.moved_hash and moved.moved_hash != note.hash:
        # The human saved while the message was going out: what was sent is the version
        # read before the send; say so rather than pretend the note is what went out.
        ctx.notes.update(done_path, {"edited_during_send": True, "sent_version_hash": note.hash})
        ctx.audit.write(
            "draft_edited_during_send", "warning", path=path, done_path=done_path, sent_version_hash=note.hash
        )
        logger.warning("{} was edited while being sent; the version read before sending went out", path)
    if moved.warning:
        ctx.audit.write("filing_incomplete", "warning", path=path, done_path=done_path, message=moved.warning)
    _file_source(note, done_path, ctx)
    _journal_filed(ctx, result.rfc822_message_id, done_path)
    ctx.audit.write("email_filed", path=path, done_path=done_path, idempotency_key=result.idempotency_key)
    return done_path


def _say_sent(
    done_path: str,
    frontmatter: dict[str, Any],
    body: str,
    filed_hash: str,
    sent_at: object,
    to: str,
    ctx: HandlerContext,
) -> None:
    """Replace H0's "move this note to Approved/" line (below the cut-off) with when and to whom it went,
    in one write on the note exactly as H0 filed it (`filed_hash`): one changed since is left as it is."""
    cut = body.find(CUTOFF)
    if cut == -1 or NEXT_STEP not in body[cut:]:
        return
    stamp = str(sent_at)
    when = stamp.replace("T", " ")[:16] + (" UTC" if stamp.endswith("Z") else "")
    said = f"Sent on {when} {to}." if to else f"Sent on {when}."
    below = body[cut:].replace(NEXT_STEP, said, 1).replace(f"\n{REVISE_HINT}\n", "\n")
    try:
        ctx.notes.write(done_path, frontmatter, body[:cut] + below, if_match=filed_hash)
    except H0Error as err:  # the message went out and is filed; only the wording stays behind
        logger.debug("{}: the sent line was not written ({})", done_path, err.message)


def _journal_filed(ctx: HandlerContext, rfc: object, done_path: str) -> None:
    if ctx.state_db is not None and isinstance(rfc, str):
        try:
            ctx.state_db.mark_filed(rfc, done_path)
        except H0Error as err:
            logger.error("filed {} but could not record it in the state database: {}", done_path, err.message)


def _note_time(value: object) -> str:
    """The provider's send time, to the second (so it is a YAML timestamp), or now."""
    if isinstance(value, str):
        try:
            return note_timestamp(dt.datetime.fromisoformat(value))
        except ValueError:
            pass
    return note_timestamp()


def finish_interrupted_filings(ctx: HandlerContext, *, days: int = 7) -> int:
    """Finish filing drafts that were sent and moved to Done/ but not yet marked (a crash between).

    The filing journal is the state database: a sent row with a note path and no filing."""
    if ctx.state_db is None:
        return 0
    finished = 0
    for row in ctx.state_db.unfiled_sends(days * 86400.0):
        path = row["note_path"]
        if ctx.notes.exists(path):
            continue  # still in Approved/: the normal pass files it ("already sent") without resending
        done_path = _find_unfiled(row, ctx)
        if done_path is None:
            continue
        note = ctx.notes.read(done_path)
        changes = {
            "status": "sent",
            "sent_at": _note_time(row.get("sent_at")),
            "gmail_message_id": row.get("provider_message_id"),
            "thread_id": row.get("thread_id"),
            "rfc822_message_id": row.get("rfc822_message_id"),
            "idempotency_key": row.get("idempotency_key"),
        }
        ctx.notes.patch(note, {k: v for k, v in changes.items() if v is not None})
        _file_source(note, done_path, ctx)
        _journal_filed(ctx, row["rfc822_message_id"], done_path)
        ctx.audit.write(
            "email_filed", path=path, done_path=done_path, idempotency_key=row.get("idempotency_key"), recovered=True
        )
        logger.info("finished filing {} as {} (interrupted after sending)", path, done_path)
        finished += 1
    return finished


def _find_unfiled(row: dict[str, Any], ctx: HandlerContext) -> str | None:
    """The sent note in Done/: same name (or 'name (n).md'), same bytes as were sent, not yet marked."""
    name = row["note_path"].rsplit("/", 1)[-1]
    stem = name[:-3]
    for n in range(1, 50):
        candidate = f"{DONE}/{name}" if n == 1 else f"{DONE}/{stem} ({n}).md"
        if not ctx.notes.exists(candidate):
            if n > 1:
                return None
            continue
        try:
            note = ctx.notes.read(candidate)
        except (NotFound, ParseError):
            continue
        if note.frontmatter.get("status") == "sent":
            continue
        if note.hash == row.get("note_hash"):
            return candidate
    return None


def _file_source(note: Note, done_path: str, ctx: HandlerContext) -> None:
    source = source_note(note.frontmatter.get("source"), ctx)
    if source is None:
        if note.frontmatter.get("source"):
            ctx.audit.write(
                "source_not_filed",
                "warning",
                path=done_path,
                source=str(note.frontmatter.get("source")),
                reason="source: must name an email note in Needs_Action/",
            )
        return
    try:
        moved = ctx.notes.move_to_folder(source, DONE, {"status": "done", "replied_with": done_path})
        ctx.audit.write("source_filed", path=source, done_path=moved.destination, reply=done_path)
    except NotFound:
        pass  # already filed (by an earlier pass) or removed by the human
