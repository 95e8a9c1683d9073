"""The mail MCP server (`h0 mcp gmail`): read, label and send mail as typed tools.

Each tool is one `h0.mail.MailService` call, whose model it returns as it is; the rules
(validation, caps, audit, exactly-once) live there. The backend is whatever MAIL_BACKEND says — gmail, smtp or
the outbox, which writes .eml files and is announced loudly on stderr at start-up. What a client may see of
the mailbox is the disclosure gate's to say (h0.mcp.mail_view): an email the vault keeps private is never
listed or shown, except to the daemon's own server.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Annotated, Literal

from loguru import logger
from mcp_types import ToolAnnotations
from pydantic import Field

from h0 import __version__
from h0.config import Settings
from h0.errors import H0Error, Refusal, refuse
from h0.mail import MailService, models
from h0.mail.sending import LOOK_AGAIN_S
from h0.mcp.base import READ_ONLY, H0Server, current_client
from h0.mcp.gate_now import GateNow
from h0.mcp.live_index import LiveIndex
from h0.mcp.mail_view import MailView
from h0.mcp.vault_server import daemon_filing_from_env
from h0.vault.last_change import Arrival

SERVER_NAME = "h0-gmail"
INSTRUCTIONS = """\
H0's mailbox. list_emails takes Gmail search syntax ('is:unread in:inbox'); ids from it go to
get_email, add_label, move_email and create_draft(reply_to_message_id=…). Nothing is sent without
the human: create_draft writes a draft into the vault's Drafts/, and only a note the human moved
into Approved/ can be sent (send_approved_draft, which H0's daemon calls by itself). send_email
with free content is refused unless the user set ALLOW_UNAPPROVED_SEND. list_new_emails and
ack_new_emails are how H0's ingest follows the mailbox: leave them to H0. Emails the owner keeps private
in the vault (marked, tagged, in a private folder or thread) are never listed or shown here."""

Recipients = str | list[str] | None
DRAFTS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
SENDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True)
LABELS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True)
REMOTE_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True)
# Reads the mailbox; moves H0's own sync cursor when there is nothing to acknowledge.
SYNC = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True)


def build_mail_server(settings: Settings, service: MailService | None = None) -> H0Server:
    """Create the mail server for these settings (no network until a tool needs it). Unless it is the daemon's
    own (`MailService.trusted_caller`), it judges each email it answers with the vault index, which it opens and
    watches when a tool first reads mail (h0.mcp.mail_view)."""
    mail = service or MailService(settings)
    # Every call is answered within MAIL_ANSWER_SECONDS: a slower provider is answered "try again" and the
    # call goes on (a send: "still sending", looked at again and answered from the ledger, never sent twice).
    server = H0Server(
        SERVER_NAME,
        title="H0 mail",
        version=__version__,
        instructions=INSTRUCTIONS,
        answer_within=settings.mail_answer_seconds,
    )
    gates = GateNow(settings.vault_path, settings.private_folders)  # the private folders as they are at each call
    live = LiveIndex(settings.vault_path, settings.h0_state_dir, gates(), watcher=settings.h0_watcher, lazy=True)
    view = MailView(gates, trusted=mail.trusted_caller, index=live.wait)
    if not mail.trusted_caller:
        server.on_start(live.start)
        server.on_stop(live.stop)

    @server.typed_tool(models.SendEmailResult, annotations=SENDS, title="Send an approved draft", overrun=still_sending)
    def send_approved_draft(
        path: Annotated[str, Field(description="Vault path of the note in Approved/, e.g. 'Approved/reply.md'.")],
        note_hash: Annotated[
            str | None,
            Field(
                description="The note's content hash as you read it (vault read_note's hash). Required; only "
                "H0's daemon, whose approval checks bind the send to what the human saw, may leave it out."
            ),
        ] = None,
        arrival: Annotated[
            Literal["moved", "written", "unknown"],
            Field(description="How the note came into Approved/ (only H0's daemon can vouch; others: unknown)."),
        ] = "unknown",
        arrived_at: Annotated[
            float | None, Field(description="When it arrived, epoch seconds (only H0's daemon can vouch).")
        ] = None,
        source_changed_at: Annotated[
            float | None,
            Field(description="When the note it was moved from last changed, epoch seconds (only H0's daemon)."),
        ] = None,
    ) -> models.SendEmailResult:
        """Send the note the human moved into Approved/, exactly as it was when you read it, and file it in Done/
        (status: sent; the answer's filed_as says where). The server re-reads the note and refuses (nothing sent)
        anything not in Approved/, not marked as awaiting sending, changed since `note_hash` or just before it
        was approved, still being written, with hidden text or an unedited template, changed attachments, or a
        second reply to one email."""
        return mail.send_approved_draft(path, note_hash, Arrival(arrival, arrived_at, source_changed_at))

    @server.typed_tool(models.DraftCreated, annotations=DRAFTS, title="Create a draft")
    def create_draft(
        to: Annotated[str | list[str], Field(description="Recipient(s): 'a@x.com', 'A <a@x.com>, b@y.org' or a list.")],
        body: Annotated[str, Field(description="The plain-text message.")],
        subject: Annotated[str | None, Field(description="One line. Optional when replying ('Re: …').")] = None,
        cc: Annotated[Recipients, Field(description="Cc recipient(s).")] = None,
        bcc: Annotated[Recipients, Field(description="Bcc recipient(s).")] = None,
        reply_to_message_id: Annotated[
            str | None, Field(description="Provider id of the message answered: fills the thread fields.")
        ] = None,
    ) -> models.DraftCreated:
        """Write a draft into Drafts/ for the human to review and approve. Nothing is sent: the human moves
        the note into Approved/ to send it. A reply to an email the owner keeps private is refused."""
        if reply_to_message_id:
            view.may_answer(reply_to_message_id, mail.get_email, settings.vault_path, mail.backend.name)
        return mail.create_draft(
            to=to,
            body=body,
            subject=subject,
            cc=cc,
            bcc=bcc,
            reply_to_message_id=reply_to_message_id,
            client=current_client(),
        )

    @server.typed_tool(
        models.SendEmailResult,
        annotations=SENDS,
        title="Send an email (free content; off by default)",
        overrun=still_sending,
    )
    def send_email(
        to: Annotated[str | list[str], Field(description="Recipient(s): 'a@x.com', 'A <a@x.com>, b@y.org' or a list.")],
        subject: Annotated[str, Field(description="One line; no line breaks.")],
        body: Annotated[str, Field(description="The plain-text body (required, non-empty).")],
        cc: Annotated[Recipients, Field(description="Cc recipient(s).")] = None,
        bcc: Annotated[Recipients, Field(description="Bcc recipient(s).")] = None,
        html_body: Annotated[str | None, Field(description="An HTML alternative to the plain body.")] = None,
        attachments: Annotated[
            list[str] | None,
            Field(description="Vault-relative paths of files to attach (25 MB in total, no executables)."),
        ] = None,
        reply_to_message_id: Annotated[
            str | None,
            Field(description="Provider id of the message answered: sets In-Reply-To/References and the thread."),
        ] = None,
        thread_id: Annotated[str | None, Field(description="Provider thread id to file the message in.")] = None,
        message_id: Annotated[
            str | None, Field(description="The RFC 5322 Message-ID to use, e.g. '<h0.abc@h0.local>'.")
        ] = None,
        idempotency_key: Annotated[
            str | None,
            Field(
                description="Makes the send exactly-once: a repeated call with the same key returns the first result."
            ),
        ] = None,
        allow_typo_domains: Annotated[
            bool, Field(description="Send even if a domain looks like a typo of a popular one (gmial.com).")
        ] = False,
    ) -> models.SendEmailResult:
        """Send free content — refused (permission_denied) unless the user set ALLOW_UNAPPROVED_SEND; use
        create_draft instead. When allowed: refuses bad addresses, suspected domain typos, header injection,
        empty bodies, oversized or executable attachments; caps apply; every send is audited first."""
        return mail.send_email(
            models.DirectSend(
                to=to,
                subject=subject,
                body=body,
                cc=cc,
                bcc=bcc,
                html_body=html_body,
                attachments=attachments,
                reply_to_message_id=reply_to_message_id,
                thread_id=thread_id,
                message_id=message_id,
                idempotency_key=idempotency_key,
                allow_typo_domains=allow_typo_domains,
            )
        )

    @server.typed_tool(models.EmailList, annotations=REMOTE_READ, title="List emails")
    def list_emails(
        query: Annotated[
            str, Field(description="Gmail search syntax, e.g. 'is:unread in:inbox', 'label:Clients'.")
        ] = "is:unread",
        max_results: Annotated[int, Field(ge=1, le=100, description="How many, newest first (1–100).")] = 10,
    ) -> models.EmailList:
        """List messages matching a Gmail query: id, thread, subject, sender, date, snippet, labels. Emails the
        owner keeps private in the vault are left out."""
        return view.listed(mail.list_emails(query, max_results))

    @server.typed_tool(models.NewEmails, annotations=SYNC, title="List new emails (H0's ingest)")
    def list_new_emails(
        max_results: Annotated[
            int, Field(ge=1, le=50, description="About how many (1–50; one change is never split).")
        ] = 25,
    ) -> models.NewEmails:
        """New mail since H0's last acknowledged sync, matching GMAIL_QUERY, not yet ingested: full messages, oldest
        first, and a cursor for ack_new_emails. Idle, this costs one Gmail history call. H0's ingest uses it."""
        return view.new(mail.list_new_emails(max_results))

    @server.typed_tool(models.AckResult, annotations=LABELS, title="Acknowledge new emails (H0's ingest)")
    def ack_new_emails(
        cursor: Annotated[str, Field(description="The cursor list_new_emails returned with these emails.")],
        message_ids: Annotated[
            list[str], Field(description="Ids now handled (their notes written): labelled ingested.")
        ],
        failed_ids: Annotated[
            list[str], Field(description="Ids that could not be handled: left unlabelled and tried again later.")
        ] = [],  # noqa: B006 — pydantic copies defaults
    ) -> models.AckResult:
        """Label the handled messages GMAIL_INGESTED_LABEL, then move H0's sync cursor past them (never back)."""
        return mail.ack_new_emails(cursor, message_ids, failed_ids)

    @server.typed_tool(models.EmailFull, annotations=REMOTE_READ, title="Read an email")
    def get_email(
        message_id: Annotated[str, Field(description="The provider's message id (from list_emails).")],
    ) -> models.EmailFull:
        """Read one message: headers, the body as plain text, attachment metadata (never their content). An email
        the owner keeps private in the vault is refused (permission_denied, reason "private")."""
        return view.shown(mail.get_email(message_id))

    @server.typed_tool(models.MessageMoved, annotations=LABELS, title="Move an email")
    def move_email(
        message_id: Annotated[str, Field(description="The provider's message id.")],
        destination_label: Annotated[
            str, Field(description="Label to move to, e.g. 'H0/Done' (created if missing) or 'INBOX'.")
        ],
    ) -> models.MessageMoved:
        """Move a message: add the destination label and remove INBOX (Gmail has labels, not folders)."""
        return mail.move_email(message_id, destination_label)

    @server.typed_tool(models.LabelResult, annotations=LABELS, title="Label an email")
    def add_label(
        message_id: Annotated[str, Field(description="The provider's message id.")],
        label_name: Annotated[str, Field(description="Label name, e.g. 'AI_PROCESSED'; created if missing.")],
    ) -> models.LabelResult:
        """Add a label to a message, creating the label first if it does not exist."""
        return mail.add_label(message_id, label_name)

    @server.typed_tool(models.EmailValidation, annotations=READ_ONLY, title="Validate an address")
    def validate_email(
        email: Annotated[str, Field(description="One address, e.g. 'bob@example.com'.")],
    ) -> models.EmailValidation:
        """Check an address's syntax (RFC 5322, no DNS look-up) and common domain typos (gmial.com)."""
        return mail.validate_email(email)

    @server.typed_tool(models.EmailStatus, annotations=REMOTE_READ, title="Status of a sent email")
    def get_email_status(
        message_id: Annotated[str, Field(description="Provider id from send_email, or the RFC 5322 Message-ID.")],
    ) -> models.EmailStatus:
        """What became of a message H0 sent: sent, bounced, failed or unknown."""
        return mail.email_status(message_id)

    @server.typed_tool(models.MailHealth, annotations=REMOTE_READ, title="Health check")
    def health_check() -> models.MailHealth:
        """Backend, account, token state, sends in the last hour/day and any problems (answers within 3 s)."""
        return mail.health(SERVER_NAME)

    server.mail = mail  # type: ignore[attr-defined]  # for in-process tests and benchmarks
    return server


def still_sending(tool: str, seconds: float) -> H0Error:
    """A send's answer when the provider has not answered it within the call's time: it goes on (and is recorded
    in the ledger); looked at again, it is answered from there — sent, in progress, or unknown — never twice."""
    return refuse(Refusal.STILL_SENDING, tool=tool, answered_after=round(seconds, 1), retry_after=LOOK_AGAIN_S)


def announce(service: MailService) -> None:
    """Say on stderr (never stdout: that is the protocol) what this server will do with mail. The
    daemon's own server stays quiet: `h0 watch` says it in its one start-up line, `h0 sweep` in none."""
    if daemon_filing_from_env():
        logger.debug("mail server ready: backend={}, vault={}", service.backend.name, service.settings.vault_path)
        return
    for notice in (service.backend.notice, service.unapproved_notice()):
        if notice:
            bar = "!" * 78
            print(f"{bar}\n!! h0 mcp gmail: {notice}\n{bar}", file=sys.stderr, flush=True)
    logger.info("mail server ready: backend={}, vault={}", service.backend.name, service.settings.vault_path)


SHUTDOWN_GRACE_S = 30.0


def main(settings: Settings, service: MailService) -> None:
    """Serve `service` (h0.mcp.servers.mail_service) over stdio until the client closes the pipe; on
    SIGTERM, finish the sends in flight (up to 30 s), refuse new ones, and exit 0."""

    def on_sigterm(signum: int, frame: object) -> None:
        # Runs in the main thread, which is the event loop: blocking here stops new calls
        # from being read while worker threads finish their sends and write their outcomes.
        # Then leave at once — a normal exit would wait for the SDK's idle worker threads
        # and the stdin reader, which only stdin's end would release.
        logger.info("SIGTERM: finishing sends in flight")
        finished = service.shutdown(SHUTDOWN_GRACE_S)
        if not finished:
            logger.error(
                "SIGTERM: sends still in flight after {:.0f} s; the ledger will resolve them", SHUTDOWN_GRACE_S
            )
        sys.stderr.flush()
        os._exit(0 if finished else 1)

    signal.signal(signal.SIGTERM, on_sigterm)
    announce(service)
    build_mail_server(settings, service).serve("stdio")
