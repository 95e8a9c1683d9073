"""The note model's readers: one flag, one date reader (a time without an offset is the owner's), one address
parser, and every part of a note's facts read from hostile values without raising."""

from __future__ import annotations

import datetime as dt
import time
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from h0.errors import InvalidRequest
from h0.triage.models import EmailInput
from h0.vault.dates import note_epoch
from h0.vault.model import note_facts
from h0.vault.note import Note
from h0.vault.person import person_facts
from h0.vault.profile_fields import profile_fields
from h0.vault.sendable import sendable
from h0.vault.values import flag, named_addresses

YES = ["true", "True", "yes", "YES", "y", "1", "on", " On ", True, 1]
NO = ["false", "no", "n", "0", "off", "maybe", "", None, False, 0, 2, ["true"], {"a": 1}]


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch):
    """The owner's machine is in New York (UTC-4 in May)."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield ZoneInfo("America/New_York")
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("value", YES)
def test_given_any_yes_then_every_yes_no_property_of_a_note_reads_yes(value):
    """Given `stale`, `send_anyway`, `meeting_request`, `has_attachments` and `private` written with any yes,
    When the note is read, Then each is yes: one flag reads them all (h0.vault.values.flag)."""
    fm = {k: value for k in ("stale", "send_anyway", "meeting_request", "has_attachments", "private")}
    facts = note_facts("Drafts/d.md", fm)
    assert flag(value) and facts.stale.stale and facts.send_anyway and facts.meeting_request and facts.private
    assert facts.email.has_attachments and EmailInput.from_note(facts, "").has_attachments


@pytest.mark.parametrize("value", NO)
def test_given_anything_else_then_every_yes_no_property_reads_no(value):
    fm = {k: value for k in ("stale", "send_anyway", "meeting_request", "has_attachments", "private")}
    facts = note_facts("Drafts/d.md", fm)
    assert not flag(value) and not facts.stale.stale and not facts.send_anyway and not facts.meeting_request
    assert not facts.private and not facts.email.has_attachments


def test_given_a_time_without_an_offset_then_it_is_the_owners_local_time(new_york):
    """Given dates written without an offset (a time, a date alone), When any of them is read (a received date,
    a snooze, a follow-up's date), Then it is that time in the owner's zone; with an offset it is that offset."""
    nine = dt.datetime(2026, 5, 12, 9, 0, tzinfo=new_york).timestamp()
    midnight = dt.datetime(2026, 5, 12, tzinfo=new_york).timestamp()
    facts = note_facts(
        "Needs_Action/a.md",
        {"received": "2026-05-12 09:00", "snooze_until": "2026-05-12", "reply_owed_since": "2026-05-12T09:00:00"},
    )
    assert facts.received == nine and facts.snooze.until == midnight
    assert facts.follow_up_marks.reply_owed_since == nine
    assert note_epoch("2026-05-12T13:00:00Z", "received") == nine  # 13:00 UTC is 09:00 in New York (EDT)
    assert note_epoch("2026-05-12 09:00", "received", tz=dt.UTC) == nine - 4 * 3600


def test_given_a_broken_date_then_it_is_a_typed_problem_saying_how_to_write_it():
    facts = note_facts("Needs_Action/a.md", {"snooze_until": "next week", "asked_at": "2026-02-30"})
    assert isinstance(facts.snooze.problem, InvalidRequest) and "2026-05-12" in facts.snooze.problem.message
    assert facts.follow_up_marks.asked_at is None and facts.follow_up_marks.date_problem is not None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Dana <dana@example.com>", [("Dana", "dana@example.com")]),
        (
            '"Rivera, Dana" <dana@example.com>, bo@example.org',
            [("Rivera, Dana", "dana@example.com"), ("", "bo@example.org")],
        ),
        (["Dana <dana@example.com>", "bo@example.org"], [("Dana", "dana@example.com"), ("", "bo@example.org")]),
        (None, []),
        ({"to": "a@x.com"}, []),
    ],
)
def test_given_recipients_in_any_shape_then_one_parser_reads_names_and_addresses(value, expected):
    """Given a recipients value as people write it (a name with a comma, a list, not text), When it is parsed,
    Then names and addresses come out in order, and the note model's recipients are the same addresses."""
    found = named_addresses(value)
    assert found == expected
    facts = note_facts("Drafts/d.md", {"to": value})
    assert list(facts.to) == [addr for _, addr in found]


def test_given_a_draft_then_its_strict_view_keeps_each_recipient_as_written_and_names_every_problem():
    """Given a draft whose `to` holds a quoted name with a comma and whose `cc` is a mapping, When its strict view
    is taken, Then the recipients are kept as written for the send path's parser, and the problem says how to fix
    it; the facts (source, send_anyway, drafted_at as an epoch) are the note model's, not a second reading."""
    note = Note(
        "Approved/r.md",
        {
            "to": '"Rivera, Dana" <dana@example.com>',
            "cc": {"a": "b@example.com"},
            "subject": "Re: plan",
            "source": "[[EMAIL_1]]",
            "send_anyway": "on",
            "drafted_at": "2026-05-12T09:00:00Z",
        },
        "Hi Dana,\n",
        "h",
    )
    view = sendable(note)
    assert view.to == ('"Rivera', 'Dana" <dana@example.com>')  # the key's canonical split, rejoined when parsed
    assert len(view.problems) == 1 and "`cc` must be an address" in view.problems[0]
    assert view.facts is note.facts and view.facts.send_anyway and view.facts.source == "Needs_Action/EMAIL_1.md"
    assert view.facts.drafted_at == dt.datetime(2026, 5, 12, 9, tzinfo=dt.UTC).timestamp()


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30) | st.floats(allow_nan=True),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_KEYS = [
    "to", "cc", "subject", "stale", "stale_since", "snooze_until", "snooze_woke_at", "awaiting", "awaiting_from",
    "draft", "h0_waiting", "h0_waiting_since", "h0_model_attempts", "h0_retry_at", "h0_error", "revisions", "h0",
    "h0_text_hash", "auth", "labels", "has_attachments", "attachment_names", "received", "aliases", "language",
    "timezone", "email", "company", "date", "working_hours", "meeting_minutes", "languages", "signature",
    "h0_rule_timeouts", "attachments", "reply_to_message_id", "confirm_domains", "machine", "host", "seen",
]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(_KEYS), _VALUES), st.text(max_size=40))
def test_given_hostile_values_then_no_part_of_a_note_raises(frontmatter, body):
    """Given any values under any of the keys the model reads, When every part of the note is asked, Then
    nothing raises: what cannot be read is absent, or a problem."""
    note = Note("Drafts/d.md", frontmatter, body, "h")
    facts = note.facts
    parts = (facts.stale, facts.follow_up_marks, facts.snooze, facts.model_wait, facts.returned, facts.triage)
    assert all(part is not None for part in (*parts, facts.revisions, facts.email, facts.rule_timeouts))
    claim = facts.sending_claim
    assert isinstance(claim.machine, str) and claim.machine == claim.machine.strip() and len(claim.host) <= 64
    assert isinstance(sendable(note).problems, tuple) and isinstance(facts.addressed, tuple)
    assert isinstance(person_facts(frontmatter).addresses, tuple)
    assert isinstance(profile_fields(frontmatter).working_hours, str)
    assert EmailInput.from_note(facts, body).body == body


