"""The vault domain on a real temporary directory: read, write, move, list, search."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from h0.errors import Conflict, InvalidRequest, NotFound, ParseError, PermissionDenied
from h0.vault import Vault
from h0.vault.note import MAX_NOTE_BYTES

NOTE = "---\nstatus: pending\nzip: '01234'\nwhen: 2026-11-21\ntags: [a, b]\n---\n# Hello\n\nBody text.\n"


def put(vault_dir: Path, rel: str, text: str | bytes) -> Path:
    path = vault_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


# ---------------------------------------------------------------- read / write


def test_write_then_read_returns_identical_frontmatter_and_body(vault: Vault):
    fm = {"to": "bob@example.com", "subject": "Héllo", "cc": ["a@x.org"], "n": 3, "ok": True, "none": None}
    body = "Line one\n\n- item\n---\nnot frontmatter\n"
    written = vault.write_note("Drafts/reply.md", fm, body)
    read = vault.read_note("Drafts/reply.md")
    assert read.frontmatter == fm and read.body == body
    assert read.hash == written.hash


def test_rewriting_what_was_read_is_byte_identical(vault: Vault, vault_dir: Path):
    raw = "\ufeff---\r\nstatus: pending   # keep me\r\nanswer: yes\r\nzip: 01234\r\n---\r\nCRLF body\r\n"
    path = put(vault_dir, "Needs_Action/x.md", raw)
    note = vault.read_note("Needs_Action/x.md")
    vault.write_note(note.path, note.frontmatter, note.body)
    assert path.read_bytes() == raw.encode()


def test_editing_one_key_leaves_every_other_byte_alone(vault: Vault, vault_dir: Path):
    path = put(vault_dir, "Needs_Action/x.md", NOTE)
    note = vault.update_frontmatter("Needs_Action/x.md", {"status": "done"})
    assert path.read_text() == NOTE.replace("status: pending", "status: done")
    assert note.frontmatter["when"] == "2026-11-21"


def test_a_note_without_frontmatter_reads_as_an_empty_mapping_and_stays_without(vault: Vault, vault_dir: Path):
    path = put(vault_dir, "Done/plain.md", "Just text\n")
    note = vault.read_note("Done/plain.md")
    assert note.frontmatter == {} and note.body == "Just text\n"
    vault.write_note(note.path, {}, "Just text, edited\n")
    assert path.read_text() == "Just text, edited\n"


def test_if_match_refuses_a_write_when_the_human_edited_the_note_in_between(vault: Vault, vault_dir: Path):
    path = put(vault_dir, "Drafts/d.md", NOTE)
    seen = vault.read_note("Drafts/d.md")
    path.write_text(NOTE.replace("Body text.", "The human's edit."))  # Obsidian saves meanwhile
    with pytest.raises(Conflict):
        vault.write_note("Drafts/d.md", {"status": "done"}, seen.body, if_match=seen.hash)
    assert "The human's edit." in path.read_text()


def test_if_match_with_the_current_hash_writes(vault: Vault, vault_dir: Path):
    put(vault_dir, "Drafts/d.md", NOTE)
    seen = vault.read_note("Drafts/d.md")
    vault.write_note("Drafts/d.md", {**seen.frontmatter, "status": "done"}, seen.body, if_match=seen.hash)
    assert vault.read_note("Drafts/d.md").frontmatter["status"] == "done"


def test_a_write_over_the_bytes_the_caller_read_still_refuses_when_the_human_edited_the_note_in_between(
    vault: Vault, vault_dir: Path
):
    """Given the caller passes the bytes it read (the mail server's filing: no second read of the note), when the
    human saved in between, then nothing is written: the check before the rename reads the file, not the bytes."""
    path = put(vault_dir, "Done/d.md", NOTE)
    read = path.read_bytes()
    seen = vault.read_note("Done/d.md")
    path.write_text(NOTE.replace("Body text.", "The human's edit."))
    with pytest.raises(Conflict):
        vault.write_note("Done/d.md", {"status": "sent"}, seen.body, if_match=seen.hash, read=read)
    assert "The human's edit." in path.read_text() and "status: pending" in path.read_text()


def test_a_write_over_the_bytes_the_caller_read_keeps_untouched_keys_byte_for_byte(vault: Vault, vault_dir: Path):
    path = put(vault_dir, "Done/d.md", NOTE)
    seen = vault.read_note("Done/d.md")
    vault.write_note(
        "Done/d.md", {**seen.frontmatter, "status": "sent"}, seen.body, if_match=seen.hash, read=NOTE.encode()
    )
    assert path.read_text() == NOTE.replace("status: pending", "status: sent")


def test_bytes_that_are_not_the_matched_version_are_not_written_over(vault: Vault, vault_dir: Path):
    """`read` bytes whose hash is not `if_match` are ignored: the note on disk is what the write composes over."""
    path = put(vault_dir, "Done/d.md", NOTE)
    seen = vault.read_note("Done/d.md")
    stale = NOTE.replace("zip: '01234'", "zip: 'other'").encode()
    vault.write_note("Done/d.md", {**seen.frontmatter, "status": "sent"}, seen.body, if_match=seen.hash, read=stale)
    assert path.read_text() == NOTE.replace("status: pending", "status: sent")


def test_create_only_refuses_to_replace(vault: Vault, vault_dir: Path):
    put(vault_dir, "Drafts/d.md", NOTE)
    with pytest.raises(Conflict):
        vault.write_note("Drafts/d.md", {}, "x", create_only=True)
    assert (vault_dir / "Drafts/d.md").read_text() == NOTE


def test_write_creates_missing_folders_and_leaves_no_temp_files(vault: Vault, vault_dir: Path):
    vault.write_note("Projects/2026/plan.md", {"a": 1}, "x")
    assert (vault_dir / "Projects/2026/plan.md").is_file()
    assert [p.name for p in (vault_dir / "Projects/2026").iterdir()] == ["plan.md"]


def test_write_keeps_the_files_permissions(vault: Vault, vault_dir: Path):
    path = put(vault_dir, "Drafts/d.md", NOTE)
    path.chmod(0o640)
    vault.write_note("Drafts/d.md", {"a": 1}, "x")
    assert path.stat().st_mode & 0o777 == 0o640


def test_concurrent_writers_never_leave_a_partial_file(vault: Vault, vault_dir: Path):
    bodies = [f"writer {i}\n" * 2000 for i in range(8)]
    errors: list[Exception] = []

    def writer(body: str) -> None:
        try:
            for _ in range(20):
                vault.write_note("Drafts/race.md", {"w": body[:8]}, body)
        except Exception as exc:  # noqa: BLE001 - a thread's failure is reported by the test below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(b,)) for b in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    note = vault.read_note("Drafts/race.md")
    assert note.body in bodies


# ---------------------------------------------------------------- bad input


def test_reading_a_missing_note_is_not_found(vault: Vault):
    with pytest.raises(NotFound) as info:
        vault.read_note("Needs_Action/nope.md")
    assert info.value.details["path"] == "Needs_Action/nope.md"


@pytest.mark.parametrize(
    "frontmatter_text",
    ["---\nstatus: pending\nno closing line\n", "---\nstatus: [unclosed\n---\nbody\n", "---\na: 1\na: 2\n---\n"],
)
def test_corrupt_frontmatter_is_a_parse_error_naming_the_path(vault: Vault, vault_dir: Path, frontmatter_text):
    put(vault_dir, "Approved/bad.md", frontmatter_text)
    with pytest.raises(ParseError) as info:
        vault.read_note("Approved/bad.md")
    assert info.value.details["path"] == "Approved/bad.md"


def test_a_non_utf8_file_is_a_parse_error(vault: Vault, vault_dir: Path):
    put(vault_dir, "Done/latin1.md", "---\nname: Ren\xe9\n---\n".encode("latin-1"))
    with pytest.raises(ParseError, match="not UTF-8"):
        vault.read_note("Done/latin1.md")


def test_a_50_mb_note_is_refused_without_reading_it_whole(vault: Vault, vault_dir: Path):
    path = vault_dir / "Done/huge.md"
    with open(path, "wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    with pytest.raises(InvalidRequest, match="MB"):
        vault.read_note("Done/huge.md")


def test_writing_a_50_mb_body_is_refused_and_nothing_is_written(vault: Vault, vault_dir: Path):
    with pytest.raises(InvalidRequest):
        vault.write_note("Drafts/huge.md", {}, "x" * (MAX_NOTE_BYTES + 1))
    assert not (vault_dir / "Drafts/huge.md").exists()


def test_a_frontmatter_value_that_is_not_yaml_representable_changes_nothing(vault: Vault, vault_dir: Path):
    path = put(vault_dir, "Drafts/d.md", NOTE)
    with pytest.raises(InvalidRequest):
        vault.write_note("Drafts/d.md", {"x": object()}, "body")
    assert path.read_text() == NOTE


def test_a_nul_byte_in_the_body_is_refused(vault: Vault):
    with pytest.raises(InvalidRequest):
        vault.write_note("Drafts/x.md", {}, "a\x00b")


# ---------------------------------------------------------------- move


def test_move_renames_atomically_and_the_source_is_gone(vault: Vault, vault_dir: Path):
    put(vault_dir, "Needs_Action/e.md", NOTE)
    moved = vault.move_note("Needs_Action/e.md", "Done/e.md")
    assert (moved.source, moved.destination) == ("Needs_Action/e.md", "Done/e.md")
    assert not (vault_dir / "Needs_Action/e.md").exists()
    assert (vault_dir / "Done/e.md").read_text() == NOTE


def test_move_into_a_folder_keeps_the_name_and_creates_the_folder(vault: Vault, vault_dir: Path):
    put(vault_dir, "Needs_Action/e.md", NOTE)
    assert vault.move_note("Needs_Action/e.md", "Archive/2026/").destination == "Archive/2026/e.md"
    put(vault_dir, "Needs_Action/f.md", NOTE)
    assert vault.move_note("Needs_Action/f.md", "Done").destination == "Done/f.md"


def test_move_onto_an_existing_note_is_a_conflict_and_changes_nothing(vault: Vault, vault_dir: Path):
    put(vault_dir, "Needs_Action/e.md", "source\n")
    put(vault_dir, "Done/e.md", "already here\n")
    with pytest.raises(Conflict):
        vault.move_note("Needs_Action/e.md", "Done/e.md")
    assert (vault_dir / "Needs_Action/e.md").read_text() == "source\n"
    assert (vault_dir / "Done/e.md").read_text() == "already here\n"


def test_move_with_overwrite_replaces(vault: Vault, vault_dir: Path):
    put(vault_dir, "Needs_Action/e.md", "source\n")
    put(vault_dir, "Done/e.md", "already here\n")
    vault.move_note("Needs_Action/e.md", "Done/e.md", overwrite=True)
    assert (vault_dir / "Done/e.md").read_text() == "source\n"


def test_move_of_a_missing_note_is_not_found(vault: Vault):
    with pytest.raises(NotFound):
        vault.move_note("Needs_Action/nope.md", "Done/")


# ---------------------------------------------------------------- list


def test_list_is_sorted_skips_dotfiles_and_non_notes(vault: Vault, vault_dir: Path):
    for name in ["b.md", "a.md", ".hidden.md", "c.txt", ".a.md.123.tmp"]:
        put(vault_dir, f"Done/{name}", NOTE)
    (vault_dir / "Done/sub").mkdir()
    put(vault_dir, "Done/sub/deep.md", NOTE)
    assert [n.path for n in vault.list_notes("Done").notes] == ["Done/a.md", "Done/b.md"]
    assert [n.path for n in vault.list_notes("Done", recursive=True).notes] == [
        "Done/a.md",
        "Done/b.md",
        "Done/sub/deep.md",
    ]


def test_filter_matches_scalars_and_list_membership(vault: Vault, vault_dir: Path):
    put(vault_dir, "Needs_Action/1.md", "---\nstatus: pending\ntags: [x, y]\n---\n")
    put(vault_dir, "Needs_Action/2.md", "---\nstatus: done\ntags:\n  - y\n---\n")
    put(vault_dir, "Needs_Action/3.md", "---\nflag: true\ncount: 3\n---\n")
    put(vault_dir, "Needs_Action/4.md", "no frontmatter\n")
    paths = lambda f: [n.path for n in vault.list_notes("Needs_Action", f).notes]
    assert paths("status:pending") == ["Needs_Action/1.md"]
    assert paths("tags:y") == ["Needs_Action/1.md", "Needs_Action/2.md"]
    assert paths("tags:x") == ["Needs_Action/1.md"]
    assert paths("flag:true") == ["Needs_Action/3.md"]
    assert paths("count:3") == ["Needs_Action/3.md"]
    assert paths(" status : done ") == ["Needs_Action/2.md"]


def test_a_word_field_filter_folds_case_and_space_but_not_other_values(vault: Vault, vault_dir: Path):
    put(vault_dir, "Needs_Action/1.md", "---\nstatus: Prüfen\n---\n")
    put(vault_dir, "Needs_Action/2.md", "---\nstatus: [x, Needs_Info]\n---\n")
    put(vault_dir, "Needs_Action/3.md", "---\nstatus: {a: 1}\n---\n")
    put(vault_dir, "Needs_Action/4.md", "---\nstatus:\n---\n")
    paths = lambda f: [n.path for n in vault.list_notes("Needs_Action", f).notes]
    assert paths("status:PRÜFEN") == ["Needs_Action/1.md"]  # beyond ASCII: no byte pre-filter, still folded
    assert paths("status:needs_info") == ["Needs_Action/2.md"]  # membership, folded
    assert paths("status:") == ["Needs_Action/4.md"]  # an empty status; a mapping is no word


def test_a_note_with_corrupt_frontmatter_is_reported_as_skipped_not_hidden(vault: Vault, vault_dir: Path):
    put(vault_dir, "Needs_Action/ok.md", "---\nstatus: pending\n---\n")
    put(vault_dir, "Needs_Action/bad.md", "---\nstatus: [pending\n---\n")
    listing = vault.list_notes("Needs_Action", "status:pending")
    assert [n.path for n in listing.notes] == ["Needs_Action/ok.md"]
    assert listing.skipped[0]["path"] == "Needs_Action/bad.md" and listing.skipped[0]["error"] == "parse_error"


def test_the_frontmatter_cache_notices_a_changed_file(vault: Vault, vault_dir: Path):
    path = put(vault_dir, "Needs_Action/1.md", "---\nstatus: pending\n---\n")
    assert len(vault.list_notes("Needs_Action", "status:pending").notes) == 1
    path.write_text("---\nstatus: done\n---\n")
    os.utime(path, ns=(1, 1))  # even with an old mtime, the size changed
    assert len(vault.list_notes("Needs_Action", "status:pending").notes) == 0


def test_list_limit_reports_the_total_and_truncation(vault: Vault, vault_dir: Path):
    for i in range(5):
        put(vault_dir, f"Done/{i}.md", NOTE)
    listing = vault.list_notes("Done", limit=2)
    assert len(listing.notes) == 2 and listing.total == 5 and listing.truncated


def test_list_of_a_missing_folder_is_not_found(vault: Vault):
    with pytest.raises(NotFound):
        vault.list_notes("Nowhere")


@pytest.mark.parametrize("bad_filter", ["status", ":pending", "   "])
def test_a_malformed_filter_is_invalid(vault: Vault, bad_filter):
    if not bad_filter.strip():
        assert vault.list_notes("Done", bad_filter).total == 0
        return
    with pytest.raises(InvalidRequest):
        vault.list_notes("Done", bad_filter)


# ---------------------------------------------------------------- search


def test_search_is_literal_case_insensitive_with_line_and_snippet(vault: Vault, vault_dir: Path):
    put(vault_dir, "Done/a.md", "---\nsubject: Quarterly NUMBERS\n---\nfirst\nthe (numbers) are in.*\n")
    put(vault_dir, "Done/b.md", "nothing here\n")
    hits, truncated = vault.search_notes("numbers")
    assert [(h.path, h.line, h.snippet) for h in hits] == [("Done/a.md", 2, "subject: Quarterly NUMBERS")]
    hits, _ = vault.search_notes("(numbers) are in.*")
    assert [(h.path, h.line) for h in hits] == [("Done/a.md", 5)] and not truncated


def test_search_ignores_frontmatter_key_names(vault: Vault, vault_dir: Path):
    put(vault_dir, "Done/a.md", "---\nstatus: done\n---\nbody\n")
    assert vault.search_notes("status")[0] == []
    assert [h.path for h in vault.search_notes("done")[0]] == ["Done/a.md"]


def test_search_handles_non_ascii_queries(vault: Vault, vault_dir: Path):
    put(vault_dir, "Done/a.md", "Réunion à ÉTÉ prochain\n")
    assert [h.line for h in vault.search_notes("été")[0]] == [1]


def test_search_caps_results_and_says_so(vault: Vault, vault_dir: Path):
    for i in range(10):
        put(vault_dir, f"Done/{i:02}.md", "needle\n")
    hits, truncated = vault.search_notes("needle", limit=3)
    assert [h.path for h in hits] == ["Done/00.md", "Done/01.md", "Done/02.md"] and truncated


def test_search_snippet_of_a_long_line_is_trimmed_around_the_match(vault: Vault, vault_dir: Path):
    put(vault_dir, "Done/a.md", "x" * 5000 + " needle " + "y" * 5000 + "\n")
    (hit,), _ = vault.search_notes("NEEDLE")
    assert "needle" in hit.snippet and len(hit.snippet) <= 170


def test_search_with_an_empty_query_is_invalid(vault: Vault):
    with pytest.raises(InvalidRequest):
        vault.search_notes("  ")


def test_counts_per_folder(vault: Vault, vault_dir: Path):
    put(vault_dir, "Drafts/a.md", NOTE)
    put(vault_dir, "Drafts/b.md", NOTE)
    assert vault.counts()["Drafts"] == 2 and vault.counts()["Approved"] == 0


def test_paths_outside_the_vault_are_refused_for_every_operation(vault: Vault, tmp_path: Path):
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n")
    for call in (
        lambda: vault.read_note(str(outside)),
        lambda: vault.write_note("../outside.md", {}, "x"),
        lambda: vault.move_note("../outside.md", "Done/"),
        lambda: vault.list_notes("../"),
    ):
        with pytest.raises(PermissionDenied):
            call()
    assert outside.read_text() == "secret\n"


def test_move_can_pick_a_free_name_and_annotate_in_one_call(vault: Vault, vault_dir: Path):
    put(vault_dir, "Done/e.md", "taken\n")
    put(vault_dir, "Needs_Action/e.md", NOTE)
    moved = vault.move_note("Needs_Action/e.md", "Done/", rename_if_exists=True, set_frontmatter={"status": "done"})
    assert moved.destination == "Done/e (2).md"
    assert moved.moved_hash != moved.hash
    assert (vault_dir / "Done/e (2).md").read_text() == NOTE.replace("status: pending", "status: done")
    assert (vault_dir / "Done/e.md").read_text() == "taken\n"


def test_move_with_unrepresentable_frontmatter_moves_nothing(vault: Vault, vault_dir: Path):
    put(vault_dir, "Needs_Action/e.md", NOTE)
    with pytest.raises(InvalidRequest):
        vault.move_note("Needs_Action/e.md", "Done/", set_frontmatter={"x": object()})
    assert (vault_dir / "Needs_Action/e.md").exists() and not (vault_dir / "Done/e.md").exists()


def test_move_of_a_corrupt_note_with_frontmatter_moves_and_warns(vault: Vault, vault_dir: Path):
    put(vault_dir, "Rejected/bad.md", "---\nto: [x\n---\nbody\n")
    moved = vault.move_note("Rejected/bad.md", "Done/", set_frontmatter={"decision": "rejected"})
    assert moved.destination == "Done/bad.md" and moved.warning and "not updated" in moved.warning


def test_a_listing_mentioning_key_names_reads_only_the_notes_whose_frontmatter_holds_one(vault: Vault, vault_dir: Path):
    """`mentioning` looks at the frontmatter's bytes before any parse: a note without the words is left out
    unread (a fresh `h0 status` over thousands of emails), one with them is parsed as always — and so is
    a note whose frontmatter runs past the probe, or one already parsed, whose cached parse is asked."""
    put(
        vault_dir,
        "Needs_Action/plain.md",
        "---\nstatus: pending\nsubject: follow up soon\n---\nfollow_up in the body\n",
    )
    put(vault_dir, "Needs_Action/owed.md", "---\nstatus: pending\nfollow_up: reply_owed\n---\nx\n")
    put(vault_dir, "Needs_Action/snoozed.md", "---\nsnooze_until: 2030-01-01\n---\nx\n")
    long_value = "a" * (20 * 1024)
    put(vault_dir, "Needs_Action/long.md", f"---\nnote: {long_value}\nfollow_up: reply_owed\n---\nx\n")
    put(vault_dir, "Needs_Action/broken.md", "---\nfollow_up: [unclosed\n---\nx\n")
    words = ("snooze_", "follow_up")
    listing = vault.list_notes("Needs_Action", with_frontmatter=True, mentioning=words)
    assert [n.path for n in listing.notes] == [
        "Needs_Action/long.md",
        "Needs_Action/owed.md",
        "Needs_Action/snoozed.md",
    ]
    assert [s["path"] for s in listing.skipped] == ["Needs_Action/broken.md"]  # said, as always
    vault.list_notes("Needs_Action", with_frontmatter=True)  # every note parsed and cached now
    again = vault.list_notes("Needs_Action", with_frontmatter=True, mentioning=words)
    assert [n.path for n in again.notes] == [n.path for n in listing.notes]


def test_a_listing_takes_the_index_s_parse_of_a_file_as_it_was_read_and_reads_a_changed_one(vault_dir: Path):
    """Given the vault index's parses lent to a listing, then a note whose file is still as the index read
    it lists the index's answer, and one changed since, or whose frontmatter the index could not read, is
    read from disk (its error said as always)."""
    from h0.vault.index import VaultIndex

    put(vault_dir, "Needs_Action/a.md", "---\nstatus: pending\n---\nx\n")
    put(vault_dir, "Needs_Action/b.md", "---\nstatus: pending\n---\nx\n")
    put(vault_dir, "Needs_Action/c.md", "---\nstatus: [unclosed\n---\nx\n")
    index = VaultIndex.open(vault_dir, vault_dir.parent / "state")
    put(vault_dir, "Needs_Action/b.md", "---\nstatus: needs_info\n---\nchanged since\n")
    rows = index.parses(["Needs_Action"])
    assert sorted(row[0] for row in rows) == ["Needs_Action/a.md", "Needs_Action/b.md"]  # c: no parse to lend
    vault = Vault(vault_dir)
    # The index's row for a.md, marked so that the listing's answer says where it came from.
    vault.lend_parses([(p, m, s, i, '{"status": "as lent"}' if p.endswith("a.md") else f) for p, m, s, i, f in rows])
    listing = vault.list_notes("Needs_Action", with_frontmatter=True)
    assert {n.path: n.frontmatter for n in listing.notes} == {
        "Needs_Action/a.md": {"status": "as lent"},
        "Needs_Action/b.md": {"status": "needs_info"},
    }
    assert [s["path"] for s in listing.skipped] == ["Needs_Action/c.md"]


def test_a_listing_asks_the_index_for_each_parse_it_lacks_and_takes_it_only_while_the_file_is_as_read(
    vault_dir: Path,
):
    """Given a listing asking the vault index note by note (the vault server's: `h0.vault.index.reads.parse_at`), then a
    note whose file is still as the index read it lists the index's answer, one changed since or whose
    frontmatter the index could not read is read from disk, and a note the index never saw is read too."""
    from h0.vault.index import VaultIndex
    from h0.vault.index.reads import parse_at

    put(vault_dir, "Needs_Action/a.md", "---\nstatus: pending\n---\nx\n")
    put(vault_dir, "Needs_Action/b.md", "---\nstatus: pending\n---\nx\n")
    put(vault_dir, "Needs_Action/c.md", "---\nstatus: [unclosed\n---\nx\n")
    index = VaultIndex.open(vault_dir, vault_dir.parent / "state")
    put(vault_dir, "Needs_Action/b.md", "---\nstatus: needs_info\n---\nchanged since\n")
    put(vault_dir, "Needs_Action/d.md", "---\nstatus: new\n---\nx\n")
    assert parse_at(index, "Needs_Action/c.md") is None and parse_at(index, "Needs_Action/d.md") is None
    asked: list[str] = []

    def lender(rel: str) -> tuple[int, int, int, str] | None:
        asked.append(rel)
        row = parse_at(index, rel)
        # The index's row for a.md, marked so that the listing's answer says where it came from.
        return None if row is None else (*row[:3], '{"status": "as lent"}' if rel.endswith("a.md") else row[3])

    vault = Vault(vault_dir)
    vault.lend_parses_from(lender)
    listing = vault.list_notes("Needs_Action", with_frontmatter=True)
    assert {n.path: n.frontmatter for n in listing.notes} == {
        "Needs_Action/a.md": {"status": "as lent"},
        "Needs_Action/b.md": {"status": "needs_info"},
        "Needs_Action/d.md": {"status": "new"},
    }
    assert [s["path"] for s in listing.skipped] == ["Needs_Action/c.md"]
    assert sorted(asked) == [f"Needs_Action/{name}.md" for name in "abcd"]
    asked.clear()
    vault.list_notes("Needs_Action", with_frontmatter=True)
    assert asked == []  # each note, its problem too, is the listing's own cache now, while its file is the same
