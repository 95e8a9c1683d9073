"""`h0 sending`: which computer sends this vault's approved drafts; `h0 sending take` moves sending to this one
(h0.vault.sending_computer, docs/synced-vaults.md)."""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from h0.cli.common import EXIT_FAILED, EXIT_OK, h0_vault_exists, settings_for
from h0.errors import H0Error
from h0.platform.machine import Machine
from h0.vault import Vault
from h0.vault.sending_computer import SENDER_NOTE, read_claim, write_claim


def cmd_sending(args: argparse.Namespace) -> int:
    settings = settings_for(args)
    if not h0_vault_exists(settings):
        return EXIT_FAILED
    vault, machine, now = Vault(settings.vault_path), Machine.this(settings.h0_machine), dt.datetime.now(dt.UTC)
    claim = read_claim(vault)
    if args.action == "take":
        # Sending changes hands only after the other computer had time to see it (h0.vault.sending_computer).
        settled = (now + dt.timedelta(seconds=settings.sending_claim_settle_seconds)).replace(microsecond=0)
        ours = claim is not None and claim.names(machine) and claim.live(now)
        # This computer's own claim keeps its start; a start later than a settle period (written by hand) is not kept.
        begins = min(claim.sends_from or now, settled) if ours and claim is not None else settled
        try:
            write_claim(vault, machine, now, begins)
        except H0Error as error:
            print(f"h0 sending: could not write {SENDER_NOTE}: {error.message}", file=sys.stderr)
            return EXIT_FAILED
        start = "from now on" if begins <= now else f"from {begins:%H:%M:%S} UTC"
        print(
            f"This computer ({machine.name}) sends this vault's approved drafts {start}. H0 on another computer "
            f"leaves them in Approved/ once the sync tool brings it {SENDER_NOTE} (it looks every 30 s)."
        )
        return EXIT_OK
    if claim is None:
        print("No computer has claimed sending yet: the first `h0 watch` or `h0 sweep` to run claims it.")
    elif not claim.machine:
        print(f"{SENDER_NOTE} cannot be read: no computer sends until `h0 sending take` is run on one.")
    else:
        who = "this computer" if claim.names(machine) else claim.host
        seen = "" if claim.seen is None else f", last said {claim.seen.isoformat(timespec='minutes')}"
        state = "" if claim.live(now) else " — not for a while: the next H0 to run anywhere takes it"
        starts = claim.settling(now)
        state += "" if starts is None or not claim.live(now) else f"; it begins sending at {starts:%H:%M:%S} UTC"
        print(f"Approved drafts are sent from {who} ({claim.host}{seen}){state}.")
    return EXIT_OK
