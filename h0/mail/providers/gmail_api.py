"""The Gmail API's resources, built once from the discovery document bundled with google-api-python-client.

No network: the document ships in the library. `GMAIL_API_ENDPOINT` becomes the document's `rootUrl`,
from which the library derives every URL — the methods' and the media upload's, scheme included — so
nothing is rewritten afterwards. The bundled document has `rootUrl` https://gmail.googleapis.com/ and
an empty `servicePath`, and every method path starts with `gmail/v1/…`, so an endpoint of
`http://127.0.0.1:PORT/` serves `http://127.0.0.1:PORT/gmail/v1/users/me/…`.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from googleapiclient.discovery import build_from_document
from googleapiclient.discovery_cache import get_static_doc

from h0.mail.providers.gmail_transport import NoHttp


@dataclass(frozen=True, slots=True)
class GmailApi:
    """The resources H0 calls. Built once and shared: googleapiclient builds every method of a
    resource each time `users()`/`messages()` is called (~4 ms a send); requests made from
    them are independent objects, so sharing across threads is safe."""

    users: Any
    messages: Any
    labels: Any
    threads: Any
    history: Any


@functools.lru_cache(maxsize=4)
def gmail_api(api_endpoint: str | None) -> GmailApi:
    document = json.loads(get_static_doc("gmail", "v1"))
    if api_endpoint:
        # Not client_options.api_endpoint: that moves media uploads to the endpoint's host but
        # keeps the document's https, so an http endpoint (a local proxy, the test fake) breaks.
        document["rootUrl"] = document["baseUrl"] = api_endpoint
    service = build_from_document(document, http=NoHttp())
    users = service.users()
    return GmailApi(users, users.messages(), users.labels(), users.threads(), users.history())
