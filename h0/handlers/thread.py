"""The conversation an email note belongs to, as the vault knows it: earlier notes, waiting drafts.

Ingest writes each email's provider thread id on its note (`thread_id`), and H0's drafts and
sent replies carry the same `thread_id`. So the vault alone answers what came before an email
(the links ingest writes on its note as `thread:`, the conversation triage reads) and which
waiting draft a new message makes out of date (ingest marks it `stale: true`; the mail server
holds a stale draft at send time, as it holds one whose Gmail thread moved on) — without a
single extra Gmail call. Gmail names a thread after its first message, so a message whose
thread id is its own id starts a conversation and needs no look-up at all.

The earlier messages' words are strangers' words, as the email's own are: triage gets them as
data inside the same delimiters (h0.triage.prompt), and notes get only links to them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from loguru import logger

from h0.drafting.past import epoch
from h0.drafting.replytext import strip_quoted
from h0.errors import H0Error
from h0.handlers.context import HandlerContext
from h0.mail.drafts import message_body
from h0.mail.htmltext import block_text, inert_inline
from h0.mail.models import EmailFull
from h0.vault import Note
from h0.vault.layout import DRAFTS

MAX_LINKS = 20  # earlier notes linked from an email note (the most recent ones)
MAX_THREAD_NOTES = 10_000  # notes one look-up returns, all threads together
MAX_CONVERSATION = 6  # earlier messages triage reads (the most recent ones)
MAX_EXCERPT_CHARS = 2_000  # of each
WAITING = frozenset({"pending_approval", "held", "not_sent"})  # a draft in Drafts/ nobody has sent yet


@dataclass(frozen=True, slots=True)
class ThreadNote:
    note: Note
    when: float  # epoch seconds: received (an email), sent_at (a reply sent), drafted_at (a draft)
    kind: str  # "email", "sent" (H0 sent it: the owner's reply) or "draft"

    @property
    def link(self) -> str:
        return f"[[{self.note.path.rsplit('/', 1)[-1].removesuffix('.md')}]]"


def starts_thread(message_id: Any, thread_id: Any) -> bool:
    """True when there can be nothing before this message (no thread, or Gmail's first message)."""
    return not thread_id or str(thread_id) == str(message_id or "")


def thread_notes(ctx: HandlerContext, thread_id: str, *, exclude: str | None = None) -> list[ThreadNote]:
    """Every note of the vault with this `thread_id`, oldest first (unreadable ones left out)."""
    notes = threads_of(ctx, [thread_id]).get(str(thread_id), [])
    return [n for n in notes if n.note.path != exclude]


def threads_of(
    ctx: HandlerContext, thread_ids: Iterable[str], *, known: Iterable[Note] = ()
) -> dict[str, list[ThreadNote]]:
    """The notes of each of these threads, oldest first: one walk of the vault for all of them
    (a list with any-of filters) and one batch read of what it found (`known` notes are not read
    again). Unreadable notes are left out; a thread with no note maps to []."""
    wanted = sorted({str(t) for t in thread_ids if t})
    if not wanted:
        return {}
    paths = ctx.notes.list("", [f"thread_id:{t}" for t in wanted], recursive=True, limit=MAX_THREAD_NOTES)
    have = {note.path: note for note in known}
    read = [p for p in paths if p not in have]
    for path, got in zip(read, ctx.notes.read_many(read) if read else [], strict=True):
        if isinstance(got, H0Error):
            logger.debug("thread look-up: {} left out ({})", path, got.message)
        else:
            have[path] = got
    threads: dict[str, list[ThreadNote]] = {t: [] for t in wanted}
    for path in paths:
        note = have.get(path)
        tid = str(note.frontmatter.get("thread_id") or "") if note is not None else ""
        if note is not None and tid in threads:
            threads[tid].append(classify(note))
    for notes in threads.values():
        notes.sort(key=lambda n: (n.when, n.note.path))
    return threads


def classify(view: Note) -> ThreadNote:
    """A thread's note as an email, a sent reply or a draft, with its moment."""
    fm = view.frontmatter
    status = str(fm.get("status") or "").strip().lower()
    if str(fm.get("type") or "") == "email":
        return ThreadNote(view, epoch(fm.get("received")), "email")
    if status == "sent":
        # Imported sent mail has no sent_at: its own Date header (`received`) says when, never time 0.
        when = epoch(fm.get("sent_at")) or epoch(fm.get("received")) or epoch(fm.get("date"))
        return ThreadNote(view, when or epoch(fm.get("drafted_at")), "sent")
    return ThreadNote(view, epoch(fm.get("drafted_at")), "draft")


def earlier(notes: list[ThreadNote], received: Any) -> list[ThreadNote]:
    """The emails and sent replies of the thread that came before `received` (all of them when unknown)."""
    before = epoch(received) or float("inf")
    return [n for n in notes if n.kind in ("email", "sent") and n.when < before]


def later_emails(notes: list[ThreadNote], received: Any) -> list[ThreadNote]:
    """Emails of the thread that arrived after `received`."""
    after = epoch(received)
    return [n for n in notes if n.kind == "email" and after and n.when > after]


def thread_links(notes: list[ThreadNote], received: Any) -> list[str]:
    """What an email note records of its thread: links to the notes of the messages before it."""
    return [n.link for n in earlier(notes, received)][-MAX_LINKS:]


def conversation(notes: list[ThreadNote], received: Any) -> list[dict[str, Any]]:
    """The earlier messages as triage reads them, oldest first: who, when, and their own words — the
    quoted history each message carries cut (the thread is given once), cut to an excerpt."""
    entries = []
    for item in earlier(notes, received)[-MAX_CONVERSATION:]:
        fm = item.note.frontmatter
        if item.kind == "email":
            sender, text = str(fm.get("from") or ""), block_text(item.note.body)
        else:  # H0's sent draft (the text above its cut-off) or imported sent mail (an inert block)
            sender, text = "the owner (their reply)", block_text(message_body(item.note.body))
        text = (strip_quoted(text) or text).strip()
        if len(text) > MAX_EXCERPT_CHARS:
            text = text[:MAX_EXCERPT_CHARS].rstrip() + " […]"
        entries.append(
            {"sender": sender, "date": _iso(item.when) or "undated", "text": text, "own": item.kind == "sent"}
        )
    return entries


def mark_stale_drafts(ctx: HandlerContext, notes: list[ThreadNote], email: EmailFull, note_path: str) -> list[str]:
    """A new inbound message in the thread: every draft waiting in Drafts/ that answers another
    message of it is out of date. Mark each `stale: true` with the reason; return their paths."""
    if set(email.labels) & {"SENT", "DRAFT"}:
        return []  # the owner's own message moves nothing on
    message_id = email.id
    link = f"[[{note_path.rsplit('/', 1)[-1].removesuffix('.md')}]]"
    sender = inert_inline(email.sender or "someone")
    marked = []
    for item in notes:
        fm = item.note.frontmatter
        if item.kind != "draft" or not item.note.path.startswith(f"{DRAFTS}/"):
            continue
        if str(fm.get("status") or "").strip().lower() not in WAITING:
            continue
        if str(fm.get("reply_to_message_id") or "") == message_id or fm.get("stale_since") == link:
            continue
        reason = (
            f"{sender} wrote again in this thread ({link}) after the email this draft answers: read it, "
            "edit the reply, and set `send_anyway: true` to send it anyway"
        )
        try:
            ctx.notes.update(item.note.path, {"stale": True, "stale_reason": reason, "stale_since": link})
        except H0Error as error:
            logger.warning("{}: could not mark it stale ({})", item.note.path, error.message)
            continue
        ctx.audit.write("draft_stale", path=item.note.path, message_id=message_id, email=note_path)
        logger.info("⚠ {} is stale: a new message arrived in its thread ({})", item.note.path, note_path)
        marked.append(item.note.path)
    return marked


def _iso(when: float) -> str:
    return dt.datetime.fromtimestamp(when, dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z") if when else ""
