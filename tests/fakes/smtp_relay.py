"""A real SMTP server on loopback (aiosmtpd) that can misbehave the way relays do after DATA: take the
message and drop the connection before answering, or take it and never answer (the client times out).
Plain SMTP without TLS or login: the daemon's tests are about what H0 does with the answer, and
tests/mail/test_smtp_backend.py covers TLS and AUTH against the same library."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from aiosmtpd.controller import Controller

Misbehaviour = Literal["answer", "drop_after_data", "stall_after_data"]


@dataclass
class Relay:
    """The aiosmtpd handler: keeps every message that arrived (whatever it answered)."""

    mode: Misbehaviour = "answer"
    stall_s: float = 30.0
    received: list[Any] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.received.append(envelope)
        self.arrived.set()
        if self.mode == "drop_after_data":  # the message is here; its answer never leaves
            server.transport.close()
        elif self.mode == "stall_after_data":  # the message is here; the answer comes after the client gave up
            await asyncio.sleep(self.stall_s)
        return "250 2.0.0 OK queued"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def smtp_relay(mode: Misbehaviour = "answer", *, stall_s: float = 30.0) -> Iterator[tuple[Relay, int]]:
    """A running relay and its port; stopped afterwards."""
    relay = Relay(mode=mode, stall_s=stall_s)
    controller = Controller(relay, hostname="127.0.0.1", port=_free_port())
    controller.start()
    try:
        yield relay, controller.port
    finally:
        controller.stop()


def smtp_settings(port: int) -> dict[str, Any]:
    """The settings of a daemon that sends through the relay at `port`."""
    return {
        "mail_backend": "smtp",
        "smtp_host": "127.0.0.1",
        "smtp_port": port,
        "smtp_secure": "none",
        "smtp_from": "owner@example.com",
    }
