"""The vault server's output models: the contract clients see as `outputSchema`.

Field names follow the spec's data model (NoteContent, NoteList, NoteMatch); extra
fields (`hash`, `line`, `total`, `truncated`, `skipped`) are additions, all optional to
read. A contract test pins these schemas: change them on purpose or not at all.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class NoteContent(BaseModel):
    """A note: its vault-relative path, frontmatter as JSON data, body, and content hash."""

    path: str = Field(description="Vault-relative path, e.g. 'Needs_Action/EMAIL_123.md'.")
    frontmatter: dict[str, Any] = Field(description="Parsed YAML frontmatter; dates as ISO 8601 strings.")
    body: str = Field(description="Everything after the frontmatter block, byte for byte.")
    hash: str = Field(description="Content hash; pass it back as if_match to write without losing edits.")


class NoteRef(BaseModel):
    """Where a note is and the hash of its new content (returned by update_frontmatter)."""

    path: str
    hash: str


class NoteMatch(BaseModel):
    path: str = Field(description="Vault-relative path.")
    snippet: str | None = Field(default=None, description="The matching line (search_notes only).")
    line: int | None = Field(default=None, description="1-based line number of the match (search_notes only).")


class SkippedNote(BaseModel):
    path: str
    error: str
    message: str


class NoteList(BaseModel):
    notes: list[NoteMatch]
    total: int = Field(description="How many notes matched (may exceed len(notes) when truncated).")
    truncated: bool = Field(description="True when more notes matched than were returned.")
    skipped: list[SkippedNote] = Field(
        default_factory=list, description="Notes left out because their frontmatter could not be read."
    )


class MoveResult(BaseModel):
    moved: bool
    source: str
    destination: str = Field(description="Where the note is now (may differ from the request with rename_if_exists).")
    moved_hash: str | None = Field(default=None, description="Content hash as moved (when set_frontmatter was given).")
    hash: str | None = Field(default=None, description="Content hash after set_frontmatter was applied.")
    warning: str | None = Field(default=None, description="Set when the note moved but set_frontmatter could not apply.")


class HealthStatus(BaseModel):
    status: str = Field(description="'ok', or 'degraded' when the vault is not writable.")
    server: str
    version: str
    vault_root: str
    writable: bool
    obsidian: bool = Field(description="Whether the vault has an .obsidian/ folder (opened in Obsidian).")
    folders: dict[str, int] = Field(description="Notes per H0 folder.")
    uptime_seconds: float
    problems: list[str] = Field(default_factory=list)
