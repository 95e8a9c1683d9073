"""The drafting fixtures: a realistic vault (people, projects, meetings, a private note, a private
journal folder, a log with a secret, past replies in Done/), 23 emails with the facts a good reply
needs, and a sent mailbox with the greeting and sign-off the owner uses per person."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from h0.cli import main
from h0.mail.owner import Evidence, Observed, OwnerAuthority, note_message_key
from h0.state import StateDB
from h0.vault import init_vault
from h0.vault.note import parse
from tests.triage.fake_llm import FakeLLM

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
    sent_by_h0(root, Path(os.environ["H0_STATE_DIR"]))  # the state folder every H0 process of the test uses
    return root


def email_note(message_id: str, sender: str, subject: str, body: str, *, to: str = "alex@northwind.example") -> str:
    return (
        f"---\ntype: email\nstatus: pending\nmessage_id: {message_id}\nfrom: {json.dumps(sender)}\n"
        f"to: {to}\nsubject: {json.dumps(subject)}\nreceived: 2026-03-10T09:00:00Z\n---\n"
        f"```text\n{body}\n```\n"
    )


def sent_by_h0(root: Path, state_dir: Path) -> OwnerAuthority:
    """The fixture's sent replies in Done/ as the owner's sent mail: recorded with the owner's identity, note by
    note, as an import of the owner's Sent folder records them (recording them as H0's sends would also feed
    the follow-ups, which these tests are not about)."""
    authority = OwnerAuthority(StateDB.for_vault(root, state_dir))
    seen = []
    for path in sorted((root / "Done").glob("*.md")):
        facts = parse(path.read_bytes(), f"Done/{path.name}").facts
        if facts.status.word == "sent" and facts.rfc822_message_id:
            key, note = note_message_key(facts), f"Done/{path.name}"
            seen.append(Observed(key, Evidence.IMPORT_SENT, "Sent.mbox", "alex@northwind.example", note))
    authority.record(seen)
    return authority


@pytest.fixture
def llm(knowledge_vault: Path, monkeypatch: pytest.MonkeyPatch):
    """The recording fake OpenAI server as the configured model, for a copy of the fixture vault."""
    with FakeLLM() as fake:
        for name, value in {
            "VAULT_PATH": str(knowledge_vault),
            "LLM_PROVIDER": "openai",
            "LLM_MODEL": "fake-model",
            "LLM_API_KEY": "sk-test",
            "LLM_BASE_URL": f"{fake.url}/v1",
            "PRIVATE_FOLDERS": PRIVATE_FOLDERS,
            "REVISE_SETTLE_SECONDS": "0",
            "APPROVAL_SETTLE_SECONDS": "0",
            "OWNER_EMAILS": "alex@northwind.example",
            "LOG_LEVEL": "INFO",
        }.items():
            monkeypatch.setenv(name, value)
        yield fake


def sweep(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """`h0 sweep` once, which must succeed; its output lines."""
    code = main(["sweep"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    return out.splitlines()
