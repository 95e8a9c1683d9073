"""The last good copy of each calendar source, on disk in H0's state folder, with how its last read went.

    <state>/calendar/<key hash>.ics    the last copy that parsed
    <state>/calendar/<key hash>.json   {"name", "last_good_at", "last_try_at", "error"}

A read that fails (unreachable, 404, too large, not iCalendar) leaves the copy as it was and
writes the error beside it: proposals keep working from the last good copy, and `h0 doctor`
and `h0 status` say which source is stale and why, from these files alone (they fetch nothing).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from h0.calendar.sources import sources_for_settings
from h0.config import Settings
from h0.platform.fileio import atomic_write
from h0.state import state_dir_for

CACHE_FOLDER = "calendar"


@dataclass(frozen=True, slots=True)
class SourceState:
    """How a source's reads went: the last good copy's time, the last attempt's, and its error."""

    name: str
    last_good_at: str | None = None
    last_try_at: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.last_good_at is not None


class SourceCache:
    """The cache files of one source (`key`: its address, never written into the files)."""

    def __init__(self, folder: Path | None, key: str, name: str) -> None:
        self.name = name
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]
        self.copy = folder / f"{digest}.ics" if folder is not None else None
        self.meta = folder / f"{digest}.json" if folder is not None else None

    def state(self) -> SourceState:
        if self.meta is None:
            return SourceState(self.name)
        try:
            data = json.loads(self.meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return SourceState(self.name)
        if not isinstance(data, dict):
            return SourceState(self.name)
        return SourceState(
            self.name,
            _text(data.get("last_good_at")),
            _text(data.get("last_try_at")),
            _text(data.get("error")),
        )

    def last_good(self) -> bytes | None:
        if self.copy is None:
            return None
        try:
            return self.copy.read_bytes()
        except OSError:
            return None

    def stored(self, data: bytes) -> SourceState:
        """A good read: the copy replaced, the error cleared."""
        now = _now()
        if self.copy is not None:
            self._write(self.copy, data)
        return self._record(SourceState(self.name, now, now, None))

    def failed(self, error: str) -> SourceState:
        """A failed read: the copy kept, the error written beside it."""
        previous = self.state()
        return self._record(SourceState(self.name, previous.last_good_at, _now(), error))

    def _record(self, state: SourceState) -> SourceState:
        if self.meta is not None:
            body = {"name": state.name, "last_good_at": state.last_good_at, "last_try_at": state.last_try_at}
            body["error"] = state.error
            self._write(self.meta, json.dumps(body).encode("utf-8"))
        return state

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data, durable=False)
        except OSError:
            pass  # no state folder (read-only home): the calendar still works from memory


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _text(value: object) -> str | None:
    return str(value)[:500] if isinstance(value, str) and value else None


def cache_folder(root: Path, state_dir: Path | None) -> Path | None:
    """Where calendar copies are kept: H0's state folder for this vault (never the vault)."""
    try:
        return state_dir_for(Path(root), state_dir) / CACHE_FOLDER
    except Exception:  # noqa: BLE001 - no state folder: the calendar works from memory alone
        return None


def calendar_states(settings: Settings, root: Path | None = None) -> list[SourceState]:
    """Each configured source's last read, for doctor and status (no source is fetched)."""
    sources = sources_for_settings(settings)
    folder = cache_folder(Path(root or settings.vault_path), settings.h0_state_dir)
    states = []
    for source in sources:
        state = SourceCache(folder, source.key, source.name).state()
        if source.local and source.path is not None and not source.path.exists():
            state = SourceState(
                source.name, state.last_good_at, state.last_try_at, f"{source.path.name} does not exist"
            )
        states.append(state)
    return states
