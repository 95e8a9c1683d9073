"""The files attached to a message (h0.mail.compose.attachments): the 25 MB limit, confinement to the vault, H0's own
records and executables refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from h0.errors import InvalidRequest, NotFound, PermissionDenied
from h0.mail.compose.attachments import MAX_ATTACHMENT_BYTES, load_attachments
from h0.vault.paths import PathResolver


def test_given_30_mb_of_attachments_then_they_are_refused_before_being_read(vault_dir: Path):
    big = vault_dir / "Done" / "video.mp4"
    with big.open("wb") as handle:
        handle.truncate(30 * 1024 * 1024)  # sparse: the limit is checked from the size, not by reading
    with pytest.raises(InvalidRequest) as caught:
        load_attachments(PathResolver(vault_dir), ["Done/video.mp4"])
    assert caught.value.details["limit_bytes"] == MAX_ATTACHMENT_BYTES
    assert "25 MB" in caught.value.message


def test_given_attachments_outside_the_vault_or_hidden_then_they_are_refused(vault_dir: Path, tmp_path: Path):
    (tmp_path / "secret.txt").write_text("x")
    (vault_dir / ".obsidian").mkdir()
    (vault_dir / ".obsidian" / "data.json").write_text("{}")
    os.symlink(tmp_path / "secret.txt", vault_dir / "Done" / "link.txt")
    resolver = PathResolver(vault_dir)
    for path in ("../secret.txt", str(tmp_path / "secret.txt"), "Done/link.txt", ".obsidian/data.json"):
        with pytest.raises(PermissionDenied):
            load_attachments(resolver, [path])
    with pytest.raises(NotFound):
        load_attachments(resolver, ["Done/missing.pdf"])


def test_given_attachments_from_h0_s_own_records_then_they_are_refused_in_any_spelling(vault_dir: Path):
    (vault_dir / "Logs").mkdir(exist_ok=True)
    (vault_dir / "Logs" / "2026-11-22.json").write_text('{"event": "email_sent"}')
    (vault_dir / "Outbox").mkdir(exist_ok=True)
    (vault_dir / "Outbox" / "sent.eml").write_text("Subject: someone else's mail\n\nhi\n")
    resolver = PathResolver(vault_dir)
    for path in ("Logs/2026-11-22.json", "Outbox/sent.eml", "./Logs/../Logs/2026-11-22.json"):
        with pytest.raises(PermissionDenied) as caught:
            load_attachments(resolver, [path])
        assert "H0's own records" in caught.value.message
    (vault_dir / "Done" / "notes.txt").write_text("fine")
    assert [a.rel for a in load_attachments(resolver, ["Done/notes.txt"])] == ["Done/notes.txt"]


def test_given_an_executable_by_name_or_by_content_then_it_is_refused(vault_dir: Path):
    (vault_dir / "Done" / "setup.exe").write_bytes(b"MZ\x90\x00")
    (vault_dir / "Done" / "invoice.pdf").write_bytes(b"\x7fELF\x02\x01\x01")
    resolver = PathResolver(vault_dir)
    for path in ("Done/setup.exe", "Done/invoice.pdf"):
        with pytest.raises(InvalidRequest):
            load_attachments(resolver, [path])
