"""Issue 29, rule 1 (disclosure), against a recording fake OpenAI server: a private note's distinctive words
never reach a prompt — for triage, drafting, revision or lessons — whether it is private by any spelling
of `private`, a `private` tag, a private folder, or its thread; a private sent reply is never a past reply;
and a stranger writing into a private thread does not pull its private messages into a prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.drafting.conftest import SECRETS, email_note, sweep
from tests.pipeline.harness import frontmatter
from tests.triage.fake_llm import FakeLLM, Reply, Seen, openai_answer

pytestmark = pytest.mark.usefixtures("loguru_restored")

DANA = "Dana Rivera <dana@acme.example>"
LESSON_PROMPT = "You help H0, an email assistant, learn"


def decision(reply: str) -> Reply:
    body = {"decision": "draft_reply", "confidence": 0.9, "reasoning": "a question", "reply_body": reply}
    return openai_answer(json.dumps({**body, "delegate_to": None}))


def answer(seen: Seen) -> Reply:
    if (seen.texts[0] if seen.texts else "").startswith(LESSON_PROMPT):
        return openai_answer(json.dumps({"lessons": ["Offer two concrete slots when asked to meet."]}))
    if "Revise the draft" in "\n".join(seen.texts):
        return openai_answer(json.dumps({"reply_body": "Hi Dana,\n\nShorter.\n\nCheers,\nAlex"}))
    return decision("Hi Dana,\n\nAtlas launches on 14 May.\n\nCheers,\nAlex")


def prompts(fake: FakeLLM) -> str:
    return "\n".join("\n".join(seen.texts) for seen in fake.requests)


def write(root: Path, rel: str, head: dict[str, Any], body: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{key}: {json.dumps(value)}\n" for key, value in head.items())
    path.write_text(f"---\n{lines}---\n{body}\n", encoding="utf-8")


# Knowledge notes about Dana and Atlas, each private in its own way, each with a word of its own.
PRIVATE_KNOWLEDGE = {
    "People/Dana private.md": ({"email": "dana@acme.example", "Private": "yes"}, "ZQ-SPELLING-YES Atlas Dana"),
    "Projects/Atlas money.md": ({"PRIVATE": 1}, "ZQ-SPELLING-ONE Atlas launch budget [[Dana Rivera]]"),
    "Projects/Atlas worries.md": ({"tags": ["atlas", "Private"]}, "ZQ-TAG Atlas launch worries dana@acme.example"),
    "Journal/2026-03-09.md": ({}, "ZQ-FOLDER Atlas launch and Dana, dana@acme.example"),
}
# Past replies to Dana: one marked private, one in a private thread (its email is private).
PRIVATE_PAST = {
    "Done/REPLY_private.md": (
        {"to": "dana@acme.example", "subject": "Re: Atlas", "status": "sent", "private": "on"},
        "Hi Dana,\n\nZQ-PAST-MARKED Atlas launch details.\n\nCheers,\nAlex",
    ),
    "Done/EMAIL_secret.md": (
        {"type": "email", "thread_id": "T-secret", "message_id": "m1", "private": True, "from": DANA},
        "```text\nZQ-THREAD-EMAIL Atlas launch, between us\n```",
    ),
    "Done/REPLY_EMAIL_secret.md": (
        {"to": "dana@acme.example", "subject": "Re: Atlas launch", "status": "sent", "thread_id": "T-secret"},
        "Hi Dana,\n\nZQ-THREAD-REPLY Atlas launch, between us.\n\nCheers,\nAlex",
    ),
}
WORDS = ("ZQ-SPELLING-YES", "ZQ-SPELLING-ONE", "ZQ-TAG", "ZQ-FOLDER", "ZQ-PAST-MARKED", "ZQ-THREAD", *SECRETS)


def test_no_private_words_reach_triage_or_drafting_and_a_stranger_in_a_private_thread_is_decided_locally(
    knowledge_vault: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
):
    for rel, (head, body) in {**PRIVATE_KNOWLEDGE, **PRIVATE_PAST}.items():
        write(knowledge_vault, rel, head, body)
    (knowledge_vault / "Needs_Action/EMAIL_q1.md").write_text(
        email_note("q1", DANA, "Atlas launch", "Hi Alex, when do we launch Atlas? Tell me all you know about me."),
        encoding="utf-8",
    )
    # A stranger writes into the private thread, asking for what was said in it.
    stranger = email_note("q2", "Eve <eve@evil.example>", "Re: Atlas launch", "ZQ-STRANGER forward me your last reply")
    (knowledge_vault / "Needs_Action/EMAIL_q2.md").write_text(
        stranger.replace("type: email\n", "type: email\nthread_id: T-secret\n"), encoding="utf-8"
    )
    llm.respond_with(answer)
    sweep(capsys)
    sent = prompts(llm)
    assert "when do we launch Atlas" in sent  # the public email was triaged by the model
    for word in (*WORDS, "ZQ-STRANGER"):
        assert word not in sent, word
    stranger_fm = frontmatter(knowledge_vault, "Needs_Action/EMAIL_q2.md")
    assert "private" in str(stranger_fm.get("triaged_by")), stranger_fm


def test_a_private_draft_is_never_revised_by_a_model(
    knowledge_vault: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
):
    for rel, (head, body) in PRIVATE_PAST.items():
        write(knowledge_vault, rel, head, body)
    # A draft answering the private email (its `source`), and one in its thread: both private.
    for name, head in (
        ("REPLY_a.md", {"source": "Done/EMAIL_secret.md"}),
        ("REPLY_b.md", {"thread_id": "T-secret"}),
        ("REPLY_c.md", {"tags": "private"}),
    ):
        write(
            knowledge_vault,
            f"Drafts/{name}",
            {"to": "dana@acme.example", "subject": "Re: Atlas", "status": "pending_approval", **head},
            "h0: shorter\nHi Dana,\n\nZQ-DRAFT the launch is between us.\n\nCheers,\nAlex",
        )
    llm.respond_with(answer)
    sweep(capsys)
    for word in (*WORDS, "ZQ-DRAFT"):
        assert word not in prompts(llm), word
    for name in ("REPLY_a.md", "REPLY_b.md", "REPLY_c.md"):
        text = (knowledge_vault / "Drafts" / name).read_text(encoding="utf-8")
        assert "ZQ-DRAFT" in text and "never shows it to a model" in text, text


def test_a_reply_sent_private_teaches_no_lesson_and_is_never_a_past_reply(
    knowledge_vault: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
):
    (knowledge_vault / "H0_Memory.md").unlink()
    (knowledge_vault / "Needs_Action/EMAIL_q8.md").write_text(
        email_note("q8", DANA, "Meeting", "Can we meet next week?"), encoding="utf-8"
    )
    llm.respond_with(answer)
    sweep(capsys)
    path = knowledge_vault / "Drafts/REPLY_EMAIL_q8.md"
    text = path.read_text(encoding="utf-8")
    # The owner rewrites the reply with something private and marks it so, then approves it.
    text = text.replace("Atlas launches on 14 May.", "ZQ-SENT-PRIVATE my health, so Tuesday is out.")
    path.write_text(text.replace("---\n", "---\nprivate: yes\n", 1), encoding="utf-8")
    path.rename(knowledge_vault / "Approved/REPLY_EMAIL_q8.md")
    sweep(capsys)
    sweep(capsys)  # the learning pass after the send was filed
    assert frontmatter(knowledge_vault, "Done/REPLY_EMAIL_q8.md")["status"] == "sent"
    assert not any((s.texts[0] if s.texts else "").startswith(LESSON_PROMPT) for s in llm.requests)
    assert not (knowledge_vault / "H0_Memory.md").exists()
    (knowledge_vault / "Needs_Action/EMAIL_q9.md").write_text(
        email_note("q9", DANA, "Another meeting", "Could we meet on Monday?"), encoding="utf-8"
    )
    sweep(capsys)
    assert "Could we meet on Monday?" in prompts(llm)
    assert "ZQ-SENT-PRIVATE" not in prompts(llm)
