"""An email whose model could not answer now: left pending with the reason on it, asked again later.

A model that is down, times out, rate-limits or refuses (`TriageOutcome.deferred`) does not get
to decide an email for good through the rules: the email stays `status: pending` and says why
in its frontmatter —

    h0_waiting: "model unavailable (HTTP 503: overloaded); retrying"
    h0_waiting_since: 2026-11-26T10:00:00+00:00
    h0_model_attempts: 2
    h0_retry_at: 2026-11-26T10:00:08+00:00      (only when a work queue will retry it)

— and the triage handler returns an Outcome the pipeline turns into a failed attempt, so the
work queue retries it with its own backoff (RETRY_DELAY_MS, RETRY_BACKOFF_MULTIPLIER; a server's
Retry-After when it named one). `h0_retry_at` makes the wait survive everything that would
look at the note sooner: the event H0's own write causes, the sweep, a daemon restart.

The cap: after LLM_WAIT_MAX_ATTEMPTS tries or LLM_WAIT_MAX_HOURS since the first, whichever comes
first — and after MAX_REFUSALS for a model that keeps refusing — the rules decide and the note
says so (`fallback_reason`). A decision, by the model or the rules, clears the four keys.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from h0.handlers.context import HandlerContext
from h0.handlers.outcome import Action, Outcome
from h0.printable import one_line
from h0.vault import Note
from h0.vault.api import Update
from h0.vault.marks import ATTEMPTS_KEY, RETRY_AT_KEY, SINCE_KEY, WAITING_KEY
from h0.vault.model import NoteFacts

WAITING_DETAIL = "waiting for the model"  # the Outcome detail of an email whose retry is not due yet
MAX_REFUSALS = 3  # a refusal is rarely a passing mood: asked this many times at most


def not_due_for(facts: NoteFacts, now: dt.datetime) -> float | None:
    """Seconds until a waiting email's next try is due (None: due now, or not waiting)."""
    wait = facts.model_wait
    if not wait.reason or wait.retry_at is None or wait.retry_at <= now.timestamp():
        return None
    return wait.retry_at - now.timestamp()


def gave_up(
    facts: NoteFacts, deferred: str, settings: Any, now: dt.datetime, then: str = "the rules decided"
) -> str | None:
    """Why this failed try (`deferred`: its reason) ends the wait, followed by `then`; None: wait, ask again."""
    wait = facts.model_wait
    attempts = wait.attempts + 1
    since = wait.since if wait.since is not None else now.timestamp()
    hours = (now.timestamp() - since) / 3600
    reason = one_line(deferred, 200)
    if reason.startswith("the model refused") and attempts >= MAX_REFUSALS:
        return f"{reason} ({attempts} times): {then}"
    if attempts >= settings.llm_wait_max_attempts:
        return f"{reason}; gave up after {attempts} tries (LLM_WAIT_MAX_ATTEMPTS): {then}"
    if hours >= settings.llm_wait_max_hours:
        return f"{reason}; gave up after {hours:.1f} h of trying (LLM_WAIT_MAX_HOURS): {then}"
    return None


def waiting_fields(facts: NoteFacts, deferred: str, retry_in: float | None, now: dt.datetime) -> dict[str, Any]:
    """The keys a waiting note carries after one more failed try (`retry_in`: when it is due again)."""
    reason = one_line(deferred or "the model did not answer", 200)
    wait = facts.model_wait
    fields: dict[str, Any] = {
        WAITING_KEY: f"{reason}; retrying",
        SINCE_KEY: wait.since_written or now.isoformat(timespec="seconds"),
        ATTEMPTS_KEY: wait.attempts + 1,
    }
    if retry_in is not None:
        fields[RETRY_AT_KEY] = (now + dt.timedelta(seconds=retry_in)).isoformat(timespec="seconds")
    return fields


def retry_wait(retry_after: float | None, backoff: float | None) -> float | None:
    """When to ask again: the server's Retry-After when it named one, else the work queue's backoff."""
    if backoff is None:
        return None  # nothing in this process retries (`h0 sweep`): the next pass asks again
    return retry_after if retry_after is not None else backoff


def wait_for_model(
    note: Note,
    deferred: str,
    retry_after: float | None,
    ctx: HandlerContext,
    now: dt.datetime,
    event: str = "triage_deferred",
    what: str = "the email stays pending",
) -> tuple[Update, Outcome]:
    """The model could not answer now (`deferred`: why): the change that keeps the note as it is with
    the reason on it, and the Outcome that asks the work queue to try again after its backoff (the
    server's `retry_after` when it named one). Said once per reason."""
    retry_in = retry_wait(retry_after, ctx.retry_delay(note.path))
    fields = waiting_fields(note.facts, deferred, retry_in, now)
    ctx.report(
        note.path,
        event,
        deferred,
        f"the model could not answer ({deferred}); {what} ({ctx.retry_words(retry_in)})",
        severity="warning",
        attempts=fields[ATTEMPTS_KEY],
    )
    waiting = Outcome(Action.DEFERRED, str(fields[WAITING_KEY]), retry_in=retry_in, data={"retry_in": retry_in})
    return Update(note.path, fields, if_match=note.hash), waiting
