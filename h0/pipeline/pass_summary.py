"""What one pass did, note by note: the one-line summary of `h0 sweep` and whether it failed.

Each handler's `Outcome` is recorded under its note's path; the last word about a path
wins (a draft that waited for its writer and was then sent counts as sent). Outcomes that
say "nothing to do here" (skipped, gone) never overwrite one that did something.

What counts as a failure (`h0 sweep` exits 4): something H0 tried and could not do, that
needs a person or a later retry — a send that failed (network, provider, configuration:
the next sweep retries it), a bounce, sending paused because credentials are missing, a
handler that crashed. Not failures: a draft refused and given back to Drafts/ with the
reason on it (done as designed: only the human's edit can fix it, and it is on their list
now), a send cap reached (a limit the human set, working; it frees by itself), a note still
settling or being written (the next sweep takes it), a draft left for the computer that sends this
vault's drafts (h0.vault.sending_computer), a copy of a message already sent, filed in Done/
instead of sent (a sync tool's copy: counted, so that the owner hears of it).
"""

from __future__ import annotations

import threading
from collections import Counter

from h0.handlers.llmwait import WAITING_DETAIL
from h0.handlers.outcome import Action, OutcomeData
from h0.handlers.send import local_clock
from h0.mail.compose.recipients import describe_recipients, recipient_lists
from h0.printable import printable

# Buckets, in the order the summary names them.
SENT, COPIED, REFUSED, REJECTED, TRIAGED, RESCHEDULED, CAPPED, ELSEWHERE, SETTLING, MODEL_WAIT, UNREADABLE, FAILED = (
    "sent",
    "copied",
    "refused",
    "rejected",
    "triaged",
    "rescheduled",
    "capped",
    "elsewhere",
    "settling",
    "model_wait",
    "unreadable",
    "failed",
)
_NEEDS_LOOK = (REFUSED, UNREADABLE, FAILED)
_COPIED = "filed in Done/, not sent (the same message was sent already)"


class PassTally:
    """Thread-safe: the daemon's workers record into it concurrently."""

    def __init__(self) -> None:
        self._last: dict[str, str] = {}
        self._sent: dict[str, dict[str, list[str]]] = {}  # path → its recipients, for the summary
        self._resumes_at: float | None = None
        self._cap_setting: str | None = None
        self._sent_from: str | None = None  # the computer that sends this vault's drafts, when it is not this one
        self._lock = threading.Lock()

    def record(self, path: str, action: Action, detail: str = "", data: OutcomeData | None = None) -> None:
        """Record a handler's Outcome (action, detail, data) for `path`."""
        data = data or OutcomeData()
        bucket = _bucket(action, detail, data)
        if bucket is None:
            return
        with self._lock:
            self._last[path] = bucket
            if bucket == SENT:
                self._sent[path] = data.get("recipients") or recipient_lists(data.get("to"))
            if bucket == ELSEWHERE:
                self._sent_from = data.get("sent_from") or self._sent_from
            if bucket == CAPPED:
                self._cap_setting = data.get("setting") or self._cap_setting
                if isinstance(data.get("resumes_at"), (int, float)):
                    self._resumes_at = max(self._resumes_at or 0.0, float(data["resumes_at"]))

    def settling(self, path: str) -> None:
        """An approved note not yet sendable (written in place, not yet quiet): the next pass takes it."""
        with self._lock:
            self._last.setdefault(path, SETTLING)

    def crashed(self, path: str) -> None:
        with self._lock:
            self._last[path] = FAILED

    def counts(self) -> Counter[str]:
        with self._lock:
            return Counter(self._last.values())

    @property
    def failed(self) -> bool:
        return self.counts()[FAILED] > 0

    def summary(self, command: str = "h0 sweep") -> str:
        """One line: e.g. 'h0 sweep: 3 sent, 1 refused (back in Drafts/), 2 triaged, 1 failed — see h0 status',
        then one line per message sent naming every recipient (`sent_lines`)."""
        return "\n".join([self.counts_line(command), *self.sent_lines()])

    def sent_lines(self) -> list[str]:
        """'  ✉ Approved/x.md → to a@x.com · cc b@y.org · bcc c@z.net' per message sent, every address."""
        with self._lock:
            sent = [(path, lists) for path, lists in self._sent.items() if self._last.get(path) == SENT]
        return [f"  ✉ {printable(path)} → {describe_recipients(lists)}" for path, lists in sorted(sent)]

    def counts_line(self, command: str = "h0 sweep") -> str:
        """The summary's first line: what the pass did, counted."""
        counts = self.counts()
        parts = []
        for bucket, words in (
            (SENT, "sent"),
            (COPIED, f"{'copy' if counts[COPIED] == 1 else 'copies'} {_COPIED}"),
            (REFUSED, "refused (back in Drafts/)"),
            (REJECTED, "rejected (filed in Done/)"),
            (TRIAGED, "triaged"),
            (RESCHEDULED, "with their proposed times updated from your calendar"),
            (CAPPED, self._capped_words()),
            (ELSEWHERE, f"left in Approved/ (sent from {self._sent_from or 'another computer'})"),
            (SETTLING, "still settling (the next sweep sends them)"),
            (MODEL_WAIT, "waiting for the model (retried; `h0_waiting:` on the note says why)"),
            (UNREADABLE, "unreadable"),
            (FAILED, "failed"),
        ):
            if counts[bucket]:
                parts.append(f"{counts[bucket]} {words}")
        if not parts:
            return f"{command}: nothing to do"
        look = " — see h0 status" if any(counts[b] for b in _NEEDS_LOOK) else ""
        return f"{command}: {', '.join(parts)}{look}"

    def _capped_words(self) -> str:
        with self._lock:
            setting, resumes_at = self._cap_setting, self._resumes_at
        words = "waiting for the send cap"
        if setting:
            words += f" ({setting}"
            words += f"; sending resumes at {local_clock(resumes_at)})" if resumes_at else ")"
        elif resumes_at:
            words += f" (sending resumes at {local_clock(resumes_at)})"
        return words


def _bucket(action: Action, detail: str, data: OutcomeData) -> str | None:
    match action:
        case Action.SENT:
            return SENT
        case Action.SKIPPED if data.get("copy_of"):
            return COPIED
        case Action.REFUSED | Action.HELD:
            return REFUSED
        case Action.REJECTED:
            return REJECTED
        case Action.TRIAGED:
            return TRIAGED
        case Action.RESCHEDULED:
            return RESCHEDULED
        case Action.FAILED | Action.PAUSED:
            return {"cap": CAPPED, "elsewhere": ELSEWHERE}.get(str(data.get("kind")), FAILED)
        case Action.BOUNCED:
            return FAILED
        case Action.DEFERRED:
            return MODEL_WAIT
        case Action.WAITING:
            if detail == WAITING_DETAIL:
                return MODEL_WAIT
            return UNREADABLE if detail == "corrupt frontmatter" else SETTLING
    return None  # skipped, gone, …: nothing happened to count
