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


def test_a_vault_root_re_pointed_elsewhere_after_start_is_caught(tmp_path: Path):
    """Given the vault is a symlink to one folder when H0 starts, when it is re-pointed to another
    (the home folder, say), then nothing there resolves as inside the vault: the quick check
    notices the root is no longer the folder it was and takes the full real-path check."""
    first, home = tmp_path / "vault-a", tmp_path / "home"
    (first / "Needs_Action").mkdir(parents=True)
    (home / "Needs_Action").mkdir(parents=True)
    (home / "Needs_Action/secret.md").write_text("---\nkey: private\n---\n")
    link = tmp_path / "vault"
    link.symlink_to(first)
    resolver = PathResolver(link)
    assert resolver.resolve("Needs_Action/x.md", note=True).rel == "Needs_Action/x.md"
    link.unlink()
    link.symlink_to(home)
    with pytest.raises(PermissionDenied):
        resolver.resolve("Needs_Action/secret.md", note=True)


def test_a_plain_path_costs_no_whole_path_resolution_and_a_link_below_the_root_does(
    vault_dir: Path, tmp_path: Path, monkeypatch
):
    resolved: list[str] = []
    real = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda p, *a, **k: resolved.append(str(p)) or real(p, *a, **k))
    resolver = PathResolver(vault_dir)
    resolved.clear()
    (vault_dir / "Needs_Action/a.md").write_text("x")
    assert resolver.resolve("Needs_Action/a.md", note=True).rel == "Needs_Action/a.md"
    assert resolver.resolve("Needs_Action/new/deeper/b.md", note=True).rel == "Needs_Action/new/deeper/b.md"
    assert resolved == []
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault_dir / "Needs_Action/linked").symlink_to(outside)
    with pytest.raises(PermissionDenied):
        resolver.resolve("Needs_Action/linked/c.md", note=True)
    assert resolved  # the link sent it through the full check
