#!/usr/bin/env python3
"""How many places the daemon's send step visits, and how often it returns, for each answer of a send.

    .venv/bin/python scripts/bench/send_handler_path.py          # one line per answer, then the totals

The step (h0.handlers.send.send_approved_draft) runs in process against a real vault: the mail server's
service behind `LocalMail` for the answers a vault can provoke (sent, refused, held, rejected, a copy, a
send cap), a `MailAPI` that raises the answer for those only a provider can give (try again, outcome
unknown, a bounce, credentials). A `sys.setprofile` hook counts, on the daemon's side of the mail seam:

- a *place*: a function of h0/handlers/ the step enters, or a function of another room that one of them
  calls directly (its first step into that room: the mail seam, a vault move, the audit, a log helper;
  what that function does inside its own room is not the step's path);
- a *return*: control handed back from a function of one module of h0/handlers/ to another module of it
  (send ↔ context ↔ send_failed ↔ reject), and the step's own return to its caller.

Everything below the mail seam (the mail server: build, send, file) is the server's path, not counted here.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from h0.config import load_settings
from h0.errors import AuthRequired, H0Error, RateLimited, SendFailed, then_of
from h0.handlers.context import HandlerContext, HandlerState
from h0.handlers.send import send_approved_draft
from h0.mail.api import LocalMail
from h0.mail.service import MailService
from h0.vault import Vault
from h0.vault.last_change import Arrival
from h0.vault.layout import init_vault

HANDLERS = str(ROOT / "h0" / "handlers") + os.sep
H0 = str(ROOT / "h0") + os.sep
SEAMS = {"send_approved_draft"}
_INLINE = {
    "<listcomp>",
    "<dictcomp>",
    "<setcomp>",
    "<genexpr>",
}  # the MailAPI's method: what it runs is the mail server's path


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


def main() -> int:
    union: list[str] = []
    worst_places = worst_returns = 0
    with tempfile.TemporaryDirectory(prefix="h0-path-") as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        init_vault(root)
        for name, make_ctx, make_note in scenarios(root):
            ctx = make_ctx()
            path = make_note()
            trace = PathTrace()
            sys.setprofile(trace)
            try:
                outcome = send_approved_draft(path, ctx)
            finally:
                sys.setprofile(None)
            worst_places, worst_returns = max(worst_places, len(trace.places)), max(worst_returns, trace.returns)
            union += [p for p in trace.places if p not in union]
            own = sum(1 for p in trace.places if p.startswith("handlers/") or p.endswith(".send_approved_draft"))
            print(
                f"{name:<34} {outcome.action.value:<9} places {len(trace.places):>2} "
                f"(the step's own {own:>2}, calls out {len(trace.places) - own:>2})  returns {trace.returns:>2}"
            )
            if "-v" in sys.argv:
                print("    " + "\n    ".join(trace.places))
    rooms = {p.split(":")[0] for p in union}
    print(f"\nmost places on one way: {worst_places}; most returns: {worst_returns}")
    print(f"places on every way together: {len(union)} in {len(rooms)} modules")
    if "-v" in sys.argv:
        print("    " + "\n    ".join(sorted(union)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
