"""Look-ups that leave folders out (drafting skips H0's mail folders): the index passes over a sender's
emails there without reading them, and still finds every note elsewhere — in any case of the folder's
name, and after a note moves in or out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from h0.vault.index import VaultIndex

MAIL = ("Needs_Action", "Done", "Drafts")
DANA = "dana@example.com"


def note(root: Path, rel: str, frontmatter: str, body: str = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter}\n---\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    note(root, "People/Dana Rivera.md", f"email: {DANA}\ncompany: Quanta", "Dana runs the Quanta Dashboard.")
    note(root, "Archive/2026-01/old thread.md", f"type: email\nfrom: Dana <{DANA}>\nsubject: Old")
    note(root, "needs_action/lower case.md", f"from: {DANA}")  # skipped too: folder names compared in any case
    for i in range(30):
        note(root, f"Needs_Action/EMAIL_{i}.md", f"type: email\nstatus: pending\nfrom: Dana <{DANA}>\nsubject: S{i}")
        note(root, f"Done/EMAIL_d{i}.md", f"type: email\nstatus: done\nfrom: Dana <{DANA}>\nsubject: D{i}")
    return root


def test_given_a_senders_emails_in_the_mail_folders_when_her_notes_are_asked_then_only_the_others_come(vault, tmp_path):
    index = VaultIndex.open(vault, tmp_path / "state")

    found = index.notes_for_address(DANA, skip_folders=MAIL)

    assert found == ["People/Dana Rivera.md", "Archive/2026-01/old thread.md"]
    assert len(index.notes_for_address(DANA)) == 63  # nothing skipped: every note naming her


def test_given_notes_moving_between_folders_when_asked_again_then_each_is_judged_by_where_it_is_now(vault, tmp_path):
    index = VaultIndex.open(vault, tmp_path / "state")
    people = vault / "People" / "Dana Rivera.md"
    filed = vault / "Done" / "Dana Rivera.md"
    os.rename(people, filed)
    email = vault / "Needs_Action" / "EMAIL_3.md"
    kept = vault / "Projects" / "EMAIL_3.md"
    kept.parent.mkdir()
    os.rename(email, kept)
    index.changed([str(people), str(filed), str(email), str(kept)])

    found = index.notes_for_address(DANA, skip_folders=MAIL)

    assert found == ["Archive/2026-01/old thread.md", "Projects/EMAIL_3.md"]


def test_given_the_mail_folders_skipped_when_an_email_is_about_a_person_then_her_people_note_is_found(vault, tmp_path):
    index = VaultIndex.open(vault, tmp_path / "state")

    about = index.about(text="Can we look at the Quanta Dashboard?", addresses=[DANA], skip_folders=MAIL)

    paths = [a.path for a in about]
    assert paths[0] == "People/Dana Rivera.md"
    assert not any(p.split("/", 1)[0] in MAIL for p in paths)


def test_given_an_email_whose_display_name_shows_another_address_then_it_is_not_indexed_as_from_that_address(
    tmp_path,
):
    """`from: '"ceo@bank.com" <x@evil.example>'` is mail from x@evil.example: a look-up of ceo@bank.com (the
    pending emails from the owner's boss, a person's notes) never finds the spoof."""
    root = tmp_path / "vault"
    note(root, "Needs_Action/EMAIL_spoof.md", "type: email\nfrom: '\"ceo@bank.com\" <x@evil.example>'\nsubject: Wire")
    note(root, "Needs_Action/EMAIL_real.md", "type: email\nfrom: CEO <ceo@bank.com>\nsubject: Lunch")
    index = VaultIndex.open(root, tmp_path / "state")

    assert index.notes_for_address("ceo@bank.com") == ["Needs_Action/EMAIL_real.md"]
    assert index.notes_for_address("x@evil.example") == ["Needs_Action/EMAIL_spoof.md"]
