"""Limits are typed errors: names and paths too long, notes too big, NUL bytes, a read-only
vault, a full disk, a parent that is a file — from every vault operation, every vault MCP
tool, and `h0 sweep` / `h0 watch` at start (exit 1, one line, nothing sent).

How the file system's refusals are produced here:

- ENAMETOOLONG, ENOTDIR, EISDIR, ELOOP and a missing vault are real: the test builds the
  name, the file where a folder should be, the symlink loop.
- EROFS / EACCES: `chmod 0o555` when that stops writes. Tests may run as root, where it does
  not (root ignores permission bits) and a read-only bind mount is not available; then
  the in-process tests make `os` *as the vault modules see it* raise the errno for paths
  inside the vault (`FaultyOs`), and the CLI test starts the real `h0` with a
  `sitecustomize.py` on PYTHONPATH that does the same for writes under `Logs/`.
- ENOSPC / EDQUOT: always simulated in-process (`FaultyOs`), at each step of the atomic
  write — after real bytes have gone into the real temp file.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest
from mcp import Client

from h0.errors import InternalError, InvalidRequest, NotFound, PermissionDenied
from h0.mcp.vault_server import build_vault_server
from h0.platform import fileio
from h0.platform.fileio import typed_os_error
from h0.vault import Vault, health, store
from h0.vault.health import check_vault_writable
from h0.vault.note import MAX_NOTE_BYTES
from tests.conftest import H0_BIN, subprocess_env
from tests.pipeline.harness import write_draft

LONG_NAME = "n" * 297 + ".md"  # 300 bytes
DEEP_PATH = "d/" * 5000 + "x.md"  # 5,000 levels
NOTE = "---\nstatus: pending\nsubject: 'Keep me'\n---\nThe original body.\n"


def tree(root: Path) -> list[str]:
    """Every path under `root` but the audit log (the MCP server writes its refusals there)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if "Logs" not in p.parts)


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp")]


# --------------------------------------------------------------------------- simulated refusals


class FaultyOs:
    """`os` as one module sees it, except that the named call fails with `err` for the vault.

    `open` fails only when creating or writing (reads still work); `write`, `fsync` and
    `close` fail on a file the module created inside the vault — `write` after it has
    really written a first chunk, `close` after really closing.
    """

    def __init__(self, root: Path, err: int, calls: tuple[str, ...]) -> None:
        self._root = os.path.realpath(root)
        self._err = err
        self._calls = calls
        self._ours: set[int] = set()
        self._wrote = False
        self.failed: list[str] = []

    def __getattr__(self, name: str):
        return getattr(os, name)

    def _inside(self, path) -> bool:
        return os.path.realpath(os.fsdecode(os.fspath(path))).startswith(self._root)

    def _fail(self, call: str, path: object = None):
        self.failed.append(call)
        raise OSError(self._err, os.strerror(self._err), None if path is None else os.fsdecode(os.fspath(path)))

    def open(self, path, flags, mode=0o777, *, dir_fd=None):
        writing = flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        if writing and "open" in self._calls and self._inside(path):
            self._fail("open", path)
        fd = os.open(path, flags, mode, dir_fd=dir_fd)
        if writing and self._inside(path):
            self._ours.add(fd)
        return fd

    def write(self, fd, data):
        if fd in self._ours and "write" in self._calls:
            if not self._wrote:
                self._wrote = True
                return os.write(fd, bytes(data[:16]))  # real bytes in the real temp file first
            self._fail("write")
        return os.write(fd, data)

    def fsync(self, fd):
        if fd in self._ours and "fsync" in self._calls:
            self._fail("fsync")
        return os.fsync(fd)

    def close(self, fd):
        ours = fd in self._ours
        self._ours.discard(fd)
        os.close(fd)
        if ours and "close" in self._calls:
            self._fail("close")

    def replace(self, src, dst, **kwargs):
        if "replace" in self._calls and self._inside(dst):
            self._fail("replace", dst)
        return os.replace(src, dst, **kwargs)

    def mkdir(self, path, mode=0o777, **kwargs):
        if "mkdir" in self._calls and self._inside(path):
            self._fail("mkdir", path)
        return os.mkdir(path, mode, **kwargs)


