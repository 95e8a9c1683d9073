"""The triage data contract: given what a note or a model provides, then only well-formed
emails and the five decisions (with bounded text) get through."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from h0.triage import EmailInput, TriageDecision
from h0.triage.prompt import MAX_BODY_CHARS, AnswerInvalid, email_message, parse_answer
from h0.vault.model import note_facts


def test_given_an_ingested_note_then_every_field_is_read() -> None:
    frontmatter = {
        "type": "email",
        "status": "pending",
        "message_id": "18c2f",
        "from": "Dana Rivera <Dana.Rivera@Example.com>",
        "to": "you@example.com",
        "cc": ["a@example.com", "b@example.com"],
        "subject": "Hi",
        "received": "2026-11-20T09:14:00Z",
        "labels": ["INBOX", "UNREAD"],
        "has_attachments": True,
        "attachment_names": ["plan.pdf"],
    }
    email = EmailInput.from_note(note_facts("Needs_Action/a.md", frontmatter), "Body text")

    assert email.sender == "Dana Rivera <Dana.Rivera@Example.com>"
    assert (email.sender_name, email.sender_address, email.sender_domain) == (
        "Dana Rivera",
        "dana.rivera@example.com",
        "example.com",
    )
    assert email.to == ["you@example.com"] and email.cc == ["a@example.com", "b@example.com"]
    assert (email.subject, email.body, email.message_id) == ("Hi", "Body text", "18c2f")
    assert email.has_attachments and email.attachment_names == ["plan.pdf"]


def test_given_a_hand_written_note_with_odd_values_then_they_are_coerced_not_refused() -> None:
    email = EmailInput.from_note(
        note_facts(
            "Needs_Action/b.md",
            {
                "subject": 2024,
                "cc": None,
                "labels": "INBOX",
                "has_attachments": "false",
                "attachment_names": ["a.pdf"],
                "message_id": 123,
                "received": None,
            },
        ),
        "",
    )
    assert email.subject == "2024" and email.cc == [] and email.labels == ["INBOX"]
    assert email.has_attachments is True  # it names an attachment
    assert email.message_id == "123" and email.received is None
    assert (email.sender, email.sender_address, email.sender_domain) == ("", "", "")


def test_given_odd_values_given_directly_then_each_field_reads_them_as_its_kind() -> None:
    email = EmailInput.model_validate(
        {
            "from": None,
            "to": "a@example.com",
            "cc": ["b@example.com", None, ""],
            "body": ["one", "two"],
            "received": "",
            "message_id": 7,
            "has_attachments": "yes",
            "conversation": [{"sender": None, "date": 2024, "text": ["hi", None]}],
        }
    )
    assert (email.sender, email.to, email.cc, email.body) == ("", ["a@example.com"], ["b@example.com"], "one, two")
    assert email.received is None and email.message_id == "7" and email.has_attachments is True
    earlier = email.conversation[0]
    assert (earlier.sender, earlier.date, earlier.text) == ("", "2024", "hi")


def test_given_model_style_decisions_then_they_normalise_to_the_five() -> None:
    decision = TriageDecision.model_validate(
        {
            "decision": "Needs-Info",
            "confidence": "0.4",
            "reasoning": "line one\nline two\r\n  three",
            "reply_body": "stray",
            "delegate_to": "stray",
            "unknown": "ignored",
        }
    )
    assert decision.decision == "needs_info" and decision.confidence == 0.4
    assert decision.reasoning == "line one line two three"
    assert decision.reply_body is None and decision.delegate_to is None


@pytest.mark.parametrize(
    "data",
    [
        {"decision": "send_email", "confidence": 0.5, "reasoning": "x"},
        {"decision": "archive", "confidence": 1.5, "reasoning": "x"},
        {"decision": "archive", "confidence": 0.5, "reasoning": " \n "},
        {"decision": "draft_reply", "confidence": 0.5, "reasoning": "x"},
        {"decision": "urgent", "confidence": 0.5, "reasoning": "x", "reply_body": "   "},
        {"decision": "delegate", "confidence": 0.5, "reasoning": "x"},
    ],
)
def test_given_an_incomplete_or_foreign_decision_then_it_is_refused(data: dict) -> None:
    with pytest.raises(ValidationError):
        TriageDecision.model_validate(data)


def test_given_long_text_then_it_is_bounded() -> None:
    decision = TriageDecision(
        decision="draft_reply", confidence=1, reasoning="word " * 200, reply_body="x\x00y\x1b" + "z" * 30_000
    )
    assert len(decision.reasoning) <= 300 and decision.reasoning.endswith("…")
    assert (
        decision.reply_body is not None and decision.reply_body.startswith("xyz") and len(decision.reply_body) < 20_100
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"decision": "archive", "confidence": 0.9, "reasoning": "bulk"}',
        '```json\n{"decision": "archive", "confidence": 0.9, "reasoning": "bulk"}\n```',
        'Here you go: {"decision": "archive", "confidence": 0.9, "reasoning": "bulk"} Hope it helps.',
    ],
)
def test_given_a_json_answer_in_common_wrappings_then_it_parses(text: str) -> None:
    assert parse_answer(text).decision == "archive"


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("", "empty"),
        ("I would archive it.", "not JSON"),
        ('["archive"]', "JSON object"),
        ("{decision: x}", "not valid"),
    ],
)
def test_given_a_non_answer_then_the_complaint_says_what_is_wrong(text: str, complaint: str) -> None:
    with pytest.raises(AnswerInvalid, match=complaint):
        parse_answer(text)


def test_given_a_huge_email_then_the_prompt_carries_a_bounded_body_inside_its_tags() -> None:
    email = EmailInput(sender="a@example.com", subject="", body="x" * (MAX_BODY_CHARS + 5000))
    message = email_message(email, "abc123")
    assert "Subject: (no subject)" in message
    assert message.count("x") < MAX_BODY_CHARS + 100 and "5000 more characters cut by H0" in message
    assert message.index("<email-abc123>") < message.index("xxxx") < message.index("</email-abc123>")
