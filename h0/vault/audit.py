"""The JSONL audit log: `Logs/<stream>_<date>.jsonl`, one JSON object per line.

Every line has `timestamp` (UTC, ISO 8601, ms), `event`, `severity` and the event's
fields. A line is written with a single `write()` on an `O_APPEND` descriptor under the
file's exclusive lock (h0.platform.locks: flock, or LockFileEx on Windows, whose appends
are not atomic by themselves), so concurrent writers — threads or processes — never
interleave or tear lines. Dates in file names are UTC dates.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from h0.errors import InternalError
from h0.platform.fs import full_fsync, not_regular, regular_file
from h0.platform.locks import appending
from h0.vault.dates import read_time

SEVERITIES = ("debug", "info", "warning", "error", "critical")
MAX_FIELD_CHARS = 4000


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def iso(ts: dt.datetime) -> str:
    return ts.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def note_timestamp(ts: dt.datetime | None = None) -> str:
    """A UTC timestamp for frontmatter, to the second, so it is written as a YAML timestamp."""
    return (ts or utcnow()).astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def epoch_timestamp(epoch: float) -> str:
    """`note_timestamp` of an epoch time (seconds)."""
    return note_timestamp(dt.datetime.fromtimestamp(epoch, dt.UTC))


def _clip(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
        return value[:MAX_FIELD_CHARS] + f"… [{len(value) - MAX_FIELD_CHARS} more chars]"
    return value


class AuditLog:
    """Appends audit records for one stream (e.g. `h0`, `gmail_mcp`, `vault_mcp`)."""

    def __init__(self, logs_dir: Path, stream: str) -> None:
        self.logs_dir = Path(logs_dir)
        self.stream = stream

    def path_for(self, day: dt.date) -> Path:
        return self.logs_dir / f"{self.stream}_{day.isoformat()}.jsonl"

    def write(self, event: str, severity: str = "info", *, durable: bool = False, **fields: Any) -> dict[str, Any]:
        """Append one record and return it. Raises InternalError if it cannot be written:
        callers about to do something irreversible must not go on without their record.
        `durable` flushes it to the disk itself before returning (the pre-send record: it must
        outlive a power cut; on macOS that takes F_FULLFSYNC, not just fsync)."""
        record = self._record(event, severity, fields)
        self._append([record], durable=durable)
        return record

    def write_many(self, entries: list[tuple[str, dict[str, Any]]], severity: str = "info") -> None:
        """Append several records (event, fields) in one append: a batch of 200 changes costs one
        open and one lock of the log, not 200."""
        if entries:
            self._append([self._record(event, severity, fields) for event, fields in entries], durable=False)

    @staticmethod
    def _record(event: str, severity: str, fields: dict[str, Any]) -> dict[str, Any]:
        if severity not in SEVERITIES:
            raise ValueError(f"unknown severity {severity!r}")
        record: dict[str, Any] = {"timestamp": iso(utcnow()), "event": event, "severity": severity}
        for key, value in fields.items():
            if value is not None:
                record[key] = _clip(value)
        return record

    def _append(self, records: list[dict[str, Any]], *, durable: bool) -> None:
        data = b"".join((json.dumps(r, ensure_ascii=False, default=str) + "\n").encode("utf-8") for r in records)
        path = self.path_for(dt.date.fromisoformat(records[0]["timestamp"][:10]))
        try:
            self.logs_dir.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
            # O_NONBLOCK: a FIFO under the log's name is refused (no reader: ENXIO; else just below), never
            # waited on; it changes nothing for a regular file.
            fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), 0o644)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise not_regular(path)
                with appending(fd, str(path)):
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
                    if durable:
                        full_fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise InternalError(f"Could not write the audit log {path}: {exc.strerror or exc}", path=str(path)) from exc

    def records(self, since: dt.datetime | None = None, *, event: str | None = None) -> Iterator[dict[str, Any]]:
        """Read back this stream's records (oldest file first), skipping torn or foreign lines."""
        first_day = since.astimezone(dt.UTC).date() if since else None
        try:
            names = sorted(p for p in self.logs_dir.glob(f"{self.stream}_*.jsonl"))
        except OSError:
            return
        for path in names:
            day_text = path.stem[len(self.stream) + 1 :]
            try:
                day = dt.date.fromisoformat(day_text)
            except ValueError:
                continue
            if first_day and day < first_day:
                continue
            try:
                handle = io.TextIOWrapper(regular_file(path), encoding="utf-8", errors="replace")
            except OSError:
                continue
            with handle:
                for line in handle:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if not isinstance(record, dict):
                        continue
                    if event is not None and record.get("event") != event:
                        continue
                    if since is not None:
                        stamp = read_time(record.get("timestamp"))
                        if stamp is None or stamp < since:
                            continue
                    yield record
