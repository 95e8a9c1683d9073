"""The typed note model: one reading of what a note says, whatever the spelling, never an exception."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from h0.vault.draft_state import DraftState
from h0.vault.model import Kind, note_facts
from h0.vault.note import parse
from h0.vault.values import addresses, source_key


@pytest.mark.parametrize("word", ["rejected", "Rejected", " REJECTED ", "rejected\n"])
def test_given_any_spelling_of_rejected_then_the_status_is_rejected(word):
    facts = note_facts("Drafts/d.md", {"status": word})
    assert facts.rejected and facts.status.state is DraftState.REJECTED and not facts.status.sendable


@pytest.mark.parametrize(
    ("value", "state"),
    [
        (None, DraftState.AWAITS_SENDING),
        ("Pending_Approval", DraftState.AWAITS_SENDING),
        ("sent", DraftState.SENT),
        ("pending", DraftState.UNKNOWN),
        (["sent"], DraftState.UNKNOWN),
        ({"a": 1}, DraftState.UNKNOWN),
    ],
)
def test_given_a_status_value_then_its_state_is_decided_once(value, state):
    assert note_facts("Drafts/d.md", {"status": value}).status.state is state


@pytest.mark.parametrize("spelling", ["Email", " email ", "EMAIL"])
def test_given_a_type_in_any_case_then_the_kind_is_email(spelling):
    assert note_facts("Needs_Action/e.md", {"type": spelling}).kind is Kind.EMAIL


def test_given_recipients_with_display_names_then_the_real_addresses_are_read():
    facts = note_facts(
        "Drafts/d.md",
        {"to": '"ceo@bank.com" <evil@x.example>, Bo <b@y.org>', "cc": ["c@z.com", "Dee <d@z.com>"], "bcc": "e@z.com"},
    )
    assert (
        facts.to == ("evil@x.example", "b@y.org") and facts.cc == ("c@z.com", "d@z.com") and facts.bcc == ("e@z.com",)
    )
    assert facts.all_recipients == ("evil@x.example", "b@y.org", "c@z.com", "d@z.com", "e@z.com")


@pytest.mark.parametrize(
    "link",
    [
        "Needs_Action/EMAIL_1.md",
        "[[EMAIL_1]]",
        "[[Needs_Action/EMAIL_1|the email]]",
        "[[EMAIL_1#Body]]",
        "[[email_1.md]]",
    ],
)
def test_given_any_spelling_of_a_source_then_it_names_the_same_email(link):
    facts = note_facts("Drafts/d.md", {"source": link})
    assert facts.answers("Needs_Action/EMAIL_1.md") and source_key(link) == "email_1"


def test_given_an_unquoted_wikilink_read_by_yaml_as_a_nested_list_then_it_is_the_link():
    assert note_facts("Drafts/d.md", {"source": [["EMAIL_1"]]}).answers("Needs_Action/EMAIL_1.md")


@pytest.mark.parametrize("value", [None, "", "[[]]", 7, ["[[EMAIL_1]]"], [[7]], {"a": 1}])
def test_given_no_usable_source_then_it_answers_nothing(value):
    assert note_facts("Drafts/d.md", {"source": value}).source_key is None


@pytest.mark.parametrize(
    ("frontmatter", "private"),
    [
        ({"private": "YES"}, True),
        ({"Private": "on"}, True),
        ({"tags": ["work", "#private"]}, True),
        ({"private": "no"}, False),
        ({"private": 0}, False),
        ({}, False),
    ],
)
def test_given_private_spellings_then_privacy_is_read_once(frontmatter, private):
    assert note_facts("People/p.md", frontmatter).private is private


def test_given_a_bad_date_then_it_is_one_problem_and_the_rest_is_read():
    facts = note_facts("Needs_Action/e.md", {"received": "2026-13-45", "sent_at": "yesterday", "subject": "Hi"})
    assert facts.received is None and facts.sent_at is None and facts.subject == "Hi"
    assert len(facts.problems) == 2 and "received" in facts.problems[0]


def test_given_a_parsed_note_then_its_facts_are_built_once():
    note = parse(b"---\ntype: email\nfrom: Dana <DANA@example.com>\nthread_id: t1\n---\nhi\n", "Needs_Action/e.md")
    assert note.facts is note.facts and note.facts.sender == "dana@example.com" and note.facts.thread_id == "t1"


@pytest.mark.parametrize(
    "text", ["Dana <dana@example.com>", "me@example.com", '"a, b" <c@d.e>', "x@y.z, w@v.u", "Joë <jo@x.de>", "<a@b.c>"]
)
def test_given_common_address_shapes_then_the_fast_reading_agrees_with_the_parser(text):
    from email.utils import getaddresses

    expected = [(addr or name).strip() for name, addr in getaddresses([text]) if (addr or name).strip()]
    assert addresses(text) == expected


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40) | st.floats(allow_nan=True),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "type",
                "status",
                "to",
                "cc",
                "from",
                "source",
                "received",
                "private",
                "thread_id",
                "send_anyway",
                "subject",
                "tags",
            ]
        ),
        _VALUES,
    )
)
def test_given_hostile_frontmatter_then_the_model_never_raises(frontmatter):
    facts = note_facts("Drafts/d.md", frontmatter)
    assert isinstance(facts.to, tuple) and isinstance(facts.private, bool)


def test_given_triage_and_follow_up_words_in_any_case_then_they_are_read_trimmed_and_case_folded():
    facts = note_facts(
        "Needs_Action/e.md",
        {"decision": " Urgent ", "priority": "URGENT", "follow_up": "Reply_Owed", "drafted_by": " rules "},
    )
    assert (facts.decision, facts.priority, facts.follow_up, facts.drafted_by) == (
        "urgent",
        "urgent",
        "reply_owed",
        "rules",
    )


@pytest.mark.parametrize(
    ("frontmatter", "mail"),
    [
        ({"type": "Email"}, True),
        ({"type": "sent_email"}, True),
        ({"to": "a@x.com", "subject": "Hi"}, True),  # a reply draft, wherever it is kept
        ({"to": "a@x.com", "status": "pending_approval"}, True),
        ({"type": "email", "to": ""}, True),
        ({"to": "a@x.com"}, False),  # recipients alone: a note about someone
        ({"type": "project", "subject": "Atlas"}, False),
        ({}, False),
    ],
)
def test_given_a_note_then_whether_it_is_mail_is_one_answer_with_or_without_the_model(frontmatter, mail):
    from h0.vault.model import is_mail

    assert note_facts("Notes/n.md", frontmatter).is_mail is mail and is_mail(frontmatter) is mail


def test_given_a_reply_to_then_its_real_addresses_are_read_in_order():
    facts = note_facts("Needs_Action/e.md", {"reply_to": ["Desk <desk@x.org>", "b@y.org"], "from": "a@x.org"})
    assert facts.reply_to == ("desk@x.org", "b@y.org") and facts.sender == "a@x.org"
    assert note_facts("Needs_Action/e.md", {}).reply_to == ()
