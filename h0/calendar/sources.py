"""Where the owner's calendar comes from: .ics files, http(s) iCal feeds and CalDAV accounts, as bytes.

Every source answers one question, `read() -> bytes` (iCalendar text), so the cache and the
expansion never know which kind it was. A feed is read with a size bound (a 100 MB answer is
refused after the bound, never loaded) and a whole-read deadline: CALENDAR_TIMEOUT_SECONDS from the
first byte asked for to the last one read, whatever the server does — a server trickling a byte at
a time (its headers too) never waits out a socket timeout, so at the deadline H0 shuts the socket.
A CalDAV account answers with every event of every calendar in a window around today, fetched by
the `caldav` library in a thread of its own that H0 stops waiting for at the same deadline.

A feed's address is a secret (calendar apps hand out private links), so a source's `name`
shows only its scheme and host; the full address never reaches a log, doctor or a note.
"""

from __future__ import annotations

import functools
import http.client
import socket
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlsplit

import caldav
from caldav.lib import error as caldav_error

from h0.config import Settings
from h0.errors import AuthRequired, H0Error, InvalidRequest, NotFound
from h0.platform.deadline import Late, answer_within
from h0.platform.fs import regular_file

CALDAV_DAYS_BEFORE = 1
CALDAV_DAYS_AFTER = 120  # how far ahead a CalDAV account is read: proposals never go past it
_CHUNK = 64 * 1024


class CalendarUnavailable(NotFound):
    """A calendar source could not be read now (unreachable, timed out, refused): its last good copy serves."""


class CalendarTooLarge(InvalidRequest):
    """A calendar source is larger than CALENDAR_MAX_MB: refused unread past the bound."""


@dataclass(frozen=True, slots=True)
class Source:
    """One calendar source: a name safe to show, a key for its cache, and how to read it."""

    name: str
    key: str
    read: Callable[[], bytes]
    local: bool = False  # a file: read again whenever it changes, nothing to cache
    path: Path | None = None


def sources_for_settings(settings: Settings) -> list[Source]:
    """Every source CALENDAR_ICS and CALDAV_URL name, in that order (none: no calendar)."""
    limit = int(settings.calendar_max_mb * 1024 * 1024)
    timeout = settings.calendar_timeout_seconds
    found: list[Source] = []
    for entry in (e.strip() for e in settings.calendar_ics.split(",")):
        if not entry:
            continue
        if entry.lower().startswith(("http://", "https://", "webcal://")):
            url = "https://" + entry[len("webcal://") :] if entry.lower().startswith("webcal://") else entry
            found.append(Source(feed_name(url), url, _feed_reader(url, timeout, limit)))
        else:
            path = Path(entry).expanduser()
            found.append(Source(path.name, str(path), _file_reader(path, limit), local=True, path=path))
    if settings.caldav_url:
        password = settings.caldav_password.get_secret_value() if settings.caldav_password else None
        url = settings.caldav_url
        found.append(
            Source(
                f"CalDAV {feed_name(url)}",
                f"caldav:{url}:{settings.caldav_user or ''}",
                _caldav_reader(url, settings.caldav_user, password, timeout, limit),
            )
        )
    return found


def feed_name(url: str) -> str:
    """A feed's address as it may be shown: scheme and host only (the path is often the secret)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or '?'}{':' + str(parts.port) if parts.port else ''}/…"


def _file_reader(path: Path, limit: int) -> Callable[[], bytes]:
    def read() -> bytes:
        try:
            with regular_file(path) as handle:
                data = handle.read(limit + 1)
        except FileNotFoundError:
            raise NotFound(f"The calendar file {path.name} does not exist.", source=path.name) from None
        except OSError as exc:
            raise CalendarUnavailable(f"The calendar file {path.name} cannot be read ({exc.strerror}).") from None
        if len(data) > limit:
            raise _too_large(path.name, limit)
        return data

    return read


class _Deadline:
    """Shuts every socket of one read down when `seconds` have passed since it began: whatever the read
    is waiting for (a connection, a header, the next byte) ends at once. A context manager."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.passed = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Self:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            late = self.passed
        if late:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.passed = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed: the read is over anyway


