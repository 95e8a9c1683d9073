"""While H0 works through a burst, the drafting index leaves H0's own writes to its mail folders for
an idle moment (h0.vault.own_writes: `more_coming`, `idle`): no look-up of the owner's knowledge reads
those folders. Everything else — a new email, the owner's People note — is taken in at once, and the
open emails a reply lists are right meanwhile: one archived since is gone, one H0 updated says so."""

from __future__ import annotations

from pathlib import Path

from h0.drafting.indexed import IndexKnowledge
from h0.vault import Vault
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex

DANA = "dana@example.com"


def indexed(index: VaultIndex) -> set[str]:
    return {path for (path,) in index.db.rows("SELECT path FROM docs")}


def test_h0_s_own_mail_writes_wait_for_idle_and_the_rest_is_taken_in_at_once(vault_dir: Path, tmp_path: Path):
    vault = Vault(vault_dir)
    index = VaultIndex.open(vault_dir, tmp_path / "state", Disclosure(("journal",)))
    knowledge = IndexKnowledge(index)
    knowledge.takes_in(vault.written)
    busy = [True]
    vault.written.more_coming = lambda: busy[0]

    for name in ("a", "b", "c"):  # three emails arrive from Dana (not H0's writes)
        (vault_dir / f"Needs_Action/EMAIL_{name}.md").write_text(
            f"---\ntype: email\nstatus: pending\nfrom: Dana <{DANA}>\nsubject: About {name}\n---\nHello\n"
        )
    index.changed([f"Needs_Action/EMAIL_{n}.md" for n in "abc"])
    index.sync()  # what a drafting look-up does first
    assert sorted(e.path for e in knowledge.pending([DANA])) == [f"Needs_Action/EMAIL_{n}.md" for n in "abc"]

    # H0 triages them in a burst: a draft for a, b delegated, c archived; the owner edits a People note.
    draft = vault.write_note("Drafts/REPLY_EMAIL_a.md", {"type": "draft", "to": DANA}, "Hi Dana\n")
    vault.written.wrote(draft.path, draft.hash, draft.frontmatter, draft.body)
    updated = vault.update_frontmatter("Needs_Action/EMAIL_b.md", {"status": "delegated"})
    vault.written.wrote(updated.path, updated.hash, updated.frontmatter, updated.body)
    marked = vault.update_frontmatter("Needs_Action/EMAIL_c.md", {"priority": "low"})  # H0 wrote it there first
    vault.written.wrote(marked.path, marked.hash, marked.frontmatter, marked.body)
    moved = vault.move_note("Needs_Action/EMAIL_c.md", "Done/", set_frontmatter={"status": "done"})
    archived = vault.read_note(moved.destination)
    vault.written.wrote(archived.path, archived.hash, archived.frontmatter, archived.body)
    (vault_dir / "People").mkdir(exist_ok=True)
    (vault_dir / "People/Dana.md").write_text(f"---\nemail: {DANA}\n---\nDana runs ops.\n")
    index.changed([draft.path, updated.path, "Needs_Action/EMAIL_c.md", moved.destination, "People/Dana.md"])
    index.sync()

    assert index.notes_for_address(DANA)[0] == "People/Dana.md"  # the owner's note: at once
    assert not {draft.path, archived.path} & indexed(index)  # H0's own writes: later
    assert "Needs_Action/EMAIL_c.md" in indexed(index)  # its move away too
    # The open emails are right meanwhile: c is gone from Needs_Action/, b is delegated (H0 wrote so).
    assert [e.path for e in knowledge.pending([DANA])] == ["Needs_Action/EMAIL_a.md"]

    vault.written.idle()  # still busy: idle is the daemon's call only when its queue is empty
    busy[0] = False
    vault.written.idle()
    assert {draft.path, archived.path} <= indexed(index)
    assert "Needs_Action/EMAIL_c.md" not in indexed(index)
    assert [e.path for e in knowledge.pending([DANA])] == ["Needs_Action/EMAIL_a.md"]


def test_after_a_burst_the_running_daemon_s_index_holds_every_note_as_the_vault_does(vault_dir: Path):
    """A real daemon triages a burst (its own drafts and updates wait while the queue holds work); once
    its queue is empty, the drafting index holds exactly the notes of the mail folders on disk."""
    import os
    import threading

    from h0.pipeline import signals
    from h0.triage import Triager, ensure_rules_file
    from tests.pipeline.harness import running_daemon, settings_for, wait_until

    ensure_rules_file(vault_dir)
    staging = vault_dir.parent / "staging"
    staging.mkdir()
    count = 80
    for i in range(count):
        (staging / f"EMAIL_{i}.md").write_text(
            f"---\ntype: email\nstatus: pending\nmessage_id: m{i}\nthread_id: t{i}\n"
            f"from: 'Dana <dana{i % 7}@example.com>'\nsubject: 'Friday {i}?'\n---\nCould we meet on Friday?\n"
        )
    decided: set[str] = set()

    def on_decided(sender, path, **_):
        decided.add(path)

    signals.triage_decided.connect(on_decided, weak=False)
    try:
        with running_daemon(vault_dir, triager=Triager.from_settings(settings_for(vault_dir), vault_dir)) as daemon:
            for path in staging.iterdir():
                os.rename(path, vault_dir / "Needs_Action" / path.name)
            assert wait_until(lambda: len(decided) >= count, timeout=60)
            idle = threading.Event()
            daemon.vault.written.when_idle(idle.set)  # runs after the index's own idle task
            assert idle.wait(30)
            assert daemon.ctx is not None and daemon.ctx.drafting is not None
            index = daemon.ctx.drafting.knowledge.index
            index.sync()  # what any look-up does first (it does not take in what waits for idle)
            rows = {path for (path,) in index.db.rows("SELECT path FROM docs")}
    finally:
        signals.triage_decided.disconnect(on_decided)
    mail = ("Needs_Action", "Drafts", "Done")
    on_disk = {f"{folder}/{f.name}" for folder in mail for f in (vault_dir / folder).glob("*.md")}
    assert len(on_disk) == 2 * count  # an email and its draft each
    assert {row for row in rows if row.split("/")[0] in mail} == on_disk


def test_writes_left_for_idle_are_taken_in_once_no_daemon_says_when_it_is_idle(vault_dir: Path, tmp_path: Path):
    vault = Vault(vault_dir)
    index = VaultIndex.open(vault_dir, tmp_path / "state", Disclosure(("journal",)))
    knowledge = IndexKnowledge(index)
    knowledge.takes_in(vault.written)
    vault.written.more_coming = lambda: True
    draft = vault.write_note("Drafts/REPLY_EMAIL_a.md", {"type": "draft", "to": DANA}, "Hi Dana\n")
    vault.written.wrote(draft.path, draft.hash, draft.frontmatter, draft.body)
    index.changed([draft.path])
    index.sync()
    assert draft.path not in indexed(index)
    knowledge.takes_in(None)  # the daemon stopped watching (h0.drafting.service.watching)
    index.sync()
    assert draft.path in indexed(index)
