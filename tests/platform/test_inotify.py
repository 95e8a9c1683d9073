"""H0's own inotify emitter (h0.platform.inotify) on a real temporary folder: the events watchdog's
handlers saw before, minus the temp files of atomic writes, recursive, and stopped at once."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from watchdog.events import (
    DirCreatedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)

from h0.pipeline.watcher import VaultWatcher
from h0.platform.fileio import atomic_write
from h0.platform.watch import new_observer

pytestmark = pytest.mark.linux_only(reason="inotify is Linux's")


class Events(FileSystemEventHandler):
    """Every event dispatched, in order; `wait_for` blocks until one matches (no fixed sleeps)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []
        self._cond = threading.Condition()

    def dispatch(self, event: FileSystemEvent) -> None:
        dest = os.fsdecode(getattr(event, "dest_path", "") or "")
        with self._cond:
            self.seen.append((type(event).__name__, os.fsdecode(event.src_path), dest))
            self._cond.notify_all()

    def wait_for(self, kind: type[FileSystemEvent], src: str = "", dest: str = "") -> tuple[str, str, str]:
        wanted = (kind.__name__, src, dest)
        with self._cond:
            assert self._cond.wait_for(lambda: wanted in self.seen, timeout=10), (wanted, self.seen)
        return wanted

    def about(self, text: str) -> list[tuple[str, str, str]]:
        with self._cond:
            return [e for e in self.seen if text in e[1] or text in e[2]]


@pytest.fixture
def watched(tmp_path: Path):
    root = tmp_path / "vault"
    root.mkdir()
    observer, reports_closes = new_observer()
    assert reports_closes and type(observer).__module__ == "h0.platform.inotify"
    events = Events()
    observer.schedule(events, str(root), recursive=True)
    observer.start()
    try:
        yield root, events
    finally:
        observer.stop()
        observer.join(10)
        assert not observer.is_alive()


def settled(root: Path, events: Events) -> None:
    """Every event before this call has been dispatched (the kernel's queue is ordered)."""
    marker = root / f"zz-marker-{len(events.seen)}.md"
    marker.write_text("x")
    events.wait_for(FileClosedEvent, str(marker))


def test_an_atomic_write_is_one_move_from_its_temp_name_and_the_temp_file_is_never_reported(watched):
    root, events = watched
    note = root / "note.md"
    atomic_write(note, b"---\nstatus: pending\n---\nhello\n")
    settled(root, events)
    moves = [e for e in events.about("note.md") if e[0] == "FileMovedEvent"]
    assert len(moves) == 1 and moves[0][2] == str(note) and Path(moves[0][1]).name.endswith(".tmp")
    temp = moves[0][1]
    assert [e for e in events.seen if temp in (e[1], e[2]) and e != moves[0]] == []


def test_a_note_written_in_place_is_closed_and_moves_in_out_and_within_are_told_apart(watched, tmp_path: Path):
    root, events = watched
    inside = root / "a.md"
    inside.write_text("first")
    events.wait_for(FileClosedEvent, str(inside))
    outside = tmp_path / "from-outside.md"
    outside.write_text("x")
    os.rename(outside, root / "in.md")
    events.wait_for(FileMovedEvent, "", str(root / "in.md"))  # from outside the watched tree: no source
    os.rename(root / "in.md", root / "renamed.md")
    events.wait_for(FileMovedEvent, str(root / "in.md"), str(root / "renamed.md"))
    os.rename(root / "renamed.md", tmp_path / "gone.md")
    events.wait_for(FileDeletedEvent, str(root / "renamed.md"))  # moved out: gone from the vault


def test_a_folder_made_or_moved_in_is_watched_at_once_and_what_it_holds_is_reported(watched, tmp_path: Path):
    root, events = watched
    made = root / "Projects" / "deep"
    made.mkdir(parents=True)
    events.wait_for(DirCreatedEvent, str(made))  # told only once it is watched
    (made / "plan.md").write_text("plan")
    events.wait_for(FileClosedEvent, str(made / "plan.md"))
    outside = tmp_path / "Archive"
    (outside / "old").mkdir(parents=True)
    (outside / "old" / "kept.md").write_text("kept")
    os.rename(outside, root / "Archive")
    events.wait_for(DirMovedEvent, "", str(root / "Archive"))
    settled(root, events)
    assert ("FileCreatedEvent", str(root / "Archive" / "old" / "kept.md"), "") in events.seen
    (root / "Archive" / "old" / "new.md").write_text("new")
    events.wait_for(FileClosedEvent, str(root / "Archive" / "old" / "new.md"))


def test_a_folder_renamed_within_the_vault_keeps_being_watched_under_its_new_name(watched):
    root, events = watched
    (root / "Drafts" / "sub").mkdir(parents=True)
    settled(root, events)
    os.rename(root / "Drafts", root / "Drafts2")
    events.wait_for(DirMovedEvent, str(root / "Drafts"), str(root / "Drafts2"))
    (root / "Drafts2" / "sub" / "x.md").write_text("x")
    events.wait_for(FileClosedEvent, str(root / "Drafts2" / "sub" / "x.md"))


def test_a_symlinked_folder_is_not_followed(watched, tmp_path: Path):
    root, events = watched
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "link").symlink_to(elsewhere, target_is_directory=True)
    settled(root, events)
    (elsewhere / "secret.md").write_text("x")
    settled(root, events)
    assert events.about("secret.md") == []


def test_a_vault_reached_through_a_symlink_is_watched_under_the_path_it_was_given(tmp_path: Path):
    real = tmp_path / "real-vault"
    (real / "Approved").mkdir(parents=True)
    link = tmp_path / "vault-link"
    link.symlink_to(real, target_is_directory=True)
    observer, _ = new_observer()
    events = Events()
    observer.schedule(events, str(link), recursive=True)
    observer.start()
    try:
        (real / "Approved" / "x.md").write_text("x")
        events.wait_for(FileClosedEvent, str(link / "Approved" / "x.md"))
    finally:
        observer.stop()
        observer.join(10)


def test_when_the_kernel_drops_events_the_watcher_says_so_and_the_daemon_sweeps(vault_dir: Path):
    """A handler held up while the kernel's queue overflows: the lost events are a warning the
    watcher turns into its overflow call (the daemon then reconciles the whole vault)."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 200_000:
        pytest.skip(f"the kernel queues {limit} events: too many to overflow quickly")
    held, lost = threading.Event(), threading.Event()

    def on_path(rel: str, kind: str, delay: float, source: str | None) -> None:
        held.wait(30)  # the observer's thread stops reading while the kernel's queue fills

    watcher = VaultWatcher(vault_dir, on_path, lost.set)
    watcher.start()
    try:
        (vault_dir / "Needs_Action" / "first.md").write_text("x")
        pair = (vault_dir / "a.txt", vault_dir / "b.txt")  # alternated, so the kernel merges none of them
        for i in range(limit // 2 + 200):
            pair[i % 2].write_text(str(i))
        held.set()
        assert lost.wait(10)
    finally:
        held.set()
        watcher.stop()
