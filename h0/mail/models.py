"""Mail results as typed models: the mail server's output (the contract clients see as
`outputSchema`) and what `MailAPI` answers the daemon's handlers (h0.mail.api).

Field names follow the spec's data model (EmailSummary, EmailFull, SendEmailResult) plus
the fields the H0 contract adds (rfc822_message_id, already_sent, hints, attachment
metadata, …). Additions are optional to read; renames are breaking changes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# What a backend knows of its credentials without the network (MailHealth.token).
TokenState = Literal["valid", "expired_refreshable", "missing", "revoked", "n/a"]


class DirectSend(BaseModel):
    """A free-content send as asked (the mail server's `send_email` tool, allowed only with ALLOW_UNAPPROVED_SEND):
    one request from the tool through `MailService.send_email` to `OutgoingBuilder.direct_message`, which checks
    every field (recipients, subject, body, attachments, ids) before anything is built."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    to: str | list[str]
    subject: str
    body: str
    cc: str | list[str] | None = None
    bcc: str | list[str] | None = None
    html_body: str | None = None
    attachments: list[str] | None = None
    reply_to_message_id: str | None = None
    thread_id: str | None = None
    message_id: str | None = None
    idempotency_key: str | None = None
    allow_typo_domains: bool = False


class SendEmailResult(BaseModel):
    message_id: str = Field(description="The provider's id of the sent message (Gmail message id).")
    thread_id: str | None = Field(description="The provider's thread id (Gmail threadId).")
    sent_at: str = Field(description="When H0 recorded the send, ISO 8601 UTC.")
    rfc822_message_id: str = Field(description="The Message-ID header the message carries, with angle brackets.")
    backend: str = Field(description="gmail, smtp or outbox (outbox: nothing really left the machine).")
    already_sent: bool = Field(
        description="True when this idempotency_key had already been sent: nothing new was sent."
    )
    idempotency_key: str = Field(description="H0's key for this send (derived with the installation's secret).")
    hints: list[str] = Field(default_factory=list, description="Warnings worth showing a human; the mail was sent.")
    recipients: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Every address the message went to, by field (to, cc, bcc), as it was built: no display names.",
    )
    note_hash: str | None = Field(
        default=None, description="The content hash of the approved note the message was built from, as read."
    )
    filed_as: str | None = Field(
        default=None,
        description="Where the approved note was filed after the send (Done/…, marked status: sent); None when "
        "it was not filed (filing_error says why) or when no note was sent.",
    )
    filing_error: str | None = Field(
        default=None,
        description="Why the sent note is not (fully) filed; the mail was sent. Sending it again is answered "
        "already_sent and files it.",
    )


class DraftCreated(BaseModel):
    path: str = Field(description="Vault path of the new draft in Drafts/.")
    hash: str = Field(description="Its content hash.")
    to: list[str]
    subject: str
    thread_id: str | None = Field(description="The thread the reply will join, when replying.")


class EmailSummary(BaseModel):
    id: str
    thread_id: str | None
    subject: str
    sender: str = Field(description="The From header, decoded.")
    date: str | None = Field(description="ISO 8601 UTC (Gmail's internal date).")
    snippet: str
    labels: list[str]


class EmailList(BaseModel):
    emails: list[EmailSummary]


class AttachmentMeta(BaseModel):
    filename: str
    mime_type: str
    size: int = Field(description="Bytes, as the provider reports them.")


