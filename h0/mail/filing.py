"""File a sent draft in Done/ right after its send, from the one read its message was built from.

The mail server read the approved note once (h0.mail.outgoing) and sent the message built from it
(h0.mail.sending); here that same read is filed, with the vault layer's own primitives (no vault
server in between, no second read):
1. the note moves out of the real Approved/ into Done/ without replacing anything ('name (2).md'…);
2. one write, guarded by the hash of the read (`if_match`), marks it `status: sent` with the send
   record, clears an earlier error and says below the cut-off when and to whom it went. A note the
   human saved while the message was going out fails that guard: it is marked with the send record
   and `edited_during_send` (what went out is the version read before the send), its text kept;
3. the email it answered (its `source:`, confined to Needs_Action/) moves to Done/ too;
4. the filing journal (the state database) and `email_filed` record it.
A crash between the send and 4 is finished without a second send: a note still in Approved/ is sent
again as "already sent" and filed; one moved but not marked is found in Done/ by its hash
(`finish_interrupted`, run by the daemon at its start). The filing's records stay on the `h0` audit
stream, where the reports read the life of a note, whichever process filed it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from loguru import logger

from h0.errors import Conflict, H0Error, NotFound, ParseError
from h0.mail.compose.drafts import NEXT_STEP, REVISE_HINT
from h0.mail.compose.recipients import describe_recipients
from h0.mail.models import SendEmailResult
from h0.mail.sending import Outgoing
from h0.state import StateDB
from h0.vault import AuditLog, Note, Vault
from h0.vault.audit import note_timestamp
from h0.vault.dates import read_time
from h0.vault.layout import DONE, LOGS
from h0.vault.model import NoteFacts
from h0.vault.sendable import CUTOFF
from h0.vault.values import inbox_source

FILING_STREAM = "h0"  # the audit stream of a note's life (approved, filed, …), read by the reports
# What H0 writes on a draft it could not send; cleared once the fixed draft is sent.
ERROR_KEYS = ("h0_error", "h0_error_code", "h0_error_at")


def note_time(value: object) -> str:
    """The provider's send time, to the second (so it is a YAML timestamp), or now."""
    return note_timestamp(read_time(value) if isinstance(value, str) else None)


def send_record(
    sent_at: object, message_id: object, thread_id: object, rfc822_message_id: object, idempotency_key: object
) -> dict[str, Any]:
    """The keys a sent note carries in Done/: `status: sent` and the send's ids (the absent ones left out)."""
    record = {
        "status": "sent",
        "sent_at": note_time(sent_at),
        "gmail_message_id": message_id,
        "thread_id": thread_id,
        "rfc822_message_id": rfc822_message_id,
        "idempotency_key": idempotency_key,
    }
    return {k: v for k, v in record.items() if v is not None}


def sent_line(body: str, sent_at: str, to: str) -> str:
    """H0's "move this note to Approved/" line (below the cut-off) replaced by when and to whom it went."""
    cut = body.find(CUTOFF)
    if cut == -1 or NEXT_STEP not in body[cut:]:
        return body
    when = sent_at.replace("T", " ")[:16] + (" UTC" if sent_at.endswith("Z") else "")
    said = f"Sent on {when} {to}." if to else f"Sent on {when}."
    return body[:cut] + body[cut:].replace(NEXT_STEP, said, 1).replace(f"\n{REVISE_HINT}\n", "\n")


class Approvals:
    """`draft_approved` (with the hash read) once per version of a note during its stay in Approved/."""

    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit
        self._said: dict[str, str] = {}
        self._lock = threading.Lock()

    def seen(self, rel: str, note_hash: str, arrival: str) -> None:
        with self._lock:
            if self._said.get(rel) == note_hash:
                return
            if len(self._said) > 10_000:
                self._said.clear()
            self._said[rel] = note_hash
        self.audit.write("draft_approved", path=rel, arrival=arrival, note_hash=note_hash)

    def left(self, rel: object) -> None:
        """The note at `rel` left Approved/ (filed, or given back): its next approval is said again."""
        if isinstance(rel, str):
            with self._lock:
                self._said.pop(rel, None)


