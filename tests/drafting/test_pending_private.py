"""The sender's other emails waiting in Needs_Action/ (a reply may answer them together) are a list a model
reads: the disclosure gate decides which may be on it, through the vault index — never the index's own mark
alone. Given three emails from Dana waiting beside the one drafted — one open, one private only because a note
in the private Journal/ shares its thread, one marked private — only the open one is named."""

from __future__ import annotations

from pathlib import Path

from h0.config import load_settings
from h0.drafting.context import Answering
from h0.drafting.indexed import IndexKnowledge
from h0.drafting.service import Drafting
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex

GATE = Disclosure(("journal",))


def write(root: Path, rel: str, head: str, body: str = "body") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{head}\n---\n{body}\n", encoding="utf-8")


def waiting(vault: Path) -> None:
    for name, extra in (("OPEN", ""), ("THREAD", "thread_id: T-zq\n"), ("MARKED", "private: true\n")):
        write(
            vault,
            f"Needs_Action/EMAIL_{name}.md",
            f"type: email\nfrom: Dana <dana@example.com>\nsubject: ZQ{name} question\nstatus: pending\n"
            f"received: 2026-05-04T10:00:00Z\nmessage_id: m-{name}\n{extra}".strip(),
        )
    write(vault, "Journal/2026-05-04.md", "thread_id: T-zq", "What Dana told me about the move.")


def test_given_a_waiting_email_of_a_private_thread_then_it_is_not_pending_for_a_model(tmp_path: Path):
    vault = tmp_path / "vault"
    waiting(vault)
    index = VaultIndex.open(vault, tmp_path / "state", GATE)
    found = IndexKnowledge(index).pending(["dana@example.com"])
    assert [p.path for p in found] == ["Needs_Action/EMAIL_OPEN.md"]


def test_given_the_same_inbox_then_the_drafting_context_names_only_the_open_email(vault_dir: Path):
    waiting(vault_dir)
    drafting = Drafting.build(load_settings(vault_path=vault_dir, private_folders="Journal"))
    context = drafting.context(
        Answering(
            reply_to="dana@example.com", sender="Dana <dana@example.com>", subject="Lunch?", body="Lunch on Friday?"
        )
    )
    text = "\n".join(f"{item.label} {item.why} {item.text}" for item in context.items)
    assert "ZQOPEN question" in text
    assert "ZQTHREAD" not in text and "ZQMARKED" not in text
