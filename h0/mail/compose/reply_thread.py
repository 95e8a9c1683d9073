"""Where a reply belongs: its In-Reply-To, References and provider thread — and whether the
conversation moved on since the email it answers.

With a mailbox (Gmail, IMAP) the original is read, and for an approved draft its thread too: an
inbound message newer than the one answered (and than the draft) holds the reply. A backend that
only sends (outbox, SMTP) threads by the Message-ID the answered email's note keeps (`source:`).
"""

from __future__ import annotations

from h0.errors import H0Error, NotFound, Refusal, refuse
from h0.mail.compose.mime import reply_headers
from h0.mail.owner import is_sent_labels
from h0.mail.providers.backend import Fetched, Mailbox
from h0.platform.fs import regular_file
from h0.vault.note import MAX_NOTE_BYTES, parse
from h0.vault.paths import PathResolver

Threading = tuple[str | None, str | None, str | None]  # (In-Reply-To, References, provider thread id)


class ReplyThreading:
    """The threading of replies for one vault and one backend."""

    def __init__(self, resolver: PathResolver, mailbox: Mailbox | None, backend_name: str) -> None:
        self.resolver = resolver
        self.mailbox = mailbox  # None: the originals of replies are not readable here
        self.backend_name = backend_name

    def thread(
        self,
        reply_to: str | None,
        thread_id: str | None,
        subject: str,
        hints: list[str],
        *,
        check_newer: bool,
        drafted_at: float | None = None,
        path: str | None = None,
        source: str | None = None,
    ) -> Threading:
        """(In-Reply-To, References, threadId) for a reply; a failed look-up blocks the
        send only when there is no thread_id to fall back on. With `check_newer`, a Gmail
        thread that received an inbound message after the one answered holds the reply.
        A backend that cannot read mail (outbox, SMTP) threads by the Message-ID the email
        note answered (`source:`) keeps."""
        if not reply_to:
            return (*self._headers_from_note(source), thread_id) if source else (None, None, thread_id)
        if self.mailbox is None:
            in_reply_to, references = self._headers_from_note(source)
            if in_reply_to is None:
                hints.append(
                    f"the {self.backend_name} backend cannot read the original and the email note holds no "
                    "Message-ID; sent without In-Reply-To"
                )
            return in_reply_to, references, thread_id
        try:
            original = self.mailbox.get_message(reply_to)
        except H0Error as err:
            if thread_id is None:
                if isinstance(err, NotFound):
                    raise NotFound(
                        f"The message being replied to ({reply_to}) was not found.", reply_to_message_id=reply_to
                    ) from None
                raise
            hints.append(f"could not read the original ({err.code}); threaded by thread_id only")
            return None, None, thread_id
        parent = original.headers.get("Message-ID")
        if not parent:
            hints.append("the original has no Message-ID header; threaded by thread_id only")
        in_reply_to, references = reply_headers(str(parent) if parent else None, original.headers.get("References"))
        if not subject.lower().startswith("re:") and original.headers.get("Subject"):
            hints.append("the subject does not start with 'Re:'; some mail clients will not thread it")
        thread = thread_id or original.thread_id
        if check_newer and thread:
            self._refuse_newer_inbound(thread, original, drafted_at, path)
        return in_reply_to, references, thread

    def _headers_from_note(self, source: str | None) -> tuple[str | None, str | None]:
        """(In-Reply-To, References) from the Message-ID the email note a draft answers keeps."""
        if not source:
            return None, None
        try:
            target = self.resolver.resolve(source, note=True)
            with regular_file(target.abs) as handle:
                data = handle.read(MAX_NOTE_BYTES + 1)
            return reply_headers(parse(data, target.rel).facts.rfc822_message_id, None)
        except (H0Error, OSError, ValueError):
            return None, None

    def _refuse_newer_inbound(self, thread: str, original: Fetched, drafted_at: float | None, path: str | None) -> None:
        if self.mailbox is None:
            return
        try:
            messages = self.mailbox.thread_messages(thread)
        except NotFound:
            return
        baseline = max(original.internal_date_ms or 0, int((drafted_at or 0) * 1000))  # the note model's epoch
        newer = [
            m
            for m in messages
            if m.id != original.id
            and not is_sent_labels(m.labels)  # the owner's own message (the provider's word) moves nothing on
            and "DRAFT" not in m.labels
            and (m.internal_date_ms or 0) > baseline
        ]
        if newer:
            latest = newer[-1]
            sender = latest.headers.get("From") or "someone"
            raise refuse(
                Refusal.NEWER_IN_THREAD,
                {"how": f": {sender} wrote again in this thread after the email this draft answers"},
                path=path,
                newer_message_id=latest.id,
            )
