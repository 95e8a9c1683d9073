"""`h0 eval`: how good would H0's drafts be on your own mail? A table, and a report note in `Logs/`."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from h0.cli.common import EXIT_FAILED, EXIT_OK, prepared, triager_for

if TYPE_CHECKING:
    from h0.config import Settings
    from h0.handlers.eval_cases import EvalPrivacy
    from h0.vault import Vault


def cmd_eval(args: argparse.Namespace) -> int:
    # Imported here, as every command does: `h0 mcp …` starts without loading the drafting rooms.
    from h0.drafting.service import mail_history
    from h0.handlers.context import HandlerContext
    from h0.handlers.eval_cases import find_cases, sent_times
    from h0.handlers.eval_report import as_json, report_note, table
    from h0.handlers.evaluate import evaluate
    from h0.mail.owner import OwnerAuthority
    from h0.platform.fileio import atomic_write
    from h0.vault import Vault
    from h0.vault.layout import LOGS

    settings = prepared(args, "eval")
    if settings is None:
        return EXIT_FAILED
    if args.model:
        settings = settings.model_copy(update={"llm_model": args.model})
    vault = Vault(Path(settings.vault_path))
    # The gate, through the vault index: a private pair is never drafted again, nor a past reply (h0.handlers.eval_cases).
    private = eval_privacy(settings, vault)
    history = mail_history(vault.root, settings.h0_state_dir)
    owner = OwnerAuthority.for_settings(settings)
    cases, left_out = find_cases(vault, history, args.limit, owner, private)
    if not cases:
        print(
            "h0 eval: no reply of yours to compare with: H0 needs replies it knows you sent (imported from your "
            "sent mail with `h0 import`, synced from your mailbox's sent mail, or sent by H0) that answer an email "
            "it knows (kept as history, or a note in Done/ or Needs_Action/)"
            + (f"; {left_out} private ones are never sent to a model." if left_out else "."),
            file=sys.stderr,
        )
        return EXIT_FAILED
    triager = triager_for(settings)
    print(f"h0 eval: drafting {len(cases)} of your replies again, each hidden while H0 drafts it …", file=sys.stderr)
    report = evaluate(
        cases,
        HandlerContext.local(settings, vault),
        triager,
        settings,
        sent_at=sent_times(vault),
        left_out=left_out,
    )
    if args.json:
        print(json.dumps(as_json(report), ensure_ascii=False, indent=2))
    else:
        print(table(report))
        print()
        print(report.summary())
    if not args.no_note:
        now = dt.datetime.now().astimezone()
        rel = f"{LOGS}/eval_{now:%Y-%m-%d_%H%M%S}.md"
        target = Path(settings.vault_path) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, report_note(report, now).encode("utf-8"), mode=0o644)
        print(f"Report: {rel}", file=sys.stderr)
    return EXIT_OK


def eval_privacy(settings: Settings, vault: Vault) -> EvalPrivacy:
    """The gate through the vault index, as it is now; when the index cannot be opened, every note is private:
    nothing is sent to a model (fail closed)."""
    import sqlite3

    from h0.errors import H0Error
    from h0.handlers.eval_cases import EvalPrivacy
    from h0.vault.disclosure import Disclosure
    from h0.vault.index import VaultIndex
    from h0.vault.index.db import Damaged
    from h0.vault.private_threads import IndexThreads

    gate = Disclosure.for_vault(vault.root, settings.private_folders)
    try:
        index = VaultIndex.shared(vault.root, settings.h0_state_dir, gate)
    except (H0Error, Damaged, sqlite3.Error, OSError) as exc:
        print(f"h0 eval: the vault index cannot be opened ({exc}): no reply is drafted again.", file=sys.stderr)
        return EvalPrivacy.closed(gate)

    def note(path: str) -> bool:
        try:
            return index.is_private(path)
        except (H0Error, Damaged, sqlite3.Error, OSError):
            return True

    return EvalPrivacy(note, IndexThreads(index).private_keys, index.gate)
