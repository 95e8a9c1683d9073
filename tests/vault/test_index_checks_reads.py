"""A note read from disk and judged by the vault index that holds its very bytes (VaultIndex.checking: the
vault server's read_note) gets the gate's answer, for every note of a vault holding each kind of private
note; bytes the index does not hold yet are judged by the gate itself, and a change another process made
to the shared index counts at the next read, because the index's version comes with the note's row."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from h0.vault import Vault
from h0.vault.disclosure import Disclosure, thread_keys
from h0.vault.index import VaultIndex

KNOWLEDGE = Path(__file__).resolve().parents[1] / "fixtures" / "knowledge_vault"

# Each kind of private note, and the notes private only through one of them (its thread, its person).
PRIVATE = {
    "Health/visit.md": "---\ntitle: Visit\n---\nIn a private folder.\n",
    "Notes/marked.md": "---\ntitle: Marked\nprivate: true\n---\nMarked.\n",
    "Notes/tagged.md": "---\ntags: [work, private/health]\n---\nA nested tag.\n",
    "Notes/inline.md": "---\ntitle: Inline\n---\nThe text says #private here.\n",
    "Notes/broken.md": "---\ntitle: Therapy: session 3\n---\nDoes not parse.\n",
    "Done/EMAIL_secret.md": "---\ntype: email\nmessage_id: <s1@x>\nthread_id: T-secret\nprivate: true\n---\nSecret.\n",
    "Done/EMAIL_reply.md": "---\ntype: email\nin_reply_to: <s1@x>\nthread_id: T-secret\n---\nSame thread.\n",
    "Drafts/REPLY_secret.md": "---\ntype: draft\nsource: '[[EMAIL_secret]]'\n---\nA draft answering it.\n",
    "People/Dr Quill.md": "---\nemail: quill@clinic.example\nprivate: true\n---\nMy therapist.\n",
    "Done/EMAIL_clinic.md": "---\ntype: email\nfrom: Clinic <quill@clinic.example>\n---\nAppointment.\n",
}
PUBLIC = {
    "Done/EMAIL_open.md": "---\ntype: email\nmessage_id: <o1@x>\nthread_id: T-open\n---\nAn open thread.\n",
    "Drafts/REPLY_open.md": "---\ntype: draft\nsource: '[[EMAIL_open]]'\n---\nA draft answering it.\n",
    "Notes/plain.md": "Only a body, no properties.\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    root = tmp_path / "vault"
    shutil.copytree(KNOWLEDGE, root)
    for rel, text in {**PRIVATE, **PUBLIC}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return Vault(root)


def _gate_says(index: VaultIndex, vault: Vault, rel: str) -> str | None:
    """The gate's own answer, every part asked of it: what read_note answered before the index could."""
    note = vault.read_note(rel)
    keys = thread_keys(rel, note.frontmatter)
    return index.gate.why(rel, note.frontmatter, index.private_keys(keys, besides=rel), note.body)


def _checked(index: VaultIndex, vault: Vault, rel: str) -> tuple[bool, str | None]:
    check = index.checking()
    note = vault.read_note(rel, lent=check.lend)
    return check.held, check.why_private(note.path, note.frontmatter, note.body)


def test_a_read_the_index_holds_gets_the_gates_answer_for_every_note(vault: Vault, tmp_path: Path):
    index = VaultIndex.open(vault.root, tmp_path / "state", Disclosure(("health",)))
    rels = sorted(p.relative_to(vault.root).as_posix() for p in vault.root.rglob("*.md"))
    assert len(rels) > 25
    held = []
    for rel in rels:
        if rel == "Notes/broken.md":
            continue  # it cannot be read at all: read_note refuses it with its line (tests/security)
        was_held, why = _checked(index, vault, rel)
        if was_held:
            held.append(rel)
        assert (why is None) == (_gate_says(index, vault, rel) is None), rel
        assert (why is not None) == (rel in PRIVATE or rel == "Notes/Salary bands.md"), rel
    # Every note with properties, read as the index holds it (one without has no parse to lend: the gate judges it).
    with_properties = [r for r in rels if (vault.root / r).read_bytes().startswith(b"---\n") and r != "Notes/broken.md"]
    assert held == with_properties


def test_bytes_the_index_does_not_hold_yet_are_judged_by_the_gate(vault: Vault, tmp_path: Path):
    index = VaultIndex.open(vault.root, tmp_path / "state", Disclosure(()))
    assert _checked(index, vault, "Done/EMAIL_open.md") == (True, None)
    # Marked private by the owner a moment ago; the index has not been told (its watcher has not reported yet).
    path = vault.root / "Done/EMAIL_open.md"
    path.write_text(path.read_text(encoding="utf-8").replace("type: email", "type: email\nprivate: true"))
    held, why = _checked(index, vault, "Done/EMAIL_open.md")
    assert not held and why is not None and "mark it private" in why


def test_another_processs_change_to_the_shared_index_counts_at_the_next_read(vault: Vault, tmp_path: Path):
    ours = VaultIndex.open(vault.root, tmp_path / "state", Disclosure(()))
    assert _checked(ours, vault, "Drafts/REPLY_open.md") == (True, None)
    # The daemon (another process, its own connection to the same index file) indexes the email marked private.
    theirs = VaultIndex(vault.root, ours.db.path, Disclosure(()))
    email = vault.root / "Done/EMAIL_open.md"
    email.write_text(email.read_text(encoding="utf-8").replace("---\nAn open", "private: true\n---\nAn open"))
    theirs.changed(["Done/EMAIL_open.md"])
    theirs.sync()
    # Our process was told nothing, and the draft's bytes are the ones it holds: the version that came with the
    # draft's row is new, so the private notes are found again, and the draft is of a private thread now.
    held, why = _checked(ours, vault, "Drafts/REPLY_open.md")
    assert held and why is not None and "private thread" in why


def test_a_read_after_the_index_file_went_bad_is_still_judged(vault: Vault, tmp_path: Path):
    index = VaultIndex.open(vault.root, tmp_path / "state", Disclosure(()))
    assert index.db.path is not None
    index.db.path.write_bytes(b"not a database at all" * 300)
    held, why = _checked(index, vault, "Done/EMAIL_reply.md")
    assert held and why is not None and "private thread" in why  # rebuilt before the look-up
    assert _checked(index, vault, "Done/EMAIL_open.md") == (True, None)
