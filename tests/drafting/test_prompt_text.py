"""The text around a reply, through `h0 sweep` and a recording fake OpenAI server: every drafting prompt says
what day it is in the owner's time zone; a bulk or automated sender gets no personal greeting; du / Sie (and
tu / vous) agree between the greeting and the body.

Hostile inputs: a newsletter signed with its brand ("Design Weekly" greeted "Hi Design,"), a shop whose display
name is its domain ("Amazon.de" greeted "Hallo Amazon.de,"), a model that writes "du" under a "Sie" greeting,
a model that keeps doing so when asked again.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from h0.state import StateDB
from h0.state.history import HistoryMessage, MailHistory
from tests.drafting.conftest import email_note, sweep
from tests.drafting.test_llm_drafting import decision, draft, prompt_of
from tests.pipeline.harness import frontmatter
from tests.triage.fake_llm import FakeLLM, openai_answer

pytestmark = pytest.mark.usefixtures("loguru_restored")

BERLIN = ZoneInfo("Europe/Berlin")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def in_berlin(root: Path) -> None:
    """The owner's profile says their time zone (H0_Profile.md `timezone:`)."""
    profile = root / "H0_Profile.md"
    profile.write_text(profile.read_text(encoding="utf-8").replace("---\n", "---\ntimezone: Europe/Berlin\n", 1))


def days_now() -> set[str]:
    """Today's "Weekday, YYYY-MM-DD" in Berlin, and the next day's (a test running over midnight)."""
    now = datetime.now(UTC).astimezone(BERLIN)
    return {f"{WEEKDAYS[d.weekday()]}, {d:%Y-%m-%d}" for d in (now, now + timedelta(minutes=2))}


def ask(root: Path, mid: str, sender: str, subject: str, body: str) -> None:
    (root / f"Needs_Action/EMAIL_{mid}.md").write_text(email_note(mid, sender, subject, body), encoding="utf-8")


def test_every_drafting_prompt_says_today_weekday_and_the_owners_time_zone(
    knowledge_vault: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
):
    """Given a profile in Europe/Berlin, when an email is drafted and then revised, then both prompts open with
    today's weekday and date in Berlin and the zone's name — "bis Freitag" is read from a known day."""
    in_berlin(knowledge_vault)
    ask(knowledge_vault, "d1", "Dana Rivera <dana@acme.example>", "Review", "Can you send the review by Friday?")
    llm.queue(decision("Hi Dana,\n\nYes, by Friday.\n\nBest regards,\nAlex"))
    sweep(capsys)
    path = knowledge_vault / "Drafts/REPLY_EMAIL_d1.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Hi Dana,", "h0: shorter\nHi Dana,", 1), "utf-8")
    llm.queue(openai_answer(json.dumps({"reply_body": "Hi Dana,\n\nFriday.\n\nBest regards,\nAlex"})))
    sweep(capsys)
    assert len(llm.requests) == 2
    for seen in llm.requests:
        prompt = prompt_of(seen)
        assert "in the owner's time zone (Europe/Berlin)" in prompt
        assert any(f"Today is {day}" in prompt for day in days_now()), prompt[:300]


@pytest.mark.parametrize(
    ("sender", "subject", "body", "written", "greeting"),
    [
        (
            "Design Weekly <hello@designweekly.io>",
            "Call for speakers",
            "Hi Design,\n\nWould you like to speak at our spring meetup? Reply to this email to apply.",
            "Hi Design,\n\nYes, I would like to speak about design systems.\n\nBest regards,\nAlex",
            "Hello,",
        ),
        (
            "Amazon.de <versandbestaetigung@amazon.de>",
            "Ihre Bestellung",
            (
                "Guten Tag,\n\nIhre Bestellung ist unterwegs. Haben Sie Fragen zur Lieferung? Antworten Sie auf diese "
                "E-Mail.\n\nIhr Amazon.de-Team"
            ),
            "Hallo Amazon.de,\n\nwann kommt die Lieferung?\n\nViele Grüße\nAlex",
            "Guten Tag,",
        ),
    ],
)
def test_a_bulk_or_automated_sender_gets_no_personal_greeting(
    knowledge_vault: Path,
    llm: FakeLLM,
    capsys: pytest.CaptureFixture[str],
    sender: str,
    subject: str,
    body: str,
    written: str,
    greeting: str,
):
    """Given a newsletter signed by its brand and a shop whose display name is its domain, when the model drafts
    a reply greeting the brand as a person ("Hi Design,", "Hallo Amazon.de,"), then the prompt asked for a greeting
    without a name, and the draft opens with one in the email's language and register."""
    ask(knowledge_vault, "b1", sender, subject, body)
    llm.queue(decision(written))
    sweep(capsys)
    assert f"Greeting: {greeting}" in prompt_of(llm.requests[0])
    _fm, above, _below = draft(knowledge_vault, "REPLY_EMAIL_b1.md")
    assert above.strip().startswith(f"{greeting}\n")
    assert "Hi Design" not in above and "Hallo Amazon" not in above


