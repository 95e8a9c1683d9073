"""What may be sent, built by the mail server itself: from an approved note, or (opt-in) free content.

The human's move into `Approved/` is the one capability that sends. `approved_message`
takes a note's path and the content hash its caller read, and re-reads the note itself:
it must be in the real `Approved/` folder (resolved: symlinks, case, `..`), a regular file
with one link, unchanged since the caller read it, and settled — moved in, or quiet for
APPROVAL_SETTLE_SECONDS when it was written in place (editors autosave while the human
still types). Then the draft's own checks (h0.mail.compose.drafts: no hidden text, no unedited
template marker) and its attachments, hashed when first seen in `Approved/` and refused if
they changed since. A reply is held when its email was already answered (the state
database, atomically with the send) or when its Gmail thread received a newer message, and a reply
to an email triage suspected of an attack is held (h0.mail.deception.suspected) unless it says
`send_anyway: true`.

Idempotency keys and Message-IDs are HMACs under the installation's secret (h0.state),
so nobody who can only read the vault can mint them, and "already sent" is bound to the
content hash that went out. The key is made of what is sent, never of the file's name, so a
sync tool's copy of a note is the same message and is filed as a copy, not sent (h0.mail.copies).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from email.headerregistry import Address
from email.message import EmailMessage

from h0.config import Settings
from h0.errors import H0Error, InvalidRequest, PermissionDenied, Refusal, refuse
from h0.mail.compose.addresses import parse_recipients, refuse_line_breaks
from h0.mail.compose.attachments import Attachment, hash_attachments, load_attachments
from h0.mail.compose.drafts import identity, parse_draft
from h0.mail.compose.mime import MESSAGE_ID_DOMAIN, check_body, check_subject, compose, normalize_message_id
from h0.mail.compose.reply_thread import ReplyThreading, Threading
from h0.mail.copies import refuse_recent_name, wait_for_original
from h0.mail.deception.known import OwnerKnown
from h0.mail.deception.linktext import check_link_texts
from h0.mail.deception.lookalike import Correspondents, checked_recipients, confirmed_domains
from h0.mail.deception.suspected import refuse_reply_to_suspect
from h0.mail.filing import Approvals
from h0.mail.models import DirectSend
from h0.mail.owner import owner_addresses
from h0.mail.providers.backend import MailSender, mailbox_of
from h0.mail.sending import Outgoing
from h0.state import StateDB
from h0.vault.approval import ApprovedNote, read_approved
from h0.vault.copies import original_name
from h0.vault.draft_state import refusal_words
from h0.vault.last_change import (
    Arrival,
    arrival_time,
    file_changed_at,
    last_change,
    name_key,
    settle_left,
    too_fresh,
    when,
)
from h0.vault.model import NoteFacts
from h0.vault.note import content_hash, parse
from h0.vault.paths import PathResolver
from h0.vault.sendable import Sendable

BODY_PREVIEW_CHARS = 200
MAX_KEY_CHARS = 200
ARRIVALS = ("moved", "written", "unknown")


def message_id_domain(settings: Settings) -> str:
    """The domain of H0's Message-IDs: the sender's, else h0.local."""
    sender = settings.smtp_from or settings.smtp_user or ""
    domain = sender.rsplit("@", 1)[-1].strip(" >") if "@" in sender else ""
    return domain or MESSAGE_ID_DOMAIN


class OutgoingBuilder:
    """Builds `Outgoing` messages for one vault, backend and state database."""

    def __init__(
        self,
        settings: Settings,
        backend: MailSender,
        state: StateDB,
        *,
        trusted_caller: bool = False,
        clock: Callable[[], float] = time.time,
        approvals: Approvals | None = None,
    ) -> None:
        self.resolver = PathResolver(settings.vault_path)
        self.backend = backend
        self.replies = ReplyThreading(self.resolver, mailbox_of(backend), backend.name)
        self.state = state
        self.settle_s = settings.approval_settle_seconds
        self.fresh_s = settings.approval_fresh_seconds
        self.domain = message_id_domain(settings)
        self.correspondents = Correspondents(self.resolver.root, state, warm=trusted_caller)  # look-alike domains
        self.owner_known = OwnerKnown(state, owner_addresses(settings))  # whom the owner wrote to: never held
        # Only the daemon's own child server (its stdio pipe is the daemon's alone) may vouch
        # that a note was moved in; any other caller gets the file-time rule.
        self.trusted_caller = trusted_caller
        # The wall clock (epoch seconds: it is compared with file times), for the settle period; a
        # test passes a fake one and moves it on instead of sleeping.
        self.clock = clock
        self.approvals = approvals  # says `draft_approved` once per version of a note in Approved/

    # ------------------------------------------------------------------ approved notes

    def approved_message(self, path: str, note_hash: str | None, *, arrival: Arrival | None = None) -> Outgoing:
        """The message of the note at `path` in Approved/, read once here. An MCP client names the version
        it read (`note_hash`); the daemon's own server may leave it out (docs/decisions.md, "One read per
        send"): what binds a send to what the human saw is the approval checks below, not a caller's read."""
        arrival = arrival or Arrival()
        if arrival.kind not in ARRIVALS:
            raise InvalidRequest(f"arrival must be one of {', '.join(ARRIVALS)}.", field="arrival")
        if not self.trusted_caller:
            arrival = Arrival()  # only the daemon's own server may vouch for how a note arrived
            if not note_hash:
                raise InvalidRequest(
                    "note_hash is required: the note's content hash as you read it (vault read_note's hash).",
                    field="note_hash",
                )
        read = read_approved(self.resolver, path)
        actual = content_hash(read.data)
        if note_hash and actual != note_hash:
            raise refuse(Refusal.NOTE_CHANGED, path=read.rel, expected=note_hash, actual=actual)
        if self.approvals is not None:
            self.approvals.seen(read.rel, actual, arrival.kind)
        note = parse(read.data, read.rel)
        left = settle_left(moved=arrival.kind == "moved", quiet_for=self.clock() - read.mtime, settle_s=self.settle_s)
        if left > 0:
            # Still possibly being typed: refuse nothing for its content yet, but note what its
            # attachments are now, so a change before it is sent is caught.
            try:
                self._first_seen_attachments(read.rel, actual, parse_draft(note))
            except H0Error:
                pass
            raise refuse(
                Refusal.NOT_SETTLED, {"settle_s": self.settle_s}, path=read.rel, retry_after=round(left + 0.05, 2)
            )
        status = note.facts.status
        if not status.sendable:
            raise refuse(
                Refusal.NOT_SENDABLE_STATUS,
                refusal_words(status, note.frontmatter),
                path=read.rel,
                status=status.word,
                state=status.state.value,
                source=note.facts.source,  # a rejected note's email, for its filing: nobody reads the note again
            )
        # Written in place in Approved/ (the daemon saw no move): the settle period above is its rule.
        arrived = None if arrival.kind == "written" or self.fresh_s <= 0 else arrival_time(read.info, arrival.at)
        if arrived is not None:
            self._refuse_unseen_version(read, actual, arrived, arrival)
        draft = parse_draft(note)
        facts = draft.facts
        wait_for_original(self.resolver, read.rel)  # a sync tool's copy beside its original: the original goes
        if not facts.send_anyway:
            _refuse_stale(read.rel, facts)
            refuse_reply_to_suspect(self.resolver, read.rel, facts.source)  # triage flagged the email it answers
        first = self._first_seen_attachments(read.rel, actual, draft)
        files = load_attachments(self.resolver, list(draft.attachments))
        if arrived is not None:
            self._refuse_attachments_changed_around(read.rel, files, arrived)
        now_hashes = {a.rel: a.sha256 for a in files}
        changed = sorted(rel for rel in set(first) | set(now_hashes) if first.get(rel) != now_hashes.get(rel))
        if changed:
            raise refuse(
                Refusal.ATTACHMENT_CHANGED,
                {"names": ", ".join(changed), "after": "the draft was approved", "check": "it"},
                path=read.rel,
                changed=changed,
            )
        canonical = identity(draft, [a.sha256 for a in files])
        key = "n-" + self.state.mac("approved-draft", canonical)[:40]
        if arrival.kind != "moved":
            refuse_recent_name(self.state, read.rel, key)
        hints: list[str] = []
        thread = self.replies.thread(
            draft.reply_to_message_id,
            draft.thread_id,
            draft.subject,
            hints,
            check_newer=not facts.send_anyway,
            drafted_at=facts.drafted_at,
            path=read.rel,
            source=facts.source,
        )
        recipients = checked_recipients(draft, self.correspondents, self.owner_known.current())  # look-alikes held
        check_link_texts(draft.body, confirmed=confirmed_domains(draft.confirm_domains), path=read.rel)
        message = self._compose(*recipients, draft.subject, draft.body, None, files, key, thread)
        return Outgoing(
            message=message,
            key=key,
            content_hash=hashlib.sha256(canonical).hexdigest(),
            thread_id=thread[2],
            audit=self._audit_fields(message, draft.body, files),
            envelope=envelope(*recipients),
            note_path=read.rel,
            note_hash=actual,
            note=note,
            note_bytes=read.data,
            reply_to=draft.reply_to_message_id,
            source=facts.source_key,
            exclusive_reply=not facts.send_anyway and bool(draft.reply_to_message_id or facts.source),
            hints=hints,
            note_name=original_name(os.path.basename(read.rel)),
            copies_by_bytes=not facts.send_anyway,
        )

    def _refuse_unseen_version(self, read: ApprovedNote, note_hash: str, arrived: float, arrival: Arrival) -> None:
        """Hold a note whose content changed too shortly before it arrived in Approved/ to have been
        read in that form (h0.vault.last_change): the human approved what they saw, which may not be this."""
        writes = self.state.note_writes(name_key(read.rel), since=arrived - 86400.0)
        change = last_change(note_hash, read.mtime, writes, arrival.source_changed_at)
        gap = too_fresh(arrived, change, fresh_s=self.fresh_s, agent_s=self.settle_s)
        if gap is None:
            return
        raise refuse(
            Refusal.CHANGED_BEFORE_APPROVAL,
            {"gap": when(gap)},
            path=read.rel,
            seconds=round(gap, 2),
            changed_by=change.describe(),
            tool=change.tool,
            client=change.client,
        )

    def _refuse_attachments_changed_around(self, rel: str, files: Sequence[Attachment], arrived: float) -> None:
        """Attachments are bound at approval: bytes (or the file) changed after the draft arrived in
        Approved/ are refused, and changed just before it are held — also when no daemon ran then and
        this is the first look (the file times say it, not H0's memory)."""
        for attachment in files:
            if attachment.info is None:
                continue
            name = attachment.rel
            gap = arrived - file_changed_at(attachment.info)
            if gap < 0:
                raise refuse(
                    Refusal.ATTACHMENT_CHANGED,
                    {"names": name, "after": "you approved this draft", "check": "the file"},
                    path=rel,
                    changed=[name],
                )
            if gap < self.fresh_s:
                raise refuse(
                    Refusal.ATTACHMENT_CHANGED_BEFORE_APPROVAL,
                    {"gap": when(gap)},
                    path=rel,
                    attachment=name,
                    seconds=round(gap, 2),
                )

    def _first_seen_attachments(self, rel: str, note_hash: str, draft: Sendable) -> dict[str, str]:
        """The attachments' hashes when this version of the note was first read in Approved/."""
        now = hash_attachments(self.resolver, list(draft.attachments)) if draft.attachments else {}
        return self.state.first_seen_attachments(rel, note_hash, now)

    # ------------------------------------------------------------------ free content (opt-in)

    def direct_message(self, request: DirectSend) -> Outgoing:
        """A free-content send's message, every field of the request checked first."""
        for name, value in (
            ("reply_to_message_id", request.reply_to_message_id),
            ("thread_id", request.thread_id),
            ("idempotency_key", request.idempotency_key),
        ):
            if value is not None:
                refuse_line_breaks(name, value)
        if request.idempotency_key is not None and not (0 < len(request.idempotency_key.strip()) <= MAX_KEY_CHARS):
            raise InvalidRequest(f"idempotency_key must be 1–{MAX_KEY_CHARS} characters.", field="idempotency_key")
        recipients = [
            parse_recipients(name, value, allow_typo_domains=request.allow_typo_domains)
            for name, value in (("to", request.to), ("cc", request.cc), ("bcc", request.bcc))
        ]
        if not recipients[0]:
            raise InvalidRequest("At least one recipient is needed in 'to'.", field="to")
        subject = check_subject(request.subject)
        check_body(request.body)
        check_link_texts(request.body, request.html_body)
        files = load_attachments(self.resolver, list(request.attachments or []))
        content = json.dumps(
            [[str(a) for a in field] for field in recipients]
            + [
                subject,
                request.body,
                request.html_body,
                [[a.rel, a.sha256] for a in files],
                request.reply_to_message_id,
                request.thread_id,
            ],
            ensure_ascii=False,
        ).encode("utf-8")
        content_digest = hashlib.sha256(content).hexdigest()
        # A caller's key lives in its own namespace: it can never name an approved draft's send.
        key = "d-" + self.state.mac("direct-key", request.idempotency_key or os.urandom(16).hex())[:40]
        rfc = None
        if request.message_id:
            rfc = normalize_message_id(request.message_id)
            if rfc[1:].lower().startswith("h0."):
                raise PermissionDenied(
                    "Message-IDs starting with 'h0.' are H0's own; choose another.", field="message_id"
                )
        hints: list[str] = []
        thread = self.replies.thread(request.reply_to_message_id, request.thread_id, subject, hints, check_newer=False)
        to_list, cc_list, bcc_list = recipients
        message = self._compose(
            to_list, cc_list, bcc_list, subject, request.body, request.html_body, files, key, thread, rfc=rfc
        )
        return Outgoing(
            message=message,
            key=key,
            content_hash=content_digest,
            thread_id=thread[2],
            audit={**self._audit_fields(message, request.body, files), "direct": True},
            envelope=envelope(to_list, cc_list, bcc_list),
            reply_to=request.reply_to_message_id,
            hints=hints,
        )

    # ------------------------------------------------------------------ shared

    def _compose(
        self,
        to: list[Address],
        cc: list[Address],
        bcc: list[Address],
        subject: str,
        body: str,
        html_body: str | None,
        files: list[Attachment],
        key: str,
        thread: Threading,
        *,
        rfc: str | None = None,
    ) -> EmailMessage:
        subject = check_subject(subject)
        rfc = rfc or f"<h0.{self.state.mac('message-id', key)[:32]}@{self.domain}>"
        return compose(
            to=to,
            cc=cc,
            bcc=bcc,
            subject=subject,
            body=body,
            html_body=html_body,
            attachments=files,
            message_id=rfc,
            in_reply_to=thread[0],
            references=thread[1],
        )

    @staticmethod
    def _audit_fields(message: EmailMessage, body: str, files: list[Attachment]) -> dict[str, object]:
        return {
            "to": message.get("To"),
            "cc": message.get("Cc"),
            "bcc": message.get("Bcc"),
            "subject": message.get("Subject"),
            "body_preview": body[:BODY_PREVIEW_CHARS],
            "attachments": [{"path": a.rel, "sha256": a.sha256} for a in files] or None,
        }


def envelope(to: list[Address], cc: list[Address], bcc: list[Address]) -> dict[str, list[str]]:
    """Every address the message goes to, by field, as it was composed: no display name, nothing re-parsed."""
    return {"to": [a.addr_spec for a in to], "cc": [a.addr_spec for a in cc], "bcc": [a.addr_spec for a in bcc]}


def _refuse_stale(rel: str, facts: NoteFacts) -> None:
    """Ingest marked this draft `stale: true` (any yes: h0.vault.values.flag): its thread got a newer inbound
    message. Held like a draft the thread check finds out of date — the same reason, the same way out."""
    stale = facts.stale
    if stale.stale:
        raise refuse(Refusal.NEWER_IN_THREAD, {"how": f" ({stale.reason})"}, path=rel, stale_since=stale.since or None)
