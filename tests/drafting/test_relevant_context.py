"""What reaches a model's prompt, on the persona vault (a consultant's clients, colleague, accountant,
meetings, a private journal), through `h0 sweep` and the recording OpenAI-compatible fake:

- a note enters through what the email is about, never through a shared common word: an unrelated
  client's day rate never reaches a podcast invite's prompt;
- frontmatter properties are given as facts;
- the thread is given once, oldest first, each message dated and attributed, quotes stripped (imported
  sent mail without `sent_at` is dated by its own Date header, never time 0); 200 messages stay
  within the budget with the newest kept;
- other emails from the same person still waiting are mentioned;
- a People note with broken frontmatter, and a sender with no note, cost nothing but that note.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from h0.cli import main
from h0.triage.prompt import MAX_CONVERSATION_CHARS
from h0.vault import init_vault
from h0.vault.model import note_facts
from tests.triage.fake_llm import FakeLLM, Reply, Seen, openai_answer

pytestmark = pytest.mark.usefixtures("loguru_restored")

PERSONA = Path(__file__).resolve().parents[1] / "fixtures" / "persona"
SECRETS = ("SECRET-PRIVATE-9921", "SECRET-JOURNAL-5512")
FELIX = "Felix Wagner <felix@brightline.example>"
OWNER = "jonas@bergconsulting.example"


@pytest.fixture
def persona(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(PERSONA / "vault", root)
    init_vault(root)
    return root


@pytest.fixture
def llm(persona: Path, monkeypatch: pytest.MonkeyPatch):
    with FakeLLM() as fake:
        for name, value in {
            "VAULT_PATH": str(persona),
            "LLM_PROVIDER": "openai",
            "LLM_MODEL": "fake-model",
            "LLM_API_KEY": "sk-test",
            "LLM_BASE_URL": f"{fake.url}/v1",
            "PRIVATE_FOLDERS": "Journal",
            "OWNER_EMAILS": OWNER,
            "APPROVAL_SETTLE_SECONDS": "0",
            "LOG_LEVEL": "INFO",
        }.items():
            monkeypatch.setenv(name, value)
        yield fake


def email(
    root: Path,
    mid: str,
    sender: str,
    subject: str,
    body: str,
    *,
    received: str = "2026-11-24T09:00:00Z",
    thread: str | None = None,
    kind: str = "email",
    folder: str = "Needs_Action",
    status: str = "pending",
) -> Path:
    path = root / folder / f"{'SENT' if kind == 'sent_email' else 'EMAIL'}_{mid}.md"
    lines = [
        "---",
        f"type: {kind}",
        f"status: {status}",
        f"message_id: {mid}",
        f"from: {json.dumps(sender)}",
        f"to: {OWNER if kind == 'email' else 'felix@brightline.example'}",
        f"subject: {json.dumps(subject)}",
        f"received: {received}",
    ]
    if thread:
        lines.append(f"thread_id: {thread}")
    path.write_text("\n".join([*lines, "---", "```text", body, "```", ""]), encoding="utf-8")
    return path


def answer(reply: str = "Hi,\n\nThanks.\n\n— J.") -> Reply:
    return openai_answer(
        json.dumps({"decision": "draft_reply", "confidence": 0.9, "reasoning": "a question", "reply_body": reply})
    )


def sweep(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["sweep"])
    out, err = capsys.readouterr()
    assert code == 0, out + err


def prompt(seen: Seen) -> str:
    return "\n".join(seen.texts)


def prompts_by_subject(llm: FakeLLM) -> dict[str, str]:
    found: dict[str, str] = {}
    for seen in llm.requests:
        text = prompt(seen)
        for line in text.splitlines():
            if line.startswith("Subject: "):
                found[line.removeprefix("Subject: ")] = text
    return found


def test_an_unrelated_clients_day_rate_never_reaches_a_podcast_invites_prompt(persona, llm, capsys):
    """Given a podcast invite that shares `Fri` and `remote` with a client's notes,
    when it is triaged, then the prompt holds the podcast note and the bio it asks for, and no
    client's rate, budget or invoice — nor a private note."""
    email(
        persona,
        "pod1",
        "Marta Kowalski <marta@productpod.example>",
        "Podcast invite",
        "Hi Jonas,\n\nwould you join our podcast on product discovery? We record remote, usually on Fri. "
        "Could you also send a short bio?\n\nMarta",
    )
    llm.queue(answer())
    sweep(capsys)
    text = prompt(llm.requests[0])
    assert "45 minutes at most" in text  # Notes/Podcast appearances.md, named by its alias
    for unrelated in ("€1,200", "€1,400", "€24,000", "€45,000", "INV-2041", "€800", "Brightline weekly"):
        assert unrelated not in text, unrelated
    for secret in SECRETS:
        assert secret not in text


