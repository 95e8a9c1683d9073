"""The vault MCP server (`h0 mcp vault`): notes in an Obsidian vault as typed tools.

Every tool adapts one `h0.vault.Vault` operation. The one policy kept on the way is the
human-in-the-loop guard (`h0.mcp.vault_guard`): no tool creates, edits or moves a note into
`Approved/`, edits one there, or moves one out, except the daemon's own filing. Writes go
through `h0.mcp.vault_writes` (guarded, audited, recorded with who made them); the drafting
tools are in `h0.mcp.vault_drafting`.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from h0 import __version__
from h0.errors import H0Error, InternalError, InvalidRequest, NotFound
from h0.mcp.base import READ_ONLY, Dumped, H0Server, vault_write
from h0.mcp.gate_now import GateNow
from h0.mcp.live_index import BUILD_WAIT_S, LiveIndex
from h0.mcp.vault_calendar import add_calendar_tools
from h0.mcp.vault_drafting import add_drafting_tools
from h0.mcp.vault_guard import ApprovalGuard
from h0.mcp.vault_models import (
    AddressNotes,
    ChangesApplied,
    HealthStatus,
    ItemError,
    MoveResult,
    NoteContent,
    NoteList,
    NoteMatch,
    NotesRead,
    RelatedNote,
    RelatedNotes,
    SearchResults,
    WrittenNote,
)
from h0.mcp.vault_view import ClientView
from h0.mcp.vault_writes import Change, NoteWriter, item_error
from h0.platform.watch import NATIVE
from h0.vault import AuditLog, Vault
from h0.vault.index import VaultIndex
from h0.vault.index.reads import parse_at
from h0.vault.layout import LOGS
from h0.vault.note import Note

if TYPE_CHECKING:
    from h0.calendar import OwnerCalendar  # the iCalendar parser loads only when a calendar is configured

INSTRUCTIONS = """\
H0's Obsidian vault. Paths are vault-relative ('Needs_Action/EMAIL_1.md').
Folders: Needs_Action (incoming email notes), Drafts (reply drafts awaiting the human),
Approved (drafts the human approved — only the human puts notes there, changes or takes them out), Done, Rejected,
Logs. read_note returns a hash; pass it as if_match to write_note so you never overwrite an
edit the human made in between. H0_Rules.md, H0_Profile.md and H0_Memory.md steer H0 and are the
human's: a write to one is saved beside it as a proposal (H0_Rules.pending.md) that takes effect
only when the human confirms it in Obsidian; they cannot be moved."""

MAX_LIST = 10_000
MAX_BATCH = 500
DAEMON_CHILD_ENV = "H0_DAEMON_CHILD"  # set by the daemon on the vault server it spawns, and only there


def _content(note: Note) -> NoteContent:
    return NoteContent(path=note.path, frontmatter=note.frontmatter, body=note.body, hash=note.hash)


def build_vault_server(
    vault_root: Path,
    *,
    daemon_filing: bool | None = None,
    state_dir: Path | None = None,
    private_folders: str = "",
    watcher: str = NATIVE,
    draft_tokens: int = 3000,
    calendar: OwnerCalendar | None = None,
) -> H0Server:
    """Create the vault server for one vault root.

    `daemon_filing` lets move_note take a note out of Approved/ into Done/, Drafts/ or
    Logs/failed/: only for the server the daemon spawns for itself. None (the default)
    reads it from the environment (`daemon_filing_from_env`), so `h0 mcp vault` — which
    builds the server itself — gets it exactly when the daemon spawned it.

    Every write is recorded with its tool and client in H0's state database (`state_dir`:
    H0_STATE_DIR), so a draft changed just before the human approved it is held with who
    changed it (h0.vault.last_change); the daemon's own server records "H0".

    Searches answer from the vault index (h0.vault.index, built in the background at start and
    kept fresh by a watcher of kind `watcher`). Private notes (h0.vault.disclosure: marked private,
    in a private folder, or of a private thread) are never shown to an MCP client — an MCP client is
    an LLM, often a remote one: listings, filters, search and related notes leave them out, read_note
    refuses them, and no write, frontmatter update or move may make a note less private. Only the
    daemon's own server, whose one client is H0 on this machine, reads them.
    """
    if daemon_filing is None:
        daemon_filing = daemon_filing_from_env()
    vault = Vault(vault_root)
    gates = GateNow(vault.root, private_folders)  # the private folders as they are at each call
    # The daemon's own server: its index only when a tool asks (the daemon never does; h0.mcp.live_index).
    live = LiveIndex(vault.root, state_dir, gates(), watcher=watcher, lazy=daemon_filing)
    audit = AuditLog(vault.root / LOGS, "vault_mcp")
    guard = ApprovalGuard(vault.root, audit, daemon_filing=daemon_filing)

    def _lent(rel: str, digest: str) -> dict[str, Any] | None:
        """The index's parse of these very bytes when it is open and holds it (the daemon's reads: never waited for)."""
        index = live.ready()
        return index.frontmatter_read(rel, digest) if index is not None else None

    def _parse_at(rel: str) -> tuple[int, int, int, str] | None:
        """The index's parse of the note at `rel` when it is open (a listing's, taken while the file is as read)."""
        index = live.ready()
        return parse_at(index, rel) if index is not None else None

    vault.lend_parses_from(_parse_at)
    view = ClientView(gates, daemon_filing=daemon_filing, wait=lambda: _index_or_wait(), lend=_lent)
    shown = view.shown
    writer = NoteWriter(
        vault, guard, audit, live, state_dir, daemon_filing=daemon_filing, gate=view.gate, keys=view.private_keys
    )
    started = time.monotonic()
    server = H0Server("h0-vault", title="H0 vault", version=__version__, instructions=INSTRUCTIONS)
    server.on_start(live.start)
    server.on_stop(live.stop)

    @server.typed_tool(NoteContent, annotations=READ_ONLY, title="Read a note", inline=True)
    def read_note(
        path: Annotated[str, Field(description="Vault-relative path of the note, e.g. 'Drafts/reply.md'.")],
    ) -> Dumped:
        """Read a note: its frontmatter (as JSON data), body, and a content hash for if_match."""
        note = view.read(vault, path)
        return Dumped({"path": note.path, "frontmatter": note.frontmatter, "body": note.body, "hash": note.hash})

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
                notes.append(_content(view.read(vault, path)))
            except H0Error as error:
                errors.append(item_error(path, error))
        return NotesRead(notes=notes, errors=errors)

    @server.typed_tool(
        NoteContent,
        annotations=vault_write(destructive=True, idempotent=True),
        title="Write a note",
    )
    def write_note(
        path: Annotated[str, Field(description="Vault-relative path; folders are created as needed.")],
        frontmatter: Annotated[dict[str, Any], Field(description="The complete frontmatter mapping to write.")],
        body: Annotated[str, Field(description="The note body (Markdown).")],
        if_match: Annotated[
            str | None, Field(description="Hash from read_note; the write fails with 'conflict' if the note changed.")
        ] = None,
        create_only: Annotated[bool, Field(description="Fail with 'conflict' if the note already exists.")] = False,
    ) -> NoteContent:
        """Write a note atomically. Frontmatter keys you did not change keep their exact formatting."""
        return _content(writer.write("write_note", path, frontmatter, body, if_match, create_only))

    @server.typed_tool(
        WrittenNote,
        annotations=vault_write(destructive=False, idempotent=True),
        title="Update a note's frontmatter",
    )
    def update_frontmatter(
        path: Annotated[str, Field(description="Vault-relative path of the note.")],
        set: Annotated[dict[str, Any], Field(description="Keys to add or change in the frontmatter.")],
        remove: Annotated[list[str], Field(description="Keys to delete from the frontmatter.")] = [],  # noqa: B006
        if_match: Annotated[
            str | None, Field(description="Hash from read_note; fails with 'conflict' if the note changed since.")
        ] = None,
    ) -> WrittenNote:
        """Change some frontmatter keys of a note, leaving its body and every other key exactly as they are."""
        note = writer.update("update_frontmatter", path, set, remove, if_match)
        return WrittenNote(path=note.path, hash=note.hash)

    @server.typed_tool(NoteList, annotations=READ_ONLY, title="List notes")
    def list_notes(
        directory: Annotated[str, Field(description="Vault-relative folder, e.g. 'Needs_Action'; '' for the root.")],
        filter: Annotated[
            str | list[str] | None,
            Field(
                description="Frontmatter filter 'field:value' (equality, or membership for lists), e.g. "
                "'status:pending'; or a list of such filters, any of which a note must match (up to 500)."
            ),
        ] = None,
        recursive: Annotated[bool, Field(description="Include notes in sub-folders.")] = False,
        limit: Annotated[int, Field(ge=1, le=MAX_LIST, description="Most notes to return.")] = 1000,
    ) -> NoteList:
        """List the Markdown notes of a folder, sorted by path, optionally filtered on frontmatter. Private notes
        are never listed, and a filter never matches on their properties."""
        listing = vault.list_notes(directory, filter, recursive=recursive, limit=None if not daemon_filing else limit)
        if not daemon_filing:  # the index says which notes are private (h0.vault.index.privacy), one set look-up each
            notes = view.listed([item.path for item in listing.notes])
            # A note whose properties cannot be read is private until they can: not named, not even as skipped.
            return NoteList.model_validate(
                {"notes": notes[:limit], "total": len(notes), "truncated": len(notes) > limit, "skipped": []}
            )
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
        annotations=vault_write(destructive=False, idempotent=False),
        title="Move a note",
    )
    def move_note(
        source: Annotated[str, Field(description="Vault-relative path of the note to move.")],
        destination: Annotated[
            str, Field(description="New vault-relative path, or a folder ending in '/' to keep the file name.")
        ],
        overwrite: Annotated[bool, Field(description="Replace an existing note at the destination.")] = False,
        rename_if_exists: Annotated[
            bool,
            Field(description="If the destination exists, use 'name (2).md', 'name (3).md', … instead of failing."),
        ] = False,
        set_frontmatter: Annotated[
            dict[str, Any] | None, Field(description="Keys to merge into the note's frontmatter right after the move.")
        ] = None,
    ) -> MoveResult:
        """Move (rename) a note atomically. Refuses to overwrite unless asked; can file and annotate in one call."""
        return writer.move("move_note", source, destination, overwrite, rename_if_exists, set_frontmatter)

    @server.typed_tool(
        ChangesApplied,
        annotations=vault_write(destructive=True, idempotent=False),
        title="Apply several changes",
    )
    def apply_changes(
        changes: Annotated[
            list[Annotated[Change, Field(discriminator="op")]],
            Field(min_length=1, max_length=MAX_BATCH, description="Up to 500 changes, applied in this order."),
        ],
    ) -> ChangesApplied:
        """Apply several writes, frontmatter updates and moves in one call, in order, each exactly as write_note,
        update_frontmatter or move_note would (same rules, same errors). Each change stands on its own: one that
        fails is reported in its place (ok: false, with its error code) and the others still apply. Every change
        is on disk, durably, when the call answers."""
        return writer.apply_all(changes)

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
        index = view.judging(live.get())
        if index is not None:
            page = index.search(query, folder=folder, limit=limit, offset=offset, include_private=daemon_filing)
            hits, more = page.hits, page.more
        else:  # the index is not ready: the full scan, in path order, private notes left out as the index does
            found, _ = vault.search_notes(query, directory=directory, limit=1_000_000)
            found = [h for h in found if daemon_filing or _visible_path(h.path)]
            hits, more = found[offset : offset + limit], len(found) > offset + limit
        return SearchResults(
            notes=[NoteMatch(path=h.path, snippet=h.snippet, line=h.line) for h in hits],
            total=len(hits),
            truncated=more,
            offset=offset,
        )

    @server.typed_tool(RelatedNotes, annotations=READ_ONLY, title="Related notes")
    def related_notes(
        text: Annotated[
            str | None, Field(description="A piece of text (an email, a question) to find notes for.")
        ] = None,
        path: Annotated[str | None, Field(description="Or a note: the notes most related to it.")] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Most notes to return.")] = 10,
    ) -> RelatedNotes:
        """The notes most related to a note or a piece of text, best first, each with why: the same person's
        address (People notes first), a link, shared words. Private notes are never among them."""
        if (text is None) == (path is None):
            raise InvalidRequest("Give either text or path.", field="text")
        source = shown(vault.read_note(vault.resolve(path).rel)).path if path is not None else None
        index = view.index()
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
        index = view.index()
        return AddressNotes(
            address=address.strip().lower(), notes=index.notes_for_address(address, include_private=daemon_filing)[:500]
        )

    def _index_or_wait() -> VaultIndex:
        index = live.wait(BUILD_WAIT_S)
        if index is None:
            raise InternalError(
                "The vault index is still being built; ask again in a few seconds.", retryable=True, retry_after=5
            )
        return index

    def _folder(directory: str) -> str:
        folder = vault.paths.resolve(directory, allow_root=True)
        if not os.path.isdir(folder.abs):
            if os.path.exists(folder.abs):
                raise InvalidRequest(f"{folder.rel} is a note, not a folder.", path=folder.rel)
            raise NotFound(f"No folder at {folder.rel or '/'}.", path=folder.rel)
        return folder.rel

    def _visible_path(rel: str) -> bool:
        try:
            shown(vault.read_note(rel))
        except H0Error:
            return False  # private, or unreadable now: not shown
        return True

    # After the index tools, before health_check: tools/list keeps its order.
    add_drafting_tools(
        server,
        vault,
        writer,
        shown=shown,
        index=view.index,
        watching=live.watching,
        gate=view.gate,
        state_dir=state_dir,
        draft_tokens=draft_tokens,
        calendar=calendar,
    )
    add_calendar_tools(server, vault.root, calendar)

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


def daemon_filing_from_env(env: Mapping[str, str] | None = None) -> bool:
    """True in the vault server the daemon spawns: only the daemon sets H0_DAEMON_CHILD=1
    (and only it holds that server's stdio pipe); the server .mcp.json starts never has it.
    `env`: the environment to read (default: this process's)."""
    return (os.environ if env is None else env).get(DAEMON_CHILD_ENV) == "1"
