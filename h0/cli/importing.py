"""`h0 import` at the terminal: one import of a vault at a time, progress while it runs, Ctrl-C that
stops after the message in hand (exit 130; the same command resumes), and the summary lines."""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from h0.cli.common import EXIT_FAILED, EXIT_LOCKED, EXIT_OK, EXIT_WORK_FAILED

if TYPE_CHECKING:
    from h0.config import Settings
    from h0.handlers.mail_import import ImportReport

EXIT_INTERRUPTED = 130
LOCK_FILE = "import.lock"
LINE_EVERY_S = 2.0  # "N of M" lines when stderr is not a terminal


class Progress:
    """A bar on a terminal (tqdm, over bytes read), else a line every few seconds: messages, MB of MB."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.last = 0.0
        self.tty = sys.stderr.isatty()

    def __call__(self, report: ImportReport) -> None:
        if self.tty:
            if self.bar is None:
                from tqdm import tqdm  # type: ignore[import-untyped]

                self.bar = tqdm(total=report.bytes_total, unit="B", unit_scale=True, desc="h0 import", leave=False)
            self.bar.update(report.bytes_done - self.bar.n)
            self.bar.set_postfix_str(f"{report.read} messages", refresh=False)
            return
        now = time.monotonic()
        if now - self.last >= LINE_EVERY_S or report.bytes_done >= report.bytes_total:
            self.last = now
            print(
                f"h0 import: {report.read} messages read, {_mb(report.bytes_done)} of {_mb(report.bytes_total)} MB",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _mb(size: int) -> str:
    return f"{size / 1_048_576:.1f}"


def run_import(settings: Settings, paths: list[Path], *, as_notes: bool = False) -> int:
    from h0.handlers.context import HandlerContext
    from h0.handlers.mail_import import MailImport
    from h0.platform.locks import ProcessLock
    from h0.platform.proc import on_stop_signals, stop_signals
    from h0.printable import printable
    from h0.state import StateDB, state_dir_for
    from h0.vault import Vault

    missing = [p for p in paths if not p.exists() and not p.is_symlink()]
    if missing:
        print(f"h0 import: no such file or folder: {', '.join(printable(str(p)) for p in missing)}", file=sys.stderr)
        return EXIT_FAILED
    lock = ProcessLock(state_dir_for(Path(settings.vault_path), settings.h0_state_dir) / LOCK_FILE)
    if not lock.try_acquire():
        print(
            "h0 import: another `h0 import` into this vault is running; wait for it to finish (or stop it), "
            "then run this one again.",
            file=sys.stderr,
        )
        return EXIT_LOCKED
    stop = threading.Event()
    main_thread = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.getsignal(sig) for sig in stop_signals()} if main_thread else {}
    if main_thread:
        on_stop_signals(lambda _name: stop.set())  # after the message in hand, not in the middle of a write
    progress = Progress()
    try:
        state = StateDB.for_vault(Path(settings.vault_path), settings.h0_state_dir)
        ctx = HandlerContext.local(settings, Vault(Path(settings.vault_path)), state_db=state)
        report = MailImport(ctx, as_notes=as_notes, stop=stop, progress=progress).run(paths)
    finally:
        progress.close()
        lock.release()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print(report.line())
    for problem in report.problems:
        print(f"  ✗ {printable(problem.source)}: {printable(problem.reason)}")
    if report.stopped == "interrupted":
        print(f"h0 import: interrupted after {report.read} messages; run the same command again to resume.")
        return EXIT_INTERRUPTED
    if report.stopped:
        print(f"h0 import: {printable(report.stopped)}. What was imported is kept; the same command resumes.")
        return EXIT_FAILED
    if report.work:
        print("Run `h0 sweep` (or `h0 watch`) to triage them.")
    return EXIT_WORK_FAILED if report.problems else EXIT_OK
