"""A real CalDAV server for the tests: Radicale on a loopback port, in a temp dir, one user.

Radicale (PyPI) is a small, maintained CalDAV/CardDAV server; it runs as a child process exactly
as `python -m radicale` would for a person, and the tests reach it only over HTTP, through the
`caldav` client library, as H0 does."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from pathlib import Path

import caldav

from tests.fakes.imap_server import free_port

USER, PASSWORD = "owner", "caldav-secret"


class RadicaleServer:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> RadicaleServer:
        users = self.root / "users"
        users.write_text(f"{USER}:{PASSWORD}\n")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "radicale",
                "--server-hosts",
                f"127.0.0.1:{self.port}",
                "--storage-filesystem-folder",
                str(self.root / "collections"),
                "--auth-type",
                "htpasswd",
                "--auth-htpasswd-filename",
                str(users),
                "--auth-htpasswd-encryption",
                "plain",
                "--logging-level",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"radicale exited with {self.process.returncode}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return self
            time.sleep(0.05)
        raise RuntimeError("radicale did not start listening")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def calendar(self, name: str) -> caldav.Calendar:
        """A calendar of the user's (made if missing), for a test to put events in."""
        client = caldav.DAVClient(url=self.url, username=USER, password=PASSWORD)
        principal = client.principal()
        for calendar in principal.calendars():
            if calendar.get_display_name() == name:
                return calendar
        return principal.make_calendar(name=name)
