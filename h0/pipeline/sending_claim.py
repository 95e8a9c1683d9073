"""One computer sends: the daemon's part in the vault's sending claim (h0.vault.sending_computer).

At start, before the first sweep can send, and then every CHECK_SECONDS, the daemon looks at the claim. Its
own that holds: it refreshes it (every REFRESH_EVERY) and sends. None at all (the vault's first): it claims and
sends. Another computer's that holds: every send waits (`SendingPause.hold`), the drafts stay in Approved/,
`h0 status` and the dashboard say from where they are sent. A claim gone stale — that computer stopped, or
this one was off for hours — is taken, and the taking settles (`settle`) before this computer sends: another
computer waking at the same time took it too, and the sync tool brings one of the two claims to both.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

from loguru import logger

from h0.errors import H0Error
from h0.handlers.context import SendingPause
from h0.platform.machine import Machine
from h0.vault import AuditLog, Vault
from h0.vault.sending_computer import (
    REFRESH_EVERY,
    Claim,
    ago,
    elsewhere,
    held_because,
    read_claim,
    settles_because,
    write_claim,
)

CHECK_SECONDS = 30.0  # how often the daemon looks at the claim (one small note)
HOLD_SECONDS = 3 * CHECK_SECONDS  # how long a look at another computer's claim holds sending, unless renewed


class SendingClaim:
    def __init__(
        self,
        vault: Vault,
        machine: Machine,
        pause: SendingPause,
        audit: AuditLog,
        *,
        wall: Callable[[], float] = time.time,  # epoch seconds (the daemon's clock: a test moves it)
    ) -> None:
        self.vault = vault
        self.machine = machine
        self.pause = pause
        self.audit = audit
        self.wall = wall
        self.settle = dt.timedelta(seconds=120)  # how long a claim this computer takes waits before it sends
        self.resumed: Callable[[], object] = lambda: None  # this computer takes sending back: what waited goes
        self.elsewhere: Claim | None = None  # the other computer's claim this one yields to, while it does
        self.settles: dt.datetime | None = None  # when this computer's new claim begins sending, while it waits

    def settle_for(self, seconds: float, resumed: Callable[[], object]) -> None:
        """The daemon's settings: a taken claim waits `seconds` (SENDING_CLAIM_SETTLE_SECONDS) before it sends;
        `resumed()` when this computer sends again after waiting (the daemon sweeps)."""
        self.settle, self.resumed = dt.timedelta(seconds=seconds), resumed

    def look(self) -> bool:
        """`check`, as the daemon runs it (at start, then every CHECK_SECONDS): True when this computer sends. A
        claim that cannot be written (a read-only vault) is said, and sending goes on."""
        waited = self.elsewhere is not None or self.settles is not None
        try:
            sends = self.check()
        except H0Error as error:
            logger.error("could not record this computer's sending claim: {}", error.message)
            return True
        if sends and waited:
            self.resumed()
        return sends

    def now(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.wall(), dt.UTC)

    def check(self) -> bool:
        """Look at the claim and act on it; True when this computer sends."""
        now = self.now()
        claim = read_claim(self.vault)
        holder = elsewhere(claim, self.machine, now)
        if holder is not None:
            self._yield_to(holder)
            return False
        if claim is None:  # the vault's first claim: sent at once (the one window left: docs/synced-vaults.md)
            write_claim(self.vault, self.machine, now)
        elif not claim.names(self.machine) or not claim.live(now):
            # A claim changing hands settles: another computer may be taking it too. To the second, as written.
            begins = (now + self.settle).replace(microsecond=0)
            write_claim(self.vault, self.machine, now, begins)
            if not claim.names(self.machine):
                self.audit.write("sending_taken", "warning", machine=self.machine.name, stale_claim_of=claim.host)
                logger.warning(
                    "{} last claimed sending {}; it stopped: this computer sends from {:%H:%M:%S} UTC",
                    claim.host,
                    ago(claim, now),
                    begins,
                )
            claim = Claim(self.machine.id, self.machine.name, now, begins)
        elif claim.seen is None or now - claim.seen >= REFRESH_EVERY:
            write_claim(self.vault, self.machine, now, claim.sends_from)
        start = claim.settling(now) if claim is not None else None
        if start is not None:
            self._settle_until(start)
            return False
        if self.elsewhere is not None:
            logger.info("sending resumes on this computer ({} no longer sends)", self.elsewhere.host)
        elif self.settles is not None:
            logger.info("sending begins on this computer: no other computer's claim arrived")
        if self.elsewhere is not None or self.settles is not None:
            self.elsewhere = self.settles = None
            self.pause.release()
        return True

    def _settle_until(self, start: dt.datetime) -> None:
        reason = settles_because(start, self.now())
        self.pause.hold(reason, HOLD_SECONDS, f"this computer at {start:%H:%M:%S} UTC")
        if self.settles != start:
            self.audit.write("sending_settles", machine=self.machine.name, sends_from=start.isoformat())
            logger.info("sending paused: {}", reason)
        self.settles, self.elsewhere = start, None

    def _yield_to(self, claim: Claim) -> None:
        reason = held_because(claim, self.now())
        self.pause.hold(reason, HOLD_SECONDS, claim.host)
        if self.elsewhere is None or self.elsewhere.machine != claim.machine:
            self.audit.write("sending_elsewhere", "warning", machine=self.machine.name, sent_from=claim.host)
            logger.warning("sending paused: {}", reason)
        self.elsewhere, self.settles = claim, None
