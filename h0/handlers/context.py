"""What every handler gets: note operations over a `VaultAPI` (MCP first, the local vault as fallback), the
mail seam (`MailAPI`), the audit log, who looks at a note again (the work queue), and a little memory: what
was already reported, and the sending pause (`SendingPause`). Handlers see typed values only: `Note`,
`NoteRef`, `Moved`, the mail models — never a tool's dict.

Handlers are plain functions of (vault-relative path, HandlerContext) returning an
`Outcome`. They re-read the note and decide from what is on disk now, so a duplicate or
stale trigger is harmless.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

from loguru import logger

from h0.config import Settings
from h0.drafting import Drafting
from h0.errors import Conflict, H0Error, NotFound, ParseError
from h0.handlers.outcome import Action, Outcome, OutcomeData
from h0.mail.api import MailAPI
from h0.retry import Again, Unqueued, retry_words
from h0.state import StateDB
from h0.triage.models import EmailInput, ReplyContext, TriageOutcome
from h0.vault import AuditLog, Moved, Note, Vault
from h0.vault.api import LocalVault, NoteRef, Notes, VaultAPI
from h0.vault.audit import note_timestamp
from h0.vault.disclosure import Disclosure
from h0.vault.last_change import Arrival
from h0.vault.layout import DRAFTS, LOGS
from h0.vault.paths import PathResolver, directly_in


class RetrySchedule(Protocol):
    """Who looks at a note again, and when: the pipeline's work queue, which owns every wait (without one,
    h0.retry.Unqueued: a failure is not retried)."""

    def wait(self, path: str, why: Again, retry_after: float | None = None) -> float | None:
        """The wait before `path` is looked at again for `why` (None: nothing will look again)."""
        ...


class EmailTriager(Protocol):
    """What the triage handler asks of a triager (h0.triage.Triager, or a test's own)."""

    def triage(self, email: EmailInput, context: ReplyContext | None = None) -> TriageOutcome: ...


class NoteOps(Notes):
    """What handlers do to notes: `Notes` over a `VaultAPI` (in the daemon: the vault server, with the
    local vault as its fallback — h0.mcp.client.Fallback), with an update that survives a concurrent edit,
    and filing in a folder. `notes`: the plain verbs,
    for code outside the handlers (learning, revision)."""

    def __init__(self, api: VaultAPI) -> None:
        super().__init__(api)
        self.notes = Notes(api)

    def update(
        self,
        path: str,
        changes: Mapping[str, Any],
        *,
        if_match: str | None = None,
        attempts: int = 3,
        remove: Sequence[str] = (),
    ) -> NoteRef:
        """Merge `changes` into a note's frontmatter (keys in `remove` dropped; body untouched).

        With `if_match`, a concurrent human edit makes the first attempt a Conflict; the
        merge is then made on the fresh note (the keys H0 sets win, the human's edit stays).
        """
        for attempt in range(attempts):
            try:
                return super().update(path, changes, remove=remove, if_match=if_match if attempt == 0 else None)
            except Conflict:
                continue
        raise Conflict(f"{path} kept changing; could not record {sorted(changes)}.", path=path)

    def patch(self, note: Note, changes: Mapping[str, Any]) -> str:
        """Merge `changes` into a note just read, guarded by the hash it was read with."""
        return self.update(note.path, changes, if_match=note.hash).hash

    def move_to_folder(self, source: str, folder: str, set_frontmatter: Mapping[str, Any] | None = None) -> Moved:
        """File a note in `folder` (as 'name (2).md'… if the name is taken), annotating it in the same call."""
        return self.move(source, f"{folder}/", rename_if_exists=True, set_frontmatter=set_frontmatter)


class Pause(NamedTuple):
    """Why every send waits, and how long: "auth" (credentials missing or refused: the human must act) or "cap" (a
    send cap reached or the provider asking to slow down: it frees by itself at `resumes_at`, epoch seconds)."""

    kind: Literal["auth", "cap"]
    seconds: float
    reason: str
    setting: str | None = None
    resumes_at: float = 0.0


@dataclass
class SendingPause:
    """Sending is paused: every send waits. One object the send step asks first (`waiting`), hands a send refused
    for a pause (`begin`: it records it, says it once and answers), and tells when a send went (`ended`). It runs
    on the work queue's clock (the daemon passes it): a test moves a fake one."""

    clock: Callable[[], float] = time.monotonic
    until: float = 0.0
    reason: str = ""
    kind: str = ""  # "auth" or "cap" (`Pause`), or "elsewhere" (`hold`: another computer sends)
    facts: OutcomeData = field(default_factory=lambda: OutcomeData())  # a cap's setting and when it frees
    said: tuple[str, str] = ("", "")  # (key, reason) of the pause last said; cleared when a send ends it
    lock: threading.Lock = field(default_factory=threading.Lock)

    def left(self) -> float:
        """Seconds until sending resumes (0: it is not paused)."""
        return max(0.0, self.until - self.clock())

    def waiting(self) -> Outcome | None:
        """What a draft approved while sending is paused gets: `paused`, without a word (the pause was said once
        when it began). None: sending is not paused."""
        with self.lock:
            left = self.until - self.clock()
            if left <= 0:
                return None
            data: OutcomeData = {"kind": self.kind, **self.facts}
            return Outcome(Action.PAUSED, self.reason, retry_in=left, data=data)

    def begin(self, path: str, error: H0Error, pause: Pause, facts: Mapping[str, Any], ctx: HandlerContext) -> Outcome:
        """The send of `path` was refused for `pause`: every send waits `pause.seconds` from now. Recorded (a cap:
        `send_deferred` for each draft it refuses, with when sending resumes; credentials: `sends_paused` when the
        pause begins), said once in the log until a send ends it (a pause renewed by every look is not said
        again), and answered: the refused draft `failed` (the send-failed report signal), looked at again then.
        `facts`: the record's facts of the answer (the note's path, To, subject, the error)."""
        cap = pause.kind == "cap"
        key = f"cap {pause.setting or 'provider'}" if cap else f"auth {pause.reason}"
        with self.lock:
            now = self.clock()
            began = self.until <= now
            self.until, self.reason, self.kind = now + pause.seconds, pause.reason, pause.kind
            self.facts = OutcomeData(setting=pause.setting, resumes_at=pause.resumes_at) if cap else OutcomeData()
            say = self.said[0] != key
            if say:
                self.said = (key, pause.reason)
        data: OutcomeData = {"error": error, "retry_in": pause.seconds}
        if not cap:
            if began:
                ctx.audit.write("sends_paused", "error", reason=pause.reason, **facts)
            if say:
                logger.error(
                    "sending paused: {} ({} and the drafts approved meanwhile wait in Approved/; vault work goes on)",
                    pause.reason,
                    path,
                )
            return Outcome(Action.FAILED, error.code, retry_in=pause.seconds, data=data, again=Again.CREDENTIALS)
        resumes = note_timestamp(dt.datetime.fromtimestamp(pause.resumes_at, dt.UTC))
        ctx.audit.write("send_deferred", "warning", retry_in=pause.seconds, resumes_at=resumes, **facts)
        if say:
            then = "the first `h0 sweep` or `h0 watch` after that sends them" if ctx.one_pass else "H0 sends them then"
            logger.warning(
                "sending paused: {}. {} and the drafts approved meanwhile wait in Approved/; {}.",
                pause.reason,
                path,
                then,
            )
        else:
            logger.debug("{}: waits for the send cap", path)
        data |= {"kind": "cap", "setting": pause.setting, "resumes_at": pause.resumes_at}
        return Outcome(Action.FAILED, error.code, retry_in=pause.seconds, data=data, again=Again.SEND_CAP)

    def hold(self, reason: str, seconds: float, sent_from: str) -> None:
        """Another computer (`sent_from`) sends this vault's drafts (h0.pipeline.sending_claim): every send waits
        `seconds` from now, renewed by each look at the vault's claim while it holds; said there, not here."""
        with self.lock:
            self.until, self.reason, self.kind = self.clock() + seconds, reason, "elsewhere"
            self.facts = OutcomeData(sent_from=sent_from)

    def release(self) -> None:
        """This computer sends again: a hold for another computer's claim ends now (any other pause stays)."""
        with self.lock:
            if self.kind == "elsewhere":
                self.until, self.reason, self.kind = 0.0, "", ""

    def ended(self) -> str:
        """A send went: the pause that was said is over — its reason ("" if none was said) — unless a pause began
        while this send was under way (it took the cap's last slot): that one stays said."""
        with self.lock:
            if self.until > self.clock():
                return ""
            (_, reason), self.said = self.said, ("", "")
            return reason


@dataclass
class HandlerState:
    """In-memory bookkeeping shared by the handlers of one daemon: the problems already said, and the sending
    pause (on the work queue's clock: `clock`)."""

    reported: dict[tuple[str, str], str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    clock: Callable[[], float] = time.monotonic
    sending: SendingPause = field(init=False)

    def __post_init__(self) -> None:
        self.sending = SendingPause(self.clock)

    def succeeded(self, path: str) -> None:
        """`path` is done with: its problems may be said again should they come back."""
        with self.lock:
            for key in [k for k in self.reported if k[0] == path]:
                del self.reported[key]

    def first_report(self, path: str, code: str, version: str) -> bool:
        """True the first time (path, code) is seen for this version of the note."""
        with self.lock:
            if self.reported.get((path, code)) == version:
                return False
            self.reported[(path, code)] = version
            return True

    def sent(self, path: str) -> str:
        """`path` was sent: its problems are forgotten, and the pause that was said ends ("" if none did)."""
        self.succeeded(path)
        return self.sending.ended()

    # What the dashboard shows of the pause (h0.report.dashwriter).
    def sends_paused_for(self) -> float:
        return self.sending.left()

    @property
    def pause_reason(self) -> str:
        return self.sending.reason


def _unknown_arrival(path: str) -> Arrival:
    return Arrival()


def _never() -> bool:
    return False


@dataclass
class HandlerContext:
    settings: Settings
    notes: NoteOps
    mail: MailAPI | None  # None: no mail server configured (sending waits, ingest is off)
    audit: AuditLog
    paths: PathResolver  # the vault's path confinement (where a `source:` resolves on disk); no note I/O
    state: HandlerState = field(default_factory=HandlerState)
    triager: EmailTriager | None = None
    drafting: Drafting | None = None  # this vault's drafting state (built on first use: `drafting_state`)
    state_db: StateDB | None = None  # H0's durable bookkeeping (the filing journal among it)
    # How a note came into Approved/ as the pipeline's events saw it (kind "moved", "written" or "unknown").
    arrival: Callable[[str], Arrival] = _unknown_arrival
    # `h0 sweep`: the process exits after this pass, so nothing is retried in it; the next
    # sweep (or `h0 watch`) is what looks again, and log lines must say so.
    one_pass: bool = False
    # Who looks at a note again, and after how long: the daemon's work queue; without one, nobody retries a failure.
    retries: RetrySchedule = field(default_factory=Unqueued)
    # Set when the daemon stops: a long batch (triage) leaves the notes it has not reached for the next start.
    stopping: threading.Event = field(default_factory=threading.Event)
    # Whether a watcher of this process reports every note of the vault changing (the daemon's native one), which
    # then tells `drafting` what changed: drafting trusts its index between reports instead of comparing first.
    vault_watched: Callable[[], bool] = _never
    _drafting_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def local(
        cls,
        settings: Settings,
        vault: Vault,
        *,
        mail: MailAPI | None = None,
        audit: AuditLog | None = None,
        **fields: Any,
    ) -> HandlerContext:
        """A context over this process's vault, without a vault server (tests, benchmarks)."""
        return cls(
            settings=settings,
            notes=NoteOps(LocalVault(vault)),
            mail=mail,
            audit=audit or AuditLog(vault.root / LOGS, "h0"),
            paths=vault.paths,
            **fields,
        )

    def drafting_state(self) -> Drafting:
        """This vault's drafting state, built on first use (it raises what building it raises: settings without
        the drafting fields, a test's stub). Built late, it compares its index with the vault once."""
        with self._drafting_lock:
            if self.drafting is None:
                drafting = Drafting.build(self.settings, self.paths.root, watched=self.vault_watched)
                drafting.note_changed(None)  # what a watcher saw before it existed was told to no one
                self.drafting = drafting
            return self.drafting

    def disclosure(self) -> Disclosure:
        """The gate that says what of this vault may reach a model (h0.vault.disclosure): drafting's, which knows
        the private people of its vault index; for settings that cannot build drafting, the settings' gate alone,
        which knows no private person."""
        try:
            return self.drafting_state().disclosure
        except Exception as exc:  # noqa: BLE001 - settings without the drafting fields
            logger.debug("drafting unavailable, the gate knows no private people: {}", exc)
            return Disclosure.for_vault(self.paths.root, self.settings.private_folders)

    def state_database(self) -> StateDB:
        """H0's state database: the daemon's own, else this vault's (opened on the spot)."""
        return self.state_db or StateDB.for_vault(self.settings.vault_path, self.settings.h0_state_dir)

    def retry_delay(self, path: str) -> float | None:
        """The wait before a failing `path` is looked at again (None: nothing will look again)."""
        return self.retries.wait(path, Again.FAILED)

    def retry_words(self, seconds: float | None) -> str:
        """When a note is looked at again, as a log line of this process can truthfully say it."""
        return retry_words(seconds, self.one_pass)

    def report(self, path: str, code: str, version: str, text: str, severity: str = "error", **fields: Any) -> None:
        """Log a problem with a note once per version of it (no log spam from retries)."""
        if self.state.first_report(path, code, version):
            for reserved in ("message", "path", "code", "version", "text", "severity"):
                fields.pop(reserved, None)
            self.audit.write(code, severity, path=path, message=text, **fields)
            log = logger.error if severity == "error" else logger.warning
            log("{}: {} — {}", path, code.replace("_", " "), text)

    def read_note(self, path: str) -> Note | Outcome:
        """The note at `path`, or the Outcome a handler returns when it is gone or unreadable
        (corrupt frontmatter: `read_error` logged once, the note left where it is)."""
        try:
            return self.notes.read(path)
        except NotFound:
            return Outcome(Action.GONE)
        except ParseError as exc:
            self.report(path, "read_error", "corrupt", exc.message, **self.error_fields(exc))
            return Outcome(Action.WAITING, "corrupt frontmatter")

    def read_draft(self, path: str, elsewhere: str) -> Note | Outcome:
        """The reply draft at `path`, directly in Drafts/ (`elsewhere`: why a note anywhere else is skipped), or
        the Outcome a handler returns (`read_note`)."""
        if not directly_in(path, DRAFTS):
            return Outcome(Action.SKIPPED, elsewhere)
        return self.read_note(path)

    def error_fields(self, error: H0Error) -> dict[str, Any]:
        return {"error": error.code, "message": error.message, "details": error.details or None}
