"""A burst's email is read by the vault index and by triage's routing: whichever reads it second takes
the first one's parse of the same bytes (h0.vault.own_writes `parsed`, by content hash) — and anything
else, the owner's edit a moment later, a file swapped in with the same size and time, bytes that are
not UTF-8, is read and parsed as always."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from h0.errors import ParseError
from h0.pipeline import routes
from h0.vault import Vault
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex
from h0.vault.index.extract import Signature, extract
from h0.vault.note import Note, content_hash, parse
from h0.vault.own_writes import OwnWrites

EMAIL = "Needs_Action/EMAIL_b1.md"
TEXT = (
    "---\ntype: email\nstatus: pending\nfrom: Dana <dana@example.com>\nsubject: Friday?\nthread_id: t1\n---\n"
    "Could we move the review to Friday? Ask ops@example.org.\n"
)


def vault_and_index(vault_dir: Path, tmp_path: Path) -> tuple[Vault, VaultIndex]:
    """The daemon's vault and its drafting index, sharing what H0 wrote and parsed (as `takes_in` does)."""
    vault = Vault(vault_dir)
    index = VaultIndex.open(vault_dir, tmp_path / "state", Disclosure(("journal",)))
    index.written = vault.written
    return vault, index


def arrive(vault_dir: Path, text: str, rel: str = EMAIL) -> Path:
    path = vault_dir / rel
    path.write_text(text, encoding="utf-8")
    return path


def test_the_index_s_parse_of_an_arrived_email_is_triage_s_read(vault_dir: Path, tmp_path: Path):
    """Given an email the index took in first, when triage's routing reads it, then it takes the index's
    parse of the same bytes — the note a parse gives, untriaged."""
    vault, index = vault_and_index(vault_dir, tmp_path)
    path = arrive(vault_dir, TEXT)
    index.changed([str(path)])
    assert index.notes_for_address("dana@example.com") == [EMAIL]
    digest = content_hash(path.read_bytes())
    kept = vault.written.known(EMAIL, digest)
    assert kept is not None and len(vault.written) == 0  # a parse, not a write of H0's
    read = vault.read_known(EMAIL)
    assert read is kept
    fresh = parse(path.read_bytes(), EMAIL)
    assert (read.frontmatter, read.body, read.hash) == (fresh.frontmatter, fresh.body, fresh.hash)
    assert routes.TRIAGE.wanted(routes.reader(vault, EMAIL))


def test_triage_s_read_is_the_index_s_parse_and_indexes_the_same(vault_dir: Path, tmp_path: Path):
    """Given an email triage's routing read first, when the index takes it in, then it indexes exactly
    what it would from its own parse."""
    vault, _ = vault_and_index(vault_dir, tmp_path)
    path = arrive(vault_dir, TEXT)
    read = vault.read_known(EMAIL)
    data = path.read_bytes()
    asked: list[Note | None] = []

    def known(rel: str, note_hash: str) -> Note | None:
        asked.append(vault.written.known(rel, note_hash))
        return asked[-1]

    taken, own = (
        extract(EMAIL, data, Signature(0, len(data), 0), known),
        extract(EMAIL, data, Signature(0, len(data), 0)),
    )
    (given,) = asked
    assert given is not None and (given.frontmatter, given.body, given.hash) == (read.frontmatter, read.body, read.hash)
    assert dataclasses.asdict(taken) == dataclasses.asdict(own)
    assert ("ops@example.org", "body") in taken.addresses


def test_the_owner_s_edit_a_moment_later_is_read(vault_dir: Path, tmp_path: Path):
    """Given an email the index parsed, when the owner edits it at once, then triage reads the edit and
    the index indexes it."""
    vault, index = vault_and_index(vault_dir, tmp_path)
    path = arrive(vault_dir, TEXT)
    index.changed([str(path)])
    index.sync()
    arrive(vault_dir, TEXT.replace("status: pending", "status: needs_info").replace("dana@", "dara@"))
    index.changed([str(path)])
    assert vault.read_known(EMAIL).facts.status.word == "needs_info"
    assert not routes.TRIAGE.wanted(routes.reader(vault, EMAIL))
    assert index.notes_for_address("dara@example.com") == [EMAIL]
    assert index.notes_for_address("dana@example.com") == []


