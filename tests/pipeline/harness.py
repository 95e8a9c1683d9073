"""Run the real pipeline in-process for tests: real inotify, real MCP sessions to the two servers.

The servers run in this process over the SDK's in-memory transport by default (`in_process_servers`,
built by h0.mcp.servers as `h0 mcp vault` / `h0 mcp gmail` build them):
the same tools, wire format and client as over stdio, without two Python start-ups per test. The
end-to-end tests that are about the processes themselves (a server killed, `h0 watch` as a command,
the stdio pipes) pass `spawned=True` or run the CLI, and get `h0 mcp vault` / `h0 mcp gmail` as
child processes, as the daemon always runs them outside tests.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any

from h0.config import Settings, load_settings
from h0.mcp.client import InProcessServer, ServerCommand
from h0.mcp.servers import in_process_servers, mail_server, vault_server
from h0.mcp.vault_server import daemon_filing_from_env
from h0.pipeline.daemon import Daemon, ServerTargets, spawned_servers
from h0.pipeline.settle import MACHINE_CLOCKS, Clocks
from h0.platform.machine import Machine
from h0.report.dashwriter import start_dashboard
from h0.vault import AuditLog, Vault


def wait_until(predicate: Callable[[], Any], timeout: float = 20.0, interval: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            return value
        time.sleep(interval)


def settings_for(vault_dir: Path, **overrides: Any):
    # A 1 s approval settle period (default 10 s) keeps tests of notes written in place fast.
    base = {
        "vault_path": vault_dir,
        "mail_backend": "outbox",
        "retry_delay_ms": 200,
        "log_level": "WARNING",
        "approval_settle_seconds": 1.0,
    }
    base.update(overrides)
    return load_settings(**base)


class FakeClocks:
    """Clocks for the daemon (`.clocks`, h0.pipeline.settle.Clocks) that stand still until the test moves
    them: `advance(seconds)` passes a settle or quiet period without sleeping through it. Monotonic and
    wall time move together from the real time. File times stay the kernel's: a file written during
    the test is a few real seconds "in the future" until the clocks move by more than that, and one
    written after they moved looks that much older — so the daemon's events, not its file times, are
    what such a test holds (the mail server's own file-time check is tested on its own fake clock)."""

    def __init__(self) -> None:
        self._offset = 0.0
        self._monotonic, self._wall = time.monotonic(), time.time()
        self.clocks = Clocks(monotonic=lambda: self._monotonic + self._offset, wall=lambda: self._wall + self._offset)

    def monotonic(self) -> float:
        return self.clocks.monotonic()

    def advance(self, seconds: float) -> None:
        self._offset += seconds


def servers_on(clocks: Clocks) -> ServerTargets:
    """`in_process_servers` whose mail server decides the settle period on `clocks` too, as the daemon does."""
    from h0.mail import MailService

    def targets(settings: Settings, env: Mapping[str, str]) -> dict[str, ServerCommand | InProcessServer]:
        child = daemon_filing_from_env(env)

        def mail() -> Any:
            return mail_server(settings, MailService(settings, trusted_caller=child, clock=clocks.wall))

        return {
            "vault": InProcessServer("vault", lambda: vault_server(settings, daemon_child=child)),
            "mail": InProcessServer("mail", mail),
        }

    return targets


@contextmanager
def running_daemon(
    vault_dir: Path,
    *,
    workers: int = 4,
    triager: Any = None,
    spawned: bool = False,
    clocks: Clocks = MACHINE_CLOCKS,
    machine: Machine | None = None,
    **overrides: Any,
) -> Iterator[Daemon]:
    """A started daemon on `vault_dir`, its maintenance loop running; its servers in process unless `spawned`.
    `clocks` (a `FakeClocks`): what its waits run on, its mail server's settle period included."""
    daemon = Daemon(
        settings_for(vault_dir, **overrides),
        workers=workers,
        triager=triager,
        companions=[start_dashboard],
        servers=spawned_servers if spawned else in_process_servers if clocks is MACHINE_CLOCKS else servers_on(clocks),
        clocks=clocks,
        machine=machine,
    )
    daemon.start()
    stop = threading.Event()
    loop = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    loop.start()
    try:
        yield daemon
    finally:
        stop.set()
        loop.join(5)
        daemon.stop()


def sweep_once(vault_dir: Path, *, timeout: float = 120.0, **overrides: Any) -> Daemon:
    """One pass as `h0 sweep` makes it (h0.cli.work.cmd_sweep), in process: the daemon it builds
    (h0.cli.common.build_daemon: triage by the settings' engine, ingest, the dashboard), one pass
    without a watcher, then stopped; its servers in process. The returned daemon's `tally` says what
    the pass did (`tally.failed`: `h0 sweep` would exit 4). The command itself, with its exit codes
    and stderr, is tested as a real process in tests/test_cli_sweep.py and tests/pipeline/test_cli_daemon.py."""
    from h0.triage import Triager

    settings = settings_for(vault_dir, **overrides)
    daemon = Daemon(
        settings,
        triager=Triager.from_settings(settings, settings.vault_path),
        ingest=True,
        companions=[start_dashboard],
        servers=in_process_servers,
    )
    daemon.one_pass = True
    daemon.start(watch=False)
    try:
        assert daemon.run_once(timeout=timeout), f"the pass was still running after {timeout:.0f} s"
    finally:
        daemon.stop()
    return daemon


@contextmanager
def counting_sweeps(daemon: Daemon) -> Iterator[Callable[[int], bool]]:
    """Count the daemon's sweeps; yields `after(n)`: wait until `n` more sweeps have run and the
    queue holds nothing due within 5 s — "several sweeps later", as an event, not a sleep."""
    from h0.pipeline import signals

    seen: list[str] = []

    def on_sweep(sender: Any, **fields: Any) -> None:
        if sender is daemon:
            seen.append(str(fields.get("reason")))

    signals.sweep_completed.connect(on_sweep, weak=False)

    def after(n: int) -> bool:
        start = len(seen)
        # Idle asked at once, again and again for up to 20 s of real time: the queue's own clock may be a fake one
        # that stands still (its deadline would never come).
        return bool(wait_until(lambda: len(seen) >= start + n)) and bool(
            wait_until(lambda: daemon.queue.wait_idle(0, horizon=5.0))
        )

    try:
        yield after
    finally:
        signals.sweep_completed.disconnect(on_sweep)


def write_draft(
    vault_dir: Path,
    folder: str,
    name: str,
    *,
    to: str = "bob@example.com",
    subject: str = "Hello",
    body: str = "Hi Bob,\n\nSee you soon.\n",
    settled: bool = True,
    **extra: Any,
) -> Path:
    """Write a draft note. In Approved/ it is by default one that has sat there a minute: a note
    written in place there is sent only once it has been unchanged for the settle period."""
    lines = ["---", f"to: {to}", f"subject: {subject!r}"] + [f"{k}: {v}" for k, v in extra.items()] + ["---", body]
    path = vault_dir / folder / name
    path.write_text("\n".join(lines))
    if settled and folder == "Approved":
        then = time.time() - 60
        os.utime(path, (then, then))
    return path


def edit_template(vault_dir: Path, name: str) -> None:
    """The human's edit of an H0 template draft in Drafts/: the marker line goes, and the rules-mode
    briefing above the cut-off (a `> ` block with its [FILL]) becomes the human's answer."""
    path = vault_dir / "Drafts" / name
    above, cut, below = path.read_text().partition("%% h0: not sent below %%")
    lines: list[str] = []
    for line in above.split("\n"):
        if line.startswith("[H0 draft"):
            continue
        if line.startswith((">", "[FILL:")):
            if not lines or lines[-1] != "Sounds good to me.":
                lines.append("Sounds good to me.")
            continue
        lines.append(line)
    path.write_text("\n".join(lines) + cut + below)


def approve(vault_dir: Path, name: str) -> None:
    """The human's act: move a draft from Drafts/ into Approved/ (an atomic rename, as Obsidian does)."""
    (vault_dir / "Drafts" / name).rename(vault_dir / "Approved" / name)


def outbox(vault_dir: Path) -> list[Any]:
    return [
        message_from_bytes(p.read_bytes().replace(b"\r\n", b"\n"), policy=policy.default)
        for p in sorted((vault_dir / "Outbox").glob("*.eml"))
    ]


def events(vault_dir: Path, stream: str = "h0", event: str | None = None) -> list[dict[str, Any]]:
    return list(AuditLog(vault_dir / "Logs", stream).records(event=event))


def frontmatter(vault_dir: Path, rel: str) -> dict[str, Any]:
    return Vault(vault_dir).read_note(rel).frontmatter
