"""Issue 40, the gate itself, against a recording fake OpenAI server: a knowledge note whose frontmatter does not
parse, one tagged `#private` in its text, one with a nested `private/health` tag, and a private person (the
owner's therapist: a People note marked private) never reach a prompt; the therapist's mail is triaged by
the local rules like a private thread's, while public emails about the same project are drafted by the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.drafting.conftest import email_note, sweep
from tests.pipeline.harness import frontmatter
from tests.triage.fake_llm import FakeLLM, Seen, openai_answer

pytestmark = pytest.mark.usefixtures("loguru_restored")

THERAPIST = "Dr Quinn <quinn@care.example>"
# One knowledge note per sender, each private in a way the gate did not know before (and one public control): each
# is the one note that names its sender's address, so each is what that sender's reply context would hold.
NOTES = {
    "una@acme.example": ("Projects/Una therapy.md", "---\ntitle: Therapy: Atlas\n---\nZQ-UNPARSED Atlas, {a}\n"),
    "quo@acme.example": ("Projects/Quo quote.md", '---\nsubject: "ZQ-QUOTE Atlas\n---\nZQ-QUOTE Atlas, {a}\n'),
    "ines@acme.example": ("Projects/Ines inline.md", "---\nproject: Atlas\n---\nZQ-INLINE Atlas, {a} #private\n"),
    "ned@acme.example": ("Projects/Ned nested.md", "---\ntags: [atlas, private/health]\n---\nZQ-NESTED Atlas, {a}\n"),
    "cora@acme.example": ("Projects/Cora control.md", "---\nproject: Atlas\n---\nZQ-CONTROL Atlas, {a} #privateer\n"),
}
PERSON = ("People/Dr Quinn.md", "---\nemail: quinn@care.example\nprivate: true\n---\nZQ-PERSON my therapist, Atlas\n")
WORDS = ("ZQ-UNPARSED", "ZQ-QUOTE", "ZQ-INLINE", "ZQ-NESTED", "ZQ-PERSON", "ZQ-THERAPIST", "Therapy", "quinn@")


def answer(seen: Seen):
    body = {"decision": "draft_reply", "confidence": 0.9, "reasoning": "a question", "delegate_to": None}
    return openai_answer(json.dumps({**body, "reply_body": "Hi,\n\nAtlas launches on 14 May.\n\nCheers,\nAlex"}))


def test_no_unparseable_tagged_or_private_persons_words_reach_a_prompt_and_the_therapist_is_decided_locally(
    knowledge_vault: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
):
    for address, (rel, text) in {**NOTES, "": PERSON}.items():
        (knowledge_vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (knowledge_vault / rel).write_text(text.format(a=address), encoding="utf-8")
    inbox = knowledge_vault / "Needs_Action"
    for number, address in enumerate(NOTES):
        (inbox / f"EMAIL_a{number}.md").write_text(
            email_note(f"a{number}", address, "Atlas launch", "Hi Alex, when do we launch Atlas?"), encoding="utf-8"
        )
    (inbox / "EMAIL_t1.md").write_text(
        email_note("t1", THERAPIST, "Atlas and our session", "ZQ-THERAPIST about Atlas and our next session"),
        encoding="utf-8",
    )
    llm.respond_with(answer)
    sweep(capsys)
    sent = "\n".join("\n".join(seen.texts) for seen in llm.requests)
    assert "when do we launch Atlas" in sent and "ZQ-CONTROL" in sent  # the public emails and note were the model's
    assert not [word for word in WORDS if word in sent]
    assert "private" in str(frontmatter(knowledge_vault, "Needs_Action/EMAIL_t1.md").get("triaged_by"))
    assert "private" not in str(frontmatter(knowledge_vault, "Needs_Action/EMAIL_a0.md").get("triaged_by", ""))
