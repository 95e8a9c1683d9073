"""The vault server's drafting tools: the context H0 drafts a reply from, and asking H0 to revise a draft."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from h0.errors import H0Error, InvalidRequest
from h0.mcp.base import READ_ONLY, H0Server, vault_write
from h0.mcp.vault_models import ContextEntry, DraftContextResult, RevisionQueued, SchedulingContext
from h0.mcp.vault_writes import NoteWriter
from h0.vault import Vault
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex
from h0.vault.layout import DONE, DRAFTS, NEEDS_ACTION
from h0.vault.note import Note
from h0.vault.paths import folder_key

if TYPE_CHECKING:
    from h0.calendar import OwnerCalendar
    from h0.drafting import Drafting


def add_drafting_tools(
    server: H0Server,
    vault: Vault,
    writer: NoteWriter,
    *,
    shown: Callable[[Note], Note],
    index: Callable[[], VaultIndex],
    watching: Callable[[], bool],
    gate: Callable[[], Disclosure],
    state_dir: Path | None,
    draft_tokens: int,
    calendar: OwnerCalendar | None = None,
) -> None:
    """Register draft_context and revise_draft on the vault server. `shown` refuses a private note,
    `index` waits for the server's live index, `watching` says whether its watcher keeps it fresh, `gate` is
    the disclosure gate as it is now (the private folders of this call)."""
    drafting_box: list[Drafting] = []

    def drafting() -> Drafting:
        """Drafting over the server's own live index (built when the index is ready, and again when the private
        folders changed: its gate judges past replies and threads)."""
        now = gate()
        if drafting_box and drafting_box[0].disclosure.key != now.key:
            drafting_box.clear()
        if not drafting_box:
            from h0.drafting import Drafting
            from h0.drafting.indexed import IndexKnowledge
            from h0.drafting.service import owner_authority, sent_cache_path

            knowledge = IndexKnowledge(index(), watched=watching)
            drafting_box.append(
                Drafting(
                    vault.root,
                    disclosure=now,
                    budget_tokens=draft_tokens,
                    knowledge=knowledge,
                    sent_cache=sent_cache_path(vault.root, state_dir),
                    calendar=calendar,
                    owner=owner_authority(vault.root, state_dir),
                )
            )
        return drafting_box[0]

    @server.typed_tool(DraftContextResult, annotations=READ_ONLY, title="Draft context")
    def draft_context(
        path: Annotated[
            str,
            Field(
                description="An email note (Needs_Action/…), or a reply draft (Drafts/…): "
                "the context for replying to its email."
            ),
        ],
    ) -> DraftContextResult:
        """The context H0 drafts a reply from: the owner's profile and lessons, the sender's People notes and the
        notes they link to, the notes most related to the email, the owner's past replies — each with why, in
        budget order. Private notes, Logs/ and other people's mail never appear. Use it to write a reply the
        owner would send; put it in Drafts/ with write_note (only the owner approves)."""
        # Imported here: h0.mail is ~4 MB of a vault server that may never draft (its RSS goal is 100 MB).
        from h0.mail.incoming.htmltext import block_text
        from h0.vault.sendable import CUTOFF

        note = shown(vault.read_note(vault.resolve(path).rel))
        email = note
        if not note.facts.is_email and note.facts.source:
            email = email_of(note.facts.source) or note
        reply_to = None
        if email is note and not note.facts.is_email:  # a draft whose email is gone
            reply_to = note.facts.to[0].lower() if note.facts.to else None
        text = block_text(email.body) if email is not note or note.facts.is_email else note.body.split(CUTOFF, 1)[0]
        context = drafting().context_for_email(email.facts, text, reply_to)
        data = context.to_json()
        return DraftContextResult(
            email=email.path,
            recipient=data["recipient"],
            greeting=data["greeting"] or "",
            sign_off=data["sign_off"] or "",
            voice_from=str(data["voice_from"] or ""),
            items=[ContextEntry(**item) for item in data["items"]],
            omitted=data["omitted"],
            budget_chars=data["budget_chars"],
            used_chars=data["used_chars"],
            problems=data["problems"],
            scheduling=SchedulingContext(**data["scheduling"]) if data["scheduling"] else None,
        )

    def email_of(source: str) -> Note | None:
        """The email note a draft answers (its `source`, a vault path read by the note model: wherever
        the email was filed since)."""
        folder, _, name = source.rpartition("/")
        for place in dict.fromkeys((folder, NEEDS_ACTION, DONE)):
            try:
                found = vault.read_note(f"{place}/{name}" if place else name)
            except H0Error:
                continue
            if found.facts.is_email:
                return shown(found)
        return None

    @server.typed_tool(
        RevisionQueued,
        annotations=vault_write(destructive=False, idempotent=True),
        title="Ask H0 to revise a draft",
    )
    def revise_draft(
        path: Annotated[str, Field(description="A reply draft directly in Drafts/.")],
        instruction: Annotated[
            str,
            Field(
                description="What to change, one line, e.g. 'shorter, offer Friday instead'.",
                min_length=1,
                max_length=500,
            ),
        ],
    ) -> RevisionQueued:
        """Ask H0 to rewrite a draft: the instruction is written on the draft (its `h0` property) and H0 rewrites
        the text in place with the same context (keeping the previous version below the line) once the draft
        has been left alone a few seconds. A revision changes only the text: never the recipients or subject,
        and the draft never leaves Drafts/ (only the owner approves). Needs an LLM (LLM_PROVIDER)."""
        from h0.vault.marks import INSTRUCTION_KEY

        target = vault.resolve(path)
        if folder_key(target.top) != folder_key(DRAFTS) or target.rel.count("/") != 1:
            raise InvalidRequest(
                f"{target.rel} is not a draft in {DRAFTS}/: only drafts there are revised (a draft "
                "in Approved/ is the owner's to send as it is).",
                path=target.rel,
                field="path",
            )
        line = " ".join(instruction.split())
        if not line or any(unicodedata.category(ch) in ("Cc", "Cf") for ch in instruction if ch not in "\t\n"):
            raise InvalidRequest(
                "instruction must be visible text on one line (no control or invisible characters).",
                field="instruction",
            )
        note = shown(vault.read_note(target.rel))
        if not note.facts.status.sendable:
            raise InvalidRequest(
                f"{target.rel} no longer awaits sending (status: {note.facts.status.word}); it is not revised.",
                path=target.rel,
            )
        if not note.facts.to:
            raise InvalidRequest(f"{target.rel} is not a reply draft (it has no `to`).", path=target.rel)
        written = writer.update("revise_draft", target.rel, {INSTRUCTION_KEY: line}, [], note.hash)
        return RevisionQueued(
            path=written.path,
            instruction=line,
            hash=written.hash,
            note=(
                "H0 rewrites the draft in Drafts/ once it has been left alone for REVISE_SETTLE_SECONDS, while h0 watch "
                "runs (or at the next h0 sweep), with the configured LLM; read it again with read_note."
            ),
        )
