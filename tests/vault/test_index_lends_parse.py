"""A note read with the vault index's parse of the same bytes (VaultIndex.frontmatter_read, h0.vault.note.parse's
`lent`) is the note read without it — for every note of a real-shaped vault — and the index lends only for the
exact bytes it read: another version of the file, with the same size and time, or a block it could not read,
is parsed again (or refused) by the reader itself."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from h0.errors import ParseError
from h0.vault import Vault
from h0.vault.index import VaultIndex
from h0.vault.note import content_hash

KNOWLEDGE = Path(__file__).resolve().parents[1] / "fixtures" / "knowledge_vault"


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Vault, VaultIndex]:
    root = tmp_path / "vault"
    shutil.copytree(KNOWLEDGE, root)
    odd = root / "Odd"
    odd.mkdir()
    (odd / "values.md").write_text(
        "---\nwhen: 2026-11-24T09:30:00+01:00\nday: 2026-11-24\nn: 1.5e3\nno: .nan\nyes: true\n'1': one\n"
        "list: [a, [b, c], {d: e}]\nname: Zoë 🌍\n---\nBody ü\n",
        encoding="utf-8",
    )
    (odd / "bare.md").write_text("No frontmatter at all.\n", encoding="utf-8")
    return Vault(root), VaultIndex.open(root, tmp_path / "state")


def test_a_lent_parse_is_the_parse_for_every_note(indexed: tuple[Vault, VaultIndex]):
    vault, index = indexed
    rels = [str(p.relative_to(vault.root).as_posix()) for p in sorted(vault.root.rglob("*.md"))]
    assert len(rels) > 20
    lent = []
    for rel in rels:
        plain = vault.read_note(rel)
        borrowed = vault.read_note(rel, lent=index.frontmatter_read)
        assert (borrowed.frontmatter, borrowed.body, borrowed.hash) == (plain.frontmatter, plain.body, plain.hash), rel
        lent.append(index.frontmatter_read(rel, plain.hash) is not None)
    assert sum(lent) >= len(rels) - 1  # every note with frontmatter was lent (the bare one has no block to lend)


def test_the_index_lends_only_for_the_bytes_it_read(indexed: tuple[Vault, VaultIndex]):
    vault, index = indexed
    path = vault.root / "Odd/values.md"
    before = path.stat()
    read = vault.read_note("Odd/values.md")
    assert index.frontmatter_read("Odd/values.md", read.hash) == read.frontmatter
    # Another version with the same size, inode and time: the index (by signature) still holds the old one ...
    path.write_bytes(path.read_bytes().replace(b"yes: true", b"yes: nope"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    index.changed(["Odd/values.md"])
    index.sync()
    assert index.frontmatter_read("Odd/values.md", read.hash) == read.frontmatter
    # ... but not for these bytes: the reader parses them itself.
    now = vault.read_note("Odd/values.md", lent=index.frontmatter_read)
    assert now.frontmatter["yes"] == "nope" and index.frontmatter_read("Odd/values.md", now.hash) is None
    assert index.frontmatter_read("Odd/values.md", content_hash(b"")) is None
    assert index.frontmatter_read("Odd/missing.md", now.hash) is None


def test_a_block_the_index_could_not_read_is_never_lent(indexed: tuple[Vault, VaultIndex]):
    vault, index = indexed
    (vault.root / "Odd/broken.md").write_text("---\ntitle: Therapy: session 3\n---\nWords.\n", encoding="utf-8")
    index.changed(["Odd/broken.md"])
    index.sync()
    digest = content_hash((vault.root / "Odd/broken.md").read_bytes())
    assert index.frontmatter_read("Odd/broken.md", digest) is None
    with pytest.raises(ParseError):
        vault.read_note("Odd/broken.md", lent=index.frontmatter_read)
