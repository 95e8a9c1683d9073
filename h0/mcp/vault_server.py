"""The vault MCP server (`h0 mcp vault`): notes in an Obsidian vault as typed tools.

Every tool adapts one `h0.vault.Vault` operation. The one policy kept here is the
human-in-the-loop guard: approval is the human's act alone, so no tool creates, edits or
moves a note into `Approved/`, edits one there, or moves one out — except the daemon's
own server (`daemon_filing`), which files the notes it sent (or held, or saw bounce) into
Done/, Drafts/ or Logs/failed/. "In Approved/" means what the path resolves to
(`h0.vault.approval`: symlinks, `..`, case, Unicode), and — defensively, since it is
Approved/ on macOS and Windows — any first folder that case-folds to `approved`. Each
refusal is `permission_denied` with one audit line.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import time
import unicodedata
from pathlib import Path
from typing import Annotated, Any, Literal, NoReturn

from loguru import logger
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from h0 import __version__
from h0.errors import H0Error, InternalError, InvalidRequest, NotFound, PermissionDenied
from h0.mail.drafts import CUTOFF
from h0.mcp.base import READ_ONLY, H0Server, current_client
from h0.mcp.live_index import BUILD_WAIT_S, LiveIndex
from h0.mcp.vault_models import (
    AddressNotes,
    ChangeResult,
    ChangesApplied,
    ContextEntry,
    DraftContextResult,
    HealthStatus,
    ItemError,
    MoveResult,
    NoteContent,
    NoteList,
    NoteMatch,
    NoteRef,
    NotesRead,
    RelatedNote,
    RelatedNotes,
    RevisionQueued,
    SearchResults,
)
from h0.platform.watch import NATIVE
from h0.printable import printable
from h0.state import StateDB
from h0.vault import AuditLog, Vault
from h0.vault.approval import ApprovalFolder, same_directory
from h0.vault.audit import note_timestamp
from h0.vault.index import VaultIndex
from h0.vault.layout import APPROVED, DONE, DRAFTS, FAILED, LOGS
from h0.vault.note import Note
from h0.vault.paths import VaultPath, folder_key
from h0.vault.privacy import is_private
from h0.vault.privacy import private_folders as private_folders_of
from h0.vault.seen import CHANGED_BY, H0_CLIENT, name_key

INSTRUCTIONS = """\
H0's Obsidian vault. Paths are vault-relative ('Needs_Action/EMAIL_1.md').
Folders: Needs_Action (incoming email notes), Drafts (reply drafts awaiting the human),
Approved (drafts the human approved — only the human puts notes there, changes or takes them out), Done, Rejected,
Logs. read_note returns a hash; pass it as if_match to write_note so you never overwrite an
edit the human made in between."""

MAX_LIST = 10_000
_APPROVED_KEY = folder_key(APPROVED)
DAEMON_FILING_FOLDERS = (DONE, DRAFTS, FAILED)  # sent, held or invalid, bounced
DAEMON_CHILD_ENV = "H0_DAEMON_CHILD"  # set by the daemon on the vault server it spawns, and only there

_INTO_APPROVED = (
    "Only the human approves: no tool may create, edit or move a note into Approved/. "
    "Write the draft to Drafts/ and let the human move it."
)
_EDIT_IN_APPROVED = (
    "A note in Approved/ is what the human approved: no tool may change it. To change it, "
    "ask the human to move it back to Drafts/, then edit it there."
)
_OUT_OF_APPROVED = (
    "Only the human moves notes out of Approved/ (H0's daemon files the ones it sent itself). "
    "To withdraw an approval, ask the human to move the note back to Drafts/ or to Rejected/."
)
_DAEMON_FILING_ONLY = (
    "H0's daemon files notes from Approved/ only into Done/, Drafts/ or Logs/failed/; "
    "anything else is the human's move."
)
_THROUGH_SYMLINK = (
    "This note is a symlink: H0 does not write through links (a write would replace the link "
    "with a copy). Write to the note it points to instead."
)


MAX_BATCH = 500


class WriteChange(BaseModel):
    """write_note's arguments, as one change."""

    op: Literal["write"]
    path: str = Field(description="Vault-relative path; folders are created as needed.")
    frontmatter: dict[str, Any] = Field(description="The complete frontmatter mapping to write.")
    body: str = Field(description="The note body (Markdown).")
    if_match: str | None = Field(default=None, description="Hash from read_note: 'conflict' if the note changed.")
    create_only: bool = Field(default=False, description="'conflict' if the note already exists.")


