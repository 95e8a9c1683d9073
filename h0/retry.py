"""How long to wait before trying again: one jittered exponential backoff, one Retry-After parser, the waits
that are not a backoff (`Waits`, and `Unqueued` where no work queue runs), and how a wait is said.

Every H0 retry — the mail backends, the LLM providers, the MCP client's reconnects, the
pipeline's second look at an approved draft, the IMAP IDLE watcher — takes its delays from a
`Backoff`, and every server's own answer (`Retry-After`, RFC 9110 §10.2.3) is read by
`retry_after`. What is worth retrying stays where the failure is understood (h0/mail/providers/retry.py
for H0 errors, h0/triage/llm.py for provider errors); this module only says how long.

Jitter is "equal" by default: the n-th delay is drawn from [d/2, d], d = min(base·multiplierⁿ,
cap). Full jitter ([0, d], the AWS recommendation for thousands of clients fighting over one
lock) spreads retries a little wider, but H0 is one process with a handful of threads retrying
against a server that has just said "slow down" (Gmail's 429, a crashed MCP server): a draw near
zero would retry at once and spend quota for nothing. Equal jitter still breaks the lockstep of
threads that failed together, keeps half of every delay as a floor, and with a multiplier of 2
or more never waits less than the attempt before it did.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import math
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

Jitter = Literal["equal", "full", "none"]

# A server asking for longer than this is not believed (a bogus header, a date in the year 9999):
# the caller's own backoff applies, as if it had asked nothing.
RETRY_AFTER_LIMIT_S = 7 * 24 * 3600.0
_DELTA = re.compile(r"[0-9]+(?:\.[0-9]+)?")  # RFC 9110 delay-seconds, plus the fractions some servers send
_MAX_HEADER = 64  # longer than any HTTP-date or delay-seconds a server would send


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential delays: `delay(n)` before retry n+1 (n = 0, 1, …), capped, then jittered.

    Pass a seeded `random.Random` as `rng` for reproducible delays, or `jitter="none"` for the
    nominal ones; by default the delays come from the `random` module.
    """

    base: float
    multiplier: float = 2.0
    cap: float = math.inf
    jitter: Jitter = "equal"
    rng: random.Random | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not (self.base >= 0 and self.cap >= 0 and self.multiplier >= 1):
            raise ValueError(f"backoff needs base >= 0, cap >= 0 and multiplier >= 1, not {self!r}")
        if self.jitter not in ("equal", "full", "none"):
            raise ValueError(f"jitter must be 'equal', 'full' or 'none', not {self.jitter!r}")

    def nominal(self, attempt: int) -> float:
        """The delay before jitter: base·multiplierᵃᵗᵗᵉᵐᵖᵗ, at most `cap`."""
        try:
            return min(self.base * self.multiplier ** max(0, attempt), self.cap)
        except OverflowError:  # many attempts in: far past any cap
            return self.cap if self.base else 0.0

    def delay(self, attempt: int) -> float:
        """The pause before retry `attempt + 1`, jittered."""
        nominal = self.nominal(attempt)
        if self.jitter == "none" or not math.isfinite(nominal):
            return nominal
        uniform = (self.rng or random).uniform
        if self.jitter == "full":
            return uniform(0.0, nominal)
        return nominal / 2 + uniform(0.0, nominal / 2)

    def delays(self, count: int) -> list[float]:
        """The pauses before each of `count` retries."""
        return [self.delay(n) for n in range(count)]


class Again(StrEnum):
    """Why a note must be looked at again. A handler says why (and the server's Retry-After, as a fact);
    the work queue decides when, with `Waits` and its backoff (h0.pipeline.workqueue)."""

    NOT_YET = "not_yet"  # nothing wrong with it: still being written, changed since read, another process sends it
    FAILED = "failed"  # a try that failed: the backoff over the attempts, or the Retry-After it named
    CREDENTIALS = "credentials"  # sending is paused until the credentials work: looked at again now and then
    SEND_CAP = "send_cap"  # a send cap is reached or the provider asks to slow down: when it frees


@dataclass(frozen=True, slots=True)
class Waits:
    """The pipeline's waits that are not a failure's backoff, in one table: the work queue owns them."""

    not_yet_s: float = 0.2  # a note changed since read, or one still being written without a Retry-After
    credentials_s: float = 60.0  # sending paused for credentials: one look a minute renews the pause
    min_cap_s: float = 1.0  # a send cap's (or a provider's) Retry-After, never sooner than this
    learn_s: float = 5.0  # after a send or a rejection: a burst of them is a few looks at Done/, not one a second

    def wait(self, why: Again, retry_after: float | None = None) -> float | None:
        """Seconds before a look again for `why`; None for a failure without a Retry-After (the backoff's)."""
        given = retry_after if retry_after is not None and retry_after >= 0 else None
        if why is Again.CREDENTIALS:
            return self.credentials_s
        if why is Again.SEND_CAP:
            return max(given or 0.0, self.min_cap_s)
        if given is not None:
            return given
        return self.not_yet_s if why is Again.NOT_YET else None


@dataclass(frozen=True, slots=True)
class Unqueued:
    """Who looks at a note again when no work queue runs (tests, one-off contexts): nobody retries a failure
    (None), and the other waits are `Waits`' table (a pause for credentials or a send cap still lasts that long).
    The daemon's work queue answers the same question with its backoff (h0.pipeline.workqueue)."""

    waits: Waits = Waits()

    def wait(self, path: str, why: Again, retry_after: float | None = None) -> float | None:
        """The wait before `path` is looked at again for `why` (None: not retried)."""
        return self.waits.wait(why, retry_after)


def retry_words(seconds: float | None, one_pass: bool = False) -> str:
    """When a note is looked at again, as a log line can truthfully say it (`one_pass`: the process exits after
    this pass — `h0 sweep` — so the next pass is what looks again)."""
    if one_pass:
        return "the next `h0 sweep` or `h0 watch` retries"
    return f"retry in {seconds:.0f}s" if seconds is not None else "not retried"


def retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """The seconds a `Retry-After` value asks for: delay-seconds or an HTTP-date (RFC 9110).

    A date in the past means "now" (0.0). None when there is nothing usable: no value, garbage,
    a negative number, or more than RETRY_AFTER_LIMIT_S. `now` (epoch seconds) is for tests.
    """
    if value is None:
        return None
    text = str(value).strip()
    if not text or len(text) > _MAX_HEADER:
        return None
    if _DELTA.fullmatch(text):
        seconds = float(text)
    else:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:  # "-0000" and asctime dates: HTTP-dates are always GMT
            when = when.replace(tzinfo=dt.UTC)
        seconds = max(0.0, when.timestamp() - (time.time() if now is None else now))
    return seconds if seconds <= RETRY_AFTER_LIMIT_S else None


def requested_wait(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """The wait a response's headers ask for: `retry-after-ms` (OpenAI's and Anthropic's APIs send
    it, and their SDKs honour it) when usable, else `Retry-After`; None when neither is."""
    millis = str(headers.get("retry-after-ms") or "").strip()
    if _DELTA.fullmatch(millis) and float(millis) / 1000 <= RETRY_AFTER_LIMIT_S:
        return float(millis) / 1000
    return retry_after(headers.get("retry-after"), now=now)
