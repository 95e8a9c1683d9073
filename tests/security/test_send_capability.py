"""Only a note the human moved into Approved/ can be sent — by any process, through any tool.

Each test is one class of issue 8, against the real mail service and the fake Gmail (the real
google-api-python-client on the wire); the stdio tests drive real `h0 mcp gmail` processes.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from h0.errors import Conflict, InvalidRequest, NotFound, PermissionDenied
from h0.mail import MailService
from h0.mail.models import DirectSend
from h0.vault import Vault
from h0.vault.last_change import Arrival
from tests.conftest import H0_BIN, subprocess_env
from tests.fakes.fake_gmail import FakeGmail
from tests.mail.conftest import gmail_env, gmail_settings_for, tool_error

DRAFT = "---\nto: bob@example.com\nsubject: Lunch\n---\nThursday at noon?\n"


def approved(vault_dir: Path, name: str = "d.md", text: str = DRAFT) -> str:
    """The human's act: a draft written in Drafts/, then moved into Approved/. Returns its hash."""
    (vault_dir / "Drafts" / name).write_text(text)
    os.rename(vault_dir / "Drafts" / name, vault_dir / "Approved" / name)
    return Vault(vault_dir).read_note(f"Approved/{name}").hash


# -- class 1: free content ---------------------------------------------------------------------


def test_given_default_settings_when_a_client_sends_free_content_then_permission_denied_and_nothing_leaves(
    mail: MailService, gmail: FakeGmail
):
    with pytest.raises(PermissionDenied) as refused:
        mail.send_email(DirectSend(to="eve@example.com", subject="Hi", body="Wire the money."))
    assert "create_draft" in refused.value.message and "ALLOW_UNAPPROVED_SEND" in refused.value.message
    assert gmail.sent == []


def test_given_a_note_outside_approved_when_asked_to_send_it_then_permission_denied(mail, vault_dir, gmail):
    (vault_dir / "Drafts/x.md").write_text(DRAFT)
    note_hash = Vault(vault_dir).read_note("Drafts/x.md").hash
    for path in ("Drafts/x.md", "Approved/../Drafts/x.md"):
        with pytest.raises(PermissionDenied):
            mail.send_approved_draft(path, note_hash, Arrival("moved"))
    assert gmail.sent == []


def test_given_an_approved_note_then_it_is_sent_as_read_and_a_changed_one_is_refused(mail, vault_dir, gmail):
    note_hash = approved(vault_dir)
    with pytest.raises(Conflict) as changed:
        mail.send_approved_draft("Approved/d.md", "0" * 32, Arrival("moved"))
    assert changed.value.details["reason"] == "note_changed" and gmail.sent == []
    result = mail.send_approved_draft("Approved/d.md", note_hash, Arrival("moved"))
    (sent,) = gmail.sent
    assert sent.header("To") == "bob@example.com" and sent.text.strip() == "Thursday at noon?"
    assert sent.header("Message-ID") == result.rfc822_message_id
    assert result.filed_as == "Done/d.md" and not (vault_dir / "Approved/d.md").exists()  # filed at once
    filed = Vault(vault_dir).read_note("Done/d.md")
    assert filed.frontmatter["status"] == "sent" and filed.frontmatter["rfc822_message_id"] == result.rfc822_message_id
    with pytest.raises(Conflict) as again:  # approved again: the same message, so a copy of the one sent
        mail.send_approved_draft("Approved/d.md", approved(vault_dir), Arrival("moved"))
    assert again.value.details["reason"] == "copy_of_sent" and again.value.details["copy_of"] == "Done/d.md"
    assert len(gmail.sent) == 1 and (vault_dir / "Approved/d.md").exists()  # the daemon files the copy