class UpdateChange(BaseModel):
    """update_frontmatter's arguments, as one change."""

    op: Literal["update"]
    path: str
    set: dict[str, Any] = Field(description="Keys to add or change in the frontmatter.")
    remove: list[str] = Field(default_factory=list, description="Keys to delete from the frontmatter.")
    if_match: str | None = None


class MoveChange(BaseModel):
    """move_note's arguments, as one change."""

    op: Literal["move"]
    source: str
    destination: str = Field(description="New vault-relative path, or a folder ending in '/'.")
    overwrite: bool = False
    rename_if_exists: bool = False
    set_frontmatter: dict[str, Any] | None = None


def _item_error(path: str, error: H0Error) -> ItemError:
    """The error as its item's answer, under the path the caller gave (the error's details keep the resolved one)."""
    return ItemError(path=path, error=error.code, message=error.message,
                     details=json.loads(json.dumps(error.details, default=str)))


def _content(note: Note) -> NoteContent:
    return NoteContent(path=note.path, frontmatter=note.frontmatter, body=note.body, hash=note.hash)


def build_vault_server(vault_root: Path, *, daemon_filing: bool | None = None, state_dir: Path | None = None,
                       private_folders: str = "", watcher: str = NATIVE, draft_tokens: int = 3000) -> H0Server:
    """Create the vault server for one vault root.

    `daemon_filing` lets move_note take a note out of Approved/ into Done/, Drafts/ or
    Logs/failed/: only for the server the daemon spawns for itself. None (the default)
    reads it from the environment (`daemon_filing_from_env`), so `h0 mcp vault` — which
    builds the server itself — gets it exactly when the daemon spawned it.

    Every write is recorded with its tool and client in H0's state database (`state_dir`:
    H0_STATE_DIR), so a draft changed just before the human approved it is held with who
    changed it (h0.vault.seen); the daemon's own server records "H0".

    Searches answer from the vault index (h0.vault.index, built in the background at start and
    kept fresh by a watcher of kind `watcher`). Private notes (`private: true`, PRIVATE_FOLDERS)
    are never shown to an MCP client — an MCP client is an LLM, often a remote one: search and
    related notes leave them out, read_note refuses them. Only the daemon's own server, whose
    one client is H0 on this machine, reads them.
    """
    if daemon_filing is None:
        daemon_filing = daemon_filing_from_env()
    vault = Vault(vault_root)
    writes = _WriteRecord(vault.root, state_dir, daemon_filing)
    private = private_folders_of(private_folders)
    live = LiveIndex(vault.root, state_dir, private, watcher=watcher)
    approval = ApprovalFolder(vault.root)
    filing_folders = tuple(vault.root / name for name in DAEMON_FILING_FOLDERS)
    audit = AuditLog(vault.root / LOGS, "vault_mcp")
    started = time.monotonic()
    server = H0Server("h0-vault", title="H0 vault", version=__version__, instructions=INSTRUCTIONS)
    server.on_start(live.start)
    server.on_stop(live.stop)

    def shown(note: Note) -> Note:
        """A note an MCP client may see: not a private one (the daemon's own server sees all)."""
        if not daemon_filing and is_private(note.path, note.frontmatter, private):
            raise PermissionDenied(
                f"{note.path} is private (`private: true`, or in a folder of PRIVATE_FOLDERS): H0 never shows it to an "
                "MCP client. Remove the mark in Obsidian if you want to share it.", path=note.path, reason="private")
        return note

    def in_approval(target: VaultPath) -> bool:
        return folder_key(target.top) == _APPROVED_KEY or approval.contains(target.abs)

    def refuse(tool: str, reason: str, message: str, path: str, **fields: Any) -> NoReturn:
        audit.write("approval_guard_refused", "warning", tool=tool, reason=reason, path=path, **fields)
        raise PermissionDenied(message, path=path, **fields)

    def guard_write(tool: str, target: VaultPath) -> None:
        """write_note and update_frontmatter: never in Approved/, never through a symlink."""
        try:
            mode: int | None = os.lstat(target.abs).st_mode
        except OSError:
            mode = None
        if in_approval(target):
            if mode is None:
                refuse(tool, "into_approved", _INTO_APPROVED, target.rel)
            refuse(tool, "edit_in_approved", _EDIT_IN_APPROVED, target.rel)
        if mode is not None and stat.S_ISLNK(mode):
            refuse(tool, "symlink", _THROUGH_SYMLINK, target.rel)

    def guard_move(tool: str, src: VaultPath, dst: VaultPath) -> None:
        """move_note (and a batch's moves): never into Approved/; out of it only as the daemon's own filing."""
        if in_approval(dst):
            refuse(tool, "into_approved", _INTO_APPROVED, dst.rel, source=src.rel)
        if not in_approval(src):
            return
        if not daemon_filing:
            refuse(tool, "out_of_approved", _OUT_OF_APPROVED, dst.rel, source=src.rel)
        if not any(same_directory(dst.abs.parent, folder) for folder in filing_folders):
            refuse(tool, "not_a_filing_folder", _DAEMON_FILING_ONLY, dst.rel, source=src.rel)

    # The guarded operations: each single-note tool and apply_changes go through these.

    def log(done: list[tuple[str, dict]] | None, event: str, **fields: Any) -> None:
        """An audit line (and the record of who wrote what) now, or (in a batch) with the batch's others when it ends."""
        fields["client"] = writes.client()
        live.changed([p for p in (fields.get("path"), fields.get("source"), fields.get("destination")) if p])
        if done is None:
            audit.write(event, **fields)
            writes.record([(event, fields)])
        else:
            done.append((event, fields))

    def stamp(tool: str, target: VaultPath) -> dict[str, str]:
        """On a draft an agent writes (not H0 itself): who wrote it, through which tool, when — shown on the
        draft (and, from the state database, on the dashboard). Whatever the agent put there is replaced."""
        if daemon_filing or folder_key(target.top) != folder_key(DRAFTS):
            return {}
        client = printable(writes.client() or "an unnamed MCP client", 80)
        return {CHANGED_BY: f"{tool} from {client} at {note_timestamp()}"}

    def do_write(tool: str, path: str, frontmatter: dict, body: str, if_match: str | None, create_only: bool,
                 done: list | None = None) -> Note:
        target = vault.resolve(path, write=True)
        guard_write(tool, target)
        frontmatter = {**frontmatter, **stamp(tool, target)}
        note = vault.write_note(target.rel, frontmatter, body, if_match=if_match, create_only=create_only)
        log(done, "note_written", tool=tool, path=note.path, hash=note.hash)
        return note

    def do_update(tool: str, path: str, changes: dict, remove: list[str], if_match: str | None,
                  done: list | None = None) -> Note:
        target = vault.resolve(path, write=True)
        guard_write(tool, target)
        changes = {**changes, **stamp(tool, target)}
        note = vault.update_frontmatter(target.rel, changes, remove=tuple(remove), if_match=if_match)
        log(done, "note_written", tool=tool, path=note.path, hash=note.hash)
        return note

    def do_move(tool: str, source: str, destination: str, overwrite: bool, rename_if_exists: bool,
                set_frontmatter: dict | None, done: list | None = None) -> MoveResult:
        src = vault.resolve(source, write=True)
        dst = vault.destination_for(destination, src)
        guard_move(tool, src, dst)
        moved = vault.move_note(
            src.rel, dst.rel, overwrite=overwrite, rename_if_exists=rename_if_exists, set_frontmatter=set_frontmatter
        )
        log(done, "note_moved", tool=tool, source=moved.source, destination=moved.destination, hash=moved.hash)
        return MoveResult(
            moved=True, source=moved.source, destination=moved.destination, moved_hash=moved.moved_hash, hash=moved.hash,
            warning=moved.warning,
        )

    @server.typed_tool(NoteContent, annotations=READ_ONLY, title="Read a note", inline=True)
    def read_note(
        path: Annotated[str, Field(description="Vault-relative path of the note, e.g. 'Drafts/reply.md'.")],
    ) -> NoteContent:
        """Read a note: its frontmatter (as JSON data), body, and a content hash for if_match."""
        return _content(shown(vault.read_note(path)))

    @server.typed_tool(NotesRead, annotations=READ_ONLY, title="Read several notes")
    def read_notes(
        paths: Annotated[
            list[str], Field(min_length=1, max_length=MAX_BATCH, description="Vault-relative paths (up to 500).")
        ],
    ) -> NotesRead:
        """Read several notes in one call: each as read_note returns it, in the order asked; a note that cannot be
        read (not found, unreadable frontmatter, …) is listed in `errors` with its error code instead."""
        notes: list[NoteContent] = []
        errors: list[ItemError] = []
        for path in paths:
            try:
                notes.append(_content(shown(vault.read_note(path))))
            except H0Error as error:
                errors.append(_item_error(path, error))
        return NotesRead(notes=notes, errors=errors)

    @server.typed_tool(
        NoteContent,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False),
        title="Write a note",
    )
    def write_note(
        path: Annotated[str, Field(description="Vault-relative path; folders are created as needed.")],
        frontmatter: Annotated[dict, Field(description="The complete frontmatter mapping to write.")],
        body: Annotated[str, Field(description="The note body (Markdown).")],
        if_match: Annotated[
            str | None, Field(description="Hash from read_note; the write fails with 'conflict' if the note changed.")
        ] = None,
        create_only: Annotated[bool, Field(description="Fail with 'conflict' if the note already exists.")] = False,
    ) -> NoteContent:
        """Write a note atomically. Frontmatter keys you did not change keep their exact formatting."""
        return _content(do_write("write_note", path, frontmatter, body, if_match, create_only))

    @server.typed_tool(
        NoteRef,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False),
        title="Update a note's frontmatter",
    )
    def update_frontmatter(
        path: Annotated[str, Field(description="Vault-relative path of the note.")],
        set: Annotated[dict, Field(description="Keys to add or change in the frontmatter.")],
        remove: Annotated[list[str], Field(description="Keys to delete from the frontmatter.")] = [],  # noqa: B006
        if_match: Annotated[
            str | None, Field(description="Hash from read_note; fails with 'conflict' if the note changed since.")
        ] = None,
    ) -> NoteRef:
        """Change some frontmatter keys of a note, leaving its body and every other key exactly as they are."""
        note = do_update("update_frontmatter", path, set, remove, if_match)
        return NoteRef(path=note.path, hash=note.hash)

    @server.typed_tool(NoteList, annotations=READ_ONLY, title="List notes")
    def list_notes(
        directory: Annotated[str, Field(description="Vault-relative folder, e.g. 'Needs_Action'; '' for the root.")],
        filter: Annotated[
            str | list[str] | None,
            Field(description="Frontmatter filter 'field:value' (equality, or membership for lists), e.g. "
                  "'status:pending'; or a list of such filters, any of which a note must match (up to 500)."),
        ] = None,
        recursive: Annotated[bool, Field(description="Include notes in sub-folders.")] = False,
        limit: Annotated[int, Field(ge=1, le=MAX_LIST, description="Most notes to return.")] = 1000,
    ) -> NoteList:
        """List the Markdown notes of a folder, sorted by path, optionally filtered on frontmatter."""
        listing = vault.list_notes(directory, filter, recursive=recursive, limit=limit)
        # Validated from plain data in one pass (pydantic-core): 2,500 paths in 0.03 ms.
        return NoteList.model_validate(
            {
                "notes": [item.path for item in listing.notes],
                "total": listing.total,
                "truncated": listing.truncated,
                "skipped": listing.skipped,
            }
        )

    @server.typed_tool(
        MoveResult,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False),
        title="Move a note",
    )
    def move_note(
        source: Annotated[str, Field(description="Vault-relative path of the note to move.")],
        destination: Annotated[
            str, Field(description="New vault-relative path, or a folder ending in '/' to keep the file name.")
        ],
        overwrite: Annotated[bool, Field(description="Replace an existing note at the destination.")] = False,
        rename_if_exists: Annotated[
            bool, Field(description="If the destination exists, use 'name (2).md', 'name (3).md', … instead of failing.")
        ] = False,
        set_frontmatter: Annotated[
            dict | None, Field(description="Keys to merge into the note's frontmatter right after the move.")
        ] = None,
    ) -> MoveResult:
        """Move (rename) a note atomically. Refuses to overwrite unless asked; can file and annotate in one call."""
        return do_move("move_note", source, destination, overwrite, rename_if_exists, set_frontmatter)

    @server.typed_tool(
        ChangesApplied,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False),
        title="Apply several changes",
    )
    def apply_changes(
        changes: Annotated[
            list[Annotated[WriteChange | UpdateChange | MoveChange, Field(discriminator="op")]],
            Field(min_length=1, max_length=MAX_BATCH, description="Up to 500 changes, applied in this order."),
        ],
    ) -> ChangesApplied:
        """Apply several writes, frontmatter updates and moves in one call, in order, each exactly as write_note,
        update_frontmatter or move_note would (same rules, same errors). Each change stands on its own: one that
        fails is reported in its place (ok: false, with its error code) and the others still apply. Every change
        is on disk, durably, when the call answers."""
        results: list[ChangeResult] = []
        done: list[tuple[str, dict]] = []
        try:
            with vault.batch():  # each folder fsynced once, at the end (before answering)
                for change in changes:
                    try:
                        results.append(_apply(change, done))
                    except H0Error as error:
                        failed = _item_error(change.source if isinstance(change, MoveChange) else change.path, error)
                        results.append(ChangeResult(ok=False, path=failed.path, error=failed.error,
                                                    message=failed.message, details=failed.details))
        finally:
            audit.write_many(done)
            writes.record(done)
        return ChangesApplied(results=results)

    def _apply(change: WriteChange | UpdateChange | MoveChange, done: list) -> ChangeResult:
        if isinstance(change, WriteChange):
            note = do_write("apply_changes", change.path, change.frontmatter, change.body, change.if_match,
                            change.create_only, done)
            return ChangeResult(ok=True, path=note.path, hash=note.hash)
        if isinstance(change, UpdateChange):
            note = do_update("apply_changes", change.path, change.set, change.remove, change.if_match, done)
            return ChangeResult(ok=True, path=note.path, hash=note.hash)
        moved = do_move("apply_changes", change.source, change.destination, change.overwrite,
                        change.rename_if_exists, change.set_frontmatter, done)
        return ChangeResult(ok=True, path=moved.destination, hash=moved.hash, source=moved.source,
                            moved_hash=moved.moved_hash, warning=moved.warning)

    @server.typed_tool(SearchResults, annotations=READ_ONLY, title="Search notes")
    def search_notes(
        query: Annotated[str, Field(description="Literal text, matched case-insensitively.")],
        directory: Annotated[str, Field(description="Limit the search to this folder; '' for the whole vault.")] = "",
        limit: Annotated[int, Field(ge=1, le=500, description="Most notes to return.")] = 50,
        offset: Annotated[int, Field(ge=0, le=100_000, description="Matching notes to skip (the next page).")] = 0,
    ) -> SearchResults:
        """Search note bodies and frontmatter values for a literal phrase; best matches first (BM25), with the
        line and snippet of each note's first match. Every note holding the phrase is found, page by page."""
        folder = _folder(directory)
        index = live.get()
        if index is not None:
            page = index.search(query, folder=folder, limit=limit, offset=offset, include_private=daemon_filing)
            hits, more = page.hits, page.more
        else:  # the index is not ready: the full scan, in path order, private notes left out as the index does
            found, _ = vault.search_notes(query, directory=directory, limit=1_000_000)
            found = [h for h in found if daemon_filing or not _private_path(h.path)]
            hits, more = found[offset:offset + limit], len(found) > offset + limit
        return SearchResults(notes=[NoteMatch(path=h.path, snippet=h.snippet, line=h.line) for h in hits],
                             total=len(hits), truncated=more, offset=offset)

    @server.typed_tool(RelatedNotes, annotations=READ_ONLY, title="Related notes")
    def related_notes(
        text: Annotated[str | None, Field(description="A piece of text (an email, a question) to find notes for.")] = None,
        path: Annotated[str | None, Field(description="Or a note: the notes most related to it.")] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Most notes to return.")] = 10,
    ) -> RelatedNotes:
        """The notes most related to a note or a piece of text, best first, each with why: the same person's
        address (People notes first), a link, shared words. Private notes are never among them."""
        if (text is None) == (path is None):
            raise InvalidRequest("Give either text or path.", field="text")
        source = vault.resolve(path).rel if path is not None else None
        index = _index_or_wait()
        found = index.related(text=text, path=source, limit=limit, include_private=False)
        return RelatedNotes(notes=[RelatedNote(path=r.path, score=r.score, why=r.why) for r in found])

    @server.typed_tool(AddressNotes, annotations=READ_ONLY, title="Notes about an address")
    def notes_for_address(
        address: Annotated[str, Field(description="An email address, e.g. 'dana@example.com'.")],
    ) -> AddressNotes:
        """The notes naming an email address — People notes (the address in their email/emails/aliases) first,
        then emails and notes that mention it. Private notes are left out."""
        if "@" not in address or len(address) > 320 or any(ch.isspace() for ch in address.strip()):
            raise InvalidRequest("address must be one email address, e.g. 'dana@example.com'.", field="address")
        index = _index_or_wait()
        return AddressNotes(address=address.strip().lower(),
                            notes=index.notes_for_address(address, include_private=daemon_filing)[:500])

    drafting_box: list[Any] = []

    def _drafting() -> Any:
        """Drafting over the server's own live index (built once, when the index is ready)."""
        if not drafting_box:
            from h0.drafting import Drafting
            from h0.drafting.indexed import IndexKnowledge
            from h0.drafting.service import sent_cache_path

            index = _index_or_wait()
            knowledge = IndexKnowledge(index, private, watched=live.watching)
            drafting_box.append(Drafting(vault.root, private_folders=private, budget_tokens=draft_tokens,
                                         knowledge=knowledge, sent_cache=sent_cache_path(vault.root, state_dir)))
        return drafting_box[0]

    @server.typed_tool(DraftContextResult, annotations=READ_ONLY, title="Draft context")
    def draft_context(
        path: Annotated[str, Field(description="An email note (Needs_Action/…), or a reply draft (Drafts/…): "
                                               "the context for replying to its email.")],
    ) -> DraftContextResult:
        """The context H0 drafts a reply from: the owner's profile and lessons, the sender's People notes and the
        notes they link to, the notes most related to the email, the owner's past replies — each with why, in
        budget order. Private notes, Logs/ and other people's mail never appear. Use it to write a reply the
        owner would send; put it in Drafts/ with write_note (only the owner approves)."""
        from h0.drafting.context import recipient_of
        from h0.mail.htmltext import block_text

        note = shown(vault.read_note(vault.resolve(path).rel))
        email = note
        source = note.frontmatter.get("source")
        if str(note.frontmatter.get("type") or "").lower() != "email" and isinstance(source, str) and source.strip():
            email = _email_of(source) or note
        fm = dict(email.frontmatter)
        reply_to = None
        if email is note and str(fm.get("type") or "").lower() != "email":  # a draft whose email is gone
            reply_to = recipient_of(str(fm.get("to") or ""))[1] or None
        text = block_text(email.body) if email is not note or str(fm.get("type") or "").lower() == "email" \
            else note.body.split(CUTOFF, 1)[0]
        context = _drafting().context_for_email(fm, text, reply_to)
        data = context.to_json()
        return DraftContextResult(email=email.path, recipient=data["recipient"], greeting=data["greeting"] or "",
                                  sign_off=data["sign_off"] or "", voice_from=str(data["voice_from"] or ""),
                                  items=[ContextEntry(**item) for item in data["items"]], omitted=data["omitted"],
                                  budget_chars=data["budget_chars"], used_chars=data["used_chars"],
                                  problems=data["problems"])

    def _email_of(source: str) -> Note | None:
        """The email note a draft answers (its `source`, wherever the email was filed since)."""
        name = source.strip().strip("[]").rsplit("/", 1)[-1]
        name = name if name.endswith(".md") else f"{name}.md"
        for folder in (source.strip().strip("[]").rsplit("/", 1)[0] if "/" in source else "", "Needs_Action", DONE):
            try:
                found = vault.read_note(f"{folder}/{name}" if folder else name)
            except H0Error:
                continue
            if str(found.frontmatter.get("type") or "").lower() == "email":
                return shown(found)
        return None

    @server.typed_tool(
        RevisionQueued,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                    open_world_hint=False),
        title="Ask H0 to revise a draft",
    )
    def revise_draft(
        path: Annotated[str, Field(description="A reply draft directly in Drafts/.")],
        instruction: Annotated[str, Field(description="What to change, one line, e.g. 'shorter, offer Friday "
                                                      "instead'.", min_length=1, max_length=500)],
    ) -> RevisionQueued:
        """Ask H0 to rewrite a draft: the instruction is written on the draft (its `h0` property) and H0 rewrites
        the text in place with the same context (keeping the previous version below the line) once the draft
        has been left alone a few seconds. A revision changes only the text: never the recipients or subject,
        and the draft never leaves Drafts/ (only the owner approves). Needs an LLM (LLM_PROVIDER)."""
        from h0.drafting.revise import INSTRUCTION_KEY
        from h0.vault.draft_state import draft_status

        target = vault.resolve(path)
        if folder_key(target.top) != folder_key(DRAFTS) or target.rel.count("/") != 1:
            raise InvalidRequest(f"{target.rel} is not a draft in {DRAFTS}/: only drafts there are revised (a draft "
                                 "in Approved/ is the owner's to send as it is).", path=target.rel, field="path")
        line = " ".join(instruction.split())
        if not line or any(unicodedata.category(ch) in ("Cc", "Cf") for ch in instruction if ch not in "\t\n"):
            raise InvalidRequest("instruction must be visible text on one line (no control or invisible "
                                 "characters).", field="instruction")
        note = shown(vault.read_note(target.rel))
        if not draft_status(note.frontmatter).sendable:
            raise InvalidRequest(f"{target.rel} no longer awaits sending (status: "
                                 f"{note.frontmatter.get('status')}); it is not revised.", path=target.rel)
        if not note.frontmatter.get("to"):
            raise InvalidRequest(f"{target.rel} is not a reply draft (it has no `to`).", path=target.rel)
        written = do_update("revise_draft", target.rel, {INSTRUCTION_KEY: line}, [], note.hash)
        return RevisionQueued(path=written.path, instruction=line, hash=written.hash, note=(
            "H0 rewrites the draft in Drafts/ once it has been left alone for REVISE_SETTLE_SECONDS, while h0 watch "
            "runs (or at the next h0 sweep), with the configured LLM; read it again with read_note."))

    def _index_or_wait() -> VaultIndex:
        index = live.wait(BUILD_WAIT_S)
        if index is None:
            raise InternalError("The vault index is still being built; ask again in a few seconds.", retryable=True,
                                retry_after=5)
        return index

    def _folder(directory: str) -> str:
        folder = vault.paths.resolve(directory, allow_root=True)
        if not os.path.isdir(folder.abs):
            if os.path.exists(folder.abs):
                raise InvalidRequest(f"{folder.rel} is a note, not a folder.", path=folder.rel)
            raise NotFound(f"No folder at {folder.rel or '/'}.", path=folder.rel)
        return folder.rel

    def _private_path(rel: str) -> bool:
        try:
            return is_private(rel, vault.read_note(rel).frontmatter, private)
        except H0Error:
            return True  # unreadable now: not shown

    @server.typed_tool(HealthStatus, annotations=READ_ONLY, title="Health check")
    def health_check() -> HealthStatus:
        """Report the vault root, whether it is writable, whether Obsidian uses it, and notes per folder."""
        problems: list[str] = []
        writable = _probe_writable(vault.root, problems)
        if not vault.root.is_dir():
            problems.append(f"the vault folder {vault.root} does not exist")
        return HealthStatus(
            status="ok" if writable and not problems else "degraded",
            server="h0-vault",
            version=__version__,
            vault_root=str(vault.root),
            writable=writable,
            obsidian=(vault.root / ".obsidian").is_dir(),
            folders=vault.counts(),
            uptime_seconds=round(time.monotonic() - started, 3),
            problems=problems,
        )

    server.vault = vault  # type: ignore[attr-defined]  # for in-process tests and benchmarks
    return server


