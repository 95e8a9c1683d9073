"""The send step's path, traced: the places it visits and the returns it takes, for each answer of a send.

The step (h0.handlers.send.send_approved_draft) runs in process against a real vault: the mail server's
service behind `LocalMail` for the answers a vault can provoke (sent, refused, rejected, a copy), a `MailAPI`
that raises the answer for those only a provider can give (try again, outcome unknown, a bounce, credentials,
a send cap). A `sys.setprofile` hook counts, on the daemon's side of the mail seam:

- a *place*: a function of h0/handlers/ the step enters, or a function of another room that one of them
  calls directly (its first step into that room: the mail seam, a vault move, the audit, a log helper;
  what that function does inside its own room is not the step's path);
- a *return*: control handed back from a function of one module of h0/handlers/ to another module of it
  (send ↔ context ↔ reject), and the step's own return to its caller.

Everything below the mail seam (the mail server: build, send, file) is the server's path, not counted here.
Used by `scripts/bench/send_handler_path.py` (the figures) and tests/pipeline/test_send_step.py (the shape).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, NamedTuple

import h0
from h0.config import load_settings
from h0.errors import AuthRequired, H0Error, RateLimited, SendFailed, then_of
from h0.handlers.context import HandlerContext, HandlerState
from h0.handlers.send import send_approved_draft
from h0.mail.api import LocalMail
from h0.mail.service import MailService
from h0.vault import Vault
from h0.vault.last_change import Arrival

H0 = str(Path(h0.__file__).resolve().parent) + os.sep
HANDLERS = H0 + "handlers" + os.sep
SEAMS = {"send_approved_draft"}  # the MailAPI's method: what it runs is the mail server's path
_INLINE = {"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"}  # part of the function they are in


def _is_handler(frame: FrameType | None) -> bool:
    return frame is not None and frame.f_code.co_filename.startswith(HANDLERS)


def _place(frame: FrameType) -> str:
    code = frame.f_code
    return f"{code.co_filename[len(H0) :]}:{code.co_qualname}"


class PathTrace:
    """Places entered and returns taken by the send step, cut at the mail seam."""

    def __init__(self) -> None:
        self.places: list[str] = []
        self.returns = 0
        self._seam_depth = 0
        self._depth = 0

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if event not in ("call", "return") or not code.co_filename.startswith(H0) or code.co_name in _INLINE:
            return  # a comprehension is part of its function
        caller = frame.f_back
        seam = frame.f_code.co_name in SEAMS and not _is_handler(frame)
        if event == "call":
            if self._seam_depth:
                if seam:
                    self._seam_depth += 1
                return
            if _is_handler(frame) or _is_handler(caller):
                place = _place(frame)
                if place not in self.places:
                    self.places.append(place)
            if seam:
                self._seam_depth = 1
            return
        if self._seam_depth:
            if seam:
                self._seam_depth -= 1
            return
        if not _is_handler(frame):
            return
        if frame.f_code.co_name == "send_approved_draft" and not _is_handler(caller):
            self.returns += 1  # the step's own answer to the worker
        elif _is_handler(caller) and caller is not None and caller.f_code.co_filename != frame.f_code.co_filename:
            self.returns += 1  # back to another module of the handlers' room


class Raising:
    """A `MailAPI` whose send answers `error` as the mail server would (its `then` decided by then_of)."""

    def __init__(self, error: H0Error) -> None:
        self.error = error

    def send_approved_draft(self, path: str, note_hash: str | None = None, arrival: Arrival | None = None) -> Any:
        self.error.details["then"] = then_of(self.error).value
        raise self.error


def draft(root: Path, name: str, status: str = "pending_approval", body: str = "") -> str:
    path = root / "Approved" / name
    body = body or f"Hi Bob,\n\nSee you soon ({name}).\n"
    path.write_text(f"---\nto: bob@example.com\nsubject: Hello\nstatus: {status}\n---\n{body}")
    then = time.time() - 60
    os.utime(path, (then, then))
    return f"Approved/{name}"


def moved(path: str) -> Arrival:
    return Arrival("moved", time.time())


def scenarios(root: Path) -> list[tuple[str, Callable[[], HandlerContext], Callable[[], str]]]:
    settings = load_settings(vault_path=root, mail_backend="outbox", approval_fresh_seconds=0, log_level="ERROR")
    service = MailService(settings, trusted_caller=True)

    def ctx(mail: Any = None) -> Callable[[], HandlerContext]:
        return lambda: HandlerContext.local(
            settings, Vault(root), mail=mail or LocalMail(service), state=HandlerState(), arrival=moved
        )

    def copy() -> str:
        draft(root, "orig.md", body="The same words.\n")
        send_approved_draft("Approved/orig.md", ctx()())
        return draft(root, "orig 2.md", body="The same words.\n")

    def paused_ctx() -> HandlerContext:
        c = ctx(Raising(AuthRequired("The token is missing.")))()
        send_approved_draft(draft(root, "first.md"), c)
        return c

    return [
        ("sent", ctx(), lambda: draft(root, "a.md")),
        ("refused: back to Drafts/", ctx(), lambda: draft(root, "c.md", body="Hi <!-- hidden --> Bob\n")),
        ("refused: its status says sent", ctx(), lambda: draft(root, "d.md", status="sent")),
        ("rejected in Approved/", ctx(), lambda: draft(root, "e.md", status="rejected")),
        ("a copy of a sent message", ctx(), copy),
        ("try again at T", ctx(Raising(SendFailed("503", retryable=True, retry_after=3))), lambda: draft(root, "f.md")),
        ("outcome unknown", ctx(Raising(SendFailed("silent", outcome="unknown"))), lambda: draft(root, "g.md")),
        ("bounced", ctx(Raising(SendFailed("550 no such user", bounce=True))), lambda: draft(root, "h.md")),
        (
            "credentials: sending pauses",
            ctx(Raising(AuthRequired("The token is missing."))),
            lambda: draft(root, "i.md"),
        ),
        ("a send cap: sending pauses", ctx(Raising(RateLimited("cap", retry_after=60))), lambda: draft(root, "k.md")),
        ("while sending is paused", paused_ctx, lambda: draft(root, "j.md")),
    ]


class Way(NamedTuple):
    name: str
    action: str
    places: list[str]
    returns: int

    @property
    def own(self) -> int:
        """The places that are the step's own: functions of h0/handlers/ and the mail seam."""
        return sum(1 for p in self.places if p.startswith("handlers/") or p.endswith(".send_approved_draft"))


def trace_ways(root: Path) -> list[Way]:
    """Every way through the send step, traced, on the vault at `root` (initialised)."""
    ways = []
    for name, make_ctx, make_note in scenarios(root):
        ctx = make_ctx()
        path = make_note()
        trace = PathTrace()
        sys.setprofile(trace)
        try:
            outcome = send_approved_draft(path, ctx)
        finally:
            sys.setprofile(None)
        ways.append(Way(name, outcome.action.value, trace.places, trace.returns))
    return ways
