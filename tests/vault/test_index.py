"""The vault index (issue 21): the same notes a full scan finds, ranked and paged; never stale; people
by address; private notes kept back; and every hostile input a clear skip, never a crash or a hang."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from h0.vault import Vault
from h0.vault.disclosure import Disclosure, folder_keys
from h0.vault.index import VaultIndex, walk_notes
from h0.vault.index.db import SCHEMA_VERSION
from h0.vault.listing import MAX_FOLDER_DEPTH
from tests.properties import examples

WORDS = [
    "invoice",
    "Invoices",
    "reinvoiced",
    "Atlas",
    "atlas-2",
    "Dana",
    "dana@example.com",
    "café",
    "CAFE",
    "quarterly",
    "e-mail",
    "Straße",
    "日本語",
    "re:",
    "x",
    "a_b",
    "--",
    "    ",
    "Ünïcödé",
]


def note(vault_dir: Path, rel: str, body: str, **frontmatter: str) -> Path:
    path = vault_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    head = "".join(f"{k}: {v}\n" for k, v in frontmatter.items())
    path.write_text(f"---\n{head}---\n{body}" if frontmatter else body, encoding="utf-8")
    return path


@pytest.fixture
def index(vault_dir: Path, tmp_path: Path) -> VaultIndex:
    return VaultIndex.open(vault_dir, tmp_path / "state")


def paths(page) -> set[str]:
    return {hit.path for hit in page.hits}


def scan(vault_dir: Path, query: str, folder: str = "") -> set[str]:
    hits, _ = Vault(vault_dir).search_notes(query, directory=folder, limit=100_000)
    return {hit.path for hit in hits}


# -- complete, ranked, paged ---------------------------------------------------------------------


def test_a_search_finds_exactly_what_a_full_scan_finds_inside_words_across_punctuation_and_in_values(
    vault_dir: Path, tmp_path: Path
):
    for i, text in enumerate(
        [
            "The invoice is late.",
            "Three INVOICES attached",
            "reinvoiced twice",
            "an e-mail, from Dana",
            "Café au lait",
            "nothing here",
            "dana@example.com wrote",
            "Straße 5",
        ]
    ):
        note(vault_dir, f"Done/n{i}.md", text + "\n", subject=f"note {i}", invoice_no="INV-7" if i == 5 else "none")
    index = VaultIndex.open(vault_dir, tmp_path / "state")
    for query in [
        "invoice",
        "voice",
        "INVOI",
        "e-mail",
        "-mail",
        "mail, fr",
        "Dana",
        "café",
        "cafe",
        "straße",
        "inv-7",
        "subject",
        "note 3",
        " dana",
        "@example.c",
        ":",
        "zzz",
    ]:
        assert paths(index.search(query, limit=1000)) == scan(vault_dir, query), query


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    bodies=st.lists(st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join), min_size=1, max_size=8),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)
    .map(" ".join)
    .flatmap(
        lambda q: st.integers(0, max(0, len(q) - 1)).flatmap(
            lambda start: st.integers(start + 1, len(q)).map(lambda end: q[start:end])
        )
    ),
)
def test_property_any_fragment_of_any_text_is_found_exactly_as_the_scan_finds_it(
    vault_dir: Path, tmp_path: Path, bodies, query
):
    for old in (vault_dir / "Done").glob("p*.md"):
        old.unlink()
    for i, body in enumerate(bodies):
        note(vault_dir, f"Done/p{i}.md", body + "\n")
    index = VaultIndex.open(vault_dir, tmp_path / "prop-state")
    if not query.strip():
        return  # a blank query is refused by both (check_query)
    assert paths(index.search(query, limit=1000)) == scan(vault_dir, query)


def test_results_are_ranked_and_paged_without_gaps_or_repeats(vault_dir: Path, index: VaultIndex):
    for i in range(12):
        note(vault_dir, f"Done/r{i:02}.md", "atlas " * (i + 1) + "\n")
    index.reconcile()
    first = index.search("atlas", limit=5)
    second = index.search("atlas", limit=5, offset=5)
    third = index.search("atlas", limit=5, offset=10)
    assert first.more and second.more and not third.more
    seen = [h.path for page in (first, second, third) for h in page.hits]
    assert len(seen) == len(set(seen)) == 12
    assert seen[0] == "Done/r11.md"  # the note that says it most often ranks first


def test_a_folder_search_stays_in_the_folder(vault_dir: Path, index: VaultIndex):
    note(vault_dir, "Done/a.md", "atlas\n")
    note(vault_dir, "Drafts/b.md", "atlas\n")
    note(vault_dir, "Done_archive/c.md", "atlas\n")  # a sibling whose name starts the same
    index.reconcile()
    assert paths(index.search("atlas", folder="Done")) == {"Done/a.md"} == scan(vault_dir, "atlas", "Done")


# -- never stale ---------------------------------------------------------------------------------


def test_a_note_written_moved_or_deleted_a_moment_ago_is_found_or_not_as_the_file_system_says(
    vault_dir: Path, index: VaultIndex
):
    path = note(vault_dir, "Drafts/new.md", "quillfeather escrow\n")
    index.changed([str(path)])
    assert paths(index.search("quillfeather")) == {"Drafts/new.md"}
    os.rename(path, vault_dir / "Done/new.md")
    index.changed(["Drafts/new.md", "Done/new.md"])
    assert paths(index.search("quillfeather")) == {"Done/new.md"}
    (vault_dir / "Done/new.md").unlink()
    index.changed(["Done/new.md"])
    assert index.search("quillfeather").hits == []


def test_a_watcher_s_absolute_path_is_taken_as_the_note_below_the_root_and_nothing_outside_it(
    vault_dir: Path, index: VaultIndex, tmp_path: Path
):
    """Events name notes by absolute path: below the root they are the vault's notes (however spelt with
    "." or ".." inside it), and a path that leaves the root is never taken for one."""
    outside = tmp_path / "outside.md"
    outside.write_text("quillfeather\n")
    inner = note(vault_dir, "Drafts/inner.md", "quillfeather\n")
    index.changed([f"{vault_dir}/Drafts/../../{outside.name}", f"{vault_dir}/./Drafts/inner.md", str(inner)])
    assert paths(index.search("quillfeather")) == {"Drafts/inner.md"}


def test_a_result_whose_file_changed_since_indexing_is_read_again_before_it_is_returned(
    vault_dir: Path, index: VaultIndex
):
    path = note(vault_dir, "Done/x.md", "atlas budget\nline two\n")
    index.reconcile()
    path.write_text("nothing about it now\n")  # no event: the index still has the old text
    assert index.search("atlas").hits == []  # checked against the bytes on disk, not the index
    path.write_text("first line\natlas again, moved down\n")
    (hit,) = index.search("atlas").hits
    assert (hit.line, hit.snippet) == (2, "atlas again, moved down")


def test_a_vault_edited_while_h0_was_stopped_is_right_at_once(vault_dir: Path, tmp_path: Path):
    note(vault_dir, "Done/old.md", "atlas\n")
    VaultIndex.open(vault_dir, tmp_path / "state").db.db().close()
    (vault_dir / "Done/old.md").unlink()
    note(vault_dir, "Done/new.md", "atlas\n")
    assert paths(VaultIndex.open(vault_dir, tmp_path / "state").search("atlas")) == {"Done/new.md"}


# -- people and private notes --------------------------------------------------------------------


def test_a_person_is_found_by_address_people_notes_first(vault_dir: Path, index: VaultIndex):
    note(vault_dir, "Needs_Action/EMAIL_1.md", "Hello\n", type="email", **{"from": '"Dana Rivera <Dana@Example.com>"'})
    note(vault_dir, "People/Dana Rivera.md", "Runs Atlas.\n", email="dana@example.com")
    note(vault_dir, "Projects/Atlas.md", "Contact: dana@example.com\n")
    note(vault_dir, "People/Lee.md", "Knows Dana.\n", emails="[lee@example.com, 'Lee <lee@work.example>']")
    index.reconcile()
    found = index.notes_for_address("DANA@example.com ")
    assert found[0] == "People/Dana Rivera.md"
    assert set(found) == {"People/Dana Rivera.md", "Needs_Action/EMAIL_1.md", "Projects/Atlas.md"}
    assert index.notes_for_address("lee@work.example") == ["People/Lee.md"]


def test_private_notes_are_never_returned_unless_asked(vault_dir: Path, tmp_path: Path):
    note(vault_dir, "Journal/day.md", "atlas worries\n")
    note(vault_dir, "Done/secret.md", "atlas salary\n", private="true")
    note(vault_dir, "Done/open.md", "atlas plan\n")
    index = VaultIndex.open(vault_dir, tmp_path / "state", Disclosure(folder_keys(["Journal/"])))
    assert paths(index.search("atlas")) == {"Done/open.md"}
    assert paths(index.search("atlas", include_private=True)) == {"Done/open.md", "Done/secret.md", "Journal/day.md"}
    assert index.is_private("Journal/day.md") and index.is_private("Done/secret.md")
    assert not index.is_private("Done/open.md")
    assert all(r.path == "Done/open.md" for r in index.related(text="atlas plan worries salary"))


def test_logs_hidden_folders_and_non_notes_are_never_indexed(vault_dir: Path, index: VaultIndex):
    note(vault_dir, "Logs/h0.md", "atlas\n")
    note(vault_dir, ".obsidian/plugins/x.md", "atlas\n")
    note(vault_dir, ".h0/cache.md", "atlas\n")
    note(vault_dir, "Done/a.txt", "atlas\n")
    note(vault_dir, "Done/a.md", "atlas\n")
    index.reconcile()
    assert paths(index.search("atlas")) == {"Done/a.md"} and index.count() == 1


# -- hostile input: a skip or a clear error, never a crash, a hang or a lost note --------------


@pytest.mark.timeout(30)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifos_sockets_and_devices_named_md_are_never_opened(vault_dir: Path, index: VaultIndex):
    os.mkfifo(vault_dir / "Done/fifo.md")  # opening it for reading would wait for a writer forever
    note(vault_dir, "Done/real.md", "atlas\n")
    index.reconcile()
    index.changed(["Done/fifo.md"])
    assert paths(index.search("atlas")) == {"Done/real.md"}
    assert stat.S_ISFIFO(os.lstat(vault_dir / "Done/fifo.md").st_mode)


@pytest.mark.timeout(60)
def test_a_thousand_folders_deep_tree_answers(vault_dir: Path, index: VaultIndex):
    fd = os.open(vault_dir, os.O_RDONLY)
    os.mkdir("Deep", dir_fd=fd)
    for _ in range(1000):  # relative to the folder above: no path of 1,000 parts is ever spelled out
        child = os.open("Deep" if _ == 0 else "d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
        os.mkdir("d", dir_fd=fd)
    bottom = os.open("bottom.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(bottom, b"atlas\n")
    os.close(bottom)
    os.close(fd)
    note(vault_dir, "Deep/d/top.md", "atlas\n")
    try:
        index.reconcile()
        found = paths(index.search("atlas"))
        assert found == scan(vault_dir, "atlas") == {"Deep/d/top.md"}  # past MAX_FOLDER_DEPTH: neither lists it
        assert all(rel.count("/") <= MAX_FOLDER_DEPTH + 1 for rel, _, _ in walk_notes(vault_dir))
    finally:
        # Python 3.11's shutil.rmtree recurses once a level: pytest could not remove this tree later.
        (vault_dir / "Deep/d/top.md").unlink()
        bottom = str(vault_dir / "Deep") + "/d" * 999  # the last folder opened; one more, empty, below it
        os.unlink(bottom + "/bottom.md")
        for level in range(1000, -1, -1):
            os.rmdir(str(vault_dir / "Deep") + "/d" * level)


def test_a_20_mb_note_invalid_utf8_and_binary_bytes_are_skipped_or_searched_as_the_scan_does(
    vault_dir: Path, index: VaultIndex
):
    (vault_dir / "Done/huge.md").write_bytes(b"atlas " * (20 * 1024 * 1024 // 6))
    (vault_dir / "Done/latin1.md").write_bytes("caf\xe9 atlas\n".encode("latin-1"))
    (vault_dir / "Done/binary.md").write_bytes(b"\x00\xff\xfeatlas\x00\x01")
    index.reconcile()
    every = index.search("atlas", include_private=True)
    assert paths(every) == scan(vault_dir, "atlas") == {"Done/latin1.md", "Done/binary.md"}
    # No note reader takes them (they are not text): private until they are, like unreadable frontmatter.
    assert paths(index.search("atlas")) == set() and index.is_private("Done/latin1.md")


def test_notes_renamed_deleted_and_rewritten_during_a_rebuild_end_as_the_disk_says(vault_dir: Path, tmp_path: Path):
    for i in range(300):
        note(vault_dir, f"Done/m{i:03}.md", f"atlas {i}\n")
    index = VaultIndex(vault_dir, tmp_path / "index.db")
    walk = walk_notes(vault_dir)
    consumed = [next(walk) for _ in range(10)]  # a rebuild under way…
    os.rename(vault_dir / "Done/m299.md", vault_dir / "Done/moved.md")
    (vault_dir / "Done/m298.md").unlink()
    (vault_dir / "Done/m297.md").write_text("rewritten\n")
    assert consumed
    index.reconcile()
    index.changed(["Done/m299.md", "Done/moved.md", "Done/m298.md", "Done/m297.md"])  # …and the watcher's events
    assert paths(index.search("atlas", limit=1000)) == scan(vault_dir, "atlas")


@pytest.mark.parametrize("damage", ["deleted", "truncated", "corrupted"])
def test_an_index_file_deleted_truncated_or_corrupted_while_in_use_is_rebuilt_with_one_log_line(
    vault_dir: Path, tmp_path: Path, damage: str, caplog_loguru
):
    note(vault_dir, "Done/a.md", "atlas\n")
    index = VaultIndex(vault_dir, tmp_path / "index.db")
    index.reconcile()
    path = tmp_path / "index.db"
    if damage == "deleted":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    elif damage == "truncated":
        other = sqlite3.connect(path)  # the log copied into the file first: its pages are only there
        other.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        other.close()
        with open(path, "r+b") as handle:
            handle.truncate(100)
    else:
        with open(path, "r+b") as handle:
            handle.seek(0)
            handle.write(b"this is not a database" * 300)
    assert paths(index.search("atlas")) == {"Done/a.md"}
    assert paths(index.search("atlas")) == {"Done/a.md"}
    assert len([m for m in caplog_loguru if "rebuilding it" in m]) == 1


def _update_many(vault: str, db: str, start: int) -> None:
    index = VaultIndex(Path(vault), Path(db))
    for i in range(start, start + 60):
        note(Path(vault), f"Done/c{i:03}.md", f"atlas {i}\n")
        index.changed([f"Done/c{i:03}.md"])
        index.sync()


def test_two_processes_updating_the_index_at_once_leave_it_right(vault_dir: Path, tmp_path: Path):
    db = tmp_path / "index.db"
    VaultIndex(vault_dir, db).reconcile()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_update_many, args=(str(vault_dir), str(db), start)) for start in (0, 60)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    index = VaultIndex(vault_dir, db)
    assert index.count() == 120
    assert paths(index.search("atlas", limit=1000)) == scan(vault_dir, "atlas")


def _newest_first_page(wal: Path, page_size: int) -> bytes:
    """The newest copy of page 1 in an SQLite write-ahead log (a 32-byte header, then frames of a 24-byte
    header, whose first 4 bytes are the page number, and the page)."""
    data = wal.read_bytes()
    found = b""
    for at in range(32, len(data) - 24 - page_size + 1, 24 + page_size):
        if int.from_bytes(data[at : at + 4], "big") == 1:
            found = data[at + 24 : at + 24 + page_size]
    assert found, "page 1 is in the log"
    return found


def test_another_process_checkpointing_the_index_is_not_taken_for_damage(
    vault_dir: Path, tmp_path: Path, caplog_loguru
):
    """A checkpoint copies the log's pages into the file in page order: for an instant the file's header counts
    pages the file does not hold yet. That file is whole (SQLite reads the rest from the log): not rebuilt."""
    note(vault_dir, "Done/a.md", "atlas\n")
    db = tmp_path / "index.db"
    index = VaultIndex(vault_dir, db)
    index.reconcile()
    other = sqlite3.connect(db)  # another process's writes, left in the log (no checkpoint yet)
    other.execute("PRAGMA wal_autocheckpoint = 0")
    other.execute("CREATE TABLE IF NOT EXISTS filler (x BLOB)")
    other.executemany("INSERT INTO filler VALUES (?)", [(os.urandom(2000),) for _ in range(40)])
    other.commit()
    page_size = other.execute("PRAGMA page_size").fetchone()[0]
    first = _newest_first_page(Path(f"{db}-wal"), page_size)
    assert int.from_bytes(first[28:32], "big") * page_size > db.stat().st_size  # the header counts pages to come
    with open(db, "r+b") as handle:  # the checkpoint's first write: page 1, before the file grows
        handle.write(first)
    assert paths(index.search("atlas")) == {"Done/a.md"}
    assert not [m for m in caplog_loguru if "rebuilding it" in m]
    assert other.execute("SELECT count(*) FROM filler").fetchone() == (40,)  # the other process's rows still there
    other.close()


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="root reads and writes everything")
def test_a_read_only_vault_still_answers(vault_dir: Path, tmp_path: Path):
    note(vault_dir, "Done/a.md", "atlas\n")
    for folder in [vault_dir, *vault_dir.rglob("*")]:
        folder.chmod(folder.stat().st_mode & ~0o222)
    try:
        assert paths(VaultIndex.open(vault_dir, tmp_path / "state").search("atlas")) == {"Done/a.md"}
    finally:
        for folder in [vault_dir, *vault_dir.rglob("*")]:
            folder.chmod(folder.stat().st_mode | 0o200)


def test_a_state_folder_that_cannot_be_written_keeps_the_index_in_memory(vault_dir: Path, tmp_path: Path):
    note(vault_dir, "Done/a.md", "atlas\n")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the state folder should be")
    index = VaultIndex.open(vault_dir, blocked)
    assert index.db.path is None and paths(index.search("atlas")) == {"Done/a.md"}


def test_the_index_file_is_an_sqlite_database_outside_the_vault(vault_dir: Path, tmp_path: Path):
    index = VaultIndex.open(vault_dir, tmp_path / "state")
    assert index.db.path is not None and vault_dir not in index.db.path.parents
    with sqlite3.connect(index.db.path) as db:
        assert db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone() == (SCHEMA_VERSION,)