def refuse_writes(monkeypatch: pytest.MonkeyPatch, root: Path, err: int) -> FaultyOs:
    """Every way the vault modules write, rename or probe fails with `err` inside `root`."""
    faulty = FaultyOs(root, err, ("open", "replace", "mkdir"))
    for module in (fileio, store, health):
        monkeypatch.setattr(module, "os", faulty)

    def rename_noreplace(source, destination):
        faulty._fail("rename", destination)

    monkeypatch.setattr(store, "rename_noreplace", rename_noreplace)
    return faulty


def chmod_stops_root_writes(folder: Path) -> bool:
    """Whether permission bits stop this process (not when tests run as root)."""
    probe = folder / ".h0-chmod-probe"
    try:
        probe.write_text("x")
    except PermissionError:
        return True
    probe.unlink()
    return False


@pytest.fixture
def read_only(vault_dir: Path, monkeypatch: pytest.MonkeyPatch):
    """Drafts/ and Done/ refuse writes: by chmod when that works, else by a simulated EROFS."""
    folders = [vault_dir / "Drafts", vault_dir / "Done"]
    (vault_dir / "Drafts/keep.md").write_text(NOTE)
    for folder in folders:
        folder.chmod(0o555)
    try:
        if chmod_stops_root_writes(folders[0]):
            yield "chmod"
            return
        for folder in folders:
            folder.chmod(0o755)
        refuse_writes(monkeypatch, vault_dir, errno.EROFS)
        yield "erofs"
    finally:
        for folder in folders:
            folder.chmod(0o755)


# --------------------------------------------------------------------------- the errno map


@pytest.mark.parametrize(
    ("err", "error", "words"),
    [
        (errno.ENOSPC, InternalError, "the disk is full"),
        (errno.EDQUOT, InternalError, "the disk is full"),
        (errno.EROFS, PermissionDenied, "read-only"),
        (errno.EACCES, PermissionDenied, "permission denied"),
        (errno.EPERM, PermissionDenied, "permission denied"),
        (errno.ELOOP, PermissionDenied, "symlink"),
        (errno.ENOTDIR, InvalidRequest, "is a file, not a folder"),
        (errno.EISDIR, InvalidRequest, "is a folder"),
        (errno.ENOENT, NotFound, "does not exist"),
    ],
)
def test_given_an_os_error_when_typed_then_its_class_is_the_right_h0_error(err, error, words):
    typed = typed_os_error(OSError(err, os.strerror(err), "/v/Drafts/x.md"), "write Drafts/x.md", "Drafts/x.md")
    assert type(typed) is error
    assert typed.message.startswith("Could not write Drafts/x.md: ") and words in typed.message
    assert typed.details["path"] == "Drafts/x.md" and typed.details["errno"] == errno.errorcode[err]
    assert "\n" not in typed.message
    if error is InternalError:
        assert typed.details["retryable"] is False


def test_given_the_kernels_enametoolong_when_typed_then_the_message_counts_the_bytes(tmp_path: Path):
    """Given the real OSError for a 300-byte name, and for a 5,000-level path, the message gives the numbers."""
    with pytest.raises(OSError) as name_error:
        os.open(tmp_path / LONG_NAME, os.O_WRONLY | os.O_CREAT)
    typed = typed_os_error(name_error.value, "write Drafts/x.md", f"Drafts/{LONG_NAME}")
    assert isinstance(typed, InvalidRequest)
    assert "the name is 300 bytes; the file system allows 255" in typed.message
    assert typed.details["name_bytes"] == 300 and typed.details["limit"] == 255

    with pytest.raises(OSError) as path_error:
        os.open(tmp_path / DEEP_PATH, os.O_RDONLY)
    typed = typed_os_error(path_error.value, "read the note")
    assert isinstance(typed, InvalidRequest) and "the path is" in typed.message and "4096" in typed.message


# --------------------------------------------------------------------------- names and paths too long


