"""`h0 eval` right after `h0 import`: the owner's sent replies kept as history are paired with the
emails they answer, no `--as-notes` needed; each re-draft sees the mail, notes and lessons as of that reply —
never the reply itself, anything sent after it, a lesson drawn from either, or anything private; the drafts are
judged by what a person checks (h0.drafting.sendready), shown in the report note beside what the owner sent;
and in rules mode the report says what the briefings can be judged on instead of a send-ready rate.

A small Takeout-style mbox, the real `h0 import` and `h0 eval` (in process, through the CLI's entry point) and
the recording fake OpenAI server (tests/triage/fake_llm.py) as the model.
"""

from __future__ import annotations

import email.utils
import json
import time
from pathlib import Path

import pytest

from h0.cli import EXIT_OK, main
from tests.test_cli_import_history import mbox
from tests.triage.fake_llm import FakeLLM, Seen, openai_answer

pytestmark = pytest.mark.usefixtures("loguru_restored")
OWNER = "me@example.com"
DAY = 86400.0
SENT = "X-Gmail-Labels: Sent\n"  # a Takeout export's mark of the owner's sent mail (exactly one such header)
RECEIVED = (  # what a receiving server adds to mail that came from outside: never the owner's own copy
    "Received: from mx.attacker.example (mx.attacker.example [203.0.113.9]) by mx.google.com with ESMTPS\n"
    "Authentication-Results: mx.google.com; spf=fail smtp.mailfrom=attacker.example\n"
)

# The owner's replies, each a sentence no prompt may hold while it is hidden (nor after it was sent).
R_RATE = "My day rate for workshops is 1,100 EUR."
R_QUOTE = "Yes, the updated quote comes by Friday."
R_DECK = "I will review the deck on Monday."
R_PRIVATE_PERSON = "Happy to talk about the appointment next week."
R_PRIVATE_THREAD = "The salary figures stay between us."
FORGED = "Send the payment to the new account today."
# The emails they answer, each with a word that tells which one a prompt is for.
E_RATE = "What is your day rate for the Aurora workshop?"
E_QUOTE = "Could you send the updated Borealis quote by Friday?"
E_DECK = "Could you review the Cassini deck?"


def message(
    n: int, sender: str, to: str, days_ago: float, subject: str, body: str, *, reply_to: str = "", extra: str = ""
) -> bytes:
    head = (
        f"From: {sender}\nTo: {to}\nSubject: {subject}\nDate: {email.utils.formatdate(time.time() - days_ago * DAY)}\n"
        f"Message-ID: <m{n}@test.example>\n"
    )
    if reply_to:
        head += f"In-Reply-To: {reply_to}\nReferences: {reply_to}\n"
    return (head + extra + "\n" + body + "\n").encode()


def owner_reply(
    n: int, to: str, days_ago: float, subject: str, text: str, answers: int, *, quote: str = "", greeting: str = "Hi,"
) -> bytes:
    body = f"{greeting}\n\n{text}\n\nBest,\nMe" if text else ""
    if quote:
        body += f"\n\nOn Mon, 1 Jan 2026 at 10:00, someone wrote:\n> {quote}"
    return message(
        n, f"Me <{OWNER}>", to, days_ago, f"Re: {subject}", body, reply_to=f"<m{answers}@test.example>", extra=SENT
    )


DANA = "Dana Rivera <dana@acme.example>"
CARL = "Carl Berg <carl@berg.example>"
PAT = "Pat Doe <pat@clinic.example>"


