"""The vault's watchers on Linux's native events (watchdog's inotify observer), on real temporary
folders: moves told apart, atomic writes' temp files never reported, folders that appear watched at
once, symlinks below the vault never followed, and lost events (the kernel's queue overflowing, the
observer's threads dying) turned into a sweep."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from h0.pipeline import signals
from h0.pipeline.watcher import CLOSED, MOVED, VaultWatcher
from h0.platform.fileio import atomic_write, is_temp_name
from h0.platform.watch import TreeWatcher
from tests.pipeline.harness import events, running_daemon, wait_until, write_draft

pytestmark = pytest.mark.linux_only(reason="inotify is Linux's")


class Seen:
    """What a watcher reported, in order; `wait_for` blocks until a report matches (no fixed sleeps)."""

    def __init__(self) -> None:
        self.paths: list[str] = []  # every path reported (TreeWatcher's paths, VaultWatcher's notes)
        self.triggers: list[tuple[str, str, str | None]] = []  # VaultWatcher: (rel, kind, source)
        self.lost = threading.Event()
        self._cond = threading.Condition()

    def on_paths(self, paths: list[str]) -> None:
        with self._cond:
            self.paths += paths
            self._cond.notify_all()

    def on_note(self, path: str | None) -> None:
        if path is not None:
            self.on_paths([path])

    def on_path(self, rel: str, kind: str, delay: float, source: str | None) -> None:
        with self._cond:
            self.triggers.append((rel, kind, source))
            self._cond.notify_all()

    def wait_for(self, found: Callable[[], bool]) -> None:
        with self._cond:
            assert self._cond.wait_for(found, timeout=10), (self.paths, self.triggers)

    def reported(self, path: Path) -> None:
        self.wait_for(lambda: str(path) in self.paths)

    def settled(self, root: Path) -> None:
        """Every event before this call has been reported: one watch delivers its events in order."""
        marker = root / f"zz-marker-{len(self.paths)}.md"
        marker.write_text("x")
        self.reported(marker)


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[tuple[Path, Seen]]:
    """The vault index's watcher (h0.platform.watch.TreeWatcher) on a fresh folder."""
    root = tmp_path / "tree"
    root.mkdir()
    seen = Seen()
    watcher = TreeWatcher(str(root), seen.on_paths, seen.lost.set).start()
    try:
        yield root, seen
    finally:
        watcher.stop()


@pytest.fixture
def watched(vault_dir: Path) -> Iterator[tuple[Path, Seen, VaultWatcher]]:
    """The daemon's watcher (h0.pipeline.watcher.VaultWatcher) on a vault with its folders."""
    seen = Seen()
    watcher = VaultWatcher(vault_dir, seen.on_path, seen.lost.set, on_note=seen.on_note)
    watcher.start()
    try:
        yield vault_dir, seen, watcher
    finally:
        watcher.stop()


def test_the_native_watcher_is_watchdogs_inotify_observer_and_reports_closes(watched) -> None:
    _, _, watcher = watched
    assert watcher.reports_closes is True
    assert type(watcher.observer).__module__ == "watchdog.observers.inotify"


def test_an_atomic_write_is_reported_as_its_note_and_its_temp_file_never(watched, tree) -> None:
    """Given H0's atomic write (a hidden `.tmp` file, written, closed, renamed over the note), when it
    lands in Needs_Action/, then the daemon's watcher reports the note complete once and the index's
    watcher the note's path, and neither ever names the temp file."""
    root, seen, _ = watched
    note = root / "Needs_Action/EMAIL_1.md"
    atomic_write(note, b"---\nstatus: pending\n---\nhello\n")
    seen.wait_for(lambda: ("Needs_Action/EMAIL_1.md", CLOSED, None) in seen.triggers)
    seen.settled(root)
    assert [t for t in seen.triggers if t[0] == "Needs_Action/EMAIL_1.md"] == [
        ("Needs_Action/EMAIL_1.md", CLOSED, None)
    ]
    assert not [p for p in seen.paths if is_temp_name(os.path.basename(p))]

    tree_root, tree_seen = tree
    atomic_write(tree_root / "note.md", b"hello\n")
    tree_seen.reported(tree_root / "note.md")
    tree_seen.settled(tree_root)
    assert not [p for p in tree_seen.paths if is_temp_name(os.path.basename(p))]


def test_a_drag_a_move_from_outside_and_a_rename_in_place_are_told_apart(watched, tmp_path: Path) -> None:
    """Given a draft, when the human drags it into Approved/, then it arrives as a move paired with the
    folder it came from; a note moved in from outside the vault is a move from nowhere; a rename within
    the folder (an editor's atomic save) is a close; a note moved out of the vault is reported gone."""
    root, seen, _ = watched
    write_draft(root, "Drafts", "a.md")
    seen.wait_for(lambda: ("Drafts/a.md", CLOSED, None) in seen.triggers)
    (root / "Drafts/a.md").rename(root / "Approved/a.md")
    seen.wait_for(lambda: ("Approved/a.md", MOVED, "Drafts/a.md") in seen.triggers)
    outside = tmp_path / "from-outside.md"
    outside.write_text("---\nto: a@example.com\nsubject: x\n---\n")
    outside.rename(root / "Approved/in.md")
    seen.wait_for(lambda: ("Approved/in.md", MOVED, None) in seen.triggers)
    (root / "Approved/in.md").rename(root / "Approved/renamed.md")
    seen.wait_for(lambda: ("Approved/renamed.md", CLOSED, None) in seen.triggers)
    (root / "Approved/renamed.md").rename(tmp_path / "gone.md")
    seen.reported(root / "Approved/renamed.md")  # the index hears of it: the note left the vault