JONAS = "Jonas Berg <jonas.berg@kranich.example>"
SIE = "Guten Tag Herr Hartmann,\n\nkönnen Sie mir bitte die Lieferzeit bestätigen? Vielen Dank.\n\nMit freundlichen Grüßen\nJonas Berg"


def test_a_german_email_in_sie_gets_sie_in_greeting_and_body_and_a_du_body_is_asked_for_again(
    knowledge_vault: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
):
    """Given Jonas writing formally ("können Sie"), no reply of the owner's to him, when the model's body says
    "du", then the prompt asked for "Sie", H0 asks once more for the body in "Sie", and the draft greets formally
    and says "Sie" throughout (one extra call, counted)."""
    ask(knowledge_vault, "s1", JONAS, "Lieferzeit", SIE)
    llm.queue(
        decision("Hallo Jonas,\n\nklar, ich bestätige dir die Lieferzeit: fünf Werktage. Passt das für dich?\n\nAlex"),
        openai_answer(json.dumps({"reply_body": "gern bestätige ich Ihnen die Lieferzeit: fünf Werktage."})),
    )
    sweep(capsys)
    assert "Address the reader as: Sie (formal)" in prompt_of(llm.requests[0])
    assert len(llm.requests) == 2 and "“Sie”" in llm.requests[1].last_text
    fm, above, _below = draft(knowledge_vault, "REPLY_EMAIL_s1.md")
    assert above.strip().startswith("Guten Tag Jonas Berg,")
    assert "Ihnen" in above and "dir" not in above.split() and "h0_flags" not in fm


def test_a_body_that_stays_in_du_under_a_sie_greeting_is_flagged_for_the_owner(
    knowledge_vault: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
):
    ask(knowledge_vault, "s2", JONAS, "Lieferzeit", SIE)
    du = "klar, ich bestätige dir die Lieferzeit. Passt das für dich?"
    llm.queue(decision(f"Hallo Jonas,\n\n{du}\n\nAlex"), openai_answer(json.dumps({"reply_body": du})))
    sweep(capsys)
    fm = frontmatter(knowledge_vault, "Drafts/REPLY_EMAIL_s2.md")
    assert any("“du”" in flag and "“Sie”" in flag for flag in fm["h0_flags"]), fm.get("h0_flags")


def test_the_owners_du_with_a_person_wins_over_their_formal_email(
    knowledge_vault: Path, llm: FakeLLM, capsys: pytest.CaptureFixture[str]
):
    """Given the owner's earlier replies to Jonas in "du", when Jonas writes formally, then the reply says "du"
    (the owner's way with him), greeting as the owner greets him."""
    import os

    owner = ("Alex Chen", "alex@northwind.example")
    MailHistory(StateDB.for_vault(knowledge_vault, Path(os.environ["H0_STATE_DIR"]))).commit(
        [
            HistoryMessage(
                key=f"<o{i}@northwind.example>",
                thread=f"T-{i}",
                outbound=True,
                sender=owner[1],
                recipients=(("Jonas Berg", "jonas.berg@kranich.example"),),
                subject="Druck",
                at=1_700_000_000.0 + i,
                text=f"Hallo Jonas,\n\nich schicke dir die Dateien morgen, du hast sie dann am Freitag. Nr. {i}\n\nAlex",
                provider_id=f"o{i}",
            )
            for i in range(2)
        ]
    )
    ask(knowledge_vault, "s3", JONAS, "Lieferzeit", SIE)
    llm.queue(decision("Hallo Jonas,\n\nich bestätige dir die Lieferzeit: fünf Werktage.\n\nAlex"))
    sweep(capsys)
    assert "Address the reader as: du (informal)" in prompt_of(llm.requests[0])
    assert len(llm.requests) == 1  # the body agrees: nothing asked again
    _fm, above, _below = draft(knowledge_vault, "REPLY_EMAIL_s3.md")
    assert above.strip().startswith("Hallo Jonas,") and "dir" in above
