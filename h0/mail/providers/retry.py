"""Whether a provider's failure is worth trying again — as its typed error says; never when.

What is retryable is decided where the failure is understood (the backend) and carried on the
error: `RateLimited` (with the `retry_after` the provider named), or any H0Error with
`details["retryable"] = True` (5xx, a connection refused before anything was sent, a read that
timed out). A send whose outcome is unknown is never marked retryable.

The mail server makes one attempt per tool call and answers with that error at once — "try again
at T" — so no tool call outlives its client's timeout; the one who asked decides when to try again
(the daemon: its work queue, h0.pipeline.workqueue). Nothing in the mail room sleeps or loops.
"""

from __future__ import annotations

from h0.errors import H0Error, RateLimited


def is_retryable(error: BaseException) -> bool:
    """True when trying again later can help (the provider said so, or asked to slow down)."""
    if isinstance(error, RateLimited):
        return True
    return isinstance(error, H0Error) and error.details.get("retryable") is True