class _WriteRecord:
    """Who wrote which note through this server, in H0's state database (h0.vault.seen reads it)."""

    def __init__(self, root: Path, state_dir: Path | None, daemon: bool) -> None:
        self.root = root
        self.state_dir = state_dir
        self.daemon = daemon
        self._state: StateDB | None = None
        self._failed = False

    def client(self) -> str | None:
        return H0_CLIENT if self.daemon else current_client()

    def record(self, events: list[tuple[str, dict]]) -> None:
        rows = [(name_key(path), path, fields.get("hash"), str(fields.get("tool")), fields.get("client"))
                for event, fields in events
                if (path := fields.get("path") if event == "note_written" else fields.get("destination"))]
        if not rows or self._failed:
            return
        try:
            if self._state is None:
                self._state = StateDB.for_vault(self.root, self.state_dir)
            self._state.record_note_writes(rows)
        except H0Error as error:
            # Without the record a change made just before approval is still seen by its file
            # time; say once that who made it will not be named.
            self._failed = True
            logger.warning("cannot record note writes in H0's state database: {}", error.message)


def _probe_writable(root: Path, problems: list[str]) -> bool:
    probe = root / f".h0-health-{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, b"ok")
        os.close(fd)
        os.unlink(probe)
        return True
    except OSError as exc:
        problems.append(f"cannot write in the vault: {exc.strerror or exc}")
        return False


def daemon_filing_from_env() -> bool:
    """True in the vault server the daemon spawns: only the daemon sets H0_DAEMON_CHILD=1
    (and only it holds that server's stdio pipe); the server .mcp.json starts never has it."""
    return os.environ.get(DAEMON_CHILD_ENV) == "1"


def main(vault_root: Path) -> None:
    """Serve over stdio until the client closes the pipe."""
    build_vault_server(vault_root, daemon_filing=daemon_filing_from_env()).serve("stdio")
