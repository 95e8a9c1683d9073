"""Issue 40: `h0 eval` asks the gate for each pair it drafts again.

Given the persona vault where one email is marked private, one email's thread is private (a note in the
private Journal/ shares its thread), one of Alex's replies is marked private, and one sender is a private
person (her People note is marked private), when `h0 eval` runs against a recording fake OpenAI server,
then none of those emails or replies reaches a prompt — not as the email drafted, not as a past reply —
and the run says how many it left out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.drafting.test_eval import REPLIES, persona, run_eval  # noqa: F401 - persona is a fixture
from tests.triage.fake_llm import FakeLLM, Seen, openai_answer

pytestmark = pytest.mark.usefixtures("loguru_restored")

EMAILS = {e["id"]: e for e in json.loads((ROOT / "tests/fixtures/drafting/emails.json").read_text(encoding="utf-8"))}
PRIVATE = ("email-22", "email-21", "email-20", "email-14")


def mark(path: Path, line: str) -> None:
    """Add a frontmatter line to a note, as the owner would in Obsidian."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("---\n", f"---\n{line}\n", 1), encoding="utf-8")


def make_private(vault: Path) -> None:
    mark(vault / "Done/EMAIL_persona-email-22.md", "private: true")  # the email itself
    (vault / "Journal/2026-03-21.md").write_text(  # a private folder's note in email-21's thread
        "---\nthread_id: persona-email-21\n---\nThe Hooli call, between us.\n", encoding="utf-8"
    )
    mark(vault / "Done/REPLY_EMAIL_persona-email-20.md", "tags: [Private]")  # Alex's reply
    mark(vault / "People/Grace Kim.md", "private: yes")  # the sender of email-14, a private person


def answer(seen: Seen) -> object:
    if "Triage this email" not in seen.last_text:  # a re-ask for the email's language
        return openai_answer(json.dumps({"reply_body": "Bonjour,\n\nMerci.\n\nAlex"}))
    body = "Hi there,\n\nThanks, I will check and come back to you.\n\nCheers,\nAlex"
    return openai_answer(
        json.dumps({"decision": "draft_reply", "confidence": 0.9, "reasoning": "a question", "reply_body": body})
    )


def test_given_private_pairs_then_eval_leaves_them_out_and_no_prompt_holds_their_words(persona, capsys, monkeypatch):  # noqa: F811
    make_private(persona)
    with FakeLLM() as fake:
        fake.respond_with(answer)  # type: ignore[arg-type]
        for name, value in {
            "LLM_PROVIDER": "openai",
            "LLM_MODEL": "fake-model",
            "LLM_API_KEY": "sk-test",
            "LLM_BASE_URL": f"{fake.url}/v1",
        }.items():
            monkeypatch.setenv(name, value)
        code, out, err = run_eval(capsys, "--no-note", "--limit", "30")
        _, data, _ = run_eval(capsys, "--json", "--no-note", "--limit", "30")
    assert code == 0, err
    prompts = "\n".join("\n".join(seen.texts) for seen in fake.requests)
    assert "Triage this email" in prompts  # the other pairs were drafted by the model
    for key in PRIVATE:
        assert EMAILS[key]["body"] not in prompts, f"the email {key}"
        assert REPLIES[key].split("\n\n")[1] not in prompts, f"Alex's reply to {key}"
    rows = [line for line in out.splitlines() if line.startswith("| Done/REPLY_EMAIL_persona-")]
    assert len(rows) == 22 - len(PRIVATE)
    assert not any(f"persona-{key}." in row for key in PRIVATE for row in rows)
    assert "4 private left out" in out.strip().splitlines()[-1]
    report = json.loads(data)
    assert report["private_left_out"] == 4 and len(report["replies"]) == 18
