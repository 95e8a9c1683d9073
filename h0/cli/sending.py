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
    if args.action == "take":
        try:
            write_claim(vault, machine, now)
        except H0Error as error:
            print(f"h0 sending: could not write {SENDER_NOTE}: {error.message}", file=sys.stderr)
            return EXIT_FAILED
        print(
            f"This computer ({machine.name}) sends this vault's approved drafts from now on. H0 on another computer "
            f"leaves them in Approved/ once the sync tool brings it {SENDER_NOTE} (it looks every 30 s)."
        )
        return EXIT_OK
    claim = read_claim(vault)
    if claim is None:
        print("No computer has claimed sending yet: the first `h0 watch` or `h0 sweep` to run claims it.")
    elif not claim.machine:
        print(f"{SENDER_NOTE} cannot be read: no computer sends until `h0 sending take` is run on one.")
    else:
        who = "this computer" if claim.names(machine) else claim.host
        seen = "" if claim.seen is None else f", last said {claim.seen.isoformat(timespec='minutes')}"
        state = "" if claim.live(now) else " — not for a while: the next H0 to run anywhere takes it"
        print(f"Approved drafts are sent from {who} ({claim.host}{seen}){state}.")
    return EXIT_OK