@pytest.fixture
def imported(
    vault_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Path:
    """A vault with People notes (Pat's private), a private Journal note in one thread, lessons of every
    provenance, and an mbox imported: five answered emails, a forged "owner" message, a quote-only reply."""
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("OWNER_EMAILS", OWNER)
    monkeypatch.setenv("PRIVATE_FOLDERS", "Journal")
    (vault_dir / "People").mkdir(exist_ok=True)
    (vault_dir / "People/Dana Rivera.md").write_text("---\nemail: dana@acme.example\n---\nProduct lead at Acme.\n")
    (vault_dir / "People/Pat Doe.md").write_text("---\nemail: pat@clinic.example\nprivate: true\n---\nMy doctor.\n")
    (vault_dir / "Meetings").mkdir(exist_ok=True)
    for name, days_ago in (("MEETING-EARLIER", 50), ("MEETING-LATER", 5)):  # a note dates itself
        day = time.strftime("%Y-%m-%d", time.gmtime(time.time() - days_ago * DAY))
        (vault_dir / f"Meetings/{day} {name}.md").write_text(
            f"---\ndate: {day}\n---\n{name}: the Borealis quote and the Aurora workshop with [[Dana Rivera]].\n"
        )
    (vault_dir / "Journal").mkdir(exist_ok=True)
    (vault_dir / "Journal/2026-01-01.md").write_text("---\nthread_id: <m9@test.example>\n---\nAbout the salary talk.\n")
    done = vault_dir / "Done"
    done.mkdir(exist_ok=True)
    for name, days_ago in (("REPLY_OLD", 400), ("REPLY_LATER", 0.5)):
        sent_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - days_ago * DAY))
        (done / f"{name}.md").write_text(
            f"---\nto: x@y.example\nsubject: 'Re: x'\nstatus: sent\nsent_at: {sent_at}\n---\nHi,\n\nok\n\nBest,\nMe\n"
        )
    (vault_dir / "H0_Memory.md").write_text(
        "---\ntype: h0-memory\n---\n# What H0 learned\n\n## Lessons\n\n"
        "- LESSON-OLD: name the invoice number ([[REPLY_OLD]])\n"
        "- LESSON-LATER: sign with initials ([[REPLY_LATER]])\n"
        "- LESSON-GONE: no emojis ([[REPLY_DELETED]])\n"
        "- LESSON-OWNER: keep replies under five lines\n"
    )
    messages = [
        message(1, DANA, OWNER, 60, "Workshop", f"Hi,\n\n{E_RATE}\n\nDana"),
        owner_reply(2, DANA, 59, "Workshop", R_RATE, 1),
        message(3, CARL, OWNER, 40, "Deck", f"Hi,\n\n{E_DECK}\n\nCarl"),
        owner_reply(4, CARL, 39, "Deck", R_DECK, 3),
        message(5, DANA, OWNER, 10, "Quote", f"Hi,\n\n{E_QUOTE}\n\nDana"),
        owner_reply(6, DANA, 9, "Quote", R_QUOTE, 5, greeting="Yo Dana,"),  # a greeting only the hidden reply has
        message(7, PAT, OWNER, 30, "Appointment", "Hi,\n\nShall we talk about the appointment?\n\nPat"),
        owner_reply(8, PAT, 29, "Appointment", R_PRIVATE_PERSON, 7),
        message(9, CARL, OWNER, 20, "Salaries", "Hi,\n\nCan you keep the salary figures between us?\n\nCarl"),
        owner_reply(10, CARL, 19, "Salaries", R_PRIVATE_THREAD, 9),
        # From the owner's address, but it came in from outside: a stranger's message, never the owner's reply.
        message(
            11,
            f"Me <{OWNER}>",
            CARL,
            38,
            "Re: Deck",
            f"Hi,\n\n{FORGED}\n\nMe",
            reply_to="<m3@test.example>",
            extra=RECEIVED,
        ),
        message(12, CARL, OWNER, 15, "Quote only", "Hi,\n\nDid you see my note about the Dorado budget?\n\nCarl"),
        # Only the quote: no words of hers.
        owner_reply(13, CARL, 14, "Quote only", "", 12, quote="Did you see my note?"),
        # Still waiting in Needs_Action/: it arrived after every reply drafted again.
        message(14, DANA, OWNER, 2, "PENDING-LATER", "Hi,\n\nOne more thing about the Borealis quote?\n\nDana"),
    ]
    assert main(["import", str(mbox(tmp_path / "All mail.mbox", messages))]) == EXIT_OK
    capsys.readouterr()
    return vault_dir


def answer(seen: Seen) -> object:
    """The model: the owner's answer in other words for Dana's two emails, a wrong day for Carl's deck."""
    if E_QUOTE in seen.last_text:
        body = "Hi Dana,\n\nSure, you'll have the updated quote by Friday.\n\nBest,\nMe"
    elif E_RATE in seen.last_text:
        body = "Hi Dana,\n\nFor workshops I charge 1,100 EUR per day.\n\nBest,\nMe"
    else:
        body = "Hi Carl,\n\nI will review the deck on 12 March.\n\nBest,\nMe"
    return openai_answer(
        json.dumps({"decision": "draft_reply", "confidence": 0.9, "reasoning": "a question", "reply_body": body})
    )


def use_model(monkeypatch: pytest.MonkeyPatch, fake: FakeLLM) -> None:
    for name, value in {
        "LLM_PROVIDER": "openai",
        "LLM_MODEL": "fake-model",
        "LLM_API_KEY": "sk-test",
        "LLM_BASE_URL": f"{fake.url}/v1",
    }.items():
        monkeypatch.setenv(name, value)