class EmailFull(BaseModel):
    id: str
    thread_id: str | None
    rfc822_message_id: str | None = Field(
        description="The Message-ID header; reply with it via reply_to_message_id=id."
    )
    subject: str
    sender: str
    to: str
    cc: str
    date: str | None
    body: str = Field(description="Plain text; HTML converted to readable text when there is no plain part.")
    body_truncated: bool = Field(description="True when the body was cut at 100 000 characters.")
    body_format: Literal["plain", "html", "none"] = Field(description="Which part the body came from.")
    has_attachments: bool
    attachment_names: list[str]
    attachments: list[AttachmentMeta] = Field(description="Metadata only; attachment content is never downloaded.")
    labels: list[str]
    authentication: dict[str, str] | None = Field(
        default=None,
        description="The receiving provider's verdicts from the topmost Authentication-Results header: "
        "{spf, dkim, dmarc} each pass, fail, softfail, none, …; null when the message has no such header. "
        "dmarc=fail means the sender may be forged.",
    )
    automated: Literal["auto_reply", "bounce", "list", "notification"] | None = Field(
        default=None,
        description="Machine-made mail, told from its headers: an auto-reply (out of office), a bounce (delivery "
        "report), a mailing-list or bulk post (newsletters), or a notification (no-reply senders, receipts, "
        "calendar invitations, bulk-sending services); null for mail a person wrote.",
    )
    list_address: str | None = Field(default=None, description="A list post's posting address (List-Post).")


class SkippedEmail(BaseModel):
    id: str
    reason: Literal["deleted", "unreadable"] = Field(
        description="Gone before it could be read, or refused by the provider."
    )


class NewEmails(BaseModel):
    emails: list[EmailFull] = Field(description="New messages to handle, oldest first, each as get_email gives it.")
    cursor: str = Field(description="Give it to ack_new_emails once every email here is handled (an opaque token).")
    more: bool = Field(description="True when more new mail is waiting: call again after the acknowledgement.")
    mode: Literal["history", "catch_up"] = Field(
        description="history: what the mailbox's change history lists; catch_up: the newest matches of GMAIL_QUERY "
        "(first run, expired history, or a periodic reconciliation)."
    )
    skipped: list[SkippedEmail] = Field(
        default_factory=list, description="New messages that could not be read (logged)."
    )
    sent: list[EmailFull] = Field(
        default_factory=list,
        description="Messages the owner sent (from any mail client: Gmail's SENT label, the IMAP Sent folder) since "
        "the last acknowledged sync, read in the same pass; acknowledged with the slice. Not to be ingested as notes.",
    )


class AckResult(BaseModel):
    cursor: str | None = Field(description="Where the sync now stands (Gmail historyId); it never moves back.")
    labelled: int = Field(description="How many messages got the ingested label.")
    gone: list[str] = Field(default_factory=list, description="Ids that no longer exist, so were not labelled.")
    mode: Literal["history", "catch_up"]


class LabelResult(BaseModel):
    message_id: str
    label_id: str
    label_name: str
    created: bool = Field(description="True when the label did not exist and was created.")
    labels: list[str] = Field(default_factory=list, description="The message's label ids afterwards.")


class MessageMoved(BaseModel):
    model_config = ConfigDict(title="MoveResult")  # the name on the wire, unchanged for clients

    message_id: str
    destination_label: str
    label_id: str
    created: bool
    labels: list[str] = Field(description="The message's label ids afterwards (INBOX removed unless moved to it).")


class EmailValidation(BaseModel):
    email: str
    valid: bool
    normalized: str | None = Field(default=None, description="The address as H0 would send to it.")
    reason: str | None = None
    suggestion: str | None = Field(
        default=None, description="A likely intended address when the domain looks mistyped."
    )


class EmailStatus(BaseModel):
    message_id: str
    status: Literal["sent", "delivered", "bounced", "failed", "unknown"] = Field(
        description="Gmail and SMTP give no delivery receipts: 'sent' is the best news available; "
        "'bounced' when a delivery-failure report or a permanent refusal is known."
    )
    timestamp: str | None
    rfc822_message_id: str | None = None
    error: str | None = None


class MailHealth(BaseModel):
    status: Literal["ok", "degraded"]
    server: str
    version: str
    backend: str
    account: str | None = Field(description="The sending address, when known.")
    token: TokenState
    sends_last_hour: int
    sends_last_day: int
    rate_limit_per_hour: int
    rate_limit_per_day: int
    problems: list[str]
    notes: list[str] = Field(default_factory=list)
    elapsed_ms: float
