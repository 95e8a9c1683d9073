"""`OwnerCalendar`: the owner's busy times from every source, kept warm for a process.

Handlers, the MCP server and the benchmarks ask `OwnerCalendar.for_settings(settings, root)`
(None: no source is configured) and get the same object for the same settings. A source is
read again when CALENDAR_REFRESH_MINUTES have passed since its last attempt (a file: when it
changed); a read that fails keeps the last good copy (h0.calendar.cache). Parsed calendars are
kept by content, and their expansion by window, so triage pays for parsing once per change,
not once per email.

Nothing here holds a lock while it reads, parses or expands: a source is read and parsed in a
thread of its own, bounded by CALENDAR_TIMEOUT_SECONDS (h0.calendar.sources). Whoever asks for a
window waits for that read only when the process has no copy of the source yet, or the source is
a file (read in milliseconds), and at most until the read's deadline and as long again for parsing;
otherwise the copy in memory answers at once and the read finishes on its own. A source of which
H0 has no copy at all makes the window end where it starts: nothing is known to be free.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from pathlib import Path

import icalendar
from loguru import logger

from h0.calendar.cache import SourceCache, SourceState, cache_folder
from h0.calendar.events import Busy, Expanded, expand, parse_calendar
from h0.calendar.free import merged
from h0.calendar.sources import Source, sources_for_settings
from h0.config import Settings
from h0.errors import H0Error
from h0.vault.dates import read_time

WINDOW_DAYS_AFTER = 62  # the expansion window: today (owner's zone) to this many days on
_instances: dict[tuple[object, ...], OwnerCalendar] = {}
_instances_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Window:
    """Busy times of all sources over one window: intervals sorted by start, the horizon, and problems.

    Kept by OwnerCalendar until a source changes, so what is derived from it — the merged busy
    spans for a buffer, the events by attendee — is worked out once, not once per email."""

    busy: tuple[Busy, ...]
    start: datetime
    horizon: datetime
    problems: tuple[str, ...] = ()
    read: bool = True  # every source has a copy; else the horizon is the start: nothing is known to be free
    _spans: dict[int, list[tuple[datetime, datetime]]] = field(default_factory=dict, compare=False, repr=False)

    def spans(self, buffer_minutes: int = 0) -> list[tuple[datetime, datetime]]:
        """The busy times grown by the buffer, merged (h0.calendar.free.merged), computed once per buffer."""
        found = self._spans.get(buffer_minutes)
        if found is None:
            found = self._spans[buffer_minutes] = merged(self.busy, buffer_minutes)
        return found


@dataclass(slots=True)
class _Loaded:
    digest: str  # "" for no copy: the source could not be read and nothing of it was kept
    calendar: icalendar.Calendar | None
    stamp: object  # a file's (mtime, size), or when a feed was last tried (monotonic seconds)


@dataclass(frozen=True, slots=True)
class _Read:
    """A read of one source under way in its own thread; a caller waits for it until `until` at most."""

    until: float  # monotonic: the read's deadline, and as long again to parse what it read
    done: threading.Event


class OwnerCalendar:
    """Every calendar source of one owner; thread-safe. Its lock guards its tables only: it is never held
    across a read, a parse or an expansion."""

    def __init__(
        self,
        sources: list[Source],
        cache_folder: Path | None,
        refresh_seconds: float = 900.0,
        timeout_seconds: float = 10.0,
    ) -> None:
        self.sources = sources
        self.refresh_seconds = refresh_seconds
        self.timeout_seconds = timeout_seconds
        self._caches = {s.key: SourceCache(cache_folder, s.key, s.name) for s in sources}
        self._loaded: dict[str, _Loaded] = {}
        self._reads: dict[str, _Read] = {}
        self._problems: dict[str, str] = {}
        self._expanded: dict[tuple[str, date, int, str], Expanded] = {}
        self._windows: dict[tuple[object, ...], Window] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_settings(cls, settings: Settings, root: Path | None = None) -> OwnerCalendar | None:
        """The process's calendar for these settings, or None when no source is configured."""
        sources = sources_for_settings(settings)
        if not sources:
            return None
        vault = Path(root or settings.vault_path)
        refresh, timeout = settings.calendar_refresh_minutes * 60, settings.calendar_timeout_seconds
        key = (str(vault), str(settings.h0_state_dir), tuple(s.key for s in sources), refresh, timeout)
        with _instances_lock:
            found = _instances.get(key)
            if found is None:
                found = _instances[key] = cls(sources, cache_folder(vault, settings.h0_state_dir), refresh, timeout)
            return found

    def window(self, day: date, zone: tzinfo, zone_name: str, days: int = WINDOW_DAYS_AFTER) -> Window:
        """The busy times from the start of `day` (in `zone`) for `days` days, every source merged."""
        start = datetime.combine(day, datetime.min.time(), zone).astimezone(UTC)
        end = start + timedelta(days=days)
        begun = [(source, self._begin(source)) for source in self.sources]  # every due read started, then waited for
        loads = [(source, self._current(source, read)) for source, read in begun]
        with self._lock:
            said = tuple(self._problems.get(source.key) for source in self.sources)
            window_key = (tuple(loaded.digest if loaded else None for _, loaded in loads), said, day, days, zone_name)
            cached = self._windows.get(window_key)
        if cached is not None:
            return cached
        busy: list[Busy] = []
        horizon = end
        problems: list[str] = [p for p in said if p]
        known = True  # every source has a copy
        for (source, loaded), problem in zip(loads, said, strict=True):
            if loaded is None or loaded.calendar is None:
                known = False  # nothing of this source is known: no time is free
                if problem is None:
                    problems.append(f"H0 has not read the calendar {source.name} yet.")
                continue
            key = (loaded.digest, day, days, zone_name)
            with self._lock:
                expanded = self._expanded.get(key)
            if expanded is None:
                expanded = expand(loaded.calendar, start, end, zone, source.name)  # bounded (h0.calendar.events)
                with self._lock:
                    if len(self._expanded) > 32:  # yesterday's windows and replaced copies
                        self._expanded.clear()
                    self._expanded[key] = expanded
            busy += expanded.busy
            horizon = min(horizon, expanded.horizon)
            problems += [p.message for p in expanded.problems]
        busy.sort(key=lambda b: b.start)
        window = Window(tuple(busy), start, horizon if known else start, tuple(dict.fromkeys(problems)), known)
        with self._lock:
            if len(self._windows) > 32:
                self._windows.clear()
            self._windows[window_key] = window
        return window

    def states(self) -> list[SourceState]:
        """How each source's last read went (from the cache files: nothing is fetched)."""
        return [self._caches[s.key].state() for s in self.sources]

    def settled(self, timeout: float) -> bool:
        """Wait until no source is being read (at most `timeout` seconds): True when none is."""
        until = time.monotonic() + timeout
        while True:
            with self._lock:
                reads = list(self._reads.values())
            if not reads:
                return True
            for read in reads:
                if not read.done.wait(max(0.0, until - time.monotonic())):
                    return False

    def _begin(self, source: Source) -> tuple[_Loaded | None, _Read | None]:
        """The source's copy now, and its read under way (started here when one is due)."""
        stamp = _file_stamp(source) if source.local else time.monotonic()  # a stat of a stuck mount: no lock held
        with self._lock:
            current = self._loaded.get(source.key)
            read = self._reads.get(source.key)
            if read is None and self._due(source, current, stamp):
                read = self._start(source, current, stamp)
        return current, read

    def _current(self, source: Source, begun: tuple[_Loaded | None, _Read | None]) -> _Loaded | None:
        """The source's copy to use: after its read when there is no copy yet or it is a file (until the
        read's deadline at most), else the copy in memory at once (see the module's docstring)."""
        current, read = begun
        waits = read is not None and (current is None or current.calendar is None or source.local)
        if read is not None and waits and not read.done.wait(max(0.0, read.until - time.monotonic())):
            late = f"The calendar {source.name} could not be read within {self.timeout_seconds:g} s."
            with self._lock:
                self._problems.setdefault(source.key, late)
        with self._lock:
            return self._loaded.get(source.key)

    def _due(self, source: Source, current: _Loaded | None, stamp: object) -> bool:
        if current is None:
            return True
        if source.local:
            return current.stamp != stamp
        if not isinstance(current.stamp, float) or not isinstance(stamp, float):
            return True
        return stamp - current.stamp >= self.refresh_seconds

    def _start(self, source: Source, current: _Loaded | None, stamp: object) -> _Read:
        """Begin reading `source` in a thread of its own (the lock is held by the caller)."""
        read = _Read(time.monotonic() + 2 * self.timeout_seconds, threading.Event())
        self._reads[source.key] = read
        thread = threading.Thread(
            target=self._read, args=(source, current, stamp, read), name="h0-calendar-read", daemon=True
        )
        thread.start()
        return read

    def _read(self, source: Source, current: _Loaded | None, stamp: object, read: _Read) -> None:
        """Read and parse one source; what it found replaces the copy in memory (a failure keeps it). A process
        starting up takes a copy another process fetched recently, instead of fetching again."""
        cache = self._caches[source.key]
        try:
            data = cache.last_good() if current is None and not source.local and self._fresh_enough(cache) else None
            loaded = self._parsed(source, data, stamp, None) if data is not None else None
            from_disk = loaded is not None and loaded.calendar is not None
            if not from_disk:
                data = source.read()
                loaded = self._parsed(source, data, stamp, current, strict=True)
        except Exception as exc:  # noqa: BLE001 - a source's every failure is its own problem, never the process's
            if isinstance(exc, H0Error):
                message = exc.message
            else:
                logger.opt(exception=exc).warning("calendar {}: reading failed", source.name)
                message = f"The calendar {source.name} could not be read ({type(exc).__name__})."
            self._failed(source, current, stamp, message)
        else:
            if not from_disk and data is not None:
                cache.stored(data)
            with self._lock:
                self._problems.pop(source.key, None)
                if loaded is not None:
                    self._loaded[source.key] = loaded
        finally:
            with self._lock:
                self._reads.pop(source.key, None)
            read.done.set()

    def _failed(self, source: Source, current: _Loaded | None, stamp: object, message: str) -> None:
        """A read failed: said on the source (cache files, problems); the copy in memory stays, else the last good
        copy on disk is taken, else the source is noted as read with nothing (tried again when due)."""
        cache = self._caches[source.key]
        cache.failed(message)
        logger.warning("calendar {}: {}", source.name, message)
        kept = current if current is not None and current.calendar is not None else None
        if kept is None:
            data = cache.last_good()
            kept = self._parsed(source, data, stamp, None) if data is not None else None
        with self._lock:
            self._problems[source.key] = message
            self._loaded[source.key] = _Loaded(kept.digest, kept.calendar, stamp) if kept else _Loaded("", None, stamp)

    def _fresh_enough(self, cache: SourceCache) -> bool:
        """A process starting up uses a copy another process fetched recently, instead of fetching again."""
        state = cache.state()
        if state.last_try_at is None or state.error is not None:
            return False
        tried = read_time(state.last_try_at)  # a file anyone can edit: a bad or naive time never raises
        return tried is not None and (datetime.now(UTC) - tried).total_seconds() < self.refresh_seconds

    @staticmethod
    def _parsed(
        source: Source, data: bytes, stamp: object, current: _Loaded | None, *, strict: bool = False
    ) -> _Loaded:
        """`data` parsed (the copy in memory when it is the same bytes); not `strict`: None when it does not parse."""
        digest = hashlib.sha256(data).hexdigest()
        if current is not None and current.digest == digest:
            return _Loaded(digest, current.calendar, stamp)
        try:
            calendar = parse_calendar(data, source.name)
        except H0Error:
            if strict:
                raise
            calendar = None
        return _Loaded(digest, calendar, stamp)


def _file_stamp(source: Source) -> object:
    """A file's (mtime, size): it is read again when they change; None when it cannot be stat'ed."""
    try:
        info = source.path.stat() if source.path is not None else None
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size) if info is not None else None
