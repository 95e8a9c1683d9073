"""What one follow-up pass did (`FollowupReport`), and the small steps every part of the pass shares:
updating a note without letting one note's trouble stop the pass, the wait in working days, dates in words."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from loguru import logger

from h0.errors import H0Error, NotFound
from h0.handlers.context import HandlerContext


@dataclass
class FollowupReport:
    recorded: int = 0
    threads: int = 0
    owed: list[str] = field(default_factory=list)  # email notes marked reply_owed
    replied: list[str] = field(default_factory=list)  # email notes filed: the owner answered outside H0
    awaited: list[str] = field(default_factory=list)  # follow-up notes written
    answered: list[str] = field(default_factory=list)  # follow-up notes filed
    withdrawn: list[str] = field(default_factory=list)  # follow-up drafts withdrawn
    woke: list[str] = field(default_factory=list)  # snoozed notes woken
    snooze_errors: list[str] = field(default_factory=list)
    date_errors: list[str] = field(default_factory=list)  # notes whose date property is broken (h0.vault.dates)
    failed: int = 0

    @property
    def changed(self) -> bool:
        return bool(
            self.owed
            or self.replied
            or self.awaited
            or self.answered
            or self.withdrawn
            or self.woke
            or self.snooze_errors
            or self.date_errors
        )


def days_to_wait(ctx: HandlerContext) -> float:
    return ctx.settings.follow_up_days


def update_note(
    ctx: HandlerContext,
    path: str,
    changes: dict[str, Any],
    report: FollowupReport | None = None,
    remove: tuple[str, ...] = (),
) -> bool:
    """Write `changes` on a note of the pass (keys in `remove` dropped): False when it is gone or could not be
    written (counted in `report` and logged; the next pass looks again)."""
    try:
        ctx.notes.update(path, changes, remove=remove)
        return True
    except NotFound:
        return False
    except H0Error as error:
        if report is not None:
            report.failed += 1
        logger.warning("follow-ups: {} could not be updated ({})", path, error.message)
        return False


def day(when: float) -> str:
    local = dt.datetime.fromtimestamp(when).astimezone()
    return f"{local:%a} {local.day} {local:%b} {local:%H:%M}"