def test_a_folder_made_or_moved_in_is_watched_at_once_and_what_it_holds_is_reported(tree, tmp_path: Path) -> None:
    root, seen = tree
    made = root / "Projects" / "deep"
    made.mkdir(parents=True)
    seen.wait_for(seen.lost.is_set)  # a folder appeared: the index reconciles
    (made / "plan.md").write_text("plan")
    seen.reported(made / "plan.md")
    outside = tmp_path / "Archive"
    (outside / "old").mkdir(parents=True)
    (outside / "old" / "kept.md").write_text("kept")
    os.rename(outside, root / "Archive")
    seen.reported(root / "Archive" / "old" / "kept.md")  # what the folder brought with it
    (root / "Archive" / "old" / "new.md").write_text("new")
    seen.reported(root / "Archive" / "old" / "new.md")


def test_a_folder_renamed_within_the_vault_keeps_being_watched_under_its_new_name(tree) -> None:
    root, seen = tree
    (root / "Drafts" / "sub").mkdir(parents=True)
    seen.settled(root)
    os.rename(root / "Drafts", root / "Drafts2")
    seen.settled(root)
    (root / "Drafts2" / "sub" / "x.md").write_text("x")
    seen.reported(root / "Drafts2" / "sub" / "x.md")


def test_a_symlinked_folder_below_the_vault_is_never_followed(tree, tmp_path: Path) -> None:
    """Given a symlink inside the vault to a folder outside it, when a file changes out there, then no
    watcher of the vault hears of it (a link made after the start, and one there before it)."""
    root, seen = tree
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "link").symlink_to(elsewhere, target_is_directory=True)
    seen.settled(root)
    (elsewhere / "secret.md").write_text("x")
    seen.settled(root)
    again = TreeWatcher(str(root), seen.on_paths, seen.lost.set).start()  # the link is there at its start
    try:
        (elsewhere / "secret2.md").write_text("x")
        seen.settled(root)
    finally:
        again.stop()
    assert [p for p in seen.paths if "secret" in p] == []


def test_a_vault_reached_through_a_symlink_is_watched_under_the_path_it_was_given(tmp_path: Path) -> None:
    """Given VAULT_PATH naming a symlink to the vault, then changes at the vault's top level and in its
    folders (one made after the start too) are reported under the path it was given."""
    real = tmp_path / "real-vault"
    (real / "Approved").mkdir(parents=True)
    link = tmp_path / "vault-link"
    link.symlink_to(real, target_is_directory=True)
    seen = Seen()
    watcher = TreeWatcher(str(link), seen.on_paths, seen.lost.set).start()
    try:
        (real / "Approved" / "x.md").write_text("x")
        seen.reported(link / "Approved" / "x.md")
        (real / "top.md").write_text("x")
        seen.reported(link / "top.md")
        (real / "Rejected").mkdir()
        (real / "Rejected" / "r.md").write_text("x")
        seen.reported(link / "Rejected" / "r.md")
    finally:
        watcher.stop()


# Writes to two files, alternately, as fast as a process can: the kernel merges no two of its events,
# and queues them far faster than any reader in Python takes them.
FLOOD = "import os, sys\na, b = (os.open(p, os.O_WRONLY) for p in sys.argv[1:])\nwhile True:\n    os.write(a, b'x')\n    os.write(b, b'y')\n"


def test_when_the_kernel_drops_events_the_watchers_say_so_and_the_daemon_sweeps(vault_dir: Path) -> None:
    """Given a running daemon and the vault index's watcher, when the kernel's inotify queue overflows
    (watchdog logs it: it has no event for it), then the index reconciles everything and the daemon
    sweeps the vault."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 1_000_000:
        pytest.skip(f"the kernel queues {limit} events: too many to overflow quickly")
    reasons: list[str] = []

    def on_sweep(sender: object, queued: int, reason: str) -> None:
        reasons.append(reason)

    pair = [vault_dir / "flood-a.txt", vault_dir / "flood-b.txt"]
    for path in pair:
        path.write_text("")
    lost = threading.Event()
    index = TreeWatcher(str(vault_dir), lambda paths: None, lost.set).start()
    signals.sweep_completed.connect(on_sweep, weak=False)
    try:
        with running_daemon(vault_dir, sweep_interval_seconds=3600):
            flood = subprocess.Popen([sys.executable, "-c", FLOOD, *map(str, pair)])
            try:
                assert wait_until(lambda: "inotify queue overflow" in reasons, timeout=30)
                assert lost.wait(10)
            finally:
                flood.kill()
                flood.wait()
    finally:
        signals.sweep_completed.disconnect(on_sweep)
        index.stop()


def test_when_the_observers_reader_stops_the_daemon_watches_again_and_sweeps(vault_dir: Path) -> None:
    """Given a running daemon, when the thread that reads its watch stops (watchdog's emitter: it stops
    by itself when the watched folder goes), then the daemon starts a new watcher, and the sweep sends
    the draft approved while nobody watched."""
    with running_daemon(vault_dir, sweep_interval_seconds=3600) as daemon:
        observer = daemon.watcher.observer
        assert observer is not None and observer.emitters
        for emitter in observer.emitters:
            emitter.stop()
            emitter.join(5)
        write_draft(vault_dir, "Approved", "missed.md")
        assert wait_until(lambda: (vault_dir / "Done/missed.md").exists(), timeout=20)
        assert daemon.watcher.observer is not observer
    restarted = events(vault_dir, event="watcher_restarted")
    assert restarted and restarted[0]["reason"] == "the observer thread died"
