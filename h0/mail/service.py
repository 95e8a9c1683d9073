"""The mail service: everything the mail MCP server offers, as plain Python.

It owns one backend and H0's state database, and answers with the models of `h0.mail.models` — the
server's output as it is published — so the server only wraps them. Sends go through `Sender`
(sending.py). Every call makes one attempt at the provider and answers a failure at once, typed
("try again at T": h0.mail.providers.retry); the caller decides when to try again.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable
from functools import partial
from typing import TypeVar

from h0 import __version__
from h0.config import Settings
from h0.errors import H0Error, InvalidRequest, NotFound, NotSupported, PermissionDenied, then_of
from h0.mail.agent_drafts import email_note, write_draft
from h0.mail.compose.addresses import check_address, parse_recipients, refuse_line_breaks
from h0.mail.filing import Approvals, Filing
from h0.mail.incoming.email_views import email_full, email_summary, header_text, iso_date
from h0.mail.incoming.sync import MailSync
from h0.mail.models import (
    AckResult,
    DirectSend,
    DraftCreated,
    EmailFull,
    EmailList,
    EmailStatus,
    EmailValidation,
    LabelResult,
    MailHealth,
    MessageMoved,
    NewEmails,
    SendEmailResult,
)
from h0.mail.outgoing import OutgoingBuilder
from h0.mail.owner import is_sent_labels
from h0.mail.providers.backend import Mailbox, MailSender, mailbox_of, open_backend
from h0.mail.sending import DAY, HOUR, Caps, Sender
from h0.state import StateDB
from h0.vault import Vault
from h0.vault.audit import AuditLog, iso
from h0.vault.last_change import Arrival
from h0.vault.layout import LOGS

T = TypeVar("T")
AUDIT_STREAM = "gmail_mcp"
MAX_LABEL_CHARS = 225
HEALTH_NETWORK_BUDGET_S = 2.0


class MailService:
    """One per server process. Thread-safe: tools run in worker threads."""

    def __init__(
        self,
        settings: Settings,
        backend: MailSender | None = None,
        *,
        trusted_caller: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.trusted_caller = trusted_caller  # the daemon's own server: it sees private mail (h0.mcp.mail_view)
        self.backend = backend or open_backend(settings)
        self.mailbox = mailbox_of(self.backend)  # None: SMTP and the outbox only send
        self.audit = AuditLog(settings.vault_path / LOGS, AUDIT_STREAM)
        self.state = StateDB.for_vault(settings.vault_path, settings.h0_state_dir)
        self.filing = Filing(Vault(settings.vault_path), self.state)  # `clock`: the settle period's wall clock
        self.approvals = Approvals(self.filing.audit)
        self.builder = OutgoingBuilder(settings, self.backend, self.state, trusted_caller=trusted_caller, clock=clock)
        self.builder.approvals = self.approvals
        caps = Caps(settings.rate_limit_per_hour, settings.rate_limit_per_day)
        self.sender = Sender(self.backend, self.state, self.audit, caps)
        self.sync = (
            MailSync(self.mailbox, self.state, query=settings.gmail_query, ingested_label=settings.gmail_ingested_label)
            if self.mailbox
            else None
        )

    def close(self) -> None:
        self.backend.close()

    def shutdown(self, timeout: float = 30.0) -> bool:
        """Stop taking sends and wait up to `timeout` s for those in flight (the contract's
        graceful shutdown); True if all finished and were recorded."""
        return self.sender.drain(timeout)

    def _mailbox(self, cannot: str = "cannot read mail") -> Mailbox:
        """The mailbox, or the typed refusal a client sees where the backend only sends."""
        if self.mailbox is None:
            raise NotSupported(f"The {self.backend.name} backend {cannot}.")
        return self.mailbox

    def _sync(self) -> MailSync:
        if self.sync is None:
            raise NotSupported(f"The {self.backend.name} backend cannot follow a mailbox's changes.")
        return self.sync

    # -- sending -------------------------------------------------------------------------

    def send_approved_draft(
        self, path: str, note_hash: str | None = None, arrival: Arrival | None = None
    ) -> SendEmailResult:
        """Send the note at `path` in Approved/ (as it was when the caller read it: `note_hash`; the daemon's
        own server may leave it out), then file it in Done/ from the same read (h0.mail.filing)."""
        try:
            out = self.builder.approved_message(path, note_hash, arrival=arrival)
            result = self.sender.send(out, file=self.filing.file_sent)  # filed under the send's own lock
        except H0Error as error:
            then = then_of(error)  # what becomes of the note, decided here once: the daemon only acts on it
            error.details["then"] = then.value
            if then.leaves_approved:
                self.approvals.left(error.details.get("path") or path)
            raise
        self.approvals.left(out.note_path)  # sent: the note's stay in Approved/ ends (filed now or on the next try)
        return result

    def send_email(self, request: DirectSend) -> SendEmailResult:
        """Free-content sending: refused unless the user opted in (ALLOW_UNAPPROVED_SEND)."""
        if not self.settings.allow_unapproved_send:
            raise PermissionDenied(
                "send_email with free content is off: only a note the human moved into Approved/ is sent. "
                "Write the message with create_draft (it lands in Drafts/ for the human to approve), or set "
                "ALLOW_UNAPPROVED_SEND=true to let any MCP client send (caps still apply).",
                setting="ALLOW_UNAPPROVED_SEND",
            )
        return self.sender.send(self.builder.direct_message(request))

    def create_draft(
        self,
        *,
        to: str | list[str],
        body: str,
        subject: str | None = None,
        cc: str | list[str] | None = None,
        bcc: str | list[str] | None = None,
        reply_to_message_id: str | None = None,
        client: str | None = None,
    ) -> DraftCreated:
        """Write a well-formed draft into Drafts/ for the human to approve ("draft yes, send no").
        `client`: the MCP client asking, recorded as the draft's writer (h0.vault.last_change)."""
        recipients = {
            name: [str(a) for a in parse_recipients(name, value)]
            for name, value in (("to", to), ("cc", cc), ("bcc", bcc))
        }
        if not recipients["to"]:
            raise InvalidRequest("At least one recipient is needed in 'to'.", field="to")
        thread_id = None
        source = None
        if reply_to_message_id:
            refuse_line_breaks("reply_to_message_id", reply_to_message_id)
            mailbox = self.mailbox
            if mailbox is None:  # outbox, SMTP: the email note ingest or `h0 import` wrote knows it
                source, thread_id, parent = email_note(self.settings.vault_path, reply_to_message_id, self.backend.name)
            else:
                original = mailbox.get_message(reply_to_message_id)
                thread_id, parent = original.thread_id, header_text(original, "Subject").strip()
            if not subject:
                subject = parent if parent.lower().startswith("re:") else f"Re: {parent}".strip()
        if not subject or not subject.strip():
            raise InvalidRequest("A draft needs a subject.", field="subject")
        return write_draft(
            Vault(self.settings.vault_path),
            self.state,
            self.audit,
            recipients,
            subject,
            body,
            reply_to_message_id=reply_to_message_id,
            thread_id=thread_id,
            source=source,
            client=client,
        )

    # -- reading -------------------------------------------------------------------------

    def list_emails(self, query: str, max_results: int) -> EmailList:
        refuse_line_breaks("query", query)
        mailbox = self._mailbox()
        found = mailbox.list_messages(query, max_results)
        return EmailList(emails=[email_summary(item) for item in found])

    def get_email(self, message_id: str) -> EmailFull:
        mailbox = self._mailbox()
        return email_full(mailbox.get_message(message_id))

    def list_new_emails(self, max_results: int = 25) -> NewEmails:
        """Mail that arrived since the last acknowledged sync (see h0.mail.incoming.sync), as get_email gives it."""
        found = self._sync().list_new(max_results)
        for skipped in found.skipped:
            self.audit.write("email_skipped", "warning", message_id=skipped.id, reason=skipped.reason)
        return NewEmails(
            emails=[email_full(item) for item in found.emails],
            cursor=found.cursor,
            more=found.more,
            mode=found.mode,
            skipped=found.skipped,
            sent=[email_full(item) for item in found.sent],
        )

    def ack_new_emails(self, cursor: str, message_ids: list[str], failed_ids: list[str] | None = None) -> AckResult:
        """Label `message_ids` ingested and move the sync cursor past the slice `cursor` came with."""
        for message_id in [*message_ids, *(failed_ids or [])]:
            refuse_line_breaks("message_id", message_id)
        return self._sync().ack(cursor, list(message_ids), list(failed_ids or []))

    # -- labels --------------------------------------------------------------------------

    @staticmethod
    def _label_name(name: str) -> str:
        refuse_line_breaks("label name", name)
        name = name.strip()
        if not name or len(name) > MAX_LABEL_CHARS:
            raise InvalidRequest(f"A label name must be 1–{MAX_LABEL_CHARS} characters.", field="label_name")
        return name

    def add_label(self, message_id: str, label_name: str) -> LabelResult:
        name = self._label_name(label_name)
        mailbox = self._mailbox("has no labels")
        label = mailbox.ensure_label(name)
        if not label.kept and name == self.settings.gmail_ingested_label.strip():
            # The mailbox keeps no keywords: the ingested mark lives in H0's state database (h0.mail.incoming.sync).
            self._sync().mark_ingested([message_id])
            return LabelResult(
                message_id=message_id, label_id=label.id, label_name=label.name, created=False, labels=[]
            )
        labels = mailbox.modify_labels(message_id, [label.id], [])
        return LabelResult(
            message_id=message_id, label_id=label.id, label_name=label.name, created=label.created, labels=labels
        )

    def move_email(self, message_id: str, destination_label: str) -> MessageMoved:
        """Gmail has no folders: "moving" adds the destination label and takes the message out of the inbox."""
        name = self._label_name(destination_label)
        mailbox = self._mailbox("has no labels")
        label = mailbox.ensure_label(name)
        remove = [] if label.id == "INBOX" else ["INBOX"]
        labels = mailbox.modify_labels(message_id, [label.id], remove)
        return MessageMoved(
            message_id=message_id, destination_label=label.name, label_id=label.id, created=label.created, labels=labels
        )

    # -- checks --------------------------------------------------------------------------

    @staticmethod
    def validate_email(address: str) -> EmailValidation:
        checked = check_address(address)
        return EmailValidation(
            email=address,
            valid=checked.valid,
            normalized=checked.normalized,
            reason=checked.reason,
            suggestion=checked.suggestion,
        )

    def email_status(self, message_id: str) -> EmailStatus:
        refuse_line_breaks("message_id", message_id)
        row = self.state.send_for_message(message_id.strip())
        mailbox = self.mailbox
        if row is not None:
            rfc = str(row["rfc822_message_id"])
            started = iso(dt.datetime.fromtimestamp(row["started_at"], dt.UTC))
            answer = partial(EmailStatus, message_id=message_id, rfc822_message_id=rfc)
            if row["state"] == "sent":
                bounced_ms = self._quietly(lambda: mailbox.find_bounce(rfc)) if mailbox else None
                if bounced_ms:
                    stamp = iso(dt.datetime.fromtimestamp(bounced_ms / 1000, dt.UTC))
                    return answer(status="bounced", timestamp=stamp, error="a delivery-failure report arrived")
                return answer(status="sent", timestamp=row["sent_at"])
            if row["state"] == "failed":
                return answer(status="bounced" if row["bounce"] else "failed", timestamp=started, error=row["reason"])
            return answer(status="unknown", timestamp=started, error="the send's outcome was never confirmed")
        if mailbox is not None:
            try:
                fetched = mailbox.get_message(message_id)
            except NotFound:
                fetched = None
            if fetched is not None and is_sent_labels(fetched.labels):
                return EmailStatus(
                    message_id=message_id,
                    status="sent",
                    timestamp=iso_date(fetched),
                    rfc822_message_id=header_text(fetched, "Message-ID") or None,
                )
        return EmailStatus(message_id=message_id, status="unknown", timestamp=None)

    def unapproved_notice(self) -> str | None:
        if self.settings.allow_unapproved_send:
            return (
                "ALLOW_UNAPPROVED_SEND is on: any MCP client can send free content with send_email, "
                "without the human's approval (caps still apply)"
            )
        return None

    @staticmethod
    def _quietly(call: Callable[[], T]) -> T | None:
        try:
            return call()
        except H0Error:
            return None

    def health(self, server: str) -> MailHealth:
        """The backend, account, token, recent sends and any problems, as the server `server` answers it."""
        started = time.monotonic()
        problems = list(self.backend.problems())
        token = self.backend.token_state()
        account = None
        if token not in ("missing", "revoked"):
            account = self.backend.account(HEALTH_NETWORK_BUDGET_S)
            if account is None and self.mailbox is not None:
                server = {"gmail": "Gmail", "imap": f"the IMAP server {self.settings.imap_host}"}.get(
                    self.backend.name, f"the {self.backend.name} server"
                )
                problems.append(
                    f"{server} did not confirm the account within {HEALTH_NETWORK_BUDGET_S:.0f} s "
                    "(check the address, the user name and the password or token)"
                )
        logs = self.audit.logs_dir
        if not os.access(logs if logs.exists() else logs.parent, os.W_OK):
            problems.append(f"cannot write the audit log in {logs}: sends are refused without it")
        return MailHealth(
            status="ok" if not problems else "degraded",
            server=server,
            version=__version__,
            backend=self.backend.name,
            account=account,
            token=token,
            sends_last_hour=len(self.state.sends_within(HOUR)),
            sends_last_day=len(self.state.sends_within(DAY)),
            rate_limit_per_hour=self.settings.rate_limit_per_hour,
            rate_limit_per_day=self.settings.rate_limit_per_day,
            problems=problems,
            notes=[n for n in (self.backend.notice, self.unapproved_notice()) if n],
            elapsed_ms=round((time.monotonic() - started) * 1000, 1),
        )
