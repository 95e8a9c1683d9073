"""`MailAPI`: the mail operations H0's handlers use, whoever implements them.

Two implementations, one protocol: `LocalMail` (this module: `MailService` in process) and
`McpMail` (`h0.mcp.api`: the mail server over MCP, what the daemon uses). Both answer with
the models of `h0.mail.models` — the mail server's published output — and raise typed
`H0Error`s. Sending has no fallback (docs/decisions.md, "Two MCP servers"): when the mail server is unreachable the
approved draft waits in Approved/, so the daemon does not wrap this seam in one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from h0.mail.models import AckResult, EmailFull, EmailList, LabelResult, NewEmails, SendEmailResult
from h0.mail.service import MailService
from h0.vault.last_change import Arrival


class MailAPI(Protocol):
    def send_approved_draft(
        self, path: str, note_hash: str | None = None, arrival: Arrival | None = None
    ) -> SendEmailResult: ...

    def list_new_emails(self, max_results: int) -> NewEmails: ...

    def ack_new_emails(self, cursor: str, message_ids: Sequence[str], failed_ids: Sequence[str] = ()) -> AckResult: ...

    def list_emails(self, query: str, max_results: int) -> EmailList: ...

    def get_email(self, message_id: str) -> EmailFull: ...

    def add_label(self, message_id: str, label_name: str) -> LabelResult: ...


class LocalMail:
    """`MailAPI` over a `MailService` in this process: the service already answers with these models."""

    def __init__(self, service: MailService) -> None:
        self.service = service

    def send_approved_draft(
        self, path: str, note_hash: str | None = None, arrival: Arrival | None = None
    ) -> SendEmailResult:
        return self.service.send_approved_draft(path, note_hash, arrival)

    def list_new_emails(self, max_results: int) -> NewEmails:
        return self.service.list_new_emails(max_results)

    def ack_new_emails(self, cursor: str, message_ids: Sequence[str], failed_ids: Sequence[str] = ()) -> AckResult:
        return self.service.ack_new_emails(cursor, list(message_ids), list(failed_ids))

    def list_emails(self, query: str, max_results: int) -> EmailList:
        return self.service.list_emails(query, max_results)

    def get_email(self, message_id: str) -> EmailFull:
        return self.service.get_email(message_id)

    def add_label(self, message_id: str, label_name: str) -> LabelResult:
        return self.service.add_label(message_id, label_name)