def test_properties_of_the_notes_used_reach_the_prompt_as_facts(persona, llm, capsys):
    """Given a project whose budget and deadline live only in its frontmatter, when its client asks,
    then the prompt states them; another person's rate property never comes along."""
    email(persona, "bud1", FELIX, "Budget", "Quick check: how much of the onboarding budget did we agree on?")
    llm.queue(answer())
    sweep(capsys)
    text = prompt(llm.requests[0])
    assert "budget: €24,000" in text and "deadline: 2026-12-15" in text
    assert "day_rate: €1,200" in text  # the sender's own People note: his terms are his
    assert "day_rate: €800" not in text  # Tom's terms are not Felix's business


def owners_own(root: Path, rel: str) -> None:
    """Record a note of Done/ as the owner's sent mail with the owner's identity (h0.mail.owner)."""
    from h0.config import Settings
    from h0.mail.owner import Evidence, Observed, OwnerAuthority, note_message_key
    from h0.state import StateDB
    from h0.vault import Vault

    key = note_message_key(Vault(root).read_note(rel).facts)
    state = StateDB.for_vault(root, Settings(vault_path=root).h0_state_dir)
    OwnerAuthority(state).record([Observed(key, Evidence.IMPORT_SENT, "Sent.mbox", OWNER, rel)])


def test_the_thread_is_given_once_in_date_order_dated_and_attributed_with_quotes_stripped(persona, llm, capsys):
    """Given Felix's question, the owner's imported reply (no sent_at: only its Date header) and Felix's
    follow-up quoting both, when the follow-up is triaged, then each earlier message appears once, in
    order, dated and attributed, and the quoted history is not repeated."""
    email(
        persona,
        "t1",
        FELIX,
        "Prototype",
        "Are we on track for the prototype? ALPHA-QUESTION",
        received="2026-11-20T08:00:00Z",
        thread="th1",
        folder="Done",
        status="done",
    )
    email(
        persona,
        "t2",
        f"Jonas Berg <{OWNER}>",
        "Re: Prototype",
        "Yes, on 4 December. BRAVO-REPLY\n\nOn Thu, 20 Nov 2026 Felix wrote:\n> Are we on track? ALPHA-QUESTION",
        received="2026-11-20T10:30:00Z",
        thread="th1",
        kind="sent_email",
        folder="Done",
        status="sent",
    )
    owners_own(persona, "Done/SENT_t2.md")  # as an import of the owner's Sent folder records it
    email(
        persona,
        "t3",
        FELIX,
        "Re: Prototype",
        "Great, and the handover? CHARLIE-FOLLOWUP\n\nOn Thu, 20 Nov 2026 Jonas wrote:\n"
        "> Yes, on 4 December. BRAVO-REPLY\n>\n> On Thu, 20 Nov 2026 Felix wrote:\n>> ALPHA-QUESTION",
        received="2026-11-21T09:00:00Z",
        thread="th1",
    )
    llm.queue(answer())
    sweep(capsys)
    text = prompt(llm.requests[0])
    for token in ("ALPHA-QUESTION", "BRAVO-REPLY", "CHARLIE-FOLLOWUP"):
        assert text.count(token) == 1, (token, text.count(token))
    assert text.index("ALPHA-QUESTION") < text.index("BRAVO-REPLY") < text.index("CHARLIE-FOLLOWUP")
    assert "Earlier message from The owner (their earlier reply), 2026-11-20T10:30:00Z" in text
    assert f"Earlier message from {FELIX}, 2026-11-20T08:00:00Z" in text
    conversation = text[text.index("ALPHA-QUESTION") - 200 : text.index("CHARLIE-FOLLOWUP")]
    assert "```" not in conversation


def test_a_thread_of_200_messages_keeps_the_newest_within_the_budget(persona, llm, capsys):
    for n in range(200):
        email(
            persona,
            f"long{n:03}",
            FELIX,
            "Re: Long thread",
            f"Message MSG-{n:03}-MARK " + "words " * 60,
            received=f"2026-10-{1 + n // 24:02}T{n % 24:02}:00:00Z",
            thread="long",
            folder="Done",
            status="done",
        )
    email(
        persona,
        "long200",
        FELIX,
        "Re: Long thread",
        "And now? LAST-ONE",
        received="2026-11-25T09:00:00Z",
        thread="long",
    )
    llm.queue(answer())
    sweep(capsys)
    text = prompt(llm.requests[0])
    assert "MSG-199-MARK" in text and "LAST-ONE" in text  # the newest kept
    assert "MSG-000-MARK" not in text  # the oldest gave way
    start = text.index("--- Earlier message")
    assert len(text[start : text.index("--- The email to triage ---")]) <= MAX_CONVERSATION_CHARS


