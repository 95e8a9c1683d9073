"""One computer sends: the daemon's part in the vault's sending claim (h0.vault.sending_computer).

At start, before the first sweep can send, and then every CHECK_SECONDS, the daemon looks at the claim. Its
own, or none that holds: it claims (again, every REFRESH_EVERY) and sends. Another computer's that holds:
every send waits (`SendingPause.hold`), the drafts stay in Approved/, `h0 status` and the dashboard say from
where they are sent; when that claim goes stale — that computer stopped — this one takes it and sends them.
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
from h0.vault.sending_computer import REFRESH_EVERY, Claim, ago, elsewhere, held_because, read_claim, write_claim

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
        self.resumed: Callable[[], object] = lambda: None  # this computer takes sending back: what waited goes
        self.elsewhere: Claim | None = None  # the other computer's claim this one yields to, while it does

    def look(self) -> bool:
        """`check`, as the daemon runs it (at start, then every CHECK_SECONDS): True when this computer sends. A
        claim that cannot be written (a read-only vault) is said, and sending goes on."""
        waited = self.elsewhere is not None
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
        if claim is None or not claim.names(self.machine) or claim.seen is None or now - claim.seen >= REFRESH_EVERY:
            write_claim(self.vault, self.machine, now)
            if claim is not None and not claim.names(self.machine):
                self.audit.write("sending_taken", "warning", machine=self.machine.name, stale_claim_of=claim.host)
                logger.warning(
                    "{} last claimed sending {}; it stopped: this computer sends now", claim.host, ago(claim, now)
                )
        if self.elsewhere is not None:
            logger.info("sending resumes on this computer ({} no longer sends)", self.elsewhere.host)
            self.elsewhere = None
            self.pause.release()
        return True

    def _yield_to(self, claim: Claim) -> None:
        reason = held_because(claim, self.now())
        self.pause.hold(reason, HOLD_SECONDS, claim.host)
        if self.elsewhere is None or self.elsewhere.machine != claim.machine:
            self.audit.write("sending_elsewhere", "warning", machine=self.machine.name, sent_from=claim.host)
            logger.warning("sending paused: {}", reason)
        self.elsewhere = claim
