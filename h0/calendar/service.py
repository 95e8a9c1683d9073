"""`OwnerCalendar`: the owner's busy times from every source, kept warm for a process.

Handlers, the MCP server and the benchmarks ask `OwnerCalendar.for_settings(settings, root)`
(None: no source is configured) and get the same object for the same settings. A source is
read again when CALENDAR_REFRESH_MINUTES have passed since its last attempt (a file: when it
changed); a read that fails keeps the last good copy (h0.calendar.cache). Parsed calendars are
kept by content, and their expansion by window, so triage pays for parsing once per change,
not once per email.
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
from h0.errors import H0Error, ParseError

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
    _spans: dict[int, list[tuple[datetime, datetime]]] = field(default_factory=dict, compare=False, repr=False)
    _attending: dict[str, list[Busy]] = field(default_factory=dict, compare=False, repr=False)

    def spans(self, buffer_minutes: int = 0) -> list[tuple[datetime, datetime]]:
        """The busy times grown by the buffer, merged (h0.calendar.free.merged), computed once per buffer."""
        found = self._spans.get(buffer_minutes)
        if found is None:
            found = self._spans[buffer_minutes] = merged(self.busy, buffer_minutes)
        return found

    def attended_by(self, address: str) -> list[Busy]:
        """The events this address attends (or organises), in order of start."""
        if not self._attending and self.busy:
            index: dict[str, list[Busy]] = {"": []}
            for busy in self.busy:
                for person in busy.attendees:
                    index.setdefault(person, []).append(busy)
            self._attending.update(index)
        return self._attending.get(address.strip().lower(), [])


@dataclass(slots=True)
class _Loaded:
    digest: str
    calendar: icalendar.Calendar | None
    stamp: object  # a file's (mtime, size), or when a feed was last tried (monotonic seconds)


class OwnerCalendar:
    """Every calendar source of one owner; thread-safe."""

    def __init__(self, sources: list[Source], cache_folder: Path | None, refresh_seconds: float = 900.0) -> None:
        self.sources = sources
        self.refresh_seconds = refresh_seconds
        self._caches = {s.key: SourceCache(cache_folder, s.key, s.name) for s in sources}
        self._loaded: dict[str, _Loaded] = {}
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
        key = (str(vault), str(settings.h0_state_dir), tuple(s.key for s in sources), settings.calendar_refresh_minutes)
        with _instances_lock:
            found = _instances.get(key)
            if found is None:
                found = _instances[key] = cls(
                    sources, cache_folder(vault, settings.h0_state_dir), settings.calendar_refresh_minutes * 60
                )
            return found

    def window(self, day: date, zone: tzinfo, zone_name: str, days: int = WINDOW_DAYS_AFTER) -> Window:
        """The busy times from the start of `day` (in `zone`) for `days` days, every source merged."""
        start = datetime.combine(day, datetime.min.time(), zone).astimezone(UTC)
        end = start + timedelta(days=days)
        busy: list[Busy] = []
        horizon = end
        problems: list[str] = []
        with self._lock:
            loads = [(source, self._load(source)) for source in self.sources]
            window_key = (
                tuple(loaded.digest if loaded is not None else None for _, loaded in loads),
                tuple(self._problems.get(source.key) for source in self.sources),
                day,
                days,
                zone_name,
            )
            cached = self._windows.get(window_key)
            if cached is not None:
                return cached
            for source, loaded in loads:
                if source.key in self._problems:
                    problems.append(self._problems[source.key])
                if loaded is None or loaded.calendar is None:
                    continue
                key = (loaded.digest, day, days, zone_name)
                expanded = self._expanded.get(key)
                if expanded is None:
                    expanded = expand(loaded.calendar, start, end, zone, source.name)
                    if len(self._expanded) > 32:  # yesterday's windows and replaced copies
                        self._expanded.clear()
                    self._expanded[key] = expanded
                busy += expanded.busy
                horizon = min(horizon, expanded.horizon)
                problems += [p.message for p in expanded.problems]
            busy.sort(key=lambda b: b.start)
            window = Window(tuple(busy), start, horizon, tuple(dict.fromkeys(problems)))
            if len(self._windows) > 32:
                self._windows.clear()
            self._windows[window_key] = window
            return window

    def states(self) -> list[SourceState]:
        """How each source's last read went (from the cache files: nothing is fetched)."""
        return [self._caches[s.key].state() for s in self.sources]

    def _load(self, source: Source) -> _Loaded | None:
        """The source's parsed calendar: read again when due, else the one in memory or the last good copy."""
        current = self._loaded.get(source.key)
        cache = self._caches[source.key]
        stamp: object
        if source.local and source.path is not None:
            try:
                info = source.path.stat()
                stamp = (info.st_mtime_ns, info.st_size)
            except OSError:
                stamp = None
            if current is not None and current.stamp == stamp:
                return current
        else:
            stamp = time.monotonic()
            if (
                current is not None
                and isinstance(current.stamp, float)
                and stamp - current.stamp < self.refresh_seconds
            ):
                return current
            if current is None and self._fresh_enough(cache):
                data = cache.last_good()
                if data is not None:
                    return self._parsed(source, data, stamp, current)
        try:
            data = source.read()
            loaded = self._parsed(source, data, stamp, current, strict=True)
        except H0Error as error:
            self._problems[source.key] = error.message
            cache.failed(error.message)
            logger.warning("calendar {}: {}", source.name, error.message)
            if current is not None:
                current.stamp = stamp  # try again after the refresh interval, not on every email
                return current
            data_kept = cache.last_good()
            return self._parsed(source, data_kept, stamp, None) if data_kept is not None else None
        self._problems.pop(source.key, None)
        cache.stored(data)
        return loaded

    def _fresh_enough(self, cache: SourceCache) -> bool:
        """A process starting up uses a copy another process fetched recently, instead of fetching again."""
        state = cache.state()
        if state.last_try_at is None or state.error is not None:
            return False
        try:
            tried = datetime.fromisoformat(state.last_try_at)
        except ValueError:
            return False
        return (datetime.now(UTC) - tried).total_seconds() < self.refresh_seconds

    def _parsed(
        self, source: Source, data: bytes, stamp: object, current: _Loaded | None, *, strict: bool = False
    ) -> _Loaded:
        digest = hashlib.sha256(data).hexdigest()
        if current is not None and current.digest == digest:
            current.stamp = stamp
            return current
        try:
            calendar = parse_calendar(data, source.name)
        except ParseError:
            if strict:
                raise
            calendar = None
        loaded = _Loaded(digest, calendar, stamp)
        self._loaded[source.key] = loaded
        return loaded