def test_other_waiting_emails_from_the_same_person_are_mentioned(persona, llm, capsys):
    email(persona, "w1", FELIX, "Prototype", "Are we on track for the prototype?", received="2026-11-24T09:00:00Z")
    email(
        persona, "w2", FELIX, "Invoice address", "Which address goes on the invoice?", received="2026-11-24T10:00:00Z"
    )
    llm.queue(answer(), answer())
    sweep(capsys)
    by_subject = prompts_by_subject(llm)
    assert "“Invoice address”" in by_subject["Prototype"] and "[[EMAIL_w2]]" in by_subject["Prototype"]
    assert "“Prototype”" in by_subject["Invoice address"]


def test_a_people_note_with_broken_frontmatter_costs_only_that_note(persona, llm, capsys):
    (persona / "People/Lena Hoffmann.md").write_text(
        "---\nemail: lena@hoffmann.example\nrole: [unclosed\n---\nLena likes LENA-FACT.\n", encoding="utf-8"
    )
    email(
        persona, "l1", "Lena Hoffmann <lena@hoffmann.example>", "Workshop", "Can we do the Quanta dashboard workshop?"
    )
    llm.queue(answer())
    sweep(capsys)
    assert (persona / "Drafts/REPLY_EMAIL_l1.md").exists()
    text = prompt(llm.requests[0])
    assert "Beta on 20 January" in text  # the project it names still comes
    assert "LENA-FACT" not in text  # the unreadable note is left out, not half-read


def test_a_sender_with_no_note_gets_the_notes_the_email_names_and_their_organisation(persona, llm, capsys):
    email(
        persona,
        "k1",
        "Kai Wong <kai@quanta.example>",
        "Dashboard beta",
        "Hi Jonas, I'm Kai and I just joined Priya's team. When is the beta of the Quanta dashboard?",
    )
    llm.queue(answer())
    sweep(capsys)
    text = prompt(llm.requests[0])
    assert "Beta on 20 January" in text
    assert "€1,200" not in text and "Brightline" not in text
    assert "€45,000" not in text  # Priya's budget is Priya's: Kai is not in her note


def draft_context_whys(persona: Path, subject: str, body: str) -> dict[str, Any]:
    from h0.config import load_settings
    from h0.drafting import Drafting

    settings = load_settings(vault_path=persona, private_folders="Journal")
    drafting = Drafting.build(settings, persona)
    context = drafting.context_for_email(note_facts("", {"from": FELIX, "subject": subject}), body)
    return {item.path: item.why for item in context.items}


def test_each_note_in_the_context_says_why_it_is_there(persona, llm):
    whys = draft_context_whys(persona, "User interviews", "Did the user interviews arrive? When do you need feedback?")
    assert whys["People/Felix Wagner.md"] == "the sender's note"
    assert whys["Projects/Brightline onboarding revamp.md"] == "linked from [[Felix Wagner]]"
    assert "links to [[felix wagner]]" in whys["Meetings/2026-11-20 Brightline weekly.md"]


def test_a_meeting_with_the_sender_about_something_else_stays_out(persona, llm):
    """Given the weekly with Felix (user interviews, feedback by 1 December), when Felix asks about the
    prototype, then the meeting is about Felix, not about his email: it is not in the context (it linking to
    his People note is not enough), while his note and the project it links to are."""
    whys = draft_context_whys(persona, "Prototype", "Are we on track for the prototype?")
    assert "Meetings/2026-11-20 Brightline weekly.md" not in whys
    assert set(whys) >= {"People/Felix Wagner.md", "Projects/Brightline onboarding revamp.md"}


def delegate(to: str) -> Reply:
    return openai_answer(
        json.dumps(
            {
                "decision": "delegate",
                "confidence": 0.8,
                "reasoning": "Design questions are Tom's.",
                "reply_body": "",
                "delegate_to": to,
            }
        )
    )


