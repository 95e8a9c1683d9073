"""The drafting fixtures: a realistic vault (people, projects, meetings, a private note, a private
journal folder, a log with a secret, past replies in Done/), 23 emails with the facts a good reply
needs, and a sent mailbox with the greeting and sign-off the owner uses per person."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from h0.mail.owner import OwnerAuthority
from h0.state import StateDB
from h0.vault import init_vault
from h0.vault.note import parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "drafting"
SECRETS = ("SECRET-PRIVATE-4410", "SECRET-JOURNAL-7731", "SECRET-LOG-9902")  # in a private note, Journal/, Logs/
PRIVATE_FOLDERS = "Journal"


def fixture_emails() -> list[dict[str, Any]]:
    return json.loads((FIXTURES / "emails.json").read_text(encoding="utf-8"))


@pytest.fixture
def knowledge_vault(tmp_path: Path) -> Path:
    """A copy of the fixture vault with H0's folders."""
    root = tmp_path / "vault"
    shutil.copytree(FIXTURES / "vault", root)
    init_vault(root)
    return root


def email_note(message_id: str, sender: str, subject: str, body: str, *, to: str = "alex@northwind.example") -> str:
    return (
        f"---\ntype: email\nstatus: pending\nmessage_id: {message_id}\nfrom: {json.dumps(sender)}\n"
        f"to: {to}\nsubject: {json.dumps(subject)}\nreceived: 2026-03-10T09:00:00Z\n---\n"
        f"```text\n{body}\n```\n"
    )


def sent_by_h0(root: Path, state_dir: Path) -> OwnerAuthority:
    """The fixture's sent replies in Done/ as what they stand for — H0's own sends: the send ledger records
    each one sent and filed where it lies, so the owner's identity vouches for those notes (and no other)."""
    state = StateDB.for_vault(root, state_dir)
    for path in sorted((root / "Done").glob("*.md")):
        fm = parse(path.read_bytes(), f"Done/{path.name}").frontmatter
        rfc = fm.get("rfc822_message_id")
        if fm.get("status") != "sent" or not isinstance(rfc, str):
            continue
        state.claim_send(key=f"key-{path.stem}", rfc822_message_id=rfc, content_hash="-", caps=[], in_flight_s=60)
        state.mark_sent(rfc, provider_message_id=None, thread_id=None, sent_at="2026-02-10T10:00:00Z", backend="outbox")
        state.mark_filed(rfc, f"Done/{path.name}")
    return OwnerAuthority(state)
