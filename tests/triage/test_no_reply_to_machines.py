"""No reply draft to mail no person wrote, whatever the model says (issue 41: "Hallo Amazon.de," must never
happen): through `h0 sweep` with a model (the recording OpenAI-compatible fake) that answers `draft_reply` to
everything, a receipt inviting questions and a Slack mention quoting a colleague's question stay for the owner
(`needs_info`, "Machine-made mail") with no draft; so does a message From the owner's own address; a person's
question is drafted as before."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from h0.vault import Vault, init_vault
from tests.drafting.test_relevant_context import OWNER, PERSONA, answer, email, sweep
from tests.triage.fake_llm import FakeLLM

pytestmark = pytest.mark.usefixtures("loguru_restored")


@pytest.fixture
def persona(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(PERSONA / "vault", root)
    init_vault(root)
    return root


@pytest.fixture
def llm(persona: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        for name, value in {
            "VAULT_PATH": str(persona),
            "LLM_PROVIDER": "openai",
            "LLM_MODEL": "fake-model",
            "LLM_API_KEY": "sk-test",
            "LLM_BASE_URL": f"{fake.url}/v1",
            "OWNER_EMAILS": OWNER,
        }.items():
            monkeypatch.setenv(name, value)
        yield fake


def machine_made(path: Path, kind: str) -> None:
    """As ingest writes it: the kind of machine-made mail its headers showed (h0.mail.incoming.automated)."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("status: pending\n", f"status: pending\nautomated: {kind}\n", 1), encoding="utf-8")


def test_given_a_model_that_drafts_everything_when_swept_then_no_draft_answers_a_machine_or_the_owner(
    persona: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
) -> None:
    receipt = email(
        persona,
        "r1",
        "Amazon.de <versandbestaetigung@amazon.de>",
        "Ihre Bestellung #302-1 wurde versandt",
        "Ihr Paket ist unterwegs. Fragen zu Ihrer Bestellung? Antworten Sie auf diese E-Mail.",
    )
    machine_made(receipt, "notification")
    mention = email(
        persona,
        "s1",
        "Slack <notification@slack.com>",
        "Felix mentioned you",
        "Felix Wagner: can you review the onboarding copy today?",
    )
    machine_made(mention, "notification")
    email(persona, "o1", f"Jonas <{OWNER}>", "Note to self", "Can you remember to renew the domain?")
    email(persona, "q1", "Felix Wagner <felix@brightline.example>", "Budget", "Could you confirm the budget?")
    llm.queue(*[answer("Hallo Amazon.de,\n\nvielen Dank!") for _ in range(4)])

    sweep(capsys)

    vault = Vault(persona)
    drafts = {vault.read_note(n.path).facts.source for n in vault.list_notes("Drafts").notes}
    assert drafts == {"Needs_Action/EMAIL_q1.md"}
    for name, why in (("r1", "Machine-made mail"), ("s1", "Machine-made mail"), ("o1", "Mail from your own address")):
        facts = vault.read_note(f"Needs_Action/EMAIL_{name}.md").facts
        assert facts.status.word == "needs_info" and facts.decision == "needs_info", name
        assert why in vault.read_note(f"Needs_Action/EMAIL_{name}.md").frontmatter["reasoning"], name