def test_delegate_writes_a_forward_draft_to_the_colleague_that_waits_for_approval(persona, llm, capsys):
    """Given a design question the model delegates to Tom Becker, when triaged, then a forward draft to
    the address in Tom's People note waits in Drafts/ with a line written for Tom and the original — H0's
    reasoning only below the cut-off line, for the owner — the email stays delegated and names it; approved,
    it is sent to Tom."""
    from h0.vault import Vault

    email(
        persona, "d1", "Priya Nair <priya@quanta.example>", "Chart colours", "Which colours for the charts? ORIG-TEXT"
    )
    llm.queue(delegate("Tom Becker"))
    sweep(capsys)
    vault = Vault(persona)
    source = vault.read_note("Needs_Action/EMAIL_d1.md").frontmatter
    assert source["status"] == "delegated" and source["draft"] == "Drafts/FWD_EMAIL_d1.md"
    fwd = vault.read_note("Drafts/FWD_EMAIL_d1.md")
    assert fwd.frontmatter["to"] == "tom.becker@bergconsulting.example"
    assert fwd.frontmatter["status"] == "pending_approval" and fwd.frontmatter["subject"] == "Fwd: Chart colours"
    above, below = fwd.body.split("%% h0: not sent below %%")
    assert above.startswith("Hi Tom,\n\nCould you take this one? Priya Nair wrote to me about “Chart colours”")
    assert "Design questions are Tom's." not in above and "Design questions are Tom's." in below
    assert "Forwarded message" in above and "From: Priya Nair <priya@quanta.example>" in above
    assert "ORIG-TEXT" in above
    (persona / "Drafts/FWD_EMAIL_d1.md").rename(persona / "Approved/FWD_EMAIL_d1.md")
    sweep(capsys)
    sent = [p.read_text(encoding="utf-8", errors="replace") for p in (persona / "Outbox").glob("*.eml")]
    held = list((persona / "Approved").glob("*.md"))
    assert not held, held[0].read_text(encoding="utf-8")
    assert len(sent) == 1 and "tom.becker@bergconsulting.example" in sent[0] and "ORIG-TEXT" in sent[0]


def test_a_german_email_is_forwarded_with_a_german_line_for_the_colleague_not_hs_english_reasoning(
    persona, llm, capsys
):
    """Given a German email the model delegates to Tom Becker with its reasoning in English, when triaged, then
    the forward greets Tom and asks him in German (du: the owner never wrote to him formally), heads the original
    as a German mail client does, and keeps the English reasoning below the cut-off line."""
    from h0.vault import Vault

    email(
        persona,
        "d3",
        "Sabine Kranich <sabine@kranich.example>",
        "Farben für die Diagramme",
        "Hallo Jonas, welche Farben sollen wir für die Diagramme nehmen? Kannst du mir das bis Freitag sagen? "
        "Danke und viele Grüße, Sabine ORIG-DE",
    )
    llm.queue(delegate("Tom Becker"))
    sweep(capsys)
    above, below = Vault(persona).read_note("Drafts/FWD_EMAIL_d3.md").body.split("%% h0: not sent below %%")
    assert above.startswith("Hallo Tom,\n\nKannst du das übernehmen? Sabine Kranich hat mir wegen")
    assert "Weitergeleitete Nachricht" in above and "Von: Sabine Kranich <sabine@kranich.example>" in above
    assert "Design questions" not in above and "Could you take" not in above and "ORIG-DE" in above
    assert "H0's reasoning: Design questions are Tom's." in below


def test_delegate_to_someone_without_an_address_says_how_to_fix_it(persona, llm, capsys):
    from h0.vault import Vault

    email(persona, "d2", "Priya Nair <priya@quanta.example>", "Legal", "Can your lawyer check the contract?")
    llm.queue(delegate("Our lawyer"))
    sweep(capsys)
    source = Vault(persona).read_note("Needs_Action/EMAIL_d2.md").frontmatter
    assert source["status"] == "delegated" and "email:" in source["problem"]
    assert not list((persona / "Drafts").glob("FWD_*"))


def test_rules_mode_drafts_an_honest_briefing_from_the_owners_notes(persona, monkeypatch, capsys):
    """Given no model, when Felix asks two questions, then the draft greets him and signs off in the
    owner's voice, and — marked for the owner, behind a [FILL] that blocks sending — gives the lines of
    the notes bearing on the question it can answer (with their [[links]]) and names the one it cannot."""
    from h0.vault import Vault

    monkeypatch.setenv("VAULT_PATH", str(persona))
    monkeypatch.setenv("PRIVATE_FOLDERS", "Journal")
    monkeypatch.setenv("LLM_PROVIDER", "rules")
    email(
        persona,
        "r1",
        FELIX,
        "November invoice",
        "Hi Jonas, which day rate should our finance team use for November? Where do we park at your office?",
    )
    sweep(capsys)
    draft = Vault(persona).read_note("Drafts/REPLY_EMAIL_r1.md")
    above = draft.body.split("%% h0: not sent below %%")[0]
    assert "Hi Felix," in above and "— J." in above
    assert "look into it" not in above
    assert "For you — H0's briefing" in above and "[FILL:" in above
    assert "€1,200" in above and "[[Felix Wagner]]" in above
    assert "Your notes do not answer" in above and "park at your office" in above
    assert "SECRET" not in above
