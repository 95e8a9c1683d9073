"""Which computer sends this vault's approved drafts: the claim note `Logs/H0_Sender.md`.

H0 remembers what it sent in a state database on each computer, outside the vault, so two computers running
`h0 watch` on one synced vault would both send an approved draft. The daemon that sends writes its claim into
the vault, where the sync tool carries it to the other computers (a Markdown note, so Obsidian Sync carries it
too), and refreshes it while it runs; a daemon on another computer that finds a live claim of someone else's
does not send (docs/synced-vaults.md). A claim not refreshed for `STALE_AFTER` is over: the computer that
sent was switched off or stopped watching, and the next to look takes it.

A claim that changes hands settles before it sends (`sends_from`): two computers waking together after a night
off both find the claim stale and both take it, each before the sync tool has brought the other's; the
sending begins only once the sync tool had time to bring a rival claim, and the one claim the vault keeps
then names the one computer that sends. The very first claim of a vault sends at once (a first `h0 watch`
sends what it is given); two computers that each start H0 for the first time within the sync tool's delay
are the one case left (docs/synced-vaults.md).

A claim names one computer, so whoever writes it — the owner, another program, a sync conflict — can move
sending or stop it, never make two computers send; the vault server refuses every MCP write of it
(h0.mcp.vault_guard). Unreadable, hostile or future-dated
claims fail closed: a note that does not parse is somebody else's live claim until it is fixed or taken.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from h0.errors import H0Error, NotFound
from h0.platform.machine import Machine
from h0.printable import printable
from h0.vault.audit import note_timestamp
from h0.vault.layout import LOGS
from h0.vault.store import Vault

SENDER_NOTE = f"{LOGS}/H0_Sender.md"
REFRESH_EVERY = dt.timedelta(minutes=30)  # how often the sending computer says it still sends
STALE_AFTER = dt.timedelta(hours=2)  # a claim not refreshed for this long is over


@dataclass(frozen=True, slots=True)
class Claim:
    machine: str
    host: str
    seen: dt.datetime | None  # when the claiming computer last said it sends (None: unreadable)
    sends_from: dt.datetime | None = None  # when its sending begins (None: at once, a claim older than settling)

    def live(self, now: dt.datetime) -> bool:
        """Whether the claim still holds: refreshed within STALE_AFTER (a time in the future counts as now)."""
        return self.seen is None or now - min(self.seen, now) < STALE_AFTER

    def names(self, machine: Machine) -> bool:
        return self.machine == machine.id

    def settling(self, now: dt.datetime) -> dt.datetime | None:
        """When the claimed computer begins sending, while that is still to come; None once it sends."""
        return self.sends_from if self.sends_from is not None and self.sends_from > now else None


def elsewhere(claim: Claim | None, machine: Machine, now: dt.datetime) -> Claim | None:
    """`claim` when it keeps `machine` from sending — another computer's (or nobody's readable) claim that
    holds — else None."""
    return claim if claim is not None and not claim.names(machine) and claim.live(now) else None


def not_sent_here(vault: Vault, machine: Machine, now: dt.datetime) -> str | None:
    """Why `machine` does not send this vault's drafts now (`held_because`, `settles_because`), or None when it may."""
    claim = read_claim(vault)
    holder = elsewhere(claim, machine, now)
    if holder is not None:
        return held_because(holder, now)
    start = claim.settling(now) if claim is not None and claim.names(machine) and claim.live(now) else None
    return None if start is None else settles_because(start, now)


def settles_because(start: dt.datetime, now: dt.datetime) -> str:
    """Why this computer, whose claim is new, does not send yet: what `h0 status`, the dashboard and the log say."""
    seconds = max(1, int((start - now).total_seconds()))
    return (
        f"sending starts here in {seconds} s ({start:%H:%M:%S} UTC): the claim was stale or changed hands, and the "
        "sync tool is given time to bring what another computer claimed and sent meanwhile"
    )


def held_because(claim: Claim, now: dt.datetime) -> str:
    """Why this computer does not send while `claim` holds: what `h0 status`, the dashboard and the log say."""
    if not claim.machine:
        return f"{SENDER_NOTE} cannot be read: no computer sends until `h0 sending take` runs on one"
    return f"drafts are sent from {claim.host} (claimed {ago(claim, now)}); to send from here: `h0 sending take`"


def ago(claim: Claim, now: dt.datetime) -> str:
    if claim.seen is None:
        return "of unknown age"
    minutes = max(0, int((now - min(claim.seen, now)).total_seconds() // 60))
    return "just now" if minutes == 0 else f"{minutes} min ago" if minutes < 120 else f"{minutes // 60} h ago"


def read_claim(vault: Vault) -> Claim | None:
    """The claim in the vault, or None when there is none. A note that cannot be read as one is a claim of
    nobody's that holds (`machine` empty, `seen` None): fail closed, this computer does not send."""
    try:
        note = vault.read_note(SENDER_NOTE)
    except NotFound:
        return None
    except H0Error:
        return Claim("", "an unreadable Logs/H0_Sender.md", None)
    said = note.facts.sending_claim
    if not said.machine:
        return Claim("", "an unreadable Logs/H0_Sender.md", None)
    shown = printable(said.host or said.machine, limit=64) or said.machine[:64]
    seen, start = (None if at is None else dt.datetime.fromtimestamp(at, dt.UTC) for at in (said.seen, said.sends_from))
    return Claim(said.machine, shown, seen, start)


def write_claim(vault: Vault, machine: Machine, now: dt.datetime, sends_from: dt.datetime | None = None) -> None:
    """Claim sending for `machine` as of `now` (the claim's `seen`), its sending beginning at `sends_from` (now
    when None)."""
    vault.write_note(
        SENDER_NOTE,
        {
            "type": "h0_sender",
            "machine": machine.id,
            "host": machine.name,
            "seen": note_timestamp(now),
            "sends_from": note_timestamp(sends_from or now),
        },
        f"H0 sends this vault's approved drafts from **{machine.name}**, where `h0 watch` runs.\n\n"
        "H0 on another computer leaves approved drafts in Approved/ while this claim is fresh (it is refreshed "
        f"every {int(REFRESH_EVERY.total_seconds() // 60)} minutes). To send from another computer, run "
        "`h0 sending take` there.\n",
    )