def test_given_a_300_byte_name_when_written_or_moved_then_invalid_request_and_nothing_written(
    vault: Vault, vault_dir: Path
):
    (vault_dir / "Drafts/keep.md").write_text(NOTE)
    before = tree(vault_dir)
    with pytest.raises(InvalidRequest) as written:
        vault.write_note(f"Drafts/{LONG_NAME}", {"status": "draft"}, "body\n")
    assert "The name is 300 bytes; the file system allows 255" in written.value.message
    assert written.value.details["name_bytes"] == 300 and written.value.details["limit"] == 255
    with pytest.raises(InvalidRequest) as moved:
        vault.move_note("Drafts/keep.md", f"Done/{LONG_NAME}")
    assert "300 bytes" in moved.value.message
    with pytest.raises(InvalidRequest):
        vault.move_note("Drafts/keep.md", f"{'f' * 300}/")  # a folder name too long
    with pytest.raises(InvalidRequest):
        vault.read_note(f"Drafts/{LONG_NAME}")
    assert tree(vault_dir) == before
    assert (vault_dir / "Drafts/keep.md").read_text() == NOTE


def test_given_a_name_that_fits_but_whose_temp_name_would_not_when_written_then_it_is_written(vault: Vault):
    """A 250-byte name fits; its atomic write's temp file must fit too (it is cut, not the note)."""
    name = "w" * 247 + ".md"
    note = vault.write_note(f"Drafts/{name}", {"status": "draft"}, "fits\n")
    assert vault.read_note(note.path).body == "fits\n"
    assert not temp_files(vault.root)


def test_given_a_5000_level_deep_path_when_used_then_invalid_request_and_nothing_created(vault: Vault, vault_dir: Path):
    before = tree(vault_dir)
    for call in (
        lambda: vault.write_note(DEEP_PATH, {}, "deep\n"),
        lambda: vault.read_note(DEEP_PATH),
        lambda: vault.update_frontmatter(DEEP_PATH, {"a": 1}),
        lambda: vault.list_notes(DEEP_PATH[:-5]),
        lambda: vault.search_notes("x", directory=DEEP_PATH[:-5]),
    ):
        with pytest.raises(InvalidRequest) as refused:
            call()
        assert "levels deep" in refused.value.message and refused.value.details["depth"] >= 5000
        assert len(refused.value.details["path"]) < 300  # the error does not echo 10 KB back
    (vault_dir / "Drafts/keep.md").write_text(NOTE)
    with pytest.raises(InvalidRequest):
        vault.move_note("Drafts/keep.md", DEEP_PATH)
    assert tree(vault_dir) == sorted([*before, "Drafts/keep.md"])


# --------------------------------------------------------------------------- size and NUL


def test_given_a_note_over_the_size_limit_when_read_or_written_then_invalid_request(vault: Vault, vault_dir: Path):
    huge = vault_dir / "Needs_Action/huge.md"
    with huge.open("wb") as handle:
        handle.truncate(MAX_NOTE_BYTES + 1)  # sparse: no 10 MB of test data on disk
    for call in (
        lambda: vault.read_note("Needs_Action/huge.md"),
        lambda: vault.update_frontmatter("Needs_Action/huge.md", {"a": 1}),
    ):
        with pytest.raises(InvalidRequest) as refused:
            call()
        assert refused.value.details["limit"] == MAX_NOTE_BYTES and refused.value.details["size"] == MAX_NOTE_BYTES + 1
    with pytest.raises(InvalidRequest) as too_big:
        vault.write_note("Drafts/big.md", {"status": "draft"}, "x" * (MAX_NOTE_BYTES + 1))
    assert "H0 writes notes up to 10 MB" in too_big.value.message
    assert not (vault_dir / "Drafts/big.md").exists() and not temp_files(vault_dir)


def test_given_a_nul_byte_in_a_body_or_a_path_when_used_then_invalid_request_and_nothing_written(
    vault: Vault, vault_dir: Path
):
    (vault_dir / "Drafts/keep.md").write_text(NOTE)
    before = tree(vault_dir)
    for call in (
        lambda: vault.write_note("Drafts/new.md", {}, "before\x00after"),
        lambda: vault.write_note("Drafts/keep.md", {}, "before\x00after"),
        lambda: vault.write_note("Drafts/a\x00b.md", {}, "x"),
        lambda: vault.read_note("Drafts/keep.md\x00.txt"),
        lambda: vault.update_frontmatter("Drafts/\x00keep.md", {"a": 1}),
        lambda: vault.move_note("Drafts/keep.md", "Done/\x00.md"),
        lambda: vault.move_note("Drafts/\x00keep.md", "Done/"),
        lambda: vault.list_notes("Drafts\x00"),
        lambda: vault.search_notes("x", directory="Dr\x00afts"),
    ):
        with pytest.raises(InvalidRequest, match="NUL byte"):
            call()
    assert tree(vault_dir) == before and (vault_dir / "Drafts/keep.md").read_text() == NOTE