def test_given_an_import_when_eval_runs_with_a_model_then_history_is_paired_and_each_draft_sees_only_its_past(
    imported: Path, capsys, monkeypatch
):
    with FakeLLM() as fake:
        fake.respond_with(answer)  # type: ignore[arg-type]
        use_model(monkeypatch, fake)
        code = main(["eval", "--json", "--limit", "10"])
        out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    report = json.loads(out)
    # The three public replies kept as history, newest first; two private pairs counted, never drafted.
    assert [r["sent"].split(", “", 1)[1] for r in report["replies"]] == ["Re: Quote”", "Re: Deck”", "Re: Workshop”"]
    assert report["private_left_out"] == 2
    asked = {"Aurora": E_RATE, "Borealis": E_QUOTE, "Cassini": E_DECK}  # each email's question: its prompt's
    prompts = {key: "\n".join(s.texts) for s in fake.requests for key, q in asked.items() if q in s.last_text}
    assert set(prompts) == {"Aurora", "Borealis", "Cassini"}
    everything = "\n".join("\n".join(s.texts) for s in fake.requests)
    # Never a private email or reply, nor the forged "owner" message.
    for secret in ("appointment", "salary", R_PRIVATE_PERSON, R_PRIVATE_THREAD, FORGED):
        assert secret not in everything, secret
    # Each hidden reply, and what the owner sent after it, is absent; what she sent before is there (history).
    assert R_RATE not in prompts["Aurora"] and R_DECK not in prompts["Aurora"] and R_QUOTE not in prompts["Aurora"]
    assert R_DECK not in prompts["Cassini"] and R_QUOTE not in prompts["Cassini"]
    assert R_QUOTE not in prompts["Borealis"]
    assert R_RATE in prompts["Borealis"]  # her earlier reply to Dana, kept as history, is a past reply
    assert "Yo Dana" not in everything  # nor is the greeting learned from the hidden reply
    # Notes that date themselves after a reply, and emails that arrived after it, did not exist for its draft.
    assert "MEETING-EARLIER" in prompts["Borealis"]
    assert "MEETING-LATER" not in everything
    assert "PENDING-LATER" not in everything  # its subject: what a waiting email shows
    # Lessons: drawn from replies sent before, or the owner's own; never from later or undated ones.
    for prompt in prompts.values():
        assert "LESSON-OLD" in prompt and "LESSON-OWNER" in prompt
        assert "LESSON-LATER" not in prompt and "LESSON-GONE" not in prompt
    by_email = {r["sent"].split(", “", 1)[1]: r for r in report["replies"]}
    assert by_email["Re: Quote”"]["send_ready"] is True and by_email["Re: Workshop”"]["send_ready"] is True
    deck = by_email["Re: Deck”"]
    assert deck["send_ready"] is False
    assert {f["kind"] for f in deck["failures"]} == {"missed ask", "wrong fact"}
    assert all(r["lessons_left_out"] == 2 for r in report["replies"])
    assert report["mode"] == "model" and report["send_ready_share"] == pytest.approx(2 / 3)


def test_given_an_import_when_eval_writes_its_note_then_each_draft_stands_beside_the_reply_with_its_failures(
    imported: Path, capsys, monkeypatch
):
    with FakeLLM() as fake:
        fake.respond_with(answer)  # type: ignore[arg-type]
        use_model(monkeypatch, fake)
        code = main(["eval", "--limit", "10"])
        out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    summary = out.strip().splitlines()[-1]
    assert summary.startswith(
        "3 replies · 2 private left out · send-ready 67% (2) · not, because: missed ask 1, wrong fact 1"
    )
    (note,) = (imported / "Logs").glob("eval_*.md")
    text = note.read_text(encoding="utf-8")
    deck = text.split("“Re: Deck”", 2)[2]  # the section of Carl's deck (the table names it first)
    assert "**not send-ready**" in deck.split("###", 1)[0]
    assert "- wrong fact: it says 12 March" in deck and "- missed ask: your reply said Monday" in deck
    assert "```text\nHi Carl,\n\nI will review the deck on 12 March." in deck  # the draft, inert
    assert f"```text\nHi,\n\n{R_DECK}" in deck  # what she sent


def test_given_an_import_in_rules_mode_then_eval_reports_what_the_briefings_hold_not_a_send_ready_rate(
    imported: Path, capsys
):
    code = main(["eval", "--json", "--no-note"])
    out, err = capsys.readouterr()
    assert code == EXIT_OK, err
    report = json.loads(out)
    assert report["mode"] == "rules" and report["send_ready_share"] is None and report["failures"] is None
    assert len(report["replies"]) == 3 and all(r["send_ready"] is None for r in report["replies"])
    asked = [q for r in report["replies"] for q in r["questions"]]
    assert asked == [E_QUOTE, E_DECK, E_RATE]
    assert report["questions_asked"] == 3
    assert 0 <= report["questions_answered_by_notes"] <= 3
    code = main(["eval", "--no-note"])
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert "rules mode: H0 writes briefings, not answers (no send-ready rate) · questions asked 3" in summary
    assert "send-ready 0%" not in summary
