"""The owner's voice, enforced after the model, through `h0 sweep` and the recording fake LLM.

Given an owner (Jonas Berg) who writes "Hi Tom," … "— J." to Tom, once wrote to Tom with Priya on
Cc, and has a German-speaking colleague, when emails arrive and a model drafts the replies — badly,
as models do — then each draft opens and closes the way Jonas does with that person (never the
model's generic greeting or sign-off, never doubled, never Tom's greeting for Priya), a formal
sender gets a formal reply, and a reply in the wrong language is asked for once more or flagged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from h0.cli import main
from h0.config import Settings
from h0.drafting.past import PastReplies
from h0.drafting.profile import load_profile
from h0.drafting.voice import learn, voice_for
from h0.vault import init_vault
from tests.drafting.conftest import sent_by_h0
from tests.pipeline.harness import events, frontmatter
from tests.triage.fake_llm import FakeLLM, Reply, recorded

pytestmark = pytest.mark.usefixtures("loguru_restored")

PROFILE = """---
type: h0-profile
name: Jonas Berg
languages: [en]
greeting: "Hi {first_name},"
sign_off: "Best regards,"
signature: ""
---
# Profile
"""
TOM = "Tom Fischer <tom@fischer.example>"
PRIYA = "Priya Nair <priya@nair.example>"


def sent(root: Path, name: str, to: str, text: str, *, cc: str = "", when: str = "2026-01-05T10:00:00Z") -> None:
    cc_line = f"cc: {cc}\n" if cc else ""
    (root / "Done" / f"{name}.md").write_text(
        f"---\nto: {to}\n{cc_line}subject: 'Re: plans'\nstatus: sent\nsent_at: {when}\n"
        f"rfc822_message_id: <{name}@berg.example>\n---\n{text}\n",
        encoding="utf-8",
    )


def email(root: Path, name: str, sender: str, subject: str, body: str) -> None:
    (root / "Needs_Action" / f"{name}.md").write_text(
        f"---\ntype: email\nstatus: pending\nmessage_id: {name}\nfrom: {json.dumps(sender)}\n"
        f"to: jonas@berg.example\nsubject: {json.dumps(subject)}\nreceived: 2026-03-10T09:00:00Z\n---\n"
        f"```text\n{body}\n```\n",
        encoding="utf-8",
    )


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    init_vault(root)
    (root / "H0_Profile.md").write_text(PROFILE, encoding="utf-8")
    sent(root, "to-tom-1", "tom@fischer.example", "Hi Tom,\n\nSounds good, see you then.\n\n— J.")
    sent(
        root,
        "to-tom-2",
        "tom@fischer.example",
        "Hi Tom,\n\nThe draft is attached.\n\n— J.",
        when="2026-01-06T10:00:00Z",
    )
    # The newest of all: to Tom, with Priya only on Cc. Its greeting is Tom's, never Priya's.
    sent(
        root,
        "to-tom-cc-priya",
        "tom@fischer.example",
        "Hi Tom,\n\nLooping in Priya for the budget.\n\n— J.",
        cc="priya@nair.example",
        when="2026-02-01T10:00:00Z",
    )
    sent_by_h0(root, Settings(vault_path=root).h0_state_dir)  # the owner's sent mail, as an import records it
    (root / "People").mkdir(exist_ok=True)
    (root / "People" / "Greta Vogel.md").write_text(
        "---\nemail: greta@vogel.example\nlanguage: de\n---\n# Greta Vogel\nPartner at Vogel & Co.\n", encoding="utf-8"
    )
    return root


def configure(monkeypatch: pytest.MonkeyPatch, root: Path, provider: str, url: str = "") -> None:
    env = {
        "VAULT_PATH": str(root),
        "LLM_PROVIDER": provider,
        "LLM_MODEL": "m",
        "LLM_API_KEY": "sk-test",
        "LLM_BASE_URL": url,
        "OWNER_EMAILS": "jonas@berg.example",
        "LOG_LEVEL": "INFO",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def llm(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        configure(monkeypatch, vault, "ollama", f"{fake.url}/v1")
        yield fake


def sweep(capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["sweep"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    return out


def answer(reply: str) -> Reply:
    return recorded(
        "ollama_deepseek_r1",
        content="<think>{the owner signs as Jonas}</think>\n"
        + json.dumps({"decision": "draft_reply", "confidence": 0.9, "reasoning": "a question", "reply_body": reply}),
    )


def draft_text(root: Path, name: str) -> tuple[dict[str, Any], str, str]:
    text = (root / "Drafts" / f"REPLY_{name}.md").read_text(encoding="utf-8")
    body = text.split("---\n", 2)[2]
    above, _, below = body.partition("%% h0: not sent below %%")
    return frontmatter(root, f"Drafts/REPLY_{name}.md"), above.strip(), below


def test_the_models_generic_sign_off_above_the_owners_is_replaced_never_doubled(vault, llm, capsys):
    email(vault, "E1", TOM, "Friday?", "Hi Jonas,\n\nDoes Friday at 10 work for the review?\n\nTom")
    llm.queue(answer("Dear Tom,\n\nFriday at 10 works for me.\n\nBest regards,\nJonas Berg\n\n— J."))

    sweep(capsys)

    _, above, _ = draft_text(vault, "E1")
    assert above == "Hi Tom,\n\nFriday at 10 works for me.\n\n— J."
    assert "Hi Tom," in llm.requests[0].last_text and "— J." in llm.requests[0].last_text


def test_a_model_answer_with_no_greeting_gets_the_owners(vault, llm, capsys):
    email(vault, "E2", TOM, "Slides", "Hi Jonas,\n\nCan you send me the slides from Monday?\n\nThanks, Tom")
    llm.queue(answer("Sure, I'll send them this afternoon."))

    sweep(capsys)

    _, above, _ = draft_text(vault, "E2")
    assert above == "Hi Tom,\n\nSure, I'll send them this afternoon.\n\n— J."


def test_a_person_only_on_cc_never_gets_the_greeting_written_to_someone_else_in_rules_mode(vault, monkeypatch, capsys):
    configure(monkeypatch, vault, "rules")
    email(vault, "E3", PRIYA, "Budget question", "Hi Jonas,\n\nCould you confirm the Q3 budget by Friday?\n\nPriya")

    sweep(capsys)

    _, above, _ = draft_text(vault, "E3")
    assert "\nHi Priya," in f"\n{above}" and "Hi Tom" not in above
    assert "— J." not in above  # Jonas never wrote *to* Priya: the profile's sign-off
    assert above.rstrip().endswith("Best regards,")


def test_a_formal_sender_gets_a_formal_reply(vault, llm, capsys):
    email(
        vault,
        "E4",
        "Felix Hartmann <felix@hartmann-ag.example>",
        "Partnership",
        "Dear Mr Berg,\n\nI would welcome a call about a partnership next week.\n\nYours sincerely,\nFelix Hartmann\nCEO",
    )
    llm.queue(answer("Hey Felix —\n\nHappy to talk next week. [FILL: two times that suit you]\n\nCheers"))

    sweep(capsys)

    _, above, _ = draft_text(vault, "E4")
    assert above.startswith("Dear Felix Hartmann,\n\nHappy to talk next week.")
    assert above.endswith("Kind regards,\nJonas Berg")
    assert "Hey" not in above and "Cheers" not in above
    prompt = llm.requests[0].last_text
    assert "Greeting: Dear Felix Hartmann," in prompt


def test_a_reply_in_the_wrong_language_is_asked_for_once_more(vault, llm, capsys):
    email(
        vault,
        "E5",
        "Greta Vogel <greta@vogel.example>",
        "Termin",
        "Hallo Jonas,\n\nHast du am Freitag Zeit für ein kurzes Gespräch über das Angebot?\n\nGreta",
    )
    llm.queue(
        answer("Hi Greta,\n\nYes, Friday works for me and I will send you the offer before that.\n\nBest regards,"),
        recorded(
            "ollama_deepseek_r1",
            content=json.dumps({"reply_body": "Ja, Freitag passt mir und ich schicke dir das Angebot vorher."}),
        ),
    )

    sweep(capsys)

    fm, above, _ = draft_text(vault, "E5")
    assert (
        above
        == "Hallo Greta,\n\nJa, Freitag passt mir und ich schicke dir das Angebot vorher.\n\nViele Grüße\nJonas Berg"
    )
    assert len(llm.requests) == 2  # one extra call, no more
    assert [e["model_calls"] for e in events(vault, "h0", "triage_decision")] == [2]  # and counted
    assert "Rewrite this reply in German" in llm.requests[1].last_text
    assert "h0_flags" not in fm


def test_a_reply_still_in_the_wrong_language_after_the_re_ask_is_flagged_on_the_draft(vault, llm, capsys):
    email(
        vault,
        "E6",
        "Greta Vogel <greta@vogel.example>",
        "Termin",
        "Hallo Jonas,\n\nHast du am Freitag Zeit für ein Gespräch?\n\nGreta",
    )
    english = "Yes, Friday works for me and I will send you the offer before that."
    llm.queue(answer(english), recorded("ollama_deepseek_r1", content=json.dumps({"reply_body": english})))

    sweep(capsys)

    fm, above, below = draft_text(vault, "E6")
    assert english in above and len(llm.requests) == 2
    assert "not German" in " ".join(fm["h0_flags"]) and "not German" in below


def test_a_truncated_answer_is_flagged_on_the_draft_and_cannot_be_sent_as_is(vault, llm, capsys):
    email(vault, "E7", TOM, "Friday?", "Hi Jonas,\n\nDoes Friday at 10 work for the review?\n\nTom")
    whole = json.dumps(
        {
            "decision": "draft_reply",
            "confidence": 0.9,
            "reasoning": "q",
            "reply_body": "Hi Tom,\n\nFriday works and I will bring the",
        }
    )
    body = recorded("llamacpp_length", content=whole[: whole.index(" and I will")])
    llm.queue(body)

    sweep(capsys)

    fm, above, _ = draft_text(vault, "E7")
    assert "[FILL: the rest of this reply" in above and above.endswith("— J.")
    assert any("cut off" in flag for flag in fm["h0_flags"])


def test_a_closing_the_owner_repeats_is_learned_whatever_its_words(vault):
    past = PastReplies(vault, owner=sent_by_h0(vault, Settings(vault_path=vault).h0_state_dir))
    learned = learn(past.all())
    tom = next(r for r in learned.recipients if r.address == "tom@fischer.example")

    assert tom is not None and tom.sign_off == "— J." and tom.greeting == "Hi Tom,"
    assert all(r.address != "priya@nair.example" for r in learned.recipients)  # only ever on Cc
    voice = voice_for(
        "tom@fischer.example", "Tom Fischer", load_profile(vault), past.addressed_to("tom@fischer.example", 5)
    )
    assert (voice.greeting, voice.sign_off) == ("Hi Tom,", "— J.")
    one_off = voice_for(
        "priya@nair.example", "Priya Nair", load_profile(vault), past.to_address("priya@nair.example", 5)
    )
    assert one_off.greeting == "Hi Priya," and one_off.source == "your profile"


def test_the_owners_own_way_with_a_person_beats_a_formal_email(vault):
    past = PastReplies(vault, owner=sent_by_h0(vault, Settings(vault_path=vault).h0_state_dir))
    history = past.addressed_to("tom@fischer.example", 5)

    formal = voice_for("tom@fischer.example", "Tom Fischer", load_profile(vault), history, formal=True, language="en")
    stranger = voice_for("ceo@big.example", "Ada Lovelace", load_profile(vault), [], formal=True, language="en")

    assert (formal.greeting, formal.sign_off) == ("Hi Tom,", "— J.")
    assert (stranger.greeting, stranger.sign_off) == ("Dear Ada Lovelace,", "Kind regards,\nJonas Berg")
