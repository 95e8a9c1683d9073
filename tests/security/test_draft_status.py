"""A note's own word counts (issue 20, class 1): only a note whose `status:` says it awaits sending
is sent — whoever asks: the daemon, `h0 sweep`, or the mail server's `send_approved_draft`. A note
in Approved/ marked rejected, sent or withdrawn (or with any word that is not a promise to send) is
filed or refused with the reason and the fix, never sent, and keeps its word; a draft H0 gave back
(held, not sent) stays re-approvable."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from h0.cli import main
from h0.errors import InvalidRequest
from h0.mail import MailService
from h0.vault import Vault
from h0.vault.draft_state import DraftState, draft_status
from h0.vault.last_change import Arrival
from tests.conftest import H0_BIN, subprocess_env
from tests.fakes.fake_gmail import FakeGmail
from tests.pipeline.harness import frontmatter, outbox, running_daemon, wait_until, write_draft
from tests.security.test_send_capability import gmail_env

NOT_SENDABLE = ["rejected", "sent", "withdrawn", "pending", "awaiting_approval", "done", "Sent ", "WITHDRAWN"]
SENDABLE = [None, "", "pending_approval", "approved", "draft", "held", "not_sent", "Pending_Approval"]


@pytest.mark.parametrize("word", SENDABLE)
def test_the_words_that_mean_awaits_sending(word):
    assert draft_status({} if word is None else {"status": word}).sendable


@pytest.mark.parametrize(
    "value, state",
    [
        ("rejected", DraftState.REJECTED),
        ("sent", DraftState.SENT),
        ("withdrawn", DraftState.WITHDRAWN),
        (" Sent ", DraftState.SENT),
        ("pending", DraftState.UNKNOWN),
        (["pending_approval"], DraftState.UNKNOWN),
        ({"a": 1}, DraftState.UNKNOWN),
        (1, DraftState.UNKNOWN),
        ("x" * 10_000, DraftState.UNKNOWN),
    ],
)
def test_hostile_and_terminal_status_values_never_mean_send(value, state):
    status = draft_status({"status": value})
    assert status.state is state and not status.sendable


def approved_note(vault_dir: Path, name: str, status: str | None, **extra: str) -> str:
    """A draft moved into Approved/ a minute after it was last edited (as a person does it)."""
    lines = ["---", "to: bob@example.com", "subject: Lunch"] + ([f"status: {status}"] if status is not None else [])
    lines += [f"{k}: {v}" for k, v in extra.items()] + ["---", "Hi Bob, noon works.", ""]
    draft = vault_dir / "Drafts" / name
    draft.write_text("\n".join(lines))
    then = time.time() - 60
    os.utime(draft, (then, then))
    os.rename(draft, vault_dir / "Approved" / name)
    return Vault(vault_dir).read_note(f"Approved/{name}").hash


@pytest.mark.parametrize("word", NOT_SENDABLE)
def test_given_a_note_not_awaiting_sending_when_the_mail_tool_is_asked_then_it_is_refused_and_nothing_leaves(
    mail: MailService, vault_dir: Path, gmail: FakeGmail, word: str
):
    note_hash = approved_note(vault_dir, "n.md", word)
    with pytest.raises(InvalidRequest) as refused:
        mail.send_approved_draft("Approved/n.md", note_hash, Arrival("moved"))
    assert refused.value.details["reason"] == "status_not_sendable"
    # The reason names the word and the fix a person can make in the note (a withdrawn one has none).
    assert "status" in refused.value.message
    assert ("never sent" if word.strip().lower() == "withdrawn" else "Approved/ again") in refused.value.message
    assert gmail.sent == []


def test_given_a_held_draft_fixed_and_approved_again_then_it_is_sent(
    mail: MailService, vault_dir: Path, gmail: FakeGmail
):
    note_hash = approved_note(vault_dir, "h.md", "held", h0_error="'was held'")
    mail.send_approved_draft("Approved/h.md", note_hash, Arrival("moved"))
    assert len(gmail.sent) == 1


@pytest.mark.anyio
async def test_given_the_real_mail_server_when_a_client_asks_to_send_a_rejected_note_then_nothing_is_sent(
    vault_dir: Path, gmail: FakeGmail, token_path: Path
):
    """The probe's case: an agent calls the mail server's tool for a note the human marked rejected."""
    note_hash = approved_note(vault_dir, "r.md", "rejected")
    params = StdioServerParameters(
        command=H0_BIN, args=["mcp", "gmail"], env=subprocess_env(**gmail_env(vault_dir, gmail, token_path))
    )
    async with Client(params) as client:
        result = await client.call_tool("send_approved_draft", {"path": "Approved/r.md", "note_hash": note_hash})
    assert result.is_error and '"status_not_sendable"' in result.content[0].text
    assert gmail.sent == []


@pytest.mark.parametrize("word", ["sent", "withdrawn", "pending"])
def test_given_a_note_marked_word_in_approved_when_the_daemon_sees_it_then_it_goes_back_with_its_word_kept(
    vault_dir: Path, word: str
):
    with running_daemon(vault_dir):
        write_draft(vault_dir, "Drafts", "w.md", status=word, withdrawn_reason="'Dana answered on Monday'")
        os.utime(vault_dir / "Drafts/w.md", (time.time() - 60, time.time() - 60))
        os.rename(vault_dir / "Drafts/w.md", vault_dir / "Approved/w.md")
        assert wait_until(lambda: (vault_dir / "Drafts/w.md").exists() and not (vault_dir / "Approved/w.md").exists())
    back = frontmatter(vault_dir, "Drafts/w.md")
    assert back["status"] == word  # the note's word stands: approving it again is refused again
    assert back["h0_error_code"] == "status_not_sendable" and "status" in back["h0_error"]
    if word == "withdrawn":
        assert "Dana answered on Monday" in back["h0_error"] and "never sent" in back["h0_error"]
    assert outbox(vault_dir) == []


def test_given_a_rejected_note_in_approved_when_the_daemon_sees_it_then_it_is_filed_never_sent(vault_dir: Path):
    with running_daemon(vault_dir):
        write_draft(vault_dir, "Approved", "r.md", status="rejected")
        assert wait_until(lambda: (vault_dir / "Done/r.md").exists())
    assert frontmatter(vault_dir, "Done/r.md")["decision"] == "rejected"
    assert outbox(vault_dir) == []


@pytest.mark.usefixtures("loguru_restored")
def test_given_notes_of_every_word_when_swept_then_only_those_awaiting_sending_are_sent(
    vault_dir: Path, monkeypatch, capsys
):
    for index, word in enumerate(NOT_SENDABLE + ["pending_approval", "held", "not_sent"]):
        write_draft(
            vault_dir, "Approved", f"n{index}.md", subject=f"note {index}", **({"status": repr(word)} if word else {})
        )
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    assert main(["sweep"]) == 0
    capsys.readouterr()
    sent = sorted(str(message["Subject"]) for message in outbox(vault_dir))
    first = len(NOT_SENDABLE)
    assert sent == sorted(f"note {i}" for i in range(first, first + 3))
    for index, word in enumerate(NOT_SENDABLE):
        if word == "rejected":
            assert frontmatter(vault_dir, f"Done/n{index}.md")["decision"] == "rejected"
        else:
            back = frontmatter(vault_dir, f"Drafts/n{index}.md")
            assert back["status"] == word and back["h0_error_code"] == "status_not_sendable"
