"""The outbox backend: .eml files in the vault, exactly once, and honest about sending nothing."""

from __future__ import annotations

from email import policy
from email.parser import BytesParser
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.errors import NotSupported
from h0.mail import MailService
from h0.mail.models import DirectSend
from h0.mcp.mail_server import SERVER_NAME
from tests.mail.conftest import DIRECT_SEND, dead_pid
from tests.statedb import crash_edit


@pytest.fixture
def outbox(vault_dir: Path) -> MailService:
    return MailService(load_settings(vault_path=vault_dir, **DIRECT_SEND))  # MAIL_BACKEND defaults to outbox


def emls(vault_dir: Path) -> list[Path]:
    return sorted((vault_dir / "Outbox").glob("*.eml"))


def test_given_a_fresh_checkout_when_mail_is_sent_then_it_lands_in_outbox_as_eml(outbox, vault_dir):
    result = outbox.send_email(
        DirectSend(to="bob@example.com", subject="Hello there", body="Hi Bob,\n", idempotency_key="d1")
    )
    [eml] = emls(vault_dir)
    assert result.backend == "outbox" and result.message_id == eml.stem
    parsed = BytesParser(policy=policy.default).parsebytes(eml.read_bytes())
    assert parsed["To"] == "bob@example.com" and parsed["From"] == "H0 outbox <outbox@h0.local>"
    assert parsed["Message-ID"] == result.rfc822_message_id
    assert "hello-there" in eml.name


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"owner_emails": "Ann Owner <ann@owner.example>, ann.o@other.example"}, "Ann Owner <ann@owner.example>"),
        ({"smtp_user": "ann@login.example"}, "ann@login.example"),
        ({"owner_emails": "ann@owner.example", "smtp_from": "Ann <ann@smtp.example>"}, "Ann <ann@smtp.example>"),
        ({"owner_emails": "not an address"}, "H0 outbox <outbox@h0.local>"),
    ],
)
def test_given_the_owners_address_is_known_then_the_eml_is_from_the_owner(vault_dir: Path, settings, expected):
    """The dry run shows what a real backend would send: the owner's From, not a placeholder."""
    service = MailService(load_settings(vault_path=vault_dir, **DIRECT_SEND, **settings))
    service.send_email(DirectSend(to="bob@example.com", subject="Hello", body="Hi Bob,\n", idempotency_key="from1"))
    [eml] = emls(vault_dir)
    assert BytesParser(policy=policy.default).parsebytes(eml.read_bytes())["From"] == expected


def test_given_the_same_key_even_after_a_restart_then_one_eml_only(outbox, vault_dir):
    first = outbox.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="d2"))
    again = MailService(outbox.settings).send_email(
        DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="d2")
    )
    assert again.already_sent and again.message_id == first.message_id
    assert len(emls(vault_dir)) == 1


def test_given_a_crash_after_the_eml_was_written_then_the_key_is_recognised(outbox, vault_dir):
    first = outbox.send_email(DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="d3"))
    # Lose the outcome, as if the process died right after writing the file.
    assert crash_edit(
        outbox.state.path, "UPDATE sends SET state = 'pending', pid = ?, sent_epoch = NULL", (dead_pid(),)
    )
    again = MailService(outbox.settings).send_email(
        DirectSend(to="bob@example.com", subject="S", body="b", idempotency_key="d3")
    )
    assert again.already_sent and again.message_id == first.message_id
    assert len(emls(vault_dir)) == 1


def test_given_the_outbox_then_reading_is_not_supported_and_health_says_nothing_is_sent(outbox):
    with pytest.raises(NotSupported):
        outbox.list_emails("is:unread", 10)
    health = outbox.health(SERVER_NAME)
    assert health.status == "ok" and health.token == "n/a" and health.account is None
    assert "NOTHING IS REALLY SENT" in health.notes[0]


def test_given_a_reply_on_the_outbox_then_it_is_written_without_in_reply_to_and_says_why(outbox):
    result = outbox.send_email(
        DirectSend(to="bob@example.com", subject="Re: S", body="b", reply_to_message_id="18f0abc", thread_id="t1")
    )
    assert result.thread_id == "t1"
    assert "cannot read the original" in result.hints[0]


EMAIL_NOTE = """---
type: email
status: awaiting_approval
message_id: m-77
rfc822_message_id: <cafe.77@mail.example>
thread_id: t-77
from: Dana Rivera <dana@example.com>
to: [me@example.com, Lee <lee@example.com>]
cc: [Sam <sam@example.com>]
subject: Friday review
---
```text
Can we move it?
```
"""


