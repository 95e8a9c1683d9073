"""Send an approved draft (user story 1): one tool call; the mail server sends it and files it.

The daemon does not read the note: its mail server reads it once, in the real Approved/, builds the
message from that read, sends it exactly once (claim in H0's state database, pre-send record, provider,
the one `email_sent` record) and files that same read in Done/ (`status: sent`, the "Sent on … to …"
line, the source email, the filing journal, `email_filed`: h0.mail.filing). Here: sending paused? →
`send_approved_draft(path, arrival)` → an Outcome from the typed result, which says where it was filed.
A note the mail server did not send comes back as a typed error whose answer says what becomes of it
(`H0Error.then`: look again, retry, pause, back to Drafts/, archive, file), and h0.handlers.send_failed
does that. A crash between send and filing is finished without a second send: a note still in Approved/
is answered "already sent" and filed, one moved but not marked by `finish_interrupted_filings` at the
daemon's start. Only the mail server can send.
"""

from __future__ import annotations

import time

from loguru import logger

from h0.errors import H0Error, InternalError, McpUnavailable
from h0.handlers.context import Action, HandlerContext, Outcome, OutcomeData
from h0.handlers.send_failed import not_sent, while_paused
from h0.mail.compose.recipients import describe_recipients
from h0.mail.filing import Filing
from h0.vault import Vault


def send_approved_draft(path: str, ctx: HandlerContext) -> Outcome:
    """The send step, straight: sending paused? → one call to the mail server, which reads, checks, sends and
    files the note → an Outcome from its answer. Three ways out: paused, not sent (what the answer says becomes
    of the note: h0.handlers.send_failed), sent."""
    if ctx.state.sends_paused_for() > 0:  # said once when the pause began; the drafts that wait meanwhile wait silently
        return while_paused(path, ctx)
    if ctx.mail is None:
        raise McpUnavailable("No mail server is configured.")
    started = time.perf_counter()
    try:
        # No hash: the daemon's own server reads the note itself; the approval checks bind it to what the
        # human saw (docs/decisions.md, "One read per send").
        result = ctx.mail.send_approved_draft(path, None, ctx.arrival(path))
    except H0Error as error:
        return not_sent(path, error, ctx)
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


def finish_interrupted_filings(ctx: HandlerContext, *, days: int = 7) -> int:
    """Finish filing drafts that were sent and moved to Done/ but not yet marked (a crash between):
    the filing's own recovery (h0.mail.filing), on this vault, with the daemon's state database."""
    if ctx.state_db is None:
        return 0
    return Filing(Vault(ctx.paths.root), ctx.state_db, ctx.audit).finish_interrupted(days=days)