def test_a_file_swapped_in_with_the_same_size_and_time_is_read(vault_dir: Path, tmp_path: Path):
    """Given an email the index parsed, when another file of the same size and time replaces it, then
    triage and the index read the new bytes (a content hash, never a size or a time, says "the same")."""
    vault, index = vault_and_index(vault_dir, tmp_path)
    path = arrive(vault_dir, TEXT)
    index.changed([str(path)])
    index.sync()
    before = os.stat(path)
    other = arrive(vault_dir, TEXT.replace("dana@", "dani@").replace("pending", "replied"), "other.tmp")
    assert os.stat(other).st_size == before.st_size
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(other, path)
    index.changed([str(path)])
    assert vault.read_known(EMAIL).facts.status.word == "replied"
    assert index.notes_for_address("dani@example.com") == [EMAIL]


def test_bytes_that_are_not_utf8_are_not_taken_as_a_parse(vault_dir: Path, tmp_path: Path):
    """Given an email the index read with a bad byte (indexed with a replacement character), when triage
    reads it, then it gets the parse error a parse gives, once, as always."""
    vault, index = vault_and_index(vault_dir, tmp_path)
    path = vault_dir / EMAIL
    path.write_bytes(TEXT.encode().replace(b"Friday", b"Fr\xffday"))
    index.changed([str(path)])
    assert index.notes_for_address("dana@example.com", include_private=True) == [EMAIL]
    assert index.notes_for_address("dana@example.com") == []  # not text: private until it is (issue 40)
    assert vault.written.known(EMAIL, content_hash(path.read_bytes())) is None
    with pytest.raises(ParseError):
        vault.read_known(EMAIL)


def test_the_parses_kept_are_bounded_by_notes_and_characters():
    written = OwnWrites(limit=3, parsed_chars=1_000)
    for k in range(4):
        written.parsed(Note(f"Needs_Action/{k}.md", {"status": "pending"}, "x" * 300, f"h{k}"))
    assert written.known("Needs_Action/0.md", "h0") is None  # 1,200 characters: the oldest forgotten
    assert all(written.known(f"Needs_Action/{k}.md", f"h{k}") is not None for k in (1, 2, 3))
    for k in range(4, 8):
        written.parsed(Note(f"Needs_Action/{k}.md", {}, "y", f"h{k}"))
    assert [k for k in range(8) if written.known(f"Needs_Action/{k}.md", f"h{k}")] == [5, 6, 7]  # 3 notes at most
    written.parsed(Note("Needs_Action/big.md", {}, "z" * 100_000, "big"))  # a big note is never kept
    assert written.known("Needs_Action/big.md", "big") is None and len(written) == 0  # parses are not writes


def test_a_listing_takes_the_index_s_parse_and_the_owner_s_edit_as_it_is(vault_dir: Path, tmp_path: Path):
    """Given an email the index parsed, when the dashboard lists Needs_Action/ by status, then the note
    is listed as a parse reads it; after the owner's edit, as the edit says."""
    vault, index = vault_and_index(vault_dir, tmp_path)
    path = arrive(vault_dir, TEXT)
    index.changed([str(path)])
    index.sync()
    assert vault.written.remembers(EMAIL)

    def listed(query: str) -> list[str]:
        return [note.path for note in vault.list_notes("Needs_Action", query).notes]

    assert listed("status:pending") == [EMAIL] and listed("status:replied") == []
    arrive(vault_dir, TEXT.replace("status: pending", "status: replied\nlabels: [X]"))
    assert listed("status:replied") == [EMAIL] and listed("status:pending") == []


def test_a_note_h0_is_writing_is_taken_in_by_the_index_once_the_write_is_answered(vault_dir: Path, tmp_path: Path):
    """The vault server's write lands (and its file event arrives) before its answer reaches the daemon:
    while the change is in flight the index leaves the note pending, then takes it in as H0 wrote it
    (`known`, no parse) — and a failed change still lets it go, to be read as any other note."""
    vault, index = vault_and_index(vault_dir, tmp_path)
    draft = "Drafts/REPLY_b1.md"
    fm, body = {"type": "draft", "to": "dana@example.com", "status": "pending_approval"}, "Friday works.\n"
    with vault.written.writing([draft]):
        written = vault.write_note(draft, fm, body)  # the server's write: on disk, not yet answered
        index.changed([draft])
        assert index.notes_for_address("dana@example.com") == []  # not taken in mid-flight
        assert not vault.written.in_flight("Needs_Action/other.md")
    vault.written.wrote(draft, written.hash, fm, body)  # the answer: what H0 wrote there
    assert index.notes_for_address("dana@example.com") == [draft]
    assert vault.written.known(draft, content_hash((vault_dir / draft).read_bytes())) is not None
    with pytest.raises(RuntimeError), vault.written.writing([EMAIL]):
        raise RuntimeError("the vault server went away")
    assert not vault.written.in_flight(EMAIL)
