"""Drafting reads notes through the typed note model (h0.vault.model): `type:` and `status:` in any case, and
`source:` in any spelling, mean the same to past replies, knowledge notes, pending emails and revisions."""

from __future__ import annotations

from pathlib import Path

from h0.drafting.indexed import IndexKnowledge
from h0.drafting.knowledgenotes import read_knowledge
from h0.drafting.pastreply import sent_reply
from h0.drafting.revise import email_for
from h0.vault import Vault, init_vault
from h0.vault.api import LocalVault, Notes
from h0.vault.disclosure import Disclosure
from h0.vault.index import VaultIndex
from h0.vault.model import note_facts

GATE = Disclosure()


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_given_an_email_typed_in_another_case_marked_sent_then_it_is_never_a_past_reply_of_the_owner():
    """Given a stranger's email note (`type: Email`) whose status says sent, When past replies are read,
    Then it is not one: the owner's voice is never learned from a stranger's words."""
    fm = {"type": "Email", "status": "sent", "to": "me@example.com", "subject": "Hi"}
    assert sent_reply(note_facts("Done/EMAIL_1.md", fm), "Dear owner, ...", frozenset()) is None


def test_given_a_sent_message_typed_in_another_case_then_its_words_are_read_from_its_code_block():
    fm = {"type": "Sent_Email", "status": "Sent", "to": "Ann <Ann@Example.com>", "subject": " Plans "}
    body = "```text\nThanks Ann, Friday works.\n```\n"
    reply = sent_reply(note_facts("Done/SENT_1.md", fm), body, frozenset())
    assert reply is not None and reply.to == ("ann@example.com",) and reply.addressee == "ann@example.com"
    assert "Friday works" in reply.text and "```" not in reply.text and reply.subject == "Plans"


def test_given_an_imported_sent_message_outside_the_mail_folders_then_it_is_not_a_knowledge_note(tmp_path: Path):
    """Given a `type: sent_email` note kept in a project folder, When drafting reads knowledge notes, Then it is
    inert (mail, not what the owner knows), as the index already judged it."""
    write(tmp_path, "Projects/sent.md", "---\ntype: sent_email\nto: ann@example.com\n---\nOur price is 40.\n")
    write(tmp_path, "Projects/plan.md", "---\ntags: [project]\n---\nOur price is 40.\n")
    assert read_knowledge(tmp_path, "Projects/sent.md", GATE)[0] == "inert"
    assert read_knowledge(tmp_path, "Projects/plan.md", GATE)[0] == "knowledge"


def test_given_waiting_emails_typed_in_any_case_then_they_are_pending_from_their_sender(tmp_path: Path):
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, kind in (("EMAIL_1", "email"), ("EMAIL_2", "Email"), ("EMAIL_3", "note")):
        write(
            vault,
            f"Needs_Action/{name}.md",
            f"---\ntype: {kind}\nfrom: Dana <dana@example.com>\nsubject: About {name}\nstatus: Pending\n"
            "received: 2026-05-04T10:00:00Z\n---\nbody\n",
        )
    index = VaultIndex.open(vault, tmp_path / "state", GATE)
    index.sync()
    pending = IndexKnowledge(index).pending(["dana@example.com"])
    assert sorted(p.path for p in pending) == ["Needs_Action/EMAIL_1.md", "Needs_Action/EMAIL_2.md"]
    assert {p.subject for p in pending} == {"About EMAIL_1", "About EMAIL_2"} and all(p.when > 0 for p in pending)

    # Asked again (a burst's emails from one sender): the same answer; a note changed since is read anew.
    assert IndexKnowledge(index).pending(["dana@example.com"]) == pending
    knowledge = IndexKnowledge(index)
    assert len(knowledge.pending(["dana@example.com"])) == 2
    write(
        vault, "Needs_Action/EMAIL_2.md", "---\ntype: email\nfrom: Dana <dana@example.com>\nstatus: replied\n---\nb\n"
    )
    write(vault, "Needs_Action/EMAIL_1.md", "---\ntype: email\nfrom: Dana <dana@example.com>\nsubject: New\n---\nb\n")
    index.everything_changed()
    index.sync()
    assert [(p.path, p.subject) for p in knowledge.pending(["dana@example.com"])] == [
        ("Needs_Action/EMAIL_1.md", "New")
    ]


def test_given_a_draft_whose_source_is_unquoted_then_a_revision_reads_the_email_it_answers(tmp_path: Path):
    """Given a draft with `source: [[EMAIL_1]]` unquoted (YAML: a list in a list) answering a `type: Email`
    note, When the email a revision needs is looked up, Then it is found."""
    init_vault(tmp_path)
    write(
        tmp_path,
        "Needs_Action/EMAIL_1.md",
        "---\ntype: Email\nfrom: Dana <dana@example.com>\nsubject: Review\n---\n```text\nFriday?\n```\n",
    )
    found = email_for(Notes(LocalVault(Vault(tmp_path))), note_facts("Drafts/d.md", {"source": [["EMAIL_1"]]}))
    assert found is not None and found[0]["subject"] == "Review" and "Friday?" in found[1]
    assert (
        email_for(
            Notes(LocalVault(Vault(tmp_path))), note_facts("Drafts/d.md", {"source": "[[EMAIL_1#Body|the email]]"})
        )
        is not None
    )
    assert email_for(Notes(LocalVault(Vault(tmp_path))), note_facts("Drafts/d.md", {"source": "[[EMAIL_9]]"})) is None