# --------------------------------------------------------------------------- a parent that is a file, a loop


def test_given_a_parent_that_is_a_file_when_used_then_invalid_request(vault: Vault, vault_dir: Path):
    (vault_dir / "Drafts/plain.md").write_text(NOTE)
    before = tree(vault_dir)
    for call in (
        lambda: vault.read_note("Drafts/plain.md/x.md"),
        lambda: vault.write_note("Drafts/plain.md/x.md", {}, "x"),
        lambda: vault.write_note("Drafts/plain.md/sub/x.md", {}, "x"),
        lambda: vault.update_frontmatter("Drafts/plain.md/x.md", {"a": 1}),
        lambda: vault.move_note("Drafts/plain.md", "Drafts/plain.md/x.md"),
        lambda: vault.list_notes("Drafts/plain.md"),
        lambda: vault.search_notes("x", directory="Drafts/plain.md"),
    ):
        with pytest.raises(InvalidRequest) as refused:
            call()
        assert "file" in refused.value.message or "not a folder" in refused.value.message
    assert tree(vault_dir) == before and (vault_dir / "Drafts/plain.md").read_text() == NOTE


def test_given_a_symlink_loop_when_read_then_permission_denied(vault: Vault, vault_dir: Path):
    os.symlink("loop.md", vault_dir / "Drafts/loop.md")
    with pytest.raises(PermissionDenied, match="symlink loop"):
        vault.read_note("Drafts/loop.md")


# --------------------------------------------------------------------------- read-only vault, full disk


def test_given_a_read_only_vault_when_written_or_moved_then_permission_denied_and_nothing_changes(
    vault: Vault, vault_dir: Path, read_only: str
):
    before = tree(vault_dir)
    for call in (
        lambda: vault.write_note("Drafts/new.md", {"status": "draft"}, "x\n"),
        lambda: vault.write_note("Drafts/keep.md", {"status": "draft"}, "x\n"),
        lambda: vault.update_frontmatter("Drafts/keep.md", {"status": "sent"}),
        lambda: vault.move_note("Drafts/keep.md", "Done/"),
    ):
        with pytest.raises(PermissionDenied) as refused:
            call()
        assert refused.value.details["errno"] in ("EROFS", "EACCES")
        assert "read-only" in refused.value.message or "permission denied" in refused.value.message
    assert tree(vault_dir) == before and (vault_dir / "Drafts/keep.md").read_text() == NOTE
    assert vault.read_note("Drafts/keep.md").frontmatter["status"] == "pending"  # reads still work


@pytest.mark.parametrize("step", ["open", "write", "fsync", "close", "replace"])
@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EDQUOT])
def test_given_a_disk_that_fills_during_write_note_then_internal_error_the_note_intact_and_no_temp_file(
    vault: Vault, vault_dir: Path, monkeypatch: pytest.MonkeyPatch, step: str, err: int
):
    (vault_dir / "Drafts/keep.md").write_text(NOTE)
    original = (vault_dir / "Drafts/keep.md").read_bytes()
    faulty = FaultyOs(vault_dir, err, (step,))
    monkeypatch.setattr(fileio, "os", faulty)
    with pytest.raises(InternalError) as full:
        vault.write_note("Drafts/keep.md", {"status": "sent"}, "A longer body that needs more than one write.\n" * 4)
    assert faulty.failed == [step]
    assert "the disk is full" in full.value.message and "unexpectedly" not in full.value.message
    assert full.value.details["retryable"] is False and full.value.details["path"] == "Drafts/keep.md"
    assert (vault_dir / "Drafts/keep.md").read_bytes() == original
    assert not temp_files(vault_dir)


