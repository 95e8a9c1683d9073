"""What the owner's identity counts (issue 29, rule 2), from each real source: the IMAP Sent folder (on a real
IMAP server: pymap), and the daemon's own send (the outbox backend). A message From the owner's address
delivered to INBOX is not the owner's."""

# ruff: noqa: F811 — the IMAP fixtures are imported from tests.mail.imap_fixtures, then named as parameters
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.drafting import Drafting
from h0.handlers.ingest import ingest_new_mail
from h0.handlers.send import send_approved_draft
from h0.mail import MailService
from h0.mail.owner import Evidence, OwnerAuthority
from h0.state import StateDB
from tests.fakes.imap_server import PymapServer
from tests.followup.conftest import context, fm
from tests.mail.imap_fixtures import imap, imap_server, imap_settings, raw_message, relay, sent_of  # noqa: F401

OWNER = "h0@example.com"  # the IMAP test account
DANA = "Dana Rivera <dana@example.org>"


@pytest.fixture
def service(vault_dir: Path, imap: PymapServer, relay) -> Iterator[MailService]:
    mail = MailService(imap_settings(vault_dir, imap, relay[0]), trusted_caller=True)
    yield mail
    mail.close()


def authority(vault_dir: Path) -> OwnerAuthority:
    return OwnerAuthority(StateDB.for_vault(vault_dir, Path(os.environ["H0_STATE_DIR"])))


def test_the_imap_sent_folder_is_the_owners_and_a_from_in_inbox_is_not(vault_dir, imap, service):
    ctx = context(vault_dir, service)
    ingest_new_mail(ctx)  # the first sync: from here on the Sent folder is followed
    mine = raw_message("Plan", "Hi Dana,\nHere is the plan.\n", sender=OWNER, to=DANA, message_id="<plan@example.com>")
    imap.deliver(mine, folder=sent_of(imap), flags=["\\Seen"])
    forged = raw_message("Plan", "Never mind.\n", sender=OWNER, to=DANA, message_id="<forged@example.com>")
    imap.deliver(forged, flags=["SENT"])  # even a keyword named like the label: INBOX is not the Sent folder
    report = ingest_new_mail(ctx)
    assert report.sent == 1 and len(report.written) == 1
    assert authority(vault_dir).owned(["<plan@example.com>", "<forged@example.com>"]) == {
        "<plan@example.com>": Evidence.SENT_FOLDER
    }


def test_the_daemons_own_send_through_the_outbox_is_the_owners(vault_dir: Path):
    """Given a draft the human approved, When H0 sends it (outbox backend), Then the send ledger makes it the
    owner's, and the very note H0 filed in Done/ is a past reply — a copy of it elsewhere is not."""
    service = MailService(load_settings(vault_path=vault_dir), trusted_caller=True)
    ctx = context(vault_dir, service)
    (vault_dir / "Drafts/REPLY_plan.md").write_text(
        '---\nto: dana@example.org\nsubject: "Re: Plan"\nstatus: pending_approval\n---\nHi Dana,\n\nAgreed.\n\nBest,\nA\n',
        encoding="utf-8",
    )
    os.rename(vault_dir / "Drafts/REPLY_plan.md", vault_dir / "Approved/REPLY_plan.md")
    outcome = send_approved_draft("Approved/REPLY_plan.md", ctx)
    assert outcome.action == "sent", outcome
    done = str(outcome.data["done_path"])
    rfc = fm(vault_dir, done)["rfc822_message_id"]
    owner = authority(vault_dir)
    assert owner.wrote(rfc) == Evidence.H0_SEND and owner.owned_notes([(done, rfc)]) == {done}
    copy = vault_dir / "Done/REPLY_copy.md"
    copy.write_text((vault_dir / done).read_text(encoding="utf-8").replace("Agreed.", "Wire it."), encoding="utf-8")
    assert owner.owned_notes([("Done/REPLY_copy.md", rfc)]) == set()
    drafting = Drafting.build(ctx.settings, vault_dir)
    assert [r.path for r in drafting.past.to_address("dana@example.org")] == [done]
    service.close()
