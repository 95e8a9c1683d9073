"""The vault server's output models: the contract clients see as `outputSchema`.

Field names follow the spec's data model (NoteContent, NoteList, NoteMatch); extra
fields (`hash`, `line`, `total`, `truncated`, `skipped`) are additions, all optional to
read. A contract test pins these schemas: change them on purpose or not at all.

Clients check each result against its output schema, item by item: the stock Python client
with `jsonschema`, at microseconds per item. So a listing's `notes` are plain path strings
published as a bare array, with no item schema to apply 2,500 times: as the stock Python
client saw a 2,500-note listing, validating, against the reference filesystem server's
`list_directory`, `{path}` objects cost 7.7x, strings with `"items": {"type": "string"}`
3.7x, a bare array 1.6x (scripts/bench). The other lists publish their item schema inline
(`_array_of`: no `$ref`, no nullable `anyOf`, the costliest per item).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema


def _array_of(item: type[BaseModel], description: str | None = None) -> WithJsonSchema:
    """The JSON schema of `list[item]` with the item's (flat) schema inline, no `$defs`."""
    schema: dict[str, Any] = {"type": "array", "items": item.model_json_schema()}
    if description:
        schema["description"] = description
    return WithJsonSchema(schema)


class NoteContent(BaseModel):
    """A note: its vault-relative path, frontmatter as JSON data, body, and content hash."""

    path: str = Field(description="Vault-relative path, e.g. 'Needs_Action/EMAIL_123.md'.")
    frontmatter: dict[str, Any] = Field(description="Parsed YAML frontmatter; dates as ISO 8601 strings.")
    body: str = Field(description="Everything after the frontmatter block, byte for byte.")
    hash: str = Field(description="Content hash; pass it back as if_match to write without losing edits.")


class WrittenNote(BaseModel):
    """Where a note is and the hash of its new content (returned by update_frontmatter)."""

    model_config = ConfigDict(title="NoteRef")  # the name on the wire, unchanged for clients

    path: str
    hash: str


class NoteMatch(BaseModel):
    """One note a search found, at its first match."""

    path: str = Field(description="Vault-relative path.")
    snippet: str = Field(description="The matching line.")
    line: int = Field(description="1-based line number of the match.")


class SkippedNote(BaseModel):
    path: str
    error: str
    message: str


class NoteList(BaseModel):
    """What list_notes returns."""

    notes: Annotated[
        list[str],
        WithJsonSchema(
            {"type": "array", "description": "Vault-relative paths of the notes (strings), sorted by path."}
        ),
    ]
    total: int = Field(description="How many notes matched (may exceed len(notes) when truncated).")
    truncated: bool = Field(description="True when more notes matched than were returned.")
    skipped: Annotated[
        list[SkippedNote], _array_of(SkippedNote, "Notes left out because their frontmatter could not be read.")
    ] = Field(default_factory=list)


class SearchResults(BaseModel):
    """What search_notes returns."""

    notes: Annotated[list[NoteMatch], _array_of(NoteMatch)]
    total: int = Field(description="How many notes are returned (the search stops at limit).")
    truncated: bool = Field(
        description="True when more notes matched than were returned: ask again with a larger offset for the next page."
    )
    offset: int = Field(default=0, description="How many matching notes this page skipped.")


class RelatedNote(BaseModel):
    """One note related to the text or note asked about, and why."""

    path: str = Field(description="Vault-relative path.")
    score: float = Field(description="Higher is more related.")
    why: list[str] = Field(description="What connects it: the same person's address, a link, shared words.")


class RelatedNotes(BaseModel):
    """What related_notes returns, best first."""

    notes: Annotated[list[RelatedNote], _array_of(RelatedNote)]


class AddressNotes(BaseModel):
    """What notes_for_address returns: People notes (the address in their email/emails/aliases) first."""

    address: str
    notes: list[str]