def test_given_a_reply_to_an_email_note_then_the_outbox_eml_threads_by_its_message_id(outbox, vault_dir):
    """Issue 24: the outbox cannot read the original, but the email note keeps its Message-ID."""
    (vault_dir / "Needs_Action/EMAIL_m-77.md").write_text(EMAIL_NOTE)
    draft = vault_dir / "Approved/reply.md"
    draft.write_text(
        "---\nto: dana@example.com\nsubject: 'Re: Friday review'\nreply_to_message_id: m-77\n"
        "source: Needs_Action/EMAIL_m-77.md\n---\nFriday works.\n"
    )
    from h0.vault import Vault
    from h0.vault.last_change import Arrival

    note_hash = Vault(vault_dir).read_note("Approved/reply.md").hash
    MailService(outbox.settings, trusted_caller=True).send_approved_draft(
        "Approved/reply.md", note_hash, Arrival("moved")
    )
    (eml,) = emls(vault_dir)
    message = BytesParser(policy=policy.default).parsebytes(eml.read_bytes())
    assert message["In-Reply-To"] == "<cafe.77@mail.example>" and message["References"] == "<cafe.77@mail.example>"


def test_given_create_draft_replying_to_an_email_note_then_the_outbox_backend_finds_it_in_the_vault(outbox, vault_dir):
    (vault_dir / "Needs_Action/EMAIL_m-77.md").write_text(EMAIL_NOTE)
    made = outbox.create_draft(to="dana@example.com", body="Friday works.", reply_to_message_id="m-77")
    assert made.subject == "Re: Friday review" and made.thread_id == "t-77"
    from h0.vault import Vault

    fm = Vault(vault_dir).read_note(made.path).frontmatter
    assert fm["source"] == "Needs_Action/EMAIL_m-77.md" and fm["reply_to_message_id"] == "m-77"
    with pytest.raises(Exception, match="No email with the id"):
        outbox.create_draft(to="dana@example.com", body="x", reply_to_message_id="m-missing")


def test_a_create_draft_refusal_speaks_to_the_agent_calling_not_to_a_human_approving(outbox, vault_dir):
    """An agent's draft with hidden text is refused in words for the agent: nothing was written, fix the
    call's arguments and call create_draft again — never "approve again", which only a person can."""
    from h0.errors import InvalidRequest

    with pytest.raises(InvalidRequest) as refused:
        outbox.create_draft(to="dana@example.com", subject="Hi", body="Pay to DE12\u200b3456 today.")
    message = refused.value.message
    assert message.startswith("Nothing was written: ") and "call create_draft again" in message
    assert "approve again" not in message and "U+200B" in message
    assert not list((vault_dir / "Drafts").glob("DRAFT_*.md"))


def eml_from(vault_dir: Path) -> str:
    [eml] = emls(vault_dir)
    return str(BytesParser(policy=policy.default).parsebytes(eml.read_bytes())["From"])


def write_profile_name(vault_dir: Path, name: str) -> None:
    from h0.drafting.profile import DEFAULT_PROFILE_TEXT

    (vault_dir / "H0_Profile.md").write_text(DEFAULT_PROFILE_TEXT.replace('name: ""', f'name: "{name}"'), "utf-8")


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"owner_emails": "ann@owner.example"}, "Ann Owner <ann@owner.example>"),
        ({"owner_emails": "Ann O. <ann@owner.example>"}, '"Ann O." <ann@owner.example>'),  # the address's own name
        ({}, "H0 outbox <outbox@h0.local>"),  # no address of the owner is known: no name is put on a made-up one
    ],
)
def test_given_the_owners_name_in_the_profile_then_the_eml_is_from_it(vault_dir: Path, settings, expected):
    """Given `name:` in H0_Profile.md, the mail server `h0 mcp gmail` builds (h0.mcp.servers) writes the owner's
    name beside the owner's address, read at the send (a change to the profile counts at once)."""
    from h0.mcp.servers import mail_service

    service = mail_service(load_settings(vault_path=vault_dir, **DIRECT_SEND, **settings), daemon_child=False)
    write_profile_name(vault_dir, "Ann Owner")
    service.send_email(DirectSend(to="bob@example.com", subject="Hello", body="Hi Bob,\n", idempotency_key="name1"))
    assert eml_from(vault_dir) == expected


def test_given_no_address_set_but_the_owners_sent_mail_imported_then_the_eml_is_from_that_address(vault_dir: Path):
    """A new user who set nothing but imported their mail (h0 import: the sent mail the export vouches for) sees
    their own address on the dry run's messages; a stranger's From never gets there (h0.mail.owner)."""
    from h0.mail.owner import Evidence, Observed, OwnerAuthority
    from h0.mcp.servers import mail_service

    settings = load_settings(vault_path=vault_dir, **DIRECT_SEND)
    OwnerAuthority.for_settings(settings).record(
        [Observed("<s1@x>", Evidence.IMPORT_SENT, "Sent.mbox #1", "ann@owner.example")]
    )
    write_profile_name(vault_dir, "Ann Owner")
    mail_service(settings, daemon_child=False).send_email(
        DirectSend(to="bob@example.com", subject="Hello", body="Hi Bob,\n", idempotency_key="name2")
    )
    assert eml_from(vault_dir) == "Ann Owner <ann@owner.example>"
