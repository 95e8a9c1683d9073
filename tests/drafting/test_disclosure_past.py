"""Issue 40: past replies and thread context honour every private place, not only `Done/`. Against a
recording fake OpenAI server, `h0 sweep` drafts replies to Dana while the vault and H0's history hold the
owner's mail of private conversations: a reply filed in a private folder (its thread's other reply in
`Done/`), a private note elsewhere sharing a thread (by `thread_id`, and by another key: a message id, a
`source`), the owner's imported sent mail of a private thread, and the provider's sent mail of one. None of
their words reaches a prompt — as a past reply, a similar reply, the thread's conversation or the email
itself — while the owner's ordinary replies and the thread's ordinary history do."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import pytest

from h0.drafting.service import sent_cache_path
from h0.state import StateDB
from h0.state.history import HistoryMessage, MailHistory
from tests.drafting.conftest import email_note, sent_by_h0, sweep
from tests.drafting.test_disclosure_prompts import answer, prompts, write
from tests.pipeline.harness import frontmatter
from tests.triage.fake_llm import FakeLLM

pytestmark = pytest.mark.usefixtures("loguru_restored")

DANA = "Dana Rivera <dana@acme.example>"
# The words the owner's replies and Dana's emails share, so every reply below is a "similar reply" too.
TOPIC = "Atlas launch pricing and the rollout plan"


def sent(thread: str, word: str, day: int, **more: Any) -> tuple[dict[str, Any], str]:
    """A reply the owner sent to Dana (H0 filed it: the owner's identity vouches for it once recorded)."""
    head = {
        "to": "dana@acme.example",
        "subject": f"Re: {TOPIC}",
        "status": "sent",
        "thread_id": thread,
        "rfc822_message_id": f"<{word}@northwind.example>",
        "sent_at": f"2026-03-0{day}T10:00:00Z",
        **more,
    }
    return head, f"Hi Dana,\n\n{word}: {TOPIC}, as we said.\n\nCheers,\nAlex"


def epoch(day: int) -> float:
    return dt.datetime(2026, 3, day, 9, tzinfo=dt.UTC).timestamp()


def kept(key: str, thread: str, word: str, day: int, *, outbound: bool) -> HistoryMessage:
    """A message kept as history (h0 import, a first sync): the owner's sent mail, or Dana's."""
    dana = ("Dana Rivera", "dana@acme.example")
    return HistoryMessage(
        key=f"<{key}@mail.example>",
        thread=thread,
        outbound=outbound,
        sender="alex@northwind.example" if outbound else "dana@acme.example",
        recipients=(dana,) if outbound else (("Alex", "alex@northwind.example"),),
        subject=f"Re: {TOPIC}",
        at=epoch(day),
        text=f"{word}: {TOPIC}, in their own words.",
        provider_id=key,
    )


# The notes that make conversations private, each in its own way.
PRIVATE_MARKS = {
    "Journal/REPLY_health.md": sent("T-folder", "ZQ-JOURNAL-REPLY", 9),  # a sent reply filed in a private folder
    "Projects/Atlas pricing.md": ({"private": "yes", "thread_id": "T-note"}, "ZQ-PRIVATE-NOTE pricing"),
    "Notes/Call with Dana.md": ({"tags": ["private"], "in_reply_to": "<m-call>"}, "ZQ-PRIVATE-CALL"),
    "Archive/EMAIL_hist.md": ({"type": "email", "thread_id": "T-hist", "private": True}, "ZQ-PRIVATE-HIST"),
    "Journal/Provider thread.md": ({"thread_id": "T-prov"}, "ZQ-PRIVATE-PROV"),
    "Notes/Secret reply key.md": ({"private": True, "message_id": "m-ctx-secret"}, "ZQ-PRIVATE-KEY"),
    "Projects/Offer.md": ({"PRIVATE": "on", "source": "[[EMAIL_s1]]"}, "ZQ-PRIVATE-OFFER"),
}
# The owner's replies in Done/, vouched for: two of private threads, one ordinary.
PAST = {
    "Done/REPLY_folder_thread.md": sent("T-folder", "ZQ-FOLDER-THREAD", 8),
    "Done/REPLY_note_thread.md": sent("T-note", "ZQ-NOTE-THREAD", 7),
    "Done/REPLY_note_key.md": sent("T-call", "ZQ-NOTE-KEY", 7, reply_to_message_id="m-call"),
    "Done/REPLY_open.md": sent("T-open", "OPEN-PAST-REPLY", 1),
}


def owner_history(root: Path) -> None:
    """The owner's imported sent mail and Dana's kept mail (H0's state database), and the provider's sent mail."""
    state_dir = Path(os.environ["H0_STATE_DIR"])
    MailHistory(StateDB.for_vault(root, state_dir)).commit(
        [
            kept("h-private", "T-hist", "ZQ-HISTORY-SENT", 6, outbound=True),  # the owner's, private thread
            kept("h-open", "T-hist-open", "OPEN-HISTORY-SENT", 2, outbound=True),
            kept("m-ctx-secret", "T-ctx", "ZQ-CTX-SECRET", 4, outbound=False),  # Dana's, a private note's key
            kept("m-ctx-open", "T-ctx", "OPEN-CTX-EARLIER", 3, outbound=False),
        ]
    )
    cache = sent_cache_path(root, state_dir)
    assert cache is not None
    cache.parent.mkdir(parents=True, exist_ok=True)
    record = {"to": "dana@acme.example", "subject": f"Re: {TOPIC}", "when": epoch(5), "cc": ""}
    with open(cache, "a", encoding="utf-8") as handle:
        for message_id, thread, word in (("p1", "T-prov", "ZQ-PROVIDER-SENT"), ("p2", "T-prov-open", "OPEN-PROVIDER")):
            text = f"Hi Dana,\n\n{word}: {TOPIC}.\n\nAlex"
            handle.write(json.dumps({**record, "id": message_id, "thread_id": thread, "text": text}) + "\n")


def test_no_past_reply_or_thread_context_of_a_private_place_reaches_a_prompt(
    knowledge_vault: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
):
    for rel, (head, body) in {**PRIVATE_MARKS, **PAST}.items():
        write(knowledge_vault, rel, head, body)
    sent_by_h0(knowledge_vault, Path(os.environ["H0_STATE_DIR"]))  # the owner's identity vouches for Done/'s replies
    owner_history(knowledge_vault)
    inbox = knowledge_vault / "Needs_Action"
    ask = f"Hi Alex, about the {TOPIC}: can you remind me what we agreed?"
    (inbox / "EMAIL_q1.md").write_text(email_note("q1", DANA, TOPIC, ask), encoding="utf-8")
    # An email whose kept history holds one message a private note names (by its id), and one ordinary message.
    context = email_note("c1", DANA, f"Re: {TOPIC}", f"Following up on the {TOPIC}.")
    (inbox / "EMAIL_c1.md").write_text(context.replace("type: email\n", "type: email\nthread_id: T-ctx\n"), "utf-8")
    # An email a private note answers (`source: [[EMAIL_s1]]`): private itself, never sent to a model.
    (inbox / "EMAIL_s1.md").write_text(email_note("s1", DANA, "Offer", "ZQ-SOURCE-EMAIL the offer"), "utf-8")
    llm.respond_with(answer)
    sweep(capsys)
    seen = prompts(llm)
    for word in ("OPEN-PAST-REPLY", "OPEN-HISTORY-SENT", "OPEN-PROVIDER", "OPEN-CTX-EARLIER"):
        assert word in seen, word  # ordinary replies and history do reach the model: these checks can fail
    for word in ("ZQ-JOURNAL", "ZQ-FOLDER-THREAD", "ZQ-NOTE", "ZQ-HISTORY", "ZQ-PROVIDER", "ZQ-CTX", "ZQ-PRIVATE"):
        assert word not in seen, word
    assert "ZQ-SOURCE-EMAIL" not in seen
    assert "private" in str(frontmatter(knowledge_vault, "Needs_Action/EMAIL_s1.md").get("triaged_by"))
