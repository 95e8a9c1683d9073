"""Reading `Logs/*.jsonl` for `h0 log`: the time window the options ask for, and a reader that
streams the audit records inside it (one file per stream and UTC day, so a window opens only the
files it covers; a line that is not a JSON record is skipped and counted).

Everything printed from a log passes through `plain()`: subjects and names come from strangers
and must not reach a terminal with control characters.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from h0.platform.fs import regular_file
from h0.printable import printable

STREAMS = ("h0", "gmail_mcp", "vault_mcp")
_FILE = re.compile(r"^(h0|gmail_mcp|vault_mcp)_(\d{4}-\d{2}-\d{2})\.jsonl$")


class UsageError(ValueError):
    """A bad argument: the CLI prints it and exits 2."""


def plain(value: object, limit: int = 200) -> str:
    """Text from a log made safe for a terminal, one line (h0.printable: controls, line breaks and
    format characters are shown escaped, never obeyed)."""
    return printable(value, limit)


def local_time(stamp: str, *, ms: bool = False) -> str:
    when = _parse_time(stamp)
    if when is None:
        return plain(stamp, 30) or "?"
    text = when.astimezone().strftime("%Y-%m-%d %H:%M:%S.%f" if ms else "%Y-%m-%d %H:%M")
    return text[:-3] if ms else text


def _parse_time(stamp: object) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(str(stamp))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


# ------------------------------------------------------------------------------- time window


@dataclass(frozen=True)
class TimeRange:
    """[since, until) in UTC; None is open."""

    since: dt.datetime | None = None
    until: dt.datetime | None = None

    def holds(self, when: dt.datetime) -> bool:
        return (self.since is None or when >= self.since) and (self.until is None or when < self.until)

    def covers_day(self, day: dt.date, *, extra_days: int = 0) -> bool:
        start = dt.datetime.combine(day, dt.time(), dt.UTC)
        end = start + dt.timedelta(days=1)
        until = self.until + dt.timedelta(days=extra_days) if self.until else None
        return (self.since is None or end > self.since) and (until is None or start < until)

    def describe(self) -> str:
        if self.since is None and self.until is None:
            return ""
        start = local_time(self.since.isoformat()) if self.since else "the start"
        end = local_time(self.until.isoformat()) if self.until else "now"
        return f" from {start} to {end}"


ALL_TIME = TimeRange()  # no bounds: every record the logs hold


def _local_moment(text: str, what: str) -> tuple[dt.datetime, bool]:
    """A local date or date-time; True if it was a bare date."""
    try:
        if len(text) == 10:
            return dt.datetime.combine(dt.date.fromisoformat(text), dt.time()).astimezone(), True
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{what} {plain(text, 40)!r} is not a date: use YYYY-MM-DD (or YYYY-MM-DDTHH:MM)") from None
    return (moment if moment.tzinfo else moment.astimezone()), False


def make_window(
    since: str | None = None,
    until: str | None = None,
    *,
    today: bool = False,
    days: int | None = None,
    now: dt.datetime | None = None,
) -> TimeRange:
    """The window the options ask for; dates are local, `--until` includes its whole day."""
    now = now or dt.datetime.now().astimezone()
    if [bool(since), today, days is not None].count(True) > 1:
        raise UsageError("use one of --since, --today and --days")
    start: dt.datetime | None = None
    end: dt.datetime | None = None
    if today:
        start = dt.datetime.combine(now.date(), dt.time()).astimezone()
    elif days is not None:
        if days < 1:
            raise UsageError("--days takes a number of days, 1 or more")
        start = now - dt.timedelta(days=days)
    elif since:
        start, _ = _local_moment(since, "--since")
    if until:
        end, whole_day = _local_moment(until, "--until")
        if whole_day:
            end = (end.replace(tzinfo=None) + dt.timedelta(days=1)).astimezone()
    if start and end and start >= end:
        raise UsageError("--since must come before --until")
    return TimeRange(start.astimezone(dt.UTC) if start else None, end.astimezone(dt.UTC) if end else None)


# ------------------------------------------------------------------------------- reading


@dataclass
class LogReader:
    """Streams records from the audit files of a window; counts lines that are not records."""

    logs_dir: Path
    window: TimeRange = field(default_factory=TimeRange)
    skipped: int = 0

    def files(self, stream: str, *, extra_days: int = 0) -> list[Path]:
        try:
            names = sorted(p.name for p in self.logs_dir.iterdir())
        except OSError:
            return []
        found = []
        for name in names:
            match = _FILE.match(name)
            if match and match[1] == stream:
                try:
                    day = dt.date.fromisoformat(match[2])
                except ValueError:
                    continue
                if self.window.covers_day(day, extra_days=extra_days):
                    found.append(self.logs_dir / name)
        return found

    def records(
        self, stream: str, events: Iterable[str] | None = None, *, extra_days: int = 0, whole_days: bool = False
    ) -> Iterator[dict[str, Any]]:
        """Records of `stream` (with `stream` and `at`, the parsed time, added), oldest file first.

        With `events`, only lines that mention one are parsed (the rest are skipped unparsed,
        counted only if they do not even look like a record). `whole_days` yields every record
        of the files read, not only those inside the window."""
        needles = [f'"event": "{e}"'.encode() for e in events] if events is not None else None
        for path in self.files(stream, extra_days=extra_days):
            try:
                handle = regular_file(path)
            except OSError:
                continue
            with handle:
                for raw in handle:
                    line = raw.strip()
                    if not line:
                        continue
                    if needles is not None and not any(n in line for n in needles):
                        if not (line.startswith(b"{") and line.endswith(b"}")):
                            self.skipped += 1
                        continue
                    record = self._parse(line)
                    if record is None:
                        self.skipped += 1
                        continue
                    if whole_days or self.window.holds(record["at"]):
                        record["stream"] = stream
                        yield record

    @staticmethod
    def _parse(line: bytes) -> dict[str, Any] | None:
        try:
            record = json.loads(line)
        except ValueError:  # UnicodeDecodeError is one
            return None
        if not isinstance(record, dict) or not isinstance(record.get("event"), str):
            return None
        when = _parse_time(record.get("timestamp"))
        if when is None:
            return None
        record["at"] = when
        return record
