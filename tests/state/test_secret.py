"""The installation's secret (h0.state.secret): made once, owner-only from its creation, never half-written,
and the same for every process that opens the state at once."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from h0.errors import InternalError
from h0.state.secret import load_or_create_secret

posix_modes = pytest.mark.skipif(os.name != "posix", reason="permission bits are POSIX's")


def test_given_several_openers_at_once_when_they_make_the_secret_then_all_get_the_one_on_disk(tmp_path: Path):
    path = tmp_path / "secret.key"
    start = threading.Barrier(8)
    got: list[bytes] = []

    def opener() -> None:
        start.wait()
        got.append(load_or_create_secret(path))

    threads = [threading.Thread(target=opener) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and len(set(got)) == 1
    assert got[0] == bytes.fromhex(path.read_text(encoding="ascii").strip()) and len(got[0]) == 32
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.key"]  # no temp file left


@posix_modes
def test_a_new_secret_is_owner_only_whatever_the_umask(tmp_path: Path):
    old = os.umask(0)
    try:
        load_or_create_secret(tmp_path / "secret.key")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "secret.key").stat().st_mode) == 0o600


@posix_modes
def test_given_a_secret_others_can_read_when_loaded_then_it_is_made_owner_only_and_kept(tmp_path: Path):
    path = tmp_path / "secret.key"
    path.write_text("ab" * 32 + "\n", encoding="ascii")
    path.chmod(0o644)
    assert load_or_create_secret(path) == bytes.fromhex("ab" * 32)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("text", ["", "abc\n", "zz" * 40])
def test_given_a_damaged_secret_when_loaded_then_a_typed_error_and_the_file_is_kept(tmp_path: Path, text: str):
    path = tmp_path / "secret.key"
    path.write_text(text, encoding="ascii")
    with pytest.raises(InternalError, match="damaged"):
        load_or_create_secret(path)
    assert path.read_text(encoding="ascii") == text