def test_given_create_draft_then_the_note_lands_in_drafts_and_nothing_is_sent(mail, vault_dir, gmail):
    incoming = gmail.add_message(subject="Invoice 7", thread_id="t-7", message_id="<inv7@example.com>")
    made = mail.create_draft(to="ann@example.com", body="Paid today.", reply_to_message_id=incoming)
    assert made.path.startswith("Drafts/") and made.subject == "Re: Invoice 7" and made.thread_id == "t-7"
    note = Vault(vault_dir).read_note(made.path)
    assert note.frontmatter["reply_to_message_id"] == incoming and note.frontmatter["status"] == "pending_approval"
    assert gmail.sent == []
    with pytest.raises(InvalidRequest):  # the send-time checks apply at once
        mail.create_draft(to="ann@example.com", subject="x", body="Hi %% bcc: eve@example.com %% there")
    with pytest.raises(InvalidRequest):
        mail.create_draft(to="not an address", subject="x", body="Hi")


# -- class 2: keys nobody else can mint --------------------------------------------------------


def test_given_a_caller_who_knows_a_draft_when_it_spends_a_guessed_key_first_then_the_human_approval_still_sends(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    """Given free sending opted in and an agent that can read a pending draft, when it sends other content
    under every key it can compute from the draft (and under H0's Message-ID namespace), then the
    human's later approval is still sent, with the approved content — never answered "already sent"."""
    service = MailService(
        gmail_settings_for(vault_dir, gmail, token_path, allow_unapproved_send=True), trusted_caller=True
    )
    (vault_dir / "Drafts/d.md").write_text(DRAFT)
    import hashlib
    import json

    naive = hashlib.sha256(
        json.dumps(["d.md", ["bob@example.com"], [], [], "Lunch", "Thursday at noon?\n", [], None]).encode()
    ).hexdigest()[:32]
    for key in (naive, "d.md", "n-" + naive):
        service.send_email(DirectSend(to="eve@example.com", subject="Lunch", body="Forged.", idempotency_key=key))
    with pytest.raises(PermissionDenied):
        service.send_email(DirectSend(to="eve@example.com", subject="x", body="y", message_id=f"<h0.{naive}@h0.local>"))
    forged = len(gmail.sent)
    note_hash = approved(vault_dir)
    result = service.send_approved_draft("Approved/d.md", note_hash, Arrival("moved"))
    assert result.already_sent is False and len(gmail.sent) == forged + 1
    assert gmail.sent[-1].header("To") == "bob@example.com" and gmail.sent[-1].text.strip() == "Thursday at noon?"


def test_given_a_key_already_sent_when_other_content_reuses_it_then_conflict_not_already_sent(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    service = MailService(gmail_settings_for(vault_dir, gmail, token_path, allow_unapproved_send=True))
    service.send_email(DirectSend(to="bob@example.com", subject="S", body="first", idempotency_key="k-1"))
    with pytest.raises(Conflict) as caught:
        service.send_email(DirectSend(to="bob@example.com", subject="S", body="different", idempotency_key="k-1"))
    assert caught.value.details["reason"] == "key_content_mismatch"
    assert len(gmail.sent) == 1


def test_given_a_derived_message_id_then_it_needs_the_installation_secret(mail, vault_dir, gmail, tmp_path):
    """The same approved note gets a different Message-ID under another installation's secret."""
    first = mail.send_approved_draft("Approved/d.md", approved(vault_dir), Arrival("moved")).rfc822_message_id
    other_vault = tmp_path / "other"
    from h0.vault import init_vault

    other_vault.mkdir()
    init_vault(other_vault)
    (other_vault / "Drafts/d.md").write_text(DRAFT)
    os.rename(other_vault / "Drafts/d.md", other_vault / "Approved/d.md")
    other = MailService(gmail_settings_for(other_vault, gmail, mail.settings.gmail_token_path), trusted_caller=True)
    second = other.send_approved_draft(
        "Approved/d.md", Vault(other_vault).read_note("Approved/d.md").hash, Arrival("moved")
    )
    assert first != second.rfc822_message_id and first.startswith("<h0.")


# -- class 4: what goes out is what was approved -----------------------------------------------


def test_given_an_attachment_changed_after_approval_then_the_send_is_refused(mail, vault_dir, gmail):
    (vault_dir / "Files").mkdir()
    (vault_dir / "Files/quote.txt").write_text("Price: 100 EUR\n")
    text = "---\nto: bob@example.com\nsubject: Quote\nattachments: [Files/quote.txt]\n---\nAttached.\n"
    note_hash = approved(vault_dir, "q.md", text)
    with pytest.raises(Conflict):  # first read in Approved/ (still being typed for an untrusted caller)
        MailService(mail.settings).send_approved_draft("Approved/q.md", note_hash)
    (vault_dir / "Files/quote.txt").write_text("Price: 1,000,000 EUR\n")
    with pytest.raises(InvalidRequest) as refused:
        mail.send_approved_draft("Approved/q.md", note_hash, Arrival("moved"))
    assert "Files/quote.txt" in refused.value.message and "changed after" in refused.value.message
    assert gmail.sent == []


def test_given_a_hard_linked_attachment_or_note_then_nothing_is_sent(mail, vault_dir, gmail, tmp_path):
    secret = tmp_path / "outside-secret.txt"
    secret.write_text("API_KEY=hunter2\n")
    (vault_dir / "Files").mkdir()
    os.link(secret, vault_dir / "Files/innocent.txt")
    text = "---\nto: bob@example.com\nsubject: Notes\nattachments: [Files/innocent.txt]\n---\nHere.\n"
    with pytest.raises(PermissionDenied):
        mail.send_approved_draft("Approved/h.md", approved(vault_dir, "h.md", text), Arrival("moved"))
    note_hash = approved(vault_dir, "linked.md")
    os.link(vault_dir / "Approved/linked.md", vault_dir / "Drafts/still-editable.md")
    with pytest.raises(PermissionDenied):
        mail.send_approved_draft("Approved/linked.md", note_hash, Arrival("moved"))
    assert gmail.sent == []


@pytest.mark.parametrize(
    "body",
    [
        "Hi Bob,\n%% Bcc the whole board %%\nSee you.\n",
        "Hi Bob,\n<!-- the reader never sees this -->\nSee you.\n",
        "[H0 draft — edit before approving]\nHi Bob,\n\nThanks for your message.\n",
    ],
)
def test_given_hidden_text_or_an_unedited_template_then_it_is_refused_with_how_to_fix(mail, vault_dir, gmail, body):
    with pytest.raises(InvalidRequest) as refused:
        mail.send_approved_draft(
            "Approved/t.md",
            approved(vault_dir, "t.md", f"---\nto: bob@example.com\nsubject: S\n---\n{body}"),
            Arrival("moved"),
        )
    assert "approve again" in refused.value.message
    assert gmail.sent == []


def test_given_a_symlink_in_approved_then_it_is_not_sent(mail, vault_dir, gmail):
    (vault_dir / "Drafts/real.md").write_text(DRAFT)
    os.symlink(vault_dir / "Drafts/real.md", vault_dir / "Approved/link.md")
    note_hash = Vault(vault_dir).read_note("Drafts/real.md").hash
    with pytest.raises(PermissionDenied):
        mail.send_approved_draft("Approved/link.md", note_hash, Arrival("moved"))
    assert gmail.sent == []


# -- class 5: settled notes only ---------------------------------------------------------------


def test_given_a_note_written_in_place_when_an_untrusted_caller_asks_then_it_waits_for_the_settle_period(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    (vault_dir / "Approved/typed.md").write_text("---\nto: zoe@example.com\nsubject: Hi\n---\nHi Zo")
    now = [os.stat(vault_dir / "Approved/typed.md").st_mtime]  # the settle clock, moved on by hand
    service = MailService(
        gmail_settings_for(vault_dir, gmail, token_path, approval_settle_seconds=0.6), clock=lambda: now[0]
    )
    note_hash = Vault(vault_dir).read_note("Approved/typed.md").hash
    with pytest.raises(Conflict) as early:
        service.send_approved_draft("Approved/typed.md", note_hash, Arrival("moved"))  # not trusted to say so
    assert early.value.details["reason"] == "not_settled" and early.value.details["retry_after"] == 0.65
    now[0] += 0.59
    with pytest.raises(Conflict) as still:
        service.send_approved_draft("Approved/typed.md", note_hash)
    assert still.value.details["reason"] == "not_settled" and gmail.sent == []
    now[0] += 0.02
    service.send_approved_draft("Approved/typed.md", note_hash)
    assert len(gmail.sent) == 1


def test_given_a_note_reappearing_under_a_sent_name_without_a_move_then_it_is_held(mail, vault_dir, gmail):
    mail.send_approved_draft("Approved/zoe.md", approved(vault_dir, "zoe.md"), Arrival("moved"))  # filed in Done/
    (vault_dir / "Approved/zoe.md").write_text(DRAFT.replace("Thursday at noon?", "Thursday at noon? Or Friday."))
    again = Vault(vault_dir).read_note("Approved/zoe.md").hash
    os.utime(vault_dir / "Approved/zoe.md", (time.time() - 60, time.time() - 60))
    with pytest.raises(Conflict) as held:
        mail.send_approved_draft("Approved/zoe.md", again, Arrival("written"))
    assert held.value.details["hold"] and held.value.details["reason"] == "reappeared_after_send"
    assert len(gmail.sent) == 1
    mail.send_approved_draft("Approved/zoe.md", again, Arrival("moved"))  # the human moves it in again
    assert len(gmail.sent) == 2


# -- class 6: one reply per email --------------------------------------------------------------


def reply(email_id: str, text: str = "Sounds good.", **extra: str) -> str:
    lines = "".join(f"{k}: {v}\n" for k, v in extra.items())
    return f"---\nto: ann@example.com\nsubject: 'Re: Plan'\nreply_to_message_id: {email_id}\n{lines}---\n{text}\n"


def test_given_two_drafts_answering_one_email_then_the_second_is_held_unless_send_anyway(mail, vault_dir, gmail):
    email = gmail.add_message(subject="Plan", thread_id="t-plan", message_id="<plan@example.com>")
    mail.send_approved_draft("Approved/r1.md", approved(vault_dir, "r1.md", reply(email)), Arrival("moved"))
    with pytest.raises(Conflict) as held:  # another reply (other words: the same words would be a copy)
        mail.send_approved_draft(
            "Approved/r2.md", approved(vault_dir, "r2.md", reply(email, "Works for me.")), Arrival("moved")
        )
    assert held.value.details["hold"] and held.value.details["reason"] == "already_answered"
    assert "send_anyway" in held.value.message and len(gmail.sent) == 1
    mail.send_approved_draft(
        "Approved/r3.md", approved(vault_dir, "r3.md", reply(email, send_anyway="true")), Arrival("moved")
    )
    assert len(gmail.sent) == 2


def test_given_a_newer_message_in_the_thread_then_the_reply_is_held(mail, vault_dir, gmail):
    now_ms = int(time.time() * 1000)
    email = gmail.add_message(subject="Plan", thread_id="t-new", message_id="<p1@example.com>", date_ms=now_ms - 60_000)
    gmail.add_message(
        subject="Re: Plan",
        thread_id="t-new",
        message_id="<p2@example.com>",
        date_ms=now_ms - 1_000,
        sender="Ann <ann@example.com>",
    )
    with pytest.raises(Conflict) as held:
        mail.send_approved_draft("Approved/r.md", approved(vault_dir, "r.md", reply(email)), Arrival("moved"))
    assert held.value.details["reason"] == "thread_has_newer_message" and "Ann" in held.value.message
    assert gmail.sent == []
    mail.send_approved_draft(
        "Approved/r2.md", approved(vault_dir, "r2.md", reply(email, send_anyway="true")), Arrival("moved")
    )
    assert len(gmail.sent) == 1


def test_given_the_replied_message_is_gone_then_not_found_and_nothing_sent(mail, vault_dir, gmail):
    with pytest.raises(NotFound):
        mail.send_approved_draft(
            "Approved/r.md", approved(vault_dir, "r.md", reply("ffffffffffffffff")), Arrival("moved")
        )
    assert gmail.sent == []


# -- the same, through real processes ----------------------------------------------------------


def params(**env: str) -> StdioServerParameters:
    return StdioServerParameters(command=H0_BIN, args=["mcp", "gmail"], env=subprocess_env(**env))


@pytest.mark.anyio
async def test_given_a_real_server_from_mcp_json_then_free_content_is_refused_and_approved_notes_are_sent(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    env = {**gmail_env(vault_dir, gmail, token_path), "ALLOW_UNAPPROVED_SEND": "false", "APPROVAL_SETTLE_SECONDS": "0"}
    async with Client(params(**env)) as client:
        refused = tool_error(
            await client.call_tool("send_email", {"to": "eve@example.com", "subject": "x", "body": "y"})
        )
        assert refused["error"] == "permission_denied"
        made = await client.call_tool("create_draft", {"to": "bob@example.com", "subject": "Hi", "body": "Hello"})
        assert not made.is_error and gmail.sent == []
        path = made.structured_content["path"]
        name = path.split("/", 1)[1]
        os.rename(vault_dir / path, vault_dir / "Approved" / name)
        note_hash = Vault(vault_dir).read_note(f"Approved/{name}").hash
        sent = await client.call_tool("send_approved_draft", {"path": f"Approved/{name}", "note_hash": note_hash})
        assert not sent.is_error, sent.content[0].text
    (message,) = gmail.sent
    assert message.text.strip() == "Hello"


@pytest.mark.anyio
async def test_given_two_mail_server_processes_racing_then_caps_hold_across_them_and_each_note_is_sent_once(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    """Given two `h0 mcp gmail` processes (the daemon's and Claude Code's) and six approved notes with an
    hourly cap of 4, when both ask to send every note at once, then exactly four messages leave, each
    note at most once, and the other calls are refused as rate_limited or in progress."""
    hashes = {f"n{i}.md": approved(vault_dir, f"n{i}.md", DRAFT.replace("noon", f"noon ({i})")) for i in range(6)}
    env = {**gmail_env(vault_dir, gmail, token_path), "RATE_LIMIT_PER_HOUR": "4", "APPROVAL_SETTLE_SECONDS": "0"}
    outcomes: list[str] = []

    async def drive(client: Client) -> None:
        async def one(name: str) -> None:
            result = await client.call_tool(
                "send_approved_draft", {"path": f"Approved/{name}", "note_hash": hashes[name]}
            )
            if result.is_error:
                outcomes.append(tool_error(result)["error"])
            else:
                outcomes.append("already_sent" if result.structured_content["already_sent"] else "sent")

        async with anyio.create_task_group() as group:
            for name in hashes:
                group.start_soon(one, name)

    async with Client(params(**env)) as first, Client(params(**env)) as second, anyio.create_task_group() as group:
        group.start_soon(drive, first)
        group.start_soon(drive, second)
    subjects = [m.text.strip() for m in gmail.sent]
    assert len(gmail.sent) == 4 and len(set(subjects)) == 4
    assert outcomes.count("sent") == 4
    assert set(outcomes) <= {"sent", "already_sent", "rate_limited", "conflict"}


@pytest.mark.parametrize(
    "second_link", ["[[EMAIL_plan]]", "'[[Needs_Action/EMAIL_plan|the email]]'", "needs_action/email_plan"]
)
def test_given_two_drafts_naming_one_email_note_differently_then_the_second_is_held(
    mail, vault_dir, gmail, second_link
):
    """`source:` spelled as a path, a bare [[link]], a folder link with an alias or another case is one email."""
    mail.send_approved_draft(
        "Approved/s1.md", approved(vault_dir, "s1.md", reply_without_id("Needs_Action/EMAIL_plan.md")), Arrival("moved")
    )
    with pytest.raises(Conflict) as held:
        mail.send_approved_draft(
            "Approved/s2.md", approved(vault_dir, "s2.md", reply_without_id(second_link, "Fine.")), Arrival("moved")
        )
    assert held.value.details["reason"] == "already_answered" and len(gmail.sent) == 1


def reply_without_id(source: str, text: str = "Sounds good.") -> str:
    return f"---\nto: ann@example.com\nsubject: 'Re: Plan'\nsource: {source}\n---\n{text}\n"
