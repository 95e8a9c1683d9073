"""Path confinement: every hostile path gets a typed error and touches nothing."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from h0.errors import InvalidRequest, PermissionDenied
from h0.vault import Vault
from h0.vault.paths import PathResolver


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("../../etc/passwd", PermissionDenied),
        ("/etc/passwd", PermissionDenied),
        ("Drafts/../../x.md", PermissionDenied),
        ("a\x00b.md", InvalidRequest),
        ("", InvalidRequest),
        (".", InvalidRequest),
        (42, InvalidRequest),
    ],
)
def test_hostile_paths_are_refused(vault_dir: Path, raw, error):
    with pytest.raises(error):
        PathResolver(vault_dir).resolve(raw, note=True)


@pytest.mark.parametrize("target", [".obsidian/app.json", ".obsidian/x.md", ".git/config.md", "Drafts/.hidden.md"])
def test_writes_into_dot_folders_are_refused(vault: Vault, vault_dir: Path, target):
    (vault_dir / ".obsidian").mkdir()
    (vault_dir / ".obsidian/app.json").write_text("{}")
    with pytest.raises((PermissionDenied, InvalidRequest)):
        vault.write_note(target, {}, "x")
    assert (vault_dir / ".obsidian/app.json").read_text() == "{}"
    assert not (vault_dir / ".git").exists()


def test_a_symlink_inside_the_vault_pointing_outside_is_refused(vault: Vault, vault_dir: Path, tmp_path: Path):
    secret_dir = tmp_path / "secret"
    secret_dir.mkdir()
    (secret_dir / "s.md").write_text("secret\n")
    os.symlink(secret_dir, vault_dir / "Linked")
    os.symlink(secret_dir / "s.md", vault_dir / "Done/link.md")
    for call in (
        lambda: vault.read_note("Linked/s.md"),
        lambda: vault.read_note("Done/link.md"),
        lambda: vault.write_note("Linked/new.md", {}, "x"),
        lambda: vault.write_note("Done/link.md", {}, "x"),
    ):
        with pytest.raises(PermissionDenied):
            call()
    assert (secret_dir / "s.md").read_text() == "secret\n"
    assert not (secret_dir / "new.md").exists()


def test_a_symlink_that_stays_inside_the_vault_is_fine(vault: Vault, vault_dir: Path):
    (vault_dir / "Done/real.md").write_text("hi\n")
    os.symlink(vault_dir / "Done", vault_dir / "Alias")
    assert vault.read_note("Alias/real.md").body == "hi\n"


def test_absolute_paths_inside_the_vault_are_accepted(vault: Vault, vault_dir: Path):
    vault.write_note(str(vault_dir / "Drafts/abs.md"), {}, "x")
    assert vault.read_note(str(vault_dir / "Drafts/abs.md")).path == "Drafts/abs.md"


def test_dot_dot_inside_the_vault_is_normalised(vault: Vault):
    vault.write_note("Drafts/../Done/n.md", {}, "x")
    assert vault.read_note("Done/n.md").path == "Done/n.md"


def test_the_vault_name_prefix_from_the_spec_examples_is_accepted(vault: Vault):
    vault.write_note("vault/Needs_Action/test.md", {"status": "pending"}, "x")
    assert vault.read_note("Needs_Action/test.md").frontmatter == {"status": "pending"}


def test_unicode_names_are_compared_in_nfc(vault: Vault, vault_dir: Path):
    nfd = unicodedata.normalize("NFD", "Café.md")
    (vault_dir / "Done" / nfd).write_text("décomposé\n")
    note = vault.read_note("Done/Café.md")  # asked for in NFC
    assert note.body == "décomposé\n" and note.path == "Done/Café.md"


def test_notes_must_be_markdown(vault: Vault):
    with pytest.raises(InvalidRequest):
        vault.write_note("Drafts/script.sh", {}, "rm -rf /")