class ContextEntry(BaseModel):
    """One piece of the owner's knowledge a reply may draw on."""

    kind: str = Field(description="profile, lessons, person, past_reply, linked, related or similar_reply.")
    label: str = Field(description="A [[link]] to the note, or which sent mail it is.")
    path: str | None = Field(default=None, description="The vault note it came from, if any.")
    why: str = Field(description="Why it is here (the sender's People note, shares the words …).")
    text: str = Field(description="The text as a prompt gets it (cut to the budget).")


class SchedulingContext(BaseModel):
    """The email asks to meet: the owner's free times to propose (times only, never an event's title)."""

    asks_to_meet: bool
    has_calendar: bool = Field(description="False: no calendar is configured; propose no time, ask the owner.")
    minutes: int
    days_asked: str | None = Field(description="The days the email names ('next week'), if any.")
    owner_timezone: str
    sender_timezone: str | None = Field(description="The sender's zone when it differs from the owner's.")
    proposed_slots: list[str] = Field(description="2–3 free times to propose, ISO 8601 with UTC offset.")
    free_slots: list[str] = Field(description="Other free times on those days, ISO 8601.")
    questions: list[str]
    instructions: str = Field(description="What a drafter is told about times (as H0's own prompt).")


class DraftContextResult(BaseModel):
    """What draft_context returns: the context H0 itself drafts a reply to this email from."""

    email: str = Field(description="The email note the reply answers.")
    recipient: str
    greeting: str = Field(description="How the owner opens a mail to this recipient ('' when unknown).")
    sign_off: str = Field(description="How the owner closes it ('' when unknown).")
    voice_from: str = Field(description="Where the greeting and sign-off come from.")
    items: Annotated[list[ContextEntry], _array_of(ContextEntry)]
    omitted: list[str] = Field(description="What did not fit in the budget, or was left out.")
    budget_chars: int
    used_chars: int
    problems: list[str] = Field(description="Why the profile or memory note could not be used, if so.")
    scheduling: SchedulingContext | None = Field(
        default=None, description="When the email asks to meet: the free times a reply may propose."
    )


class RevisionQueued(BaseModel):
    """What revise_draft returns: the instruction is on the draft; H0 rewrites it in Drafts/."""

    path: str
    instruction: str
    hash: str = Field(description="The draft's content hash with the instruction written.")
    note: str = Field(description="When and how the rewrite happens.")


class MoveResult(BaseModel):
    moved: bool
    source: str
    destination: str = Field(description="Where the note is now (may differ from the request with rename_if_exists).")
    moved_hash: str | None = Field(default=None, description="Content hash as moved (when set_frontmatter was given).")
    hash: str | None = Field(default=None, description="Content hash after set_frontmatter was applied.")
    warning: str | None = Field(
        default=None, description="Set when the note moved but set_frontmatter could not apply."
    )


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


class ItemError(BaseModel):
    """Why one item of a batch failed: the typed error the single-note tool would have raised."""

    path: str
    error: str = Field(description="The error code: not_found, conflict, parse_error, permission_denied, …")
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class NotesRead(BaseModel):
    """What read_notes returns: the notes that could be read, in the order asked, and why the others could not."""

    notes: Annotated[list[NoteContent], _array_of(NoteContent)]
    errors: Annotated[list[ItemError], _array_of(ItemError)] = Field(default_factory=list)


class ChangeResult(BaseModel):
    """The outcome of one change of apply_changes, in the order given."""

    ok: bool
    path: str = Field(description="Where the note is now (a move's destination), or the path the change named.")
    hash: str | None = Field(default=None, description="Its content hash after the change.")
    source: str | None = Field(default=None, description="A move's source.")
    moved_hash: str | None = Field(default=None, description="A move's content hash as moved (with set_frontmatter).")
    warning: str | None = Field(default=None, description="A move happened but set_frontmatter could not apply.")
    error: str | None = Field(default=None, description="When ok is false: the error code.")
    message: str | None = None
    details: dict[str, Any] | None = None


class ChangesApplied(BaseModel):
    """What apply_changes returns: one result per change."""

    results: Annotated[list[ChangeResult], _array_of(ChangeResult)]
