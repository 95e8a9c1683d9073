"""Whether a provider's failure is worth trying again — as its typed error says; never when.

What is retryable is decided where the failure is understood (the backend) and carried on the
error: `RateLimited` (`throttled`: with the `retry_after` the provider named, else a second), or any H0Error with
`details["retryable"] = True` (5xx, a connection refused before anything was sent, a read that
timed out). A send whose outcome is unknown is never marked retryable.

The mail server makes one attempt per tool call and answers with that error at once — "try again
at T" — so no tool call outlives its client's timeout; the one who asked decides when to try again
(the daemon: its work queue, h0.pipeline.workqueue). Nothing in the mail room sleeps or loops.
"""

from __future__ import annotations

from typing import Any

from h0.errors import Conflict, H0Error, InternalError, InvalidRequest, NotFound, RateLimited, SendFailed

DEFAULT_RETRY_AFTER_S = 1.0  # the wait after a provider's "slow down" that names none


def is_retryable(error: BaseException) -> bool:
    """True when trying again later can help (the provider said so, or asked to slow down)."""
    if isinstance(error, RateLimited):
        return True
    return isinstance(error, H0Error) and error.details.get("retryable") is True


def throttled(words: str, wait: float | None, details: dict[str, Any]) -> RateLimited:
    """A provider's "slow down" (Gmail's 429, Graph's throttling) at the wait it named, else DEFAULT_RETRY_AFTER_S."""
    return RateLimited(words, retry_after=wait if wait is not None else DEFAULT_RETRY_AFTER_S, **details)


def http_refusal(
    service: str, status: int, message: str, *, sending: bool, bounce: bool, details: dict[str, Any]
) -> H0Error:
    """An HTTP API's error answer (Gmail's, Graph's) past its own cases (throttling, sign-in, permission), as
    the same typed error from every provider: 5xx retryable, a recipient refused (`bounce`) never."""
    if status == 404:
        return NotFound(f"{service} has no such item: {message}", **details)
    if status == 409:
        return Conflict(f"{service} reports a conflict: {message}", **details)
    if status >= 500:
        if sending:
            return SendFailed(f"{service} answered {status} to the send: {message}", retryable=True, **details)
        return InternalError(f"{service} answered {status}: {message}", retryable=True, **details)
    if sending and bounce:
        return SendFailed(f"{service} refused a recipient: {message}", retryable=False, bounce=True, **details)
    if sending:
        return SendFailed(f"{service} refused the message: {message}", retryable=False, **details)
    return InvalidRequest(f"{service} refused the request: {message}", **details)
