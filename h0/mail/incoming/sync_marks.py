"""The ingested mark: GMAIL_INGESTED_LABEL on the server, or H0's own record where the mailbox keeps none.

A mailbox that keeps no label on a message (an IMAP server whose PERMANENTFLAGS have no `\\*`, so
the keyword is silently dropped): the backend says so (`Label.kept` False), and H0 keeps the mark
itself — in the state database's `ingested` table, by the provider's id (UIDVALIDITY-UID) and by
Message-ID — said once in the log. Everything else stays the same: the mark decides what was
ingested, a renumbered mailbox is matched by Message-ID, and `h0 doctor` says the mailbox itself
is not marked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from loguru import logger

from h0.errors import AuthRequired, H0Error, InternalError, PermissionDenied, RateLimited
from h0.mail.incoming.sync_batches import Batches
from h0.mail.providers.backend import Fetched, Label, Mailbox
from h0.state import StateDB

BULK_LABEL_FROM = 10  # from this many messages on, one batchModify (50 units) beats a modify each (5 units)


class IngestedMarks:
    """What the sync marks ingested and how. The sync calls it holding its own lock."""

    def __init__(self, backend: Mailbox, state: StateDB, label_name: str, batches: Batches) -> None:
        self.backend = backend
        self.state = state
        self.label_name = label_name
        self.batches = batches
        self._label: Label | None = None
        self._here = False  # the mailbox keeps no label: the `ingested` table holds the marks
        self._rfc822: dict[str, str | None] = {}  # provider id → Message-ID of what was fetched (local marks)

    def label(self) -> Label:
        """The ingested label (created if missing); learning, once, whether the mailbox keeps it."""
        if self._label is None:
            label = self.backend.ensure_label(self.label_name)
            if not label.kept:
                self._keep_here(f"its PERMANENTFLAGS have no \\* and do not list {label.id}")
            self._label = label
        return self._label

    @property
    def here(self) -> bool:
        """True when the mailbox keeps no label, so H0's state database holds what was ingested."""
        return self._here

    def remember(self, fetched: Iterable[Fetched]) -> None:
        """The Message-IDs of what was fetched, for marks kept here (by UID and by Message-ID)."""
        if len(self._rfc822) > 10_000:
            self._rfc822.clear()
        self._rfc822.update({f.id: _rfc822(f) for f in fetched})

    def mark(self, message_ids: list[str], source: Callable[[], str]) -> tuple[int, list[str]]:
        """Mark these messages ingested: (how many, the ids that are gone). `source`: the mailbox's key."""
        label = self.label()
        ids = list(dict.fromkeys(message_ids))
        if not self._here:
            try:
                return self._on_server(label, ids)
            except InternalError as error:
                if "keyword" not in error.details:
                    raise
                self._keep_here(f"the server did not keep the keyword {error.details['keyword']}")
        self.state.record_ingested(source(), [(i, self._rfc822.get(i)) for i in ids])
        return len(ids), []

    def not_marked(self, source: str, fetched: list[Fetched]) -> list[Fetched]:
        """`fetched` minus what the state database records as ingested (only where it keeps the marks).
        A message known by its Message-ID under another id (the mailbox was renumbered) is recorded
        under the new id too, so it is not read again."""
        if not self._here or not fetched:
            return fetched
        rfc = {f.id: _rfc822(f) for f in fetched}
        known = self.state.ingested_among(source, list(rfc), [v for v in rfc.values() if v])
        again = [(i, v) for i, v in rfc.items() if i not in known and v in known]
        if again:
            self.state.record_ingested(source, again)
        return [f for f in fetched if f.id not in known and (rfc[f.id] is None or rfc[f.id] not in known)]

    def _on_server(self, label: Label, ids: list[str]) -> tuple[int, list[str]]:
        if len(ids) >= BULK_LABEL_FROM:
            try:
                self.backend.modify_all(ids, [label.id], [])
                return len(ids), []
            except (AuthRequired, PermissionDenied, RateLimited):
                raise
            except H0Error as error:  # e.g. one id deleted meanwhile: label them one by one
                if "keyword" in error.details:
                    raise
                logger.info("mail sync: batchModify refused ({}); labelling one by one", error.message)
        done, skipped = self.batches.run(ids, lambda chunk: self.backend.modify_many(chunk, [label.id], []))
        return len(done), sorted(skipped)

    def _keep_here(self, why: str) -> None:
        if not self._here:
            logger.warning(
                "mail sync: the mailbox keeps no custom keywords ({}), so it is not marked: H0 records "
                "what it ingested in its own state database instead (by UID and Message-ID) and "
                "ingests normally",
                why,
            )
        self._here = True


def _rfc822(fetched: Fetched) -> str | None:
    return str(fetched.headers.get("Message-ID") or "").strip() or None
