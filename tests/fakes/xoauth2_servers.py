"""Servers that take XOAUTH2 logins, for IMAP_AUTH=oauth2: a small IMAP4rev1 server (AUTHENTICATE XOAUTH2, then
SELECT INBOX) and an aiosmtpd SMTP server with an `AUTH XOAUTH2` mechanism. Each accepts a bearer token when
`accepts(token)` says so (the fake authority's issued tokens) and the user named is the account.

pymap and Dovecot would need an OAuth2 introspection service to take XOAUTH2; these speak the two
protocols' real exchanges (RFC 3501 AUTHENTICATE with a continuation, RFC 4954 AUTH) to the real client
libraries H0 uses (imapclient's `oauth2_login`, smtplib's `auth`), which is what the login code is about.
"""

from __future__ import annotations

import base64
import socket
import socketserver
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Self

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def decode(response: bytes | str) -> tuple[str, str]:
    """(user, token) of an XOAUTH2 initial response, ("", "") when it is not one."""
    try:
        text = base64.b64decode(response).decode()
    except ValueError:
        return "", ""
    fields = dict(part.split("=", 1) for part in text.split("\x01") if "=" in part)
    return fields.get("user", ""), fields.get("auth", "").removeprefix("Bearer ")


class XOAuth2Imap:
    """One account's INBOX behind AUTHENTICATE XOAUTH2 (nothing else logs in)."""

    def __init__(self, user: str, accepts: Callable[[str], bool]) -> None:
        self.user, self.accepts = user, accepts
        self.logins: list[tuple[str, bool]] = []  # (user, accepted)
        self.port = _free_port()
        fake = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                self.wfile.write(b"* OK [CAPABILITY IMAP4rev1 AUTH=XOAUTH2] fake ready\r\n")
                authed = False
                while line := self.rfile.readline():
                    tag, _, rest = line.decode().strip().partition(" ")
                    command = rest.split(" ")[0].upper()
                    if command == "CAPABILITY":
                        self.wfile.write(b"* CAPABILITY IMAP4rev1 AUTH=XOAUTH2\r\n" + f"{tag} OK done\r\n".encode())
                    elif command == "AUTHENTICATE" and rest.upper().endswith("XOAUTH2"):
                        self.wfile.write(b"+ \r\n")
                        user, token = decode(self.rfile.readline().strip())
                        authed = user == fake.user and fake.accepts(token)
                        fake.logins.append((user, authed))
                        answer = "OK [CAPABILITY IMAP4rev1] logged in" if authed else "NO [AUTHENTICATIONFAILED] no"
                        self.wfile.write(f"{tag} {answer}\r\n".encode())
                    elif command in ("SELECT", "EXAMINE") and authed:
                        self.wfile.write(
                            b"* FLAGS (\\Seen \\Flagged)\r\n* 0 EXISTS\r\n* 0 RECENT\r\n"
                            b"* OK [PERMANENTFLAGS (\\Seen \\Flagged \\*)] ok\r\n"
                            b"* OK [UIDVALIDITY 7] ok\r\n* OK [UIDNEXT 1] ok\r\n"
                            + f"{tag} OK [READ-WRITE] selected\r\n".encode()
                        )
                    elif command == "LOGOUT":
                        self.wfile.write(b"* BYE bye\r\n" + f"{tag} OK done\r\n".encode())
                        return
                    elif command == "NOOP":
                        self.wfile.write(f"{tag} OK done\r\n".encode())
                    else:
                        self.wfile.write(f"{tag} BAD not here\r\n".encode())

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True

    def __enter__(self) -> Self:
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class XOAuth2Relay:
    """The aiosmtpd handler: AUTH XOAUTH2 for one account, and every message that arrived."""

    def __init__(self, user: str, accepts: Callable[[str], bool]) -> None:
        self.user, self.accepts = user, accepts
        self.logins: list[tuple[str, bool]] = []
        self.received: list[Any] = []

    async def auth_XOAUTH2(self, server: Any, args: list[str]) -> AuthResult:
        response = args[1] if len(args) > 1 else await server.challenge_auth("", encode_to_b64=False)
        user, token = decode(response if isinstance(response, (bytes, str)) else b"")
        accepted = user == self.user and self.accepts(token)
        self.logins.append((user, accepted))
        return AuthResult(success=accepted, handled=False, auth_data=user)  # not handled: aiosmtpd answers 235 or 535

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if not session.authenticated:
            return "530 5.7.0 Authentication required"
        self.received.append(envelope)
        return "250 2.0.0 OK queued"


@contextmanager
def xoauth2_relay(user: str, accepts: Callable[[str], bool]) -> Iterator[tuple[XOAuth2Relay, int]]:
    relay = XOAuth2Relay(user, accepts)
    controller = Controller(relay, hostname="127.0.0.1", port=_free_port(), auth_require_tls=False)
    controller.start()
    try:
        yield relay, controller.port
    finally:
        controller.stop()
