"""An email whose model is down, slow or refusing waits, pending, and is retried by the work queue.

Given a model server that answers 503 twice and then well, when the daemon triages an email,
then the email stays pending with the reason on it (`h0_waiting`), the work queue tries again after
its backoff (the model's client never waits or repeats a request itself), and the email then gets the model's draft with the reason cleared — the rules never
decide it for good because the server was briefly down. Past the cap, the rules decide and the
note says why.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from h0.config import load_settings
from h0.handlers.context import HandlerContext
from h0.handlers.revise import revise_draft
from h0.handlers.triage import triage_email
from h0.triage import Triager, ensure_rules_file
from h0.triage.llm import LLMTriage
from h0.triage.providers import build_provider
from h0.triage.rules import RulesEngine
from h0.vault import Vault
from h0.vault.marks import ATTEMPTS_KEY, RETRY_AT_KEY, SINCE_KEY, WAITING_KEY
from tests.pipeline.harness import frontmatter, running_daemon, wait_until
from tests.triage.fake_llm import FakeLLM, Reply, Seen, recorded

EMAIL = (
    "---\ntype: email\nstatus: pending\nmessage_id: m-1\nfrom: 'Dana Rivera <dana@example.com>'\n"
    "subject: Review\nreceived: 2026-11-21T09:00:00Z\n---\nCan we move Thursday's review to Friday?\n"
)
MODEL_REPLY = "Hi Dana,\n\nFriday at 10 works for me. I'll move the review.\n\nBest regards,"


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def model_triager(fake: FakeLLM, vault: Path) -> Triager:
    ensure_rules_file(vault)
    rules = RulesEngine.for_vault(vault)
    client = build_provider("ollama", model="m", api_key=None, base_url=f"{fake.url}/v1", timeout=5.0)
    return Triager(rules, LLMTriage(client, rules))


def test_503_twice_then_success_the_email_waits_pending_then_gets_the_models_draft(
    vault_dir: Path, fake: FakeLLM
) -> None:
    seen_waiting: list[dict[str, object]] = []
    first_wait_seen = threading.Event()

    def answer(seen: Seen) -> Reply:
        if len(fake.requests) == 2:  # the second look: asked only once the note showed its first wait
            first_wait_seen.wait(4)
            return recorded("ollama_503", status=503)
        return recorded("ollama_deepseek_r1")

    fake.queue(recorded("ollama_503", status=503)).respond_with(answer)

    def waiting() -> bool:
        fm = frontmatter(vault_dir, "Needs_Action/EMAIL_1.md")
        if fm.get(WAITING_KEY):
            seen_waiting.append(fm)
            first_wait_seen.set()
        return bool(fm.get(WAITING_KEY))

    with running_daemon(vault_dir, triager=model_triager(fake, vault_dir)):
        (vault_dir / "Needs_Action" / "EMAIL_1.md").write_text(EMAIL)
        assert wait_until(waiting, timeout=10)
        draft = vault_dir / "Drafts" / "REPLY_EMAIL_1.md"
        assert wait_until(draft.exists, timeout=20)
        assert wait_until(
            lambda: frontmatter(vault_dir, "Needs_Action/EMAIL_1.md").get("status") == "awaiting_approval"
        )

    first = seen_waiting[0]
    assert first["status"] == "pending"
    assert "503" in str(first[WAITING_KEY]) and str(first[WAITING_KEY]).endswith("retrying")
    assert first[ATTEMPTS_KEY] == 1 and first.get(RETRY_AT_KEY)
    assert MODEL_REPLY.split("\n")[2] in draft.read_text(encoding="utf-8")
    email = frontmatter(vault_dir, "Needs_Action/EMAIL_1.md")
    assert not any(key in email for key in (WAITING_KEY, SINCE_KEY, ATTEMPTS_KEY, RETRY_AT_KEY))
    assert "fallback" not in str(email.get("triaged_by"))
    assert len(fake.requests) == 3  # one request a look: the queue paced the next tries


def context(vault_dir: Path, triager: Triager, **settings: object) -> HandlerContext:
    return HandlerContext.local(load_settings(vault_path=vault_dir, **settings), Vault(vault_dir), triager=triager)


def test_a_refusal_waits_and_after_three_the_rules_decide_and_the_note_says_why(vault_dir: Path, fake: FakeLLM) -> None:
    fake.respond_with(lambda seen: recorded("openai_refusal"))
    (vault_dir / "Needs_Action" / "EMAIL_1.md").write_text(EMAIL)
    ctx = context(vault_dir, model_triager(fake, vault_dir))

    first = triage_email("Needs_Action/EMAIL_1.md", ctx)
    fm = frontmatter(vault_dir, "Needs_Action/EMAIL_1.md")
    assert first.action == "deferred" and fm["status"] == "pending"
    assert str(fm[WAITING_KEY]).startswith("the model refused")
    triage_email("Needs_Action/EMAIL_1.md", ctx)  # no work queue here: no h0_retry_at, due at once
    third = triage_email("Needs_Action/EMAIL_1.md", ctx)

    fm = frontmatter(vault_dir, "Needs_Action/EMAIL_1.md")
    assert third.action == "triaged" and fm["status"] == "awaiting_approval"
    assert "refused" in str(fm["fallback_reason"]) and "rules decided" in str(fm["fallback_reason"])
    assert WAITING_KEY not in fm and ATTEMPTS_KEY not in fm


def test_past_llm_wait_max_attempts_the_rules_decide(vault_dir: Path, fake: FakeLLM) -> None:
    fake.respond_with(lambda seen: recorded("vllm_503", status=503))
    (vault_dir / "Needs_Action" / "EMAIL_1.md").write_text(EMAIL)
    ctx = context(vault_dir, model_triager(fake, vault_dir), llm_wait_max_attempts=2)

    assert triage_email("Needs_Action/EMAIL_1.md", ctx).action == "deferred"
    assert triage_email("Needs_Action/EMAIL_1.md", ctx).action == "triaged"

    fm = frontmatter(vault_dir, "Needs_Action/EMAIL_1.md")
    assert "LLM_WAIT_MAX_ATTEMPTS" in str(fm["fallback_reason"]) and "→ rules" in str(fm["triaged_by"])


def test_a_waiting_email_looked_at_before_its_retry_is_due_is_left_alone(vault_dir: Path, fake: FakeLLM) -> None:
    text = EMAIL.replace(
        "status: pending\n",
        f"status: pending\n{WAITING_KEY}: model unavailable\n{RETRY_AT_KEY}: '2999-01-01T00:00:00+00:00'\n",
    )
    (vault_dir / "Needs_Action" / "EMAIL_1.md").write_text(text)
    ctx = context(vault_dir, model_triager(fake, vault_dir))

    outcome = triage_email("Needs_Action/EMAIL_1.md", ctx)

    assert outcome.action == "waiting" and (outcome.retry_in or 0) > 0
    assert fake.requests == []


def test_a_revision_asked_while_the_model_is_down_keeps_the_instruction_and_is_done_when_it_is_back(
    vault_dir: Path, fake: FakeLLM
) -> None:
    (vault_dir / "Drafts" / "REPLY_1.md").write_text(
        "---\nto: dana@example.com\nsubject: 'Re: Review'\nstatus: pending_approval\nh0: shorter\n---\n"
        "Hi Dana,\n\nFriday at 10 works for me, and I will move the review to that slot.\n\nBest regards,\n",
        encoding="utf-8",
    )
    fake.queue(recorded("llamacpp_503", status=503))
    fake.queue(recorded("llamacpp", content='{"reply_body": "Hi Dana,\\n\\nFriday at 10 works.\\n\\nBest regards,"}'))
    ctx = context(vault_dir, model_triager(fake, vault_dir), revise_settle_seconds=0)

    first = revise_draft("Drafts/REPLY_1.md", ctx)
    fm = frontmatter(vault_dir, "Drafts/REPLY_1.md")
    assert first.action == "deferred" and fm["h0"] == "shorter" and "503" in str(fm[WAITING_KEY])

    second = revise_draft("Drafts/REPLY_1.md", ctx)  # no work queue here: due at once

    fm = frontmatter(vault_dir, "Drafts/REPLY_1.md")
    assert second.action == "revised" and "h0" not in fm and WAITING_KEY not in fm and ATTEMPTS_KEY not in fm
    assert "Friday at 10 works.\n" in (vault_dir / "Drafts" / "REPLY_1.md").read_text(encoding="utf-8")