class _Connection(http.client.HTTPConnection):
    """A connection whose socket the whole read's deadline watches, from the moment it is connected."""

    def __init__(self, *args: Any, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deadline = deadline

    def connect(self) -> None:
        super().connect()  # HTTPSConnection's too, below: the TLS socket is the one watched
        self.deadline.watch(self.sock)


class _SecureConnection(_Connection, http.client.HTTPSConnection):
    """The same over TLS (HTTPSConnection's connect and its context, through _Connection's)."""


class _Handler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_Connection, deadline=self.deadline), req)


class _SecureHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline
        self.tls = ssl.create_default_context()

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_SecureConnection, deadline=self.deadline), req, context=self.tls)


def _feed_reader(url: str, timeout: float, limit: int) -> Callable[[], bytes]:
    name = feed_name(url)

    def read() -> bytes:
        request = urllib.request.Request(url, headers={"User-Agent": "H0 calendar", "Accept": "text/calendar, */*"})
        with _Deadline(timeout) as deadline:
            try:
                opener = urllib.request.build_opener(_Handler(deadline), _SecureHandler(deadline))
                data = _body(opener.open(request, timeout=timeout), name, limit)
            except urllib.error.HTTPError as exc:
                if exc.code in (401, 403):
                    raise AuthRequired(f"The calendar feed {name} refused H0 (HTTP {exc.code}).", source=name) from None
                raise CalendarUnavailable(f"The calendar feed {name} answered HTTP {exc.code}.", source=name) from None
            except (urllib.error.URLError, http.client.HTTPException, TimeoutError, OSError) as exc:
                if deadline.passed:
                    raise _late(name, timeout) from None
                reason = getattr(exc, "reason", exc)
                raise CalendarUnavailable(
                    f"The calendar feed {name} could not be read ({type(reason).__name__}: {str(reason)[:80]}).",
                    source=name,
                ) from None
            if deadline.passed:  # the socket was shut mid-answer: what was read is not the calendar
                raise _late(name, timeout)
            return data

    return read


def _body(response: http.client.HTTPResponse, name: str, limit: int) -> bytes:
    with response:
        declared = response.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > limit:
            raise _too_large(name, limit)
        chunks: list[bytes] = []
        size = 0
        while chunk := response.read(_CHUNK):
            size += len(chunk)
            if size > limit:
                raise _too_large(name, limit)
            chunks.append(chunk)
        return b"".join(chunks)


def _late(name: str, timeout: float) -> CalendarUnavailable:
    return CalendarUnavailable(
        f"The calendar {name} did not answer within {timeout:g} s (CALENDAR_TIMEOUT_SECONDS).", source=name
    )


def _caldav_reader(url: str, user: str | None, password: str | None, timeout: float, limit: int) -> Callable[[], bytes]:
    name = f"CalDAV {feed_name(url)}"

    def fetch() -> bytes:
        now = datetime.now(UTC)
        start, end = now - timedelta(days=CALDAV_DAYS_BEFORE), now + timedelta(days=CALDAV_DAYS_AFTER)
        chunks: list[bytes] = []
        size = 0
        try:
            dav: Any = caldav.DAVClient
            with dav(url=url, username=user, password=password, timeout=int(timeout)) as client:
                principal: Any = client.principal()
                for calendar in principal.calendars():
                    found: Any = calendar.search(start=start, end=end, event=True, expand=False)
                    for event in found:
                        data = event.data
                        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data or b"")
                        size += len(raw)
                        if size > limit:
                            raise _too_large(name, limit)
                        chunks.append(raw)
        except H0Error:
            raise
        except caldav_error.AuthorizationError:
            raise AuthRequired(f"{name} refused the user and password in CALDAV_USER/CALDAV_PASSWORD.") from None
        except Exception as exc:  # noqa: BLE001 - a server's every failure is this source's error, never a crash
            raise CalendarUnavailable(f"{name} could not be read ({type(exc).__name__}: {str(exc)[:80]}).") from None
        return b"\n".join(chunks) if chunks else b"BEGIN:VCALENDAR\nVERSION:2.0\nEND:VCALENDAR\n"

    def read() -> bytes:
        try:
            return answer_within(timeout, fetch, "h0-calendar-caldav")
        except Late:
            raise _late(name, timeout) from None

    return read


def _too_large(name: str, limit: int) -> CalendarTooLarge:
    return CalendarTooLarge(
        f"The calendar {name} is larger than {limit // (1024 * 1024)} MB (CALENDAR_MAX_MB); H0 did not read it.",
        source=name,
    )
