"""`h0 import`: mail from files, in one pass — recent mail as work, the rest as history.

Each file is read once, as a stream (h0.mail.incoming.importer), in batches of BATCH messages; a batch's
duplicate check is one query of the state database's history (h0.state.history), never a walk
of the vault. Per message (h0.handlers.mail_history): the owner's mail and mail older than
WORK_WINDOW_DAYS are kept as history; recent mail from others is kept too, and held for the end
of the pass — mail answered by the owner later in its thread stays history, the rest becomes a
`Needs_Action/` note through ingest's own writer (duplicate check and `thread:` links for the
whole lot in one look-up per 500). Messages of the work window are recorded in the follow-up
ledger as ingest records them. With `as_notes`, history is filed as notes in `Done/` too (the
owner's as `type: sent_email`, others' as `status: done`), never in `Needs_Action/`.

A batch's messages, the recent ones held and the file's mark (the byte after the batch's last
message) are committed in one transaction, so a stop — `stop` set (Ctrl-C), a full disk, a crash —
loses nothing and the same import resumes after the last batch, without a duplicate.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from loguru import logger

from h0.drafting.learning import refresh_learned_profile
from h0.drafting.profile import ensure_profile_file
from h0.errors import Conflict, H0Error
from h0.followup.asks import judge_for
from h0.followup.ledger import FollowupLedger
from h0.followup.messages import from_email
from h0.handlers.context import HandlerContext
from h0.handlers.followup.find import find_followup_notes
from h0.handlers.followup.follow_up import follow_up
from h0.handlers.ingest import email_body, email_frontmatter, look_up_batch, write_email_note
from h0.handlers.mail_history import history_message, is_recent
from h0.mail.incoming.email_views import email_full
from h0.mail.incoming.importer import FileMessage, MailFile, Problem, file_identity, mail_files, messages_of
from h0.mail.models import EmailFull
from h0.mail.owner import Observed, OwnerAuthority, import_evidence, message_key, single_sender
from h0.state.history import FileMark, HeldWork, HistoryMessage, MailHistory
from h0.vault import Vault
from h0.vault.layout import DONE

BATCH = 250  # messages per transaction
NOTES_BATCH = 500  # held messages turned into notes per vault look-up
Progress = Callable[["ImportReport"], None]


@dataclass(slots=True)
class ImportReport:
    work: list[str] = field(default_factory=list)  # notes written in Needs_Action/
    history: int = 0  # messages kept as history only
    sent: int = 0  # of the messages kept, the owner's
    filed: list[str] = field(default_factory=list)  # history filed as notes in Done/ (--as-notes)
    duplicates: int = 0
    problems: list[Problem] = field(default_factory=list)
    read: int = 0  # messages read in this run
    bytes_done: int = 0
    bytes_total: int = 0
    stopped: str | None = None  # why the import stopped before its end
    owed: int = 0  # emails the follow-up pass found owed a reply at the end of the import
    awaited: int = 0  # the owner's messages it found waiting for an answer (each a follow-up note and draft)

    def line(self) -> str:
        counted = (  # each part is said when its count is not zero
            (self.history, f"{self.history} kept as history ({self.sent} of them yours)"),
            (len(self.filed), f"{len(self.filed)} filed in Done/"),
            (self.duplicates, f"{self.duplicates} already imported"),
            (len(self.problems), f"{len(self.problems)} not imported"),
            (self.owed or self.awaited, f"replies owed: {self.owed}, awaited: {self.awaited}"),
        )
        parts = [f"{len(self.work)} new in Needs_Action/"] + [said for count, said in counted if count]
        return "h0 import: " + ", ".join(parts)


@dataclass(slots=True)
class _Batch:
    file: MailFile
    items: list[FileMessage | Problem] = field(default_factory=list)
    end: int = 0


class MailImport:
    """One `h0 import` run over some files (see the module docstring)."""

    def __init__(
        self,
        ctx: HandlerContext,
        *,
        as_notes: bool = False,
        now: float | None = None,
        history: MailHistory | None = None,
        stop: threading.Event | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.ctx = ctx
        self.as_notes = as_notes
        self.now = time.time() if now is None else now
        state = ctx.state_database()
        self.history = history or MailHistory(state)
        self.ledger = FollowupLedger(state)
        self.authority = OwnerAuthority(state)  # the owner's identity: which imported messages are the owner's
        self.judge = judge_for(ctx.settings)  # does the owner's message ask something? (awaited answers)
        self.stop = stop or threading.Event()
        self.progress = progress
        self.window = ctx.settings.work_window_days
        self.report = ImportReport()

    def run(self, paths: Sequence[Path]) -> ImportReport:
        files: list[MailFile] = []
        for item in mail_files(paths, vault=Path(self.ctx.settings.vault_path)):
            if isinstance(item, Problem):
                self.report.problems.append(item)
            else:
                files.append(item)
        self.report.bytes_total = sum(f.size for f in files)
        try:
            for file in files:
                if self.stop.is_set():
                    break
                self._file(file)
            if not self.stop.is_set():
                self._notes_for_held()
            if not self.stop.is_set():
                self._follow_up()
        except (OSError, H0Error) as error:
            reason = getattr(error, "message", None) or f"{error.strerror or error}"  # type: ignore[union-attr]
            self.report.stopped = f"stopped: {reason}"
            logger.error("h0 import stopped: {}", reason)
        else:
            if self.stop.is_set():
                self.report.stopped = "interrupted"
        if self.report.stopped is None and self.history.sent_signature()[0]:
            self._refresh_profile()  # at the end of the whole import (a resumed one too), not after Ctrl-C
        return self.report

    # -- one file ---------------------------------------------------------------------------------

    def _file(self, file: MailFile) -> None:
        saved = self.history.mark(str(file.path))
        current = FileMark(str(file.path), file.size, file.mtime_ns, file.head)
        start = 0
        if saved is not None and saved.same_file(current):
            if saved.done:
                self.report.bytes_done += file.size
                self._tell()
                return
            start = saved.offset
        self.report.bytes_done += start
        batch = _Batch(file, end=start)
        changed = False
        for item in messages_of(file, start=start):
            end = item.end
            if isinstance(item, Problem) and end is None:
                changed = changed or "changed while" in item.reason
                self.report.problems.append(item)
                logger.debug("h0 import: {}: {}", item.source, item.reason)  # said in the summary
                continue
            batch.items.append(item)
            if end is not None:
                self.report.bytes_done += max(0, end - batch.end)
                batch.end = end
            if len(batch.items) >= BATCH or self.stop.is_set():
                self._commit(batch, current, done=False)
                batch = _Batch(file, end=batch.end)
                if self.stop.is_set():
                    return
        identity = file_identity(file.path)
        complete = not changed and identity == (file.size, file.mtime_ns, file.head)
        self._commit(batch, current, done=complete)

    def _commit(self, batch: _Batch, current: FileMark, *, done: bool) -> None:
        rows: list[HistoryMessage] = []
        held: list[HeldWork] = []
        recent = []
        fetched = [i for i in batch.items if isinstance(i, FileMessage)]
        for problem in (i for i in batch.items if isinstance(i, Problem)):
            self.report.problems.append(problem)
            logger.debug("h0 import: {}: {}", problem.source, problem.reason)
        emails: list[tuple[FileMessage, EmailFull]] = []
        owned: list[Observed] = []
        for item in fetched:
            try:
                emails.append((item, email_full(item.fetched)))
            except (H0Error, ValueError) as error:
                self.report.problems.append(Problem(item.source, getattr(error, "message", str(error))[:300]))
        keys = {}
        for item, email in emails:
            seen = from_email(email, outbound=False, now=self.now)
            keys[seen.key] = (item, email, seen)
        known = self.history.known(list(keys))
        self.report.duplicates += len(emails) - len(keys) + len(known)
        for key, (item, email, seen) in keys.items():
            if key in known:
                continue
            # Only the export vouches (h0.mail.owner.import_evidence: a Sent mailbox or folder, or Takeout's
            # Sent label, and no trace of arriving from outside) — never a From: header alone.
            evidence = import_evidence(item.source, item.fetched.headers)
            mine = evidence is not None
            row = history_message(email, outbound=mine, now=self.now, seen=None if mine else seen)
            if is_recent(email, row.at, self.now, self.window):
                # Judged as the ledger keeps it: does the owner's message ask something, does theirs ask the owner?
                recent.append(from_email(email, outbound=mine, now=self.now, judge=self.judge))
                if not mine:
                    held.append(HeldWork(key, row.at, email.model_dump_json()))
            if self.as_notes and not (not mine and is_recent(email, row.at, self.now, self.window)):
                note = self._file_as_note(email, mine)
                if note is not None:
                    row = replace(row, note=note)
            if evidence is not None:
                sender = single_sender(item.fetched.headers) or ""
                owned.append(
                    Observed(message_key(email.rfc822_message_id, email.id), evidence, item.source, sender, row.note)
                )
            rows.append(row)
            self.report.sent += mine
        self.ledger.record(recent)  # idempotent: a batch re-read after a stop records nothing new
        self.authority.record(owned)  # before the mark: a stop in between records them again on resume
        self.history.commit(
            rows,
            hold=held,
            mark=FileMark(current.file, current.size, current.mtime_ns, current.head, batch.end, done),
        )
        self.report.read += len(batch.items)
        self.report.history += len(rows) - len(held)
        self._tell()

    def _file_as_note(self, email: EmailFull, mine: bool) -> str | None:
        rfc822 = email.rfc822_message_id or None
        frontmatter = email_frontmatter(email, rfc822)
        if mine:
            frontmatter |= {"type": "sent_email", "status": "sent"}
            path = f"{DONE}/SENT_{email.id}.md"
        else:
            frontmatter |= {"status": "done", "decision": "history"}
            path = f"{DONE}/EMAIL_{email.id}.md"
        try:
            self.ctx.notes.write(path, frontmatter, email_body(email), create_only=True)
        except Conflict:
            return path  # written by a run that stopped before its batch was committed
        self.report.filed.append(path)
        return path

    # -- the end of the pass: recent mail nobody answered becomes work ----------------------------------

    def _notes_for_held(self) -> None:
        while not self.stop.is_set():
            held = self.history.held(NOTES_BATCH)
            if not held:
                return
            emails = [EmailFull.model_validate_json(h.email) for h in held]
            answered = {h.key for h, e in zip(held, emails, strict=True) if self._answered(h, e)}
            if self.as_notes:  # answered: history, filed in Done/ like the rest of it
                filed = {
                    h.key: self._file_as_note(e, False) for h, e in zip(held, emails, strict=True) if h.key in answered
                }
                self.history.set_notes({k: p for k, p in filed.items() if p is not None})
            self.history.release(answered)
            self.report.history += len(answered)
            todo = [(h, e) for h, e in zip(held, emails, strict=True) if h.key not in answered]
            seen = look_up_batch([e for _, e in todo], self.ctx)
            notes: dict[str, str] = {}
            for hold, email in todo:
                try:
                    path = write_email_note(email.id, email, self.ctx, seen)
                except Conflict as error:  # another note holds its path: kept as history only
                    self.report.problems.append(Problem(email.subject or email.id, error.message))
                    self.history.release([hold.key])
                    continue
                if path is None:
                    self.report.duplicates += 1
                    self.history.release([hold.key])
                    continue
                notes[hold.key] = path
                self.report.work.append(path)
            self.ledger.record(
                [from_email(e, outbound=False, now=self.now, note=notes[h.key]) for h, e in todo if h.key in notes]
            )
            self.history.set_notes(notes)
            self._tell()

    def _follow_up(self) -> None:
        """Replies owed and awaited, judged at once from what the import recorded (the pass `h0 watch` runs every
        minute): `h0 status` lists them right after the import, as it will after `h0 sweep`."""
        try:
            done = follow_up(self.ctx, find_followup_notes(Vault(Path(self.ctx.settings.vault_path))), now=self.now)
        except H0Error as error:
            logger.warning("h0 import: replies owed and awaited are judged at the next pass ({})", error.message)
            return
        self.report.owed, self.report.awaited = len(done.owed), len(done.awaited)

    def _answered(self, hold: HeldWork, email: EmailFull) -> bool:
        thread = from_email(email, outbound=False, now=self.now).thread
        return self.history.answered_after(thread, hold.at)

    def _refresh_profile(self) -> None:
        """What H0 learned of the owner's voice is in the profile at once (not after the next sent draft);
        a vault without a profile gets the default one (h0 init's) to show it in."""
        try:
            ensure_profile_file(self.ctx.paths.root)
            drafting = self.ctx.drafting_state()
            refresh_learned_profile(self.ctx.notes.notes, drafting)
        except (H0Error, OSError) as error:
            logger.info("the profile's learned section was not refreshed: {}", getattr(error, "message", error))

    def _tell(self) -> None:
        if self.progress is not None:
            self.progress(self.report)
