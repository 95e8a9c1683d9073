"""Issue 40: a People note marked private makes its person private whichever key names the address (`email`,
`emails`, `e-mail`, `mail`, `address`, `addresses`, an address among `aliases`: h0.vault.person.person_addresses),
against a recording fake OpenAI server: no word of such a note reaches a prompt and their mail is triaged by the
local rules alone, and no reply the owner sent them is a past reply in another's prompt; a public People note under `e-mail:` is found by drafting as its person's and reaches the
prompt of a reply to them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.drafting.conftest import email_note, sent_by_h0, sweep
from tests.pipeline.harness import frontmatter
from tests.triage.fake_llm import FakeLLM, Seen, openai_answer

pytestmark = pytest.mark.usefixtures("loguru_restored")

KEYS = ("email", "emails", "e-mail", "mail", "address", "addresses", "aliases")


def address(key: str) -> str:
    return f"{key.replace('-', '')}.person@care.example"


def answer(seen: Seen):
    body = {"decision": "draft_reply", "confidence": 0.9, "reasoning": "a question", "delegate_to": None}
    return openai_answer(json.dumps({**body, "reply_body": "Hi,\n\nAtlas launches on 14 May.\n\nCheers,\nAlex"}))


def test_given_a_private_people_note_under_each_key_then_no_word_of_it_reaches_a_prompt(
    knowledge_vault: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
):
    people, inbox = knowledge_vault / "People", knowledge_vault / "Needs_Action"
    people.mkdir(exist_ok=True)
    for number, key in enumerate(KEYS):
        value = (
            [f"Dr {key}", address(key)] if key == "aliases" else [address(key)] if key.endswith("s") else address(key)
        )
        (people / f"Dr {key}.md").write_text(
            f"---\n{json.dumps(key)}: {json.dumps(value)}\nprivate: true\n---\nZQ-PERSON my therapist, Atlas\n",
            encoding="utf-8",
        )
        (knowledge_vault / f"Done/REPLY_EMAIL_past-{number}.md").write_text(
            f'---\nto: {address(key)}\nsubject: "Re: Atlas launch"\nstatus: sent\n'
            f'rfc822_message_id: "<past-{number}@northwind.example>"\nsent_at: 2026-02-1{number}T10:00:00Z\n---\n'
            "Hi,\n\nZQ-PAST Atlas launches in May, after our session.\n\nCheers,\nAlex\n",
            encoding="utf-8",
        )
        (inbox / f"EMAIL_p{number}.md").write_text(
            email_note(f"p{number}", f"Dr <{address(key)}>", "Atlas and our session", "ZQ-SESSION about Atlas"),
            encoding="utf-8",
        )
    (people / "Cora Lane.md").write_text(
        '---\n"e-mail": cora@acme.example\n---\nZQ-CONTROL Cora leads the Atlas launch.\n', encoding="utf-8"
    )
    (inbox / "EMAIL_c1.md").write_text(
        email_note("c1", "Cora <cora@acme.example>", "Atlas launch", "Hi Alex, when do we launch Atlas?"),
        encoding="utf-8",
    )
    sent_by_h0(knowledge_vault, Path(os.environ["H0_STATE_DIR"]))  # the owner's replies, to each person too
    llm.respond_with(answer)
    sweep(capsys)
    sent = "\n".join("\n".join(seen.texts) for seen in llm.requests)
    assert "when do we launch Atlas" in sent and "ZQ-CONTROL" in sent  # the public person's note was the model's
    assert "ZQ-PERSON" not in sent and "ZQ-SESSION" not in sent and "ZQ-PAST" not in sent and "care.example" not in sent
    for number, key in enumerate(KEYS):
        triaged = str(frontmatter(knowledge_vault, f"Needs_Action/EMAIL_p{number}.md").get("triaged_by"))
        assert "private" in triaged, (key, triaged)