def test_given_a_full_disk_when_a_new_note_is_written_then_no_note_and_no_temp_file(
    vault: Vault, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(fileio, "os", FaultyOs(vault_dir, errno.ENOSPC, ("write",)))
    with pytest.raises(InternalError, match="the disk is full"):
        vault.write_note("Drafts/new.md", {"status": "draft"}, "x" * 100)
    assert not (vault_dir / "Drafts/new.md").exists() and not temp_files(vault_dir)


def test_given_a_full_disk_when_a_move_sets_frontmatter_then_the_move_stands_with_a_warning(
    vault: Vault, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    """The rename needs no space; the frontmatter update after it does: report, do not pretend nothing moved."""
    (vault_dir / "Drafts/keep.md").write_text(NOTE)
    monkeypatch.setattr(fileio, "os", FaultyOs(vault_dir, errno.ENOSPC, ("open",)))
    moved = vault.move_note("Drafts/keep.md", "Done/", set_frontmatter={"status": "sent"})
    assert moved.destination == "Done/keep.md" and moved.hash is None
    assert moved.warning and "the disk is full" in moved.warning
    assert (vault_dir / "Done/keep.md").read_text() == NOTE and not temp_files(vault_dir)


# --------------------------------------------------------------------------- the vault MCP server


def error_of(result) -> dict:
    assert result.is_error, result
    assert result.structured_content is None
    text = result.content[0].text
    assert "Traceback" not in text and "unexpectedly" not in text
    return json.loads(text)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_given_limits_when_vault_tools_are_called_then_each_is_a_typed_error(vault_dir: Path, anyio_backend):
    (vault_dir / "Drafts/keep.md").write_text(NOTE)
    (vault_dir / "Drafts/plain.md").write_text(NOTE)
    huge = vault_dir / "Needs_Action/huge.md"
    with huge.open("wb") as handle:
        handle.truncate(MAX_NOTE_BYTES + 1)
    os.symlink("loop.md", vault_dir / "Done/loop.md")
    before = tree(vault_dir)
    calls = [
        ("write_note", {"path": f"Drafts/{LONG_NAME}", "frontmatter": {}, "body": "x"}, "invalid_request", "300 bytes"),
        ("move_note", {"source": "Drafts/keep.md", "destination": f"Done/{LONG_NAME}"}, "invalid_request", "300 bytes"),
        ("read_note", {"path": f"Drafts/{LONG_NAME}"}, "invalid_request", "300 bytes"),
        ("write_note", {"path": DEEP_PATH, "frontmatter": {}, "body": "x"}, "invalid_request", "levels deep"),
        ("read_note", {"path": DEEP_PATH}, "invalid_request", "levels deep"),
        ("list_notes", {"directory": DEEP_PATH[:-5]}, "invalid_request", "levels deep"),
        ("search_notes", {"query": "x", "directory": DEEP_PATH[:-5]}, "invalid_request", "levels deep"),
        ("update_frontmatter", {"path": DEEP_PATH, "set": {"a": 1}}, "invalid_request", "levels deep"),
        ("read_note", {"path": "Needs_Action/huge.md"}, "invalid_request", "10 MB"),
        ("update_frontmatter", {"path": "Needs_Action/huge.md", "set": {"a": 1}}, "invalid_request", "10 MB"),
        (
            "write_note",
            {"path": "Drafts/big.md", "frontmatter": {}, "body": "x" * (MAX_NOTE_BYTES + 1)},
            "invalid_request",
            "10 MB",
        ),
        ("write_note", {"path": "Drafts/nul.md", "frontmatter": {}, "body": "a\x00b"}, "invalid_request", "NUL"),
        ("write_note", {"path": "Drafts/a\x00b.md", "frontmatter": {}, "body": "x"}, "invalid_request", "NUL"),
        ("move_note", {"source": "Drafts/keep.md", "destination": "Done/\x00.md"}, "invalid_request", "NUL"),
        ("read_note", {"path": "Drafts/plain.md/x.md"}, "invalid_request", "not a folder"),
        ("write_note", {"path": "Drafts/plain.md/x.md", "frontmatter": {}, "body": "x"}, "invalid_request", "file"),
        ("move_note", {"source": "Drafts/keep.md", "destination": "Drafts/plain.md/x.md"}, "invalid_request", "file"),
        ("list_notes", {"directory": "Drafts/plain.md"}, "invalid_request", "not a folder"),
        ("read_note", {"path": "Done/loop.md"}, "permission_denied", "symlink loop"),
    ]
    async with Client(build_vault_server(vault_dir)) as client:
        for tool, args, code, words in calls:
            body = error_of(await client.call_tool(tool, args))
            assert (body["error"], words in body["message"]) == (code, True), (tool, body)
            assert body["details"]
    assert tree(vault_dir) == before
    assert (vault_dir / "Drafts/keep.md").read_text() == NOTE


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_given_a_read_only_vault_when_tools_write_then_permission_denied_with_details(
    vault_dir: Path, read_only: str, anyio_backend
):
    async with Client(build_vault_server(vault_dir)) as client:
        for tool, args in (
            ("write_note", {"path": "Drafts/new.md", "frontmatter": {}, "body": "x"}),
            ("update_frontmatter", {"path": "Drafts/keep.md", "set": {"status": "sent"}}),
            ("move_note", {"source": "Drafts/keep.md", "destination": "Done/"}),
        ):
            body = error_of(await client.call_tool(tool, args))
            assert body["error"] == "permission_denied", (tool, body)
            assert body["details"]["errno"] in ("EROFS", "EACCES") and body["details"]["path"]
        read = await client.call_tool("read_note", {"path": "Drafts/keep.md"})
        assert not read.is_error
    assert (vault_dir / "Drafts/keep.md").read_text() == NOTE


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_given_a_full_disk_when_write_note_is_called_then_internal_error_not_retryable(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, anyio_backend
):
    (vault_dir / "Drafts/keep.md").write_text(NOTE)
    monkeypatch.setattr(fileio, "os", FaultyOs(vault_dir, errno.ENOSPC, ("write",)))
    async with Client(build_vault_server(vault_dir)) as client:
        body = error_of(
            await client.call_tool("write_note", {"path": "Drafts/keep.md", "frontmatter": {}, "body": "y" * 64})
        )
    assert body["error"] == "internal_error" and "the disk is full" in body["message"]
    assert body["details"] == {"path": "Drafts/keep.md", "errno": "ENOSPC", "retryable": False}
    assert (vault_dir / "Drafts/keep.md").read_text() == NOTE and not temp_files(vault_dir)


# --------------------------------------------------------------------------- the start check


def test_given_a_writable_vault_when_checked_then_it_passes_and_leaves_nothing(vault_dir: Path):
    before = sorted(p.relative_to(vault_dir).as_posix() for p in vault_dir.rglob("*"))
    check_vault_writable(vault_dir)
    assert sorted(p.relative_to(vault_dir).as_posix() for p in vault_dir.rglob("*")) == before


def test_given_a_missing_vault_or_one_under_a_file_when_checked_then_a_typed_error_saying_what_to_do(tmp_path: Path):
    with pytest.raises(NotFound, match="does not exist.*VAULT_PATH.*h0 init"):
        check_vault_writable(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidRequest, match="is a file, not a folder"):
        check_vault_writable(tmp_path / "file" / "vault")
    with pytest.raises(InvalidRequest, match="is a file, not a folder"):
        check_vault_writable(tmp_path / "file")


def test_given_logs_that_is_a_file_when_checked_then_invalid_request(vault_dir: Path):
    (vault_dir / "Logs/failed").rmdir()
    (vault_dir / "Logs").rmdir()
    (vault_dir / "Logs").write_text("not a folder")
    with pytest.raises(InvalidRequest, match="Logs in the vault is a file"):
        check_vault_writable(vault_dir)


@pytest.mark.parametrize(("err", "error"), [(errno.EROFS, PermissionDenied), (errno.ENOSPC, InternalError)])
def test_given_unwritable_folders_when_checked_then_one_typed_error_names_them_all(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, err: int, error: type
):
    monkeypatch.setattr(health, "os", FaultyOs(vault_dir, err, ("open",)))
    with pytest.raises(error) as refused:
        check_vault_writable(vault_dir)
    message = refused.value.message
    for folder in ("Approved/", "Done/", "Drafts/", "Logs/", "Logs/failed/"):
        assert folder in message
    assert "nothing was sent" in message and "\n" not in message
    assert set(refused.value.details["folders"].values()) == {errno.errorcode[err]}
    assert not temp_files(vault_dir)


# --------------------------------------------------------------------------- h0 sweep / h0 watch


def run_h0(command: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([H0_BIN, command], env=env, capture_output=True, text=True, timeout=60, check=False)


def assert_one_line_exit_1(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("command", ["sweep", "watch"])
def test_given_a_missing_vault_or_one_under_a_file_when_the_daemon_starts_then_exit_1_with_one_line(
    tmp_path: Path, command: str
):
    missing = run_h0(command, subprocess_env(VAULT_PATH=str(tmp_path / "nope")))
    assert_one_line_exit_1(missing, f"h0 {command}:", "does not exist", "VAULT_PATH", "h0 init")
    (tmp_path / "file").write_text("x")
    under_a_file = run_h0(command, subprocess_env(VAULT_PATH=str(tmp_path / "file" / "vault")))
    assert_one_line_exit_1(under_a_file, "is a file, not a folder", "VAULT_PATH")


@pytest.mark.parametrize("command", ["sweep", "watch"])
def test_given_logs_that_is_a_file_when_the_daemon_starts_then_exit_1_and_nothing_is_sent(
    vault_dir: Path, command: str
):
    write_draft(vault_dir, "Approved", "go.md")
    (vault_dir / "Logs/failed").rmdir()
    (vault_dir / "Logs").rmdir()
    (vault_dir / "Logs").write_text("not a folder")
    result = run_h0(command, subprocess_env(VAULT_PATH=str(vault_dir)))
    assert_one_line_exit_1(result, f"h0 {command}:", "Logs", "not a folder")
    assert (vault_dir / "Approved/go.md").exists() and not list((vault_dir / "Outbox").iterdir())


_READ_ONLY_SITECUSTOMIZE = textwrap.dedent(
    '''
    """Test-only: writes under $H0_TEST_READ_ONLY fail with EROFS, as on a read-only mount."""
    import errno, os

    _prefix = os.environ.get("H0_TEST_READ_ONLY")
    if _prefix:
        _open, _mkdir = os.open, os.mkdir

        def _refused(path):
            return os.path.abspath(os.fsdecode(os.fspath(path))).startswith(_prefix)

        def open(path, flags, mode=0o777, *, dir_fd=None):
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and _refused(path):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(os.fspath(path)))
            return _open(path, flags, mode, dir_fd=dir_fd)

        def mkdir(path, mode=0o777, *, dir_fd=None):
            if _refused(path):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(os.fspath(path)))
            return _mkdir(path, mode, dir_fd=dir_fd)

        os.open, os.mkdir = open, mkdir
    '''
)


def test_given_a_read_only_logs_folder_when_sweep_starts_then_exit_1_one_line_and_nothing_is_sent(
    vault_dir: Path, tmp_path: Path
):
    """chmod 0o555 Logs/ where that stops writes; as root, the real `h0` with EROFS injected for Logs/."""
    write_draft(vault_dir, "Approved", "go.md")
    logs = vault_dir / "Logs"
    env = subprocess_env(VAULT_PATH=str(vault_dir))
    logs.chmod(0o555)
    try:
        if not chmod_stops_root_writes(logs):
            logs.chmod(0o755)
            faults = tmp_path / "faults"
            faults.mkdir()
            (faults / "sitecustomize.py").write_text(_READ_ONLY_SITECUSTOMIZE)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(faults), env.get("PYTHONPATH")]))
            env["H0_TEST_READ_ONLY"] = str(logs)
        result = run_h0("sweep", env)
    finally:
        logs.chmod(0o755)
    assert_one_line_exit_1(result, "h0 sweep:", "Logs/", "nothing was sent")
    assert "read-only" in result.stderr or "permission denied" in result.stderr
    assert (vault_dir / "Approved/go.md").exists() and not list((vault_dir / "Outbox").iterdir())
    assert not list((vault_dir / "Done").iterdir())
