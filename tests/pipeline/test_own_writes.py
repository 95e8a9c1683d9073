"""H0's own writes come back as file events: a note whose bytes are the ones H0 wrote is known
without parsing it again (h0.vault.own_writes, `Vault.read_known`), and anything else — the
human's edit right after, a note swapped in with the same size and time — is read as always."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from pathlib import Path

from h0.handlers.context import NoteOps
from h0.handlers.revise import revise_draft
from h0.pipeline import routes
from h0.vault import Moved, Note, Vault
from h0.vault.api import LocalVault, Move, Update, Write
from h0.vault.index.extract import Signature, extract
from h0.vault.note import content_hash
from h0.vault.own_writes import OwnWrites
from tests.pipeline.harness import events, frontmatter, running_daemon, wait_until
from tests.pipeline.test_pipeline_triage import email, triager

EMAIL = "Needs_Action/EMAIL_a1.md"
DRAFT = "Drafts/REPLY_EMAIL_a1.md"
FM = {"type": "email", "status": "pending", "from": "Dana <dana@example.com>", "subject": "Friday?"}


def written_email(vault_dir: Path, body: str) -> tuple[Vault, NoteOps, Note]:
    """The daemon's note operations on a vault whose own writes are remembered, after H0 wrote the email
    note EMAIL with `body`, and that note as read back."""
    vault = Vault(vault_dir)
    ops = NoteOps(LocalVault(vault), written=vault.written)
    ops.write(EMAIL, FM, body)
    (read,) = ops.read_many([EMAIL])
    assert not isinstance(read, Exception)
    return vault, ops, read


def test_what_h0_wrote_is_known_as_a_parse_would_read_it_and_routed_without_parsing(vault_dir: Path):
    vault, ops, read = written_email(vault_dir, "Could we move the review?\n")
    ops.apply(
        [
            Update(EMAIL, {"status": "awaiting_approval", "draft": DRAFT}, ("subject",), if_match=read.hash),
            Write(DRAFT, {"type": "draft", "status": "pending_approval"}, "h0: shorter\n\nHi Dana,\n"),
        ],
        read=[read],
    )
    for path in (EMAIL, DRAFT):
        known, parsed = vault.read_known(path), vault.read_note(path)
        assert known is not parsed and known is vault.read_known(path)  # the one H0 wrote: no parse
        assert (known.frontmatter, known.body, known.hash) == (parsed.frontmatter, parsed.body, parsed.hash)
    assert not routes.TRIAGE.wanted(routes.reader(vault, EMAIL))  # decided: the event ends here
    again = routes.route_for(DRAFT, vault)
    assert again is not None and again.handler is revise_draft  # the `h0:` line is seen


def test_an_update_not_made_over_the_note_read_is_not_taken_as_known(vault_dir: Path):
    vault, ops, read = written_email(vault_dir, "Hello\n")
    ops.update(EMAIL, {"status": "archived"})  # no guard: the note it merged into is not known here
    assert vault.written.known(EMAIL, vault.read_note(EMAIL).hash) is None  # so its first read parses it
    assert vault.read_known(EMAIL).facts.status.word == "archived"
    ops.apply([Update(EMAIL, {"status": "replied"})], read=[read])  # unguarded too
    assert vault.written.known(EMAIL, vault.read_note(EMAIL).hash) is None
    assert vault.read_known(EMAIL).facts.status.word == "replied"
    assert frontmatter(vault_dir, EMAIL)["status"] == "replied"


def test_a_note_replaced_by_another_with_the_same_size_and_time_is_not_mistaken_for_h0_s(vault_dir: Path):
    vault = Vault(vault_dir)
    ops = NoteOps(LocalVault(vault), written=vault.written)
    ops.write(EMAIL, {**FM, "status": "replied"}, "Hello\n")
    path = vault_dir / EMAIL
    before = os.stat(path)
    assert not routes.TRIAGE.wanted(routes.reader(vault, EMAIL))
    swapped = path.read_bytes().replace(b"status: replied", b"status: pending")
    assert len(swapped) == before.st_size
    path.write_bytes(swapped)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert routes.TRIAGE.wanted(routes.reader(vault, EMAIL))  # its hash is not H0's: read, and pending


def test_the_record_is_bounded_and_a_big_note_is_not_kept():
    written = OwnWrites(limit=2)
    for k in range(3):
        written.wrote(f"Drafts/{k}.md", f"h{k}", {"status": "pending_approval"}, "Hi\n")
    assert len(written) == 2 and written.known("Drafts/0.md", "h0") is None
    assert written.known("Drafts/2.md", "h2") is not None and written.known("Drafts/2.md", "other") is None
    written.wrote("Drafts/2.md", "big", {}, "x" * 100_000)
    assert written.known("Drafts/2.md", "h2") is None and written.known("Drafts/2.md", "big") is None
    # What JSON would not carry as a parse reads it back is not kept: read again instead.
    written.wrote("Drafts/3.md", "h3", {"when": dt.datetime(2026, 11, 26, tzinfo=dt.UTC)}, "Hi\n")
    written.wrote("Drafts/4.md", "h4", {1: "one"}, "Hi\n")
    assert written.known("Drafts/3.md", "h3") is None and written.known("Drafts/4.md", "h4") is None


def test_given_a_running_daemon_the_human_s_edit_right_after_h0_s_draft_is_acted_on(vault_dir: Path):
    with running_daemon(vault_dir, triager=triager(vault_dir)) as daemon:
        email(
            vault_dir,
            "EMAIL_a1.md",
            sender="Dana Rivera <dana@example.com>",
            subject="Friday?",
            body="Could we move the review to Friday?",
        )
        draft = vault_dir / DRAFT
        assert wait_until(draft.exists)
        assert wait_until(lambda: frontmatter(vault_dir, EMAIL).get("status") == "awaiting_approval")
        # The draft on disk is the one H0 wrote, known to the daemon by its hash...
        assert daemon.vault.written.known(DRAFT, content_hash(draft.read_bytes())) is not None
        # ...and the human rejects it at once: a different hash, so read, and archived.
        draft.write_text(draft.read_text().replace("status: pending_approval", "status: rejected"))
        assert wait_until(lambda: events(vault_dir, event="draft_rejected"))
        assert wait_until(lambda: not draft.exists())
    (decision,) = events(vault_dir, event="triage_decision")  # decided once
    assert decision["note"] == EMAIL


def test_a_note_h0_filed_with_keys_set_is_known_where_it_went(vault_dir: Path):
    vault, ops, read = written_email(vault_dir, "Hello\n")
    (moved,) = ops.apply([Move(EMAIL, "Done/", rename_if_exists=True, set_frontmatter={"status": "done"})], read=[read])
    assert isinstance(moved, Moved)
    known, parsed = vault.read_known(moved.destination), vault.read_note(moved.destination)
    assert known is vault.read_known(moved.destination)
    assert (known.frontmatter, known.body, known.hash) == (parsed.frontmatter, parsed.body, parsed.hash)


def test_the_index_takes_in_what_h0_wrote_as_a_parse_would_see_it(vault_dir: Path):
    vault = Vault(vault_dir)
    ops = NoteOps(LocalVault(vault), written=vault.written)
    fm = {"type": "draft", "status": "pending_approval", "to": "Dana <dana@example.com>", "source": "[[EMAIL_a1]]"}
    ops.write(DRAFT, fm, "Hi Dana, see [[Project Atlas]]; Bob (bob@example.org) agrees.\n")
    data = (vault_dir / DRAFT).read_bytes()
    signature = Signature(0, len(data), 0)
    asked: list[str] = []

    def known(rel: str, note_hash: str) -> Note | None:
        asked.append(rel)
        return vault.written.known(rel, note_hash)

    taken, parsed = extract(DRAFT, data, signature, known), extract(DRAFT, data, signature)
    assert asked == [DRAFT] and taken.hash is not None and known(DRAFT, taken.hash) is not None
    assert dataclasses.asdict(taken) == dataclasses.asdict(parsed)
    assert taken.links and taken.addresses


def test_a_listing_takes_h0_s_write_as_written_and_the_human_s_edit_as_it_is(vault_dir: Path):
    vault = Vault(vault_dir)
    ops = NoteOps(LocalVault(vault), written=vault.written)
    ops.write(EMAIL, {**FM, "status": "replied", "labels": ("INBOX",)}, "Hello\n")  # a tuple: JSON's list
    assert vault.read_known(EMAIL).frontmatter == vault.read_note(EMAIL).frontmatter
    assert listed(vault, "status:replied") == listed(vault, "labels:INBOX") == [EMAIL]
    (vault_dir / EMAIL).write_text((vault_dir / EMAIL).read_text().replace("status: replied", "status: pending\n"))
    assert listed(vault, "status:pending") == [EMAIL] and listed(vault, "status:replied") == []


def listed(vault: Vault, query: str) -> list[str]:
    return [note.path for note in vault.list_notes("Needs_Action", query).notes]
