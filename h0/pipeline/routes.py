"""The one routing table: for each trigger folder, which handler does the work, which signal
announces it, and how the sweep finds the notes that need it.

    folder         signal                    handler              when
    Approved/      note-approved             send_approved_draft  always (it settles first)
    Rejected/      note-rejected             archive_rejected     always
    Drafts/        draft-revision-requested  revise_draft         the draft carries an `h0:` instruction
    Drafts/        note-rejected             archive_rejected     the draft says status: rejected
    Drafts/        draft-times-due           reschedule_draft     a waiting, unedited reply to a request to meet
    Needs_Action/  notes-need-action         triage_emails        not triaged yet (in batches, while triage is on)
    @learn         drafts-filed              learn_from_drafts    (a job key, not a folder)

A worker sends the route's signal (observers: tests, benchmarks) and then calls its handler,
which returns a typed `Outcome` or raises; no code reads a signal's receivers' return values.
A route's `wanted` reads the note locally and cheaply, so the events H0's own writes cause (a
draft written, an email note updated) end here instead of costing MCP calls; the handler then
re-reads through the vault server before it acts. The note is read once for all of a folder's rows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from blinker import NamedSignal

from h0.drafting.revise import drafts_asking_revision, revision_request
from h0.errors import H0Error, ParseError
from h0.handlers.context import HandlerContext
from h0.handlers.learn import learn_from_drafts
from h0.handlers.outcome import Outcome
from h0.handlers.reject import archive_rejected
from h0.handlers.reschedule import reschedule_draft, reschedule_wanted, waiting_meeting_drafts
from h0.handlers.revise import revise_draft
from h0.handlers.send import send_approved_draft
from h0.handlers.triage import needs_triage, triage_emails
from h0.pipeline import signals
from h0.pipeline.sweep import approved_notes, listed, rejected_drafts, untriaged_notes
from h0.vault import Note, Vault
from h0.vault.layout import APPROVED, DRAFTS, NEEDS_ACTION, REJECTED
from h0.vault.paths import folder_key, nfc

Handler = Callable[[str, HandlerContext], Outcome]
# (paths, context, the notes the pipeline has just read of them: not read a second time)
BatchHandler = Callable[[Sequence[str], HandlerContext, Mapping[str, Note]], dict[str, Outcome | Exception]]
Finder = Callable[[Vault], list[str]]

LEARN_JOB = "@learn"  # not a path: "learn from the drafts filed in Done/ since the last look"
TRIAGE_BATCH = (
    500  # notes a worker takes at once from a burst (one thread look-up, three vault calls; the batch tools' most)
)


NoteRead = Callable[[], Note]  # the note as it is on disk now (raises H0Error)


def reader(vault: Vault, path: str) -> NoteRead:
    """`path`'s note, read at most once however many rows ask (its error raised to each of them)."""
    got: list[Note | H0Error] = []

    def read() -> Note:
        if not got:
            try:
                got.append(vault.read_note(path))
            except H0Error as exc:
                got.append(exc)
        if isinstance(got[0], H0Error):
            raise got[0]
        return got[0]

    return read


def _always(read: NoteRead) -> bool:
    return True


def draft_rejected(read: NoteRead) -> bool:
    """A draft in Drafts/ that says status: rejected (a note that cannot be read is left alone)."""
    try:
        return read().facts.rejected
    except H0Error:
        return False


def revision_requested(read: NoteRead) -> bool:
    """A draft in Drafts/ that carries an `h0:` instruction and is not rejected."""
    try:
        note = read()
    except H0Error:
        return False
    return not note.facts.rejected and revision_request(note.facts, note.body) is not None


def untriaged(read: NoteRead) -> bool:
    """An email note triage has not decided; an unreadable one too (the handler reports read_error once)."""
    try:
        return needs_triage(read().facts)
    except ParseError:
        return True
    except H0Error:
        return False


@dataclass(frozen=True, slots=True)
class Route:
    """One row of the table: a note in `folder` for which `wanted` holds is `handler`'s work."""

    folder: str
    signal: NamedSignal
    handler: Handler
    find: Finder  # the sweep: the folder's notes this route has work for
    wanted: Callable[[NoteRead], bool] = _always


@dataclass(frozen=True, slots=True)
class BatchRoute:
    """A folder whose notes are handled in batches: `handler` answers each path with its Outcome,
    or the exception that stopped that note."""

    folder: str
    signal: NamedSignal
    handler: BatchHandler
    find: Finder
    wanted: Callable[[NoteRead], bool]
    limit: int


def _learn(path: str, ctx: HandlerContext) -> Outcome:
    return learn_from_drafts(ctx)


ROUTES: tuple[Route, ...] = (
    Route(APPROVED, signals.note_approved, send_approved_draft, approved_notes),
    Route(REJECTED, signals.note_rejected, archive_rejected, listed(REJECTED)),
    Route(
        DRAFTS,
        signals.draft_revision_requested,
        revise_draft,
        lambda vault: [nfc(p) for p in drafts_asking_revision(vault.root)],
        revision_requested,
    ),
    Route(DRAFTS, signals.note_rejected, archive_rejected, rejected_drafts, draft_rejected),
    Route(DRAFTS, signals.draft_times_due, reschedule_draft, waiting_meeting_drafts, reschedule_wanted),
)
TRIAGE = BatchRoute(NEEDS_ACTION, signals.notes_need_action, triage_emails, untriaged_notes, untriaged, TRIAGE_BATCH)
LEARN = Route(LEARN_JOB, signals.drafts_filed, _learn, lambda vault: [])

_BY_FOLDER: dict[str, tuple[Route, ...]] = {}
for _route in ROUTES:
    _BY_FOLDER[folder_key(_route.folder)] = (*_BY_FOLDER.get(folder_key(_route.folder), ()), _route)
TRIGGER_FOLDERS = (*dict.fromkeys(route.folder for route in ROUTES), TRIAGE.folder)  # what the watcher watches


def folder_of(path: str) -> str:
    """The folder key of a vault-relative path (its first part, case-folded as the vault compares)."""
    return folder_key(path.split("/", 1)[0])


def is_approval(path: str) -> bool:
    """In Approved/: a note written in place there waits out the approval settle period."""
    return folder_of(path) == folder_key(APPROVED)


def routes_for(path: str) -> tuple[Route, ...]:
    """The table's rows for the folder `path` is in (none: not a trigger folder)."""
    return _BY_FOLDER.get(folder_of(path), ())


def route_for(path: str, vault: Vault) -> Route | None:
    """The first of the folder's rows that wants this note, as the note is on disk now."""
    read = reader(vault, path)
    for route in routes_for(path):
        if route.wanted(read):
            return route
    return None


def batched(path: str) -> bool:
    """A note of the folder handled in batches (Needs_Action/)."""
    return folder_of(path) == folder_key(TRIAGE.folder)


def reconcile(vault: Vault, *, triage: bool = True) -> list[str]:
    """Every note the table has work for now (the sweep): each route's finder, in table order;
    Needs_Action/ only when triage runs."""
    paths = [path for route in ROUTES for path in route.find(vault)]
    if triage:
        paths += TRIAGE.find(vault)
    return paths