class Filing:
    """Files sent drafts for one vault; thread-safe (the vault layer guards each write)."""

    def __init__(self, vault: Vault, state: StateDB, audit: AuditLog | None = None) -> None:
        self.vault = vault
        self.state = state
        self.audit = audit or AuditLog(vault.root / LOGS, FILING_STREAM)

    def file_sent(self, out: Outgoing, result: SendEmailResult) -> SendEmailResult:
        """File the note `out` was built from (as read) after its send `result`; the result says where.
        A filing that fails leaves the send standing: `filing_error` says why, and the next try (the
        note still in Approved/) is answered "already sent" and filed then."""
        note = out.note
        if note is None:  # free content: no note to file
            return result
        path = note.path
        if result.already_sent:  # nothing went out now: no `email_sent`; say why it is filed
            ids = result.model_dump(include={"idempotency_key", "message_id", "rfc822_message_id", "backend"})
            self.audit.write("already_sent", path=path, note_hash=note.hash, **ids)
        try:
            done_path = self.vault.move_note(path, f"{DONE}/", rename_if_exists=True).destination
        except H0Error as error:
            logger.error("sent {} but could not file it in {}/: {}", path, DONE, error.message)
            return result.model_copy(update={"filing_error": error.message})
        record = send_record(
            result.sent_at,
            result.message_id,
            result.thread_id or note.facts.thread_id,
            result.rfc822_message_id,
            result.idempotency_key,
        )
        marked = self._mark_sent(note, out.note_bytes, done_path, record, describe_recipients(result.recipients))
        if marked:
            self._file_source(note.facts, done_path)
            self._journal(result.rfc822_message_id, done_path)
            self.audit.write("email_filed", path=path, done_path=done_path, idempotency_key=result.idempotency_key)
        left = None if marked else f"moved to {done_path} but not marked sent; H0 marks it at the daemon's next start"
        return result.model_copy(update={"filed_as": done_path, "filing_error": left})

    def _mark_sent(self, note: Note, read: bytes | None, done_path: str, record: Mapping[str, Any], to: str) -> bool:
        """One write over the note as it was read (`read`: its bytes, not read again; the write checks the file
        still holds them right before its rename); a note edited during the send keeps its text and says so."""
        frontmatter = {k: v for k, v in note.frontmatter.items() if k not in ERROR_KEYS} | dict(record)
        try:
            body = sent_line(note.body, str(record["sent_at"]), to)
            self.vault.write_note(done_path, frontmatter, body, if_match=note.hash, read=read)
            return True
        except Conflict:
            pass
        except H0Error as error:
            self._incomplete(note.path, done_path, error)
            return False
        # The human saved while the message was going out: what was sent is the version read before
        # the send; say so rather than pretend the note is what went out.
        edited = {**record, "edited_during_send": True, "sent_version_hash": note.hash}
        try:
            self.vault.update_frontmatter(done_path, edited, remove=ERROR_KEYS)
        except H0Error as error:
            self._incomplete(note.path, done_path, error)
            return False
        self.audit.write(
            "draft_edited_during_send", "warning", path=note.path, done_path=done_path, sent_version_hash=note.hash
        )
        logger.warning("{} was edited while being sent; the version read before sending went out", note.path)
        return True

    def _incomplete(self, path: str, done_path: str, error: H0Error) -> None:
        message = f"moved, but the frontmatter was not updated: {error.message}"
        self.audit.write("filing_incomplete", "warning", path=path, done_path=done_path, message=message)

    def _file_source(self, facts: NoteFacts, done_path: str) -> None:
        """The email the draft answered, to Done/ beside it (only a note directly in Needs_Action/)."""
        source = inbox_source(self.vault.paths, facts.source)
        if source is None:
            if facts.source:
                self.audit.write(
                    "source_not_filed",
                    "warning",
                    path=done_path,
                    source=facts.source,
                    reason="source: must name an email note in Needs_Action/",
                )
            return
        try:
            moved = self.vault.move_note(
                source, f"{DONE}/", rename_if_exists=True, set_frontmatter={"status": "done", "replied_with": done_path}
            )
        except NotFound:
            return  # already filed (by an earlier pass) or removed by the human
        except H0Error as error:
            self.audit.write("source_not_filed", "warning", path=done_path, source=source, reason=error.message)
            return
        self.audit.write("source_filed", path=source, done_path=moved.destination, reply=done_path)

    def _journal(self, rfc: object, done_path: str) -> None:
        if isinstance(rfc, str):
            try:
                self.state.mark_filed(rfc, done_path)
            except H0Error as err:
                logger.error("filed {} but could not record it in the state database: {}", done_path, err.message)

    # ------------------------------------------------------------------ after a crash

    def finish_interrupted(self, *, days: int = 7) -> int:
        """Finish filing drafts that were sent and moved to Done/ but not yet marked (a crash between).

        The filing journal is the state database: a sent row with a note path and no filing."""
        finished = 0
        for row in self.state.unfiled_sends(days * 86400.0):
            path = row["note_path"]
            if self.vault.exists(path):
                continue  # still in Approved/: the next send of it is "already sent" and files it
            found = self._find_unfiled(row)
            if found is None:
                continue
            record = send_record(
                row.get("sent_at"),
                row.get("provider_message_id"),
                row.get("thread_id"),
                row.get("rfc822_message_id"),
                row.get("idempotency_key"),
            )
            self.vault.update_frontmatter(found.path, record, if_match=found.hash)
            self._file_source(found.facts, found.path)
            self._journal(row["rfc822_message_id"], found.path)
            self.audit.write(
                "email_filed",
                path=path,
                done_path=found.path,
                idempotency_key=row.get("idempotency_key"),
                recovered=True,
            )
            logger.info("finished filing {} as {} (interrupted after sending)", path, found.path)
            finished += 1
        return finished

    def _find_unfiled(self, row: Mapping[str, Any]) -> Note | None:
        """The sent note in Done/: same name (or 'name (n).md'), same bytes as were sent, not yet marked."""
        name = str(row["note_path"]).rsplit("/", 1)[-1]
        stem = name[:-3]
        for n in range(1, 50):
            candidate = f"{DONE}/{name}" if n == 1 else f"{DONE}/{stem} ({n}).md"
            if not self.vault.exists(candidate):
                if n > 1:
                    return None
                continue
            try:
                note = self.vault.read_note(candidate)
            except (NotFound, ParseError):
                continue
            if note.facts.status.word == "sent":
                continue
            if note.hash == row.get("note_hash"):
                return note
        return None