@pytest.mark.parametrize(
    ("frontmatter", "machine", "host", "seen"),
    [
        (
            {"machine": " 9f2c ", "host": "Mara's Mac", "seen": "2026-11-28T10:00:00Z"},
            "9f2c",
            "Mara's Mac",
            1795860000.0,
        ),
        ({"machine": 1234, "host": "pi"}, "1234", "pi", None),  # YAML read the id as a number: still the id
        ({"machine": ["9f2c"], "host": {"a": 1}, "seen": "yesterday"}, "", "", None),  # no computer: nobody's claim
        # One line, bounded; a direction mark stays (h0.printable removes it where a name is shown).
        ({"machine": True, "host": "x\u202e\n" + "y" * 100, "seen": 0}, "", "x\u202e " + "y" * 61, None),
        ({}, "", "", None),
    ],
)
def test_given_a_sending_claim_then_the_model_reads_which_computer_it_names(frontmatter, machine, host, seen):
    """Given what the claim note Logs/H0_Sender.md may say, When the model reads it, Then it names one computer
    by a clean identifier or none (h0.vault.sending_computer then holds sending everywhere: fail closed), its
    name as one bounded line, and when it last said it sends as an epoch or None."""
    claim = note_facts("Logs/H0_Sender.md", frontmatter).sending_claim
    assert (claim.machine, claim.host, claim.seen) == (machine, host, seen)
