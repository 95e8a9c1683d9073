"""Replies owed and awaited as a new user meets them (issue 41): `h0 import` of a mailbox, `h0 status`, `h0 sweep`,
`h0 status` — in-process through `h0.cli.main`, on a real vault and state database.

Given a mailbox with a person's question, the mail machines send that invites a reply (a receipt from a no-reply
sender, an invoice from `billing@` saying "just reply to this email", a Slack notification quoting a colleague's
question, a newsletter asking "are you ready?"), and the owner's sent mail (a question still open, a thank-you
quoting the other side's question in Outlook's German history, a question whose recipient wrote since in another
thread), then `h0 status` lists the person's question as owed and the open question as awaited right after the
import, the same lists after `h0 sweep`, and no reply is drafted to a machine."""

from __future__ import annotations

import email.utils
import json
import time
from pathlib import Path

import pytest

from h0.cli import EXIT_OK, main
from h0.vault import Vault

pytestmark = pytest.mark.usefixtures("loguru_restored")
OWNER = "me@example.com"
DAY = 86400.0


def raw(n: int, sender: str, subject: str, body: str, *, to: str = OWNER, days_ago: float, extra: str = "") -> bytes:
    head = (
        f"From: {sender}\nTo: {to}\nSubject: {subject}\nDate: {email.utils.formatdate(time.time() - days_ago * DAY)}\n"
        f"Message-ID: <m{n}@test.example>\n"
    )
    if OWNER in sender:
        extra += "X-Gmail-Labels: Sent\n"  # how a Takeout export marks the owner's sent mail
    return (head + extra + "\n" + body + "\n").encode()


MAILBOX = [
    raw(
        1,
        "Dana Rivera <dana@acme.example>",
        "Q3 review",
        "Hi,\n\nCould you send the figures before Friday?\n\nDana",
        days_ago=10,
    ),
    raw(
        2,
        "Hetzner Online <no-reply@hetzner.example>",
        "Ihre Rechnung R0012345",
        "anbei Ihre Rechnung über 12,34 EUR. Haben Sie Fragen? Antworten Sie einfach auf diese E-Mail.",
        days_ago=9,
    ),
    raw(
        3,
        "Figma <billing@figma.example>",
        "Your Figma invoice",
        "Thanks for your payment of 12 EUR. Have a question about billing? Just reply to this email.",
        days_ago=9,
    ),
    raw(
        4,
        "Slack <notification@slack.example>",
        "[Acme] Dana Rivera mentioned you in #design",
        "Dana Rivera: @me can you review the onboarding copy today?\n\nReply in Slack.",
        days_ago=8,
    ),
    raw(
        5,
        "Design Weekly <hello@designweekly.example>",
        "Design Weekly #12",
        "Hi Design,\n\nAre you ready for 2027? Tickets are on sale.",
        days_ago=8,
        extra="List-Unsubscribe: <https://designweekly.example/u/1>\n",
    ),
    raw(
        6,
        f"Me <{OWNER}>",
        "AW: Zahlen",
        "Danke, ist angekommen.\n\nMe\n\n-----Ursprüngliche Nachricht-----\nVon: Sam <sam@beta.example>\n"
        "Gesendet: Montag, 9. November 2026 10:00\nAn: Me <me@example.com>\nBetreff: Zahlen\n\n"
        "Kannst du mir die Zahlen bis Freitag schicken?",
        to="Sam <sam@beta.example>",
        days_ago=10,
    ),
    raw(
        7,
        f"Me <{OWNER}>",
        "Budget",
        "Hi Lee,\n\nCould you confirm the budget?\n\nMe",
        to="Lee <lee@gamma.example>",
        days_ago=10,
    ),
    raw(8, "Lee <lee@gamma.example>", "Files", "Hi,\n\nThe files are on the drive now.\n\nLee", days_ago=5),
    raw(
        9,
        f"Me <{OWNER}>",
        "Contract",
        "Hi Kim,\n\nCan you send me the contract draft?\n\nMe",
        to="Kim <kim@delta.example>",
        days_ago=10,
    ),
]


def mbox(path: Path) -> Path:
    with open(path, "wb") as handle:
        handle.writelines(b"From sender@example Mon Jan  1 00:00:00 2024\n" + m + b"\n" for m in MAILBOX)
    return path


def status(capsys: pytest.CaptureFixture[str]) -> tuple[list[str], list[str]]:
    """(senders owed a reply, people an answer is awaited from), as `h0 status --json` lists them."""
    assert main(["status", "--json"]) == EXIT_OK
    follow_ups = json.loads(capsys.readouterr().out)["follow_ups"]
    return sorted(o["sender"] for o in follow_ups["owed"]), sorted(a["waiting_on"] for a in follow_ups["awaited"])


def test_given_an_import_when_status_then_sweep_then_the_same_replies_owed_and_awaited_and_no_draft_to_a_machine(
    vault_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("OWNER_EMAILS", OWNER)
    assert main(["import", str(mbox(tmp_path / "export.mbox"))]) == EXIT_OK
    assert capsys.readouterr().out.splitlines()[0].endswith("replies owed: 1, awaited: 1")

    after_import = status(capsys)
    assert after_import == (["Dana Rivera <dana@acme.example>"], ["Kim <kim@delta.example>"])

    assert main(["sweep"]) == EXIT_OK
    capsys.readouterr()
    assert status(capsys) == after_import  # the sweep's follow-up pass runs after its triage: the same lists

    vault = Vault(vault_dir)
    drafts = [vault.read_note(n.path) for n in vault.list_notes("Drafts").notes]
    answered = {vault.read_note(d.facts.source).facts.sender for d in drafts if d.facts.source and "EMAIL_" in d.path}
    assert answered == {"dana@acme.example"}  # no "Hallo Hetzner Online," and no "Hi Design,"
    for note in vault.list_notes("Needs_Action").notes + vault.list_notes("Done").notes:
        facts = vault.read_note(note.path).facts
        if facts.is_email and facts.sender.endswith(("hetzner.example", "figma.example", "slack.example")):
            assert facts.automated == "notification" and facts.follow_up != "reply_owed", note.path


URGENT = """\
---
type: email
status: pending
message_id: m-urgent
from: "Ops <ops@acme.example>"
to: me@example.com
subject: "URGENT: the build server is down"
received: "{received}"
---
```text
The build server is down since this morning.
```
"""


def test_given_an_email_only_triage_finds_a_reply_for_when_swept_then_its_pass_sees_the_decision(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its words ask nothing, but the default rules draft a holding reply for urgent mail: a reply is owed only
    once triage has decided, so the sweep's follow-up pass must run after its triage (h0.pipeline.daemon.run_once),
    never beside it — as `h0 watch`'s pass does after each triage."""
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("OWNER_EMAILS", OWNER)
    received = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 10 * DAY))
    for n in range(20):  # a batch: a pass run beside its triage would see none of it decided
        note = URGENT.format(received=received).replace("m-urgent", f"m-urgent-{n}").replace("ops@", f"ops{n}@")
        (vault_dir / "Needs_Action" / f"EMAIL_urgent_{n}.md").write_text(note, encoding="utf-8")
    assert main(["sweep"]) == EXIT_OK
    capsys.readouterr()
    assert main(["status", "--json"]) == EXIT_OK
    follow_ups = json.loads(capsys.readouterr().out)["follow_ups"]
    assert follow_ups["owed_total"] == 20 and follow_ups["awaited_total"] == 0
