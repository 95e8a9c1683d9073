"""The conversation an email note belongs to, as the vault knows it: earlier notes, waiting drafts.

Ingest writes each email's provider thread id on its note (`thread_id`), and H0's drafts and
sent replies carry the same `thread_id`. So the vault alone answers what came before an email
(the links ingest writes on its note as `thread:`, the conversation triage reads) and which
waiting draft a new message makes out of date (ingest marks it `stale: true`; the mail server
holds a stale draft at send time, as it holds one whose Gmail thread moved on) — without a
single extra Gmail call. Gmail names a thread after its first message, so a message whose
thread id is its own id starts a conversation and needs no look-up at all.

The earlier messages' words are strangers' words, as the email's own are: triage gets them as
data inside the same delimiters (h0.triage.prompt), and notes get only links to them. A thread
that holds a private note is private as a whole (h0.vault.disclosure): whether a note shares a thread
key with a note private by itself anywhere in the vault — not only a note of its `thread_id` — is asked
of the vault index (h0.vault.private_threads) and answered by the gate (`private_notes`,
`private_in_thread`); so is each message of the thread kept as history (`kept_earlier`). A note
is the owner's reply only when the owner's identity (h0.mail.owner) vouches for it — the note H0
filed when it sent it, or wrote for the owner's imported sent mail; a `status: sent` note anyone
else wrote is just a note (kind "note"): never shown as the owner's words, never the owner's move
in the thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from loguru import logger

from h0.drafting.pastreply import epoch
from h0.drafting.replytext import strip_quoted
from h0.errors import H0Error
from h0.handlers.context import HandlerContext
from h0.mail.incoming.htmltext import block_text, inert_inline
from h0.mail.models import EmailFull
from h0.mail.owner import OwnerAuthority, message_key, note_message_key
from h0.state.history import HistoryMessage, MailHistory
from h0.vault import Note
from h0.vault.audit import epoch_timestamp
from h0.vault.disclosure import NoteLike, thread_keys
from h0.vault.draft_state import DraftState
from h0.vault.layout import DRAFTS
from h0.vault.private_threads import PrivateThreads, ScannedThreads
from h0.vault.sendable import message_body

MAX_LINKS = 20  # earlier notes linked from an email note (the most recent ones)
MAX_THREAD_NOTES = 10_000  # notes one look-up returns, all threads together
MAX_CONVERSATION = 6  # earlier messages triage reads (the most recent ones)
MAX_EXCERPT_CHARS = 2_000  # of each
WAITING = frozenset({"pending_approval", "held", "not_sent"})  # a draft in Drafts/ nobody has sent yet


@dataclass(frozen=True, slots=True)
class ThreadNote:
    note: Note
    when: float  # epoch seconds: received (an email), sent_at (a reply sent), drafted_at (a draft)
    kind: str  # "email", "sent" (the owner's reply, vouched for), "draft", or "note" (claims to be sent; is not)

    @property
    def link(self) -> str:
        return f"[[{self.note.path.rsplit('/', 1)[-1].removesuffix('.md')}]]"


def starts_thread(message_id: Any, thread_id: Any) -> bool:
    """True when there can be nothing before this message (no thread, or Gmail's first message)."""
    return not thread_id or str(thread_id) == str(message_id or "")


def private_threads(ctx: HandlerContext) -> PrivateThreads:
    """Which thread keys the vault's private notes hold: the vault index of the context's drafting state (built
    on first use), else a walk of the vault."""
    try:
        return ctx.drafting_state().threads
    except Exception as exc:  # noqa: BLE001 - settings without the drafting fields (a test's stub)
        logger.debug("no drafting state ({}): private threads found by a walk of the vault", exc)
        return ScannedThreads(ctx.paths.root, ctx.disclosure())


def private_notes(ctx: HandlerContext, notes: Iterable[NoteLike]) -> Callable[[NoteLike], bool]:
    """The gate's answer for each of these notes (`Disclosure.batch`), the vault's private threads asked of the
    index (or a walk of the vault)."""
    return ctx.disclosure().batch(notes, private_threads(ctx).private_keys)


def private_in_thread(
    ctx: HandlerContext,
    path: str,
    frontmatter: Mapping[str, Any],
    also: Iterable[tuple[str, Mapping[str, Any] | None]] = (),
    *,
    body: str | None = None,
) -> bool:
    """Whether a note may not reach a model (h0.vault.disclosure): private itself (its text `body` too, when
    given), or of a private thread — or one of `also` is (e.g. the email a draft answers). A vault that cannot
    say keeps it from the model."""
    members: list[NoteLike] = [(path, frontmatter, body), *also]
    private = private_notes(ctx, members)
    return any(private(note) for note in members)


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
        tid = note.facts.thread_id if note is not None else None
        if note is not None and tid in threads:
            threads[tid].append(classify(note))
    _vouch(ctx, threads)
    for notes in threads.values():
        notes.sort(key=lambda n: (n.when, n.note.path))
    return threads


def _vouch(ctx: HandlerContext, threads: dict[str, list[ThreadNote]]) -> None:
    """Each note that says it was sent stays the owner's reply only if the owner's identity vouches for it."""
    claimed = [(n.note.path, note_message_key(n.note.facts)) for ns in threads.values() for n in ns if n.kind == "sent"]
    if not claimed:
        return
    mine = OwnerAuthority(ctx.state_database()).owned_notes(claimed)
    for notes in threads.values():
        notes[:] = [n if n.kind != "sent" or n.note.path in mine else replace(n, kind="note") for n in notes]


def classify(view: Note) -> ThreadNote:
    """A thread's note as an email, a sent reply or a draft, with its moment."""
    facts = view.facts
    if facts.is_email:
        return ThreadNote(view, facts.received or 0.0, "email")
    if facts.status.state is DraftState.SENT:
        # Imported sent mail has no sent_at: its own Date header (`received`) says when, never time 0.
        when = facts.sent_at or facts.received or epoch(facts.date)
        return ThreadNote(view, when or facts.drafted_at or 0.0, "sent")
    return ThreadNote(view, facts.drafted_at or 0.0, "draft")


def _moment(received: Any) -> float:
    """A moment given as epoch seconds (the note model's) or as a date (a message's): epoch seconds, 0 when unknown."""
    if isinstance(received, (int, float)) and not isinstance(received, bool):
        return float(received)
    return epoch(received)


def earlier(notes: list[ThreadNote], received: Any) -> list[ThreadNote]:
    """The emails and sent replies of the thread that came before `received` (all of them when unknown)."""
    before = _moment(received) or float("inf")
    return [n for n in notes if n.kind in ("email", "sent") and n.when < before]


def later_emails(notes: list[ThreadNote], received: Any) -> list[ThreadNote]:
    """Emails of the thread that arrived after `received`."""
    after = _moment(received)
    return [n for n in notes if n.kind == "email" and after and n.when > after]


def thread_links(notes: list[ThreadNote], received: Any) -> list[str]:
    """What an email note records of its thread: links to the notes of the messages before it."""
    return [n.link for n in earlier(notes, received)][-MAX_LINKS:]


def kept_earlier(ctx: HandlerContext, thread_id: Any, received: Any) -> list[HistoryMessage]:
    """The thread's messages kept as history (h0 import, a first sync) before `received`, without a note
    of their own (those with one are among the thread's notes), and none a private note ties to itself (the
    gate's answer for each, its keys asked of the vault). [] when history cannot be read."""
    if not thread_id:
        return []
    try:
        state = ctx.state_database()
        kept = MailHistory(state).thread(str(thread_id), before=_moment(received) or None, limit=MAX_CONVERSATION)
    except H0Error as error:
        logger.debug("thread history of {} not read ({})", thread_id, error.message)
        return []
    keyed = [(m, thread_keys("", m.thread_fields())) for m in OwnerAuthority(state).vouched(kept) if m.note is None]
    found = private_threads(ctx).private_keys(frozenset().union(*(keys for _, keys in keyed))) if keyed else None
    return [m for m, keys in keyed if not ctx.disclosure().keys_private(keys, found)]


def conversation(notes: list[ThreadNote], received: Any, kept: Sequence[HistoryMessage] = ()) -> list[dict[str, Any]]:
    """The earlier messages as triage reads them, oldest first (undated ones before the rest): who, when,
    and their own words — the quoted history each message carries cut (the thread is given once), cut to
    an excerpt; the thread's notes and what history keeps of it together."""
    entries = []
    for message in kept:
        own = message.outbound
        sender = "the owner (from their sent mail)" if own else message.sender
        entries.append({"sender": sender, "date": _iso(message.at), "text": _excerpt(message.text), "own": own})
    for item in earlier(notes, received)[-MAX_CONVERSATION:]:
        if item.kind == "email":
            sender, text = item.note.facts.sender_text, block_text(item.note.body)
        else:  # H0's sent draft (the text above its cut-off) or imported sent mail (an inert block)
            sender, text = "the owner (their reply)", block_text(message_body(item.note.body))
        entries.append(
            {"sender": sender, "date": _iso(item.when) or "undated", "text": _excerpt(text), "own": item.kind == "sent"}
        )
    entries.sort(key=lambda e: (e["date"] != "undated", str(e["date"])))
    return entries[-MAX_CONVERSATION:]


def _excerpt(text: str) -> str:
    """A message's own words (the quoted history it carries cut: the thread is given once), bounded."""
    text = (strip_quoted(text) or text).strip()
    return text[:MAX_EXCERPT_CHARS].rstrip() + " […]" if len(text) > MAX_EXCERPT_CHARS else text


def mark_stale_drafts(ctx: HandlerContext, notes: list[ThreadNote], email: EmailFull, note_path: str) -> list[str]:
    """A new inbound message in the thread: every draft waiting in Drafts/ that answers another
    message of it is out of date. Mark each `stale: true` with the reason; return their paths."""
    if "DRAFT" in email.labels or OwnerAuthority(ctx.state_database()).wrote(
        message_key(email.rfc822_message_id, email.id)
    ):
        return []  # the owner's own message (the owner's identity says so, never its From) moves nothing on
    message_id = email.id
    link = f"[[{note_path.rsplit('/', 1)[-1].removesuffix('.md')}]]"
    sender = inert_inline(email.sender or "someone")
    marked = []
    for item in notes:
        facts = item.note.facts
        if item.kind != "draft" or not item.note.path.startswith(f"{DRAFTS}/"):
            continue
        if facts.status.word not in WAITING:
            continue
        if facts.reply_to_message_id == message_id or facts.stale.since == link:
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
    return epoch_timestamp(when) if when else ""
