"""Gmail's batch endpoint: many API calls in one HTTP request, each answered on its own.

A batch is one `POST /batch/gmail/v1` whose multipart/mixed body holds up to 100 calls
(Google advises at most 50: larger batches trip the per-user rate limits); the answer is a
multipart/mixed of one HTTP response per call. google-api-python-client's `BatchHttpRequest`
speaks it. Its discovery document names the batch path `batch`; H0 sends to the path
Gmail's batch guide documents, `batch/gmail/v1`, under `GMAIL_API_ENDPOINT` (or Google's
root), so a proxy or a test server gets the batch too. The batch goes through the calling
thread's session like any other request (h0.mail.providers.gmail_transport): authorised once, its
Authorization applying to every part, and never replayed.

Every part counts against the quota as the call it carries, and Gmail works the parts in
parallel: a part can come back 429 "Too many concurrent requests for user" (or 403
rateLimitExceeded) while its neighbours succeed. So each part gets its own typed answer here;
the caller retries the rate-limited ones (h0.mail.incoming.sync). One batch is in flight per backend at
a time: that, and the batch size, are the cap on concurrent requests for the user.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin

from googleapiclient.errors import BatchError, HttpError
from googleapiclient.http import BatchHttpRequest

from h0.errors import H0Error, InternalError
from h0.mail.providers.gmail_wire import map_http_error

GOOGLE_ROOT = "https://gmail.googleapis.com/"
BATCH_PATH = "batch/gmail/v1"
BATCH_LIMIT = 50  # Google: "Sending batches larger than 50 requests is not recommended."


def batch_uri(api_endpoint: str | None) -> str:
    """The batch endpoint under `api_endpoint` (GMAIL_API_ENDPOINT), or Google's."""
    return urljoin(api_endpoint or GOOGLE_ROOT, BATCH_PATH)


class BatchRunner:
    """Sends batches to one endpoint, one at a time."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._slot = threading.Lock()  # one batch in flight per user: Gmail caps concurrent requests

    def run(
        self, calls: dict[str, Any], http: Any, on_error: Callable[[BaseException], H0Error | None]
    ) -> dict[str, Any]:
        """Send `calls` (key → googleapiclient HttpRequest; keys unique, at most BATCH_LIMIT) as one batch.

        Returns key → the call's JSON answer, or its typed error (h0.errors). A failure of the
        batch as a whole (transport, 429 on the batch itself) is raised, mapped by `on_error`.
        """
        if len(calls) > BATCH_LIMIT:
            raise ValueError(f"a batch carries at most {BATCH_LIMIT} calls, not {len(calls)}")
        answers: dict[str, Any] = {}

        def answered(key: str, response: Any, exception: HttpError | None) -> None:
            answers[key] = map_http_error(exception, sending=False) if exception is not None else response

        batch = BatchHttpRequest(callback=answered, batch_uri=self.uri)
        for key, request in calls.items():
            batch.add(request, request_id=key)
        with self._slot:
            try:
                batch.execute(http=http)
            except BatchError as exc:  # an answer that is not multipart/mixed, or parts it cannot match
                if exc.resp is not None and getattr(exc.resp, "status", 200) >= 300:
                    raise map_http_error(exc, sending=False) from None
                raise InternalError(f"Gmail's batch answer could not be read: {exc.reason}", retryable=True) from None
            except HttpError as exc:
                raise map_http_error(exc, sending=False) from None
            except KeyError as exc:  # the library found no answer part for one of the calls
                raise InternalError(f"Gmail's batch answer left out a call ({exc}).", retryable=True) from None
            except H0Error:
                raise
            except Exception as exc:
                mapped = on_error(exc)
                if mapped is None:
                    raise
                raise mapped from exc
        return answers
