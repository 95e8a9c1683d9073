"""Outlook mail in (issue 43): delta queries from a kept link, new mail → a note, never twice, never lost.

Against the fake Graph (tests/fakes/fake_graph.py) through H0's Graph client, signed in by msal against the
fake HTTPS authority; the real MailService, sync and ingest handler write into a real vault (the MCP hop is
left out here: tests/mail/test_outlook_stdio.py has it).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from h0.errors import InvalidRequest
from h0.handlers.context import HandlerContext
from h0.handlers.ingest import ingest_new_mail
from h0.mail import MailService
from h0.mail.api import LocalMail
from h0.mail.owner import Evidence, OwnerAuthority
from h0.mail.providers.outlook_query import SUPPORTED, parse_query
from h0.vault import AuditLog, Vault
from tests.fakes.fake_graph import FakeGraph

INGESTED = "H0/ingested"
DAY = 86400.0


@pytest.fixture
def service(outlook_settings) -> MailService:
    mail = MailService(outlook_settings)
    yield mail
    mail.close()


@pytest.fixture
def ctx(vault_dir: Path, service: MailService) -> HandlerContext:
    return HandlerContext.local(
        service.settings, Vault(vault_dir), mail=LocalMail(service), audit=AuditLog(vault_dir / "Logs", "h0")
    )


def email_notes(vault_dir: Path) -> list[str]:
    return sorted(p.name for p in vault_dir.rglob("EMAIL_*.md"))


def note_for(message_id: str) -> str:
    return "EMAIL_" + "".join(c if c.isalnum() or c in "_-" else "_" for c in message_id) + ".md"


def categories(graph: FakeGraph, message_id: str) -> list[str]:
    return list(graph.messages[message_id].props["categories"])


def delta_calls(graph: FakeGraph) -> int:
    return sum(1 for _, path in graph.requests if path.endswith("/messages/delta"))


def test_first_sync_catches_up_by_query_then_new_mail_comes_by_delta_link(ctx, graph, vault_dir, service):
    """Given two unread messages before H0's first run, when ingest runs, then both become notes and carry the
    ingested category; when a third arrives, the next pass finds it by the kept delta link, and a pass with
    nothing new is a delta call on each of the two folders."""
    first = [graph.add_message(subject=f"before {i}") for i in range(2)]
    report = ingest_new_mail(ctx)
    assert report.mode == "catch_up" and sorted(report.written) == sorted(f"Needs_Action/{note_for(m)}" for m in first)
    assert all(INGESTED in categories(graph, m) for m in first)
    third = graph.add_message(subject="after", sender="Dana <dana@example.com>")
    report = ingest_new_mail(ctx)
    assert report.mode == "history" and report.written == [f"Needs_Action/{note_for(third)}"]
    assert INGESTED in categories(graph, third)
    row = service.state.mail_sync(f"outlook:{graph.address}")
    assert row is not None and service.state.delta_link(f"outlook:{graph.address}/inbox", int(row["cursor"]))
    before, calls = len(graph.requests), delta_calls(graph)
    assert ingest_new_mail(ctx).written == []
    # Idle: one delta call on the Inbox and one on Sent Items (the owner's sent mail), nothing else.
    assert delta_calls(graph) == calls + 2 and len(graph.requests) - before == 2
    assert len(email_notes(vault_dir)) == 3


def test_an_expired_delta_link_is_a_full_resync_without_duplicates(ctx, graph, vault_dir):
    """Hostile: Graph forgets the sync state (410 syncStateNotFound). The sync catches up by query; the
    messages already ingested (their category) get no second note, the new ones get theirs."""
    old = [graph.add_message(subject=f"old {i}") for i in range(3)]
    ingest_new_mail(ctx)
    graph.expire_delta()
    new = [graph.add_message(subject=f"new {i}") for i in range(2)]
    report = ingest_new_mail(ctx)
    assert report.mode == "catch_up"
    assert sorted(report.written) == sorted(f"Needs_Action/{note_for(m)}" for m in new)
    assert email_notes(vault_dir) == sorted(note_for(m) for m in old + new)
    later = graph.add_message(subject="after the resync")
    assert ingest_new_mail(ctx).written == [f"Needs_Action/{note_for(later)}"]  # following deltas again


def test_a_429_storm_is_answered_pass_by_pass_and_nothing_is_lost(ctx, graph, vault_dir):
    """Hostile: every kind of call is throttled several times in a row (Retry-After). Each pass makes one
    attempt and ends with Graph's Retry-After said, never a wait inside the call; a later pass brings the
    messages, each a note exactly once."""
    ingest_new_mail(ctx)
    ids = [graph.add_message(subject=f"storm {i}") for i in range(3)]
    graph.fail_next(429, count=2, retry_after=0.05, path_contains="/messages/delta")
    graph.fail_next(429, count=2, retry_after=0.05, path_contains="/$batch")
    written: list[str] = []
    for _ in range(6):
        report = ingest_new_mail(ctx)
        written += report.written
        assert report.failed == 0
    assert sorted(written) == sorted(f"Needs_Action/{note_for(m)}" for m in ids)
    assert all(INGESTED in categories(graph, m) for m in ids)


def test_a_message_with_10000_recipients_is_read_in_a_moment_with_its_recipients_bounded(ctx, graph, service):
    """Hostile: To holds 10,000 addresses (in Graph's toRecipients and in the header). It is read, its To
    cut after a whole address, and it becomes a note like any other."""
    crowd = [f"person{i}@example.org" for i in range(10_000)]
    message = graph.add_message(subject="to everyone", to=crowd)
    started = time.monotonic()
    email = service.get_email(message)
    assert time.monotonic() - started < 30.0  # a guard against a quadratic read hanging the server, not a speed figure
    assert email.to.startswith("person0@example.org") and 100 < email.to.count("@") < 10_000
    report = ingest_new_mail(ctx)
    assert report.written == [f"Needs_Action/{note_for(message)}"] and report.failed == 0


def test_a_message_without_headers_is_built_from_graph_properties_with_10000_recipients_bounded(graph, service):
    crowd = [f"p{i}@example.org" for i in range(10_000)]
    message = graph.add_message(subject="no headers", to=crowd, with_headers=False)
    email = service.get_email(message)
    assert email.subject == "no headers" and email.rfc822_message_id and 100 < email.to.count("@") < 10_000


def test_an_html_only_body_becomes_text_and_hidden_markup_stays_out(graph, service):
    """Hostile: Graph gives only HTML (contentType html). The email's body is its text, script and hidden
    markup left out, and the format says where it came from."""
    message = graph.add_message(
        subject="html only",
        body=None,
        html='<html><body><p>Hello <b>Dana</b></p><script>alert(1)</script><div style="display:none">x</div></body></html>',
    )
    email = service.get_email(message)
    assert email.body_format == "html" and "Hello Dana" in email.body
    assert "<script>" not in email.body and "alert" not in email.body


def test_a_strangers_category_spelt_sent_or_inbox_is_not_a_label_of_h0s(graph, service):
    """Hostile: Exchange turns a `Keywords:` header into categories; a stranger's `SENT` must never read as
    the owner's sent mail."""
    message = graph.add_message(subject="keywords", categories=("SENT", "inbox", "CATEGORY_PERSONAL", "Blue"))
    assert service.get_email(message).labels == ["INBOX", "UNREAD", "Blue"]


def test_old_mail_of_a_first_sync_is_history_and_only_recent_mail_becomes_notes(ctx, graph, vault_dir):
    """History is knowledge, work is recent: of the unread inbox, mail older than WORK_WINDOW_DAYS is kept as
    history (and marked ingested, never fetched again); the recent becomes notes."""
    now = time.time()
    old = [graph.add_message(subject=f"old {i}", received_s=now - (60 + i) * DAY) for i in range(4)]
    recent = graph.add_message(subject="recent", received_s=now - 2 * DAY)
    report = ingest_new_mail(ctx)
    assert report.written == [f"Needs_Action/{note_for(recent)}"] and report.history == 4
    assert all(INGESTED in categories(graph, m) for m in old)
    assert ingest_new_mail(ctx).written == []


def test_sent_items_is_the_owners_sent_mail_and_a_forged_from_is_not(ctx, graph, service):
    """The owner's identity from Sent Items: a message the owner sent from Outlook (in Sent Items) is
    recorded as the owner's; a stranger's mail with the owner's From in the Inbox is not."""
    ingest_new_mail(ctx)
    mine = graph.add_message(
        sender=f"Me <{graph.address}>", to="dana@example.com", subject="from outlook", folder="sentitems", is_read=True
    )
    forged_id = "<forged@example.com>"
    graph.add_message(sender=f"Me <{graph.address}>", subject="forged", message_id=forged_id)
    report = ingest_new_mail(ctx)
    assert report.sent == 1
    owner = OwnerAuthority(service.state)
    mine_key = graph.messages[mine].props["internetMessageId"]
    assert owner.owned([mine_key, forged_id]) == {mine_key: Evidence.SENT_FOLDER}


def test_list_emails_maps_the_gmail_subset_and_refuses_the_rest(graph, service):
    graph.add_message(subject="lunch on friday", sender="Dana <dana@example.com>", categories=("Clients",))
    graph.add_message(subject="other", is_read=True)
    assert [e.subject for e in service.list_emails("from:dana@example.com is:unread", 10).emails] == ["lunch on friday"]
    assert [e.subject for e in service.list_emails("label:Clients", 10).emails] == ["lunch on friday"]
    assert [e.subject for e in service.list_emails("in:inbox -label:Clients", 10).emails] == ["other"]
    assert [e.subject for e in service.list_emails('subject:"on friday" newer_than:1d', 10).emails] == [
        "lunch on friday"
    ]
    for refused in ("from:dana OR to:bob", "category:primary", "-from:dana@example.com", "lunch is:unread"):
        with pytest.raises(Exception) as caught:
            service.list_emails(refused, 10)
        assert getattr(caught.value, "code", None) == "invalid_request", refused


def test_labels_are_categories_and_archive_is_the_archive_folder(graph, service):
    message = graph.add_message(subject="file me")
    added = service.add_label(message, "Clients")
    assert "Clients" in added.labels and categories(graph, message) == ["Clients"]
    moved = service.move_email(message, "Archive")
    assert graph.messages[message].folder == graph.well_known["archive"]
    assert "Archive" in moved.labels and categories(graph, message) == ["Clients"]  # a move is not a category
    back = service.move_email(message, "INBOX")
    assert "INBOX" in back.labels and graph.messages[message].folder == graph.well_known["inbox"]
    custom = service.move_email(message, "Receipts")
    assert graph.folders[graph.messages[message].folder]["displayName"] == "Receipts" and custom.labels


def test_given_a_term_graph_cannot_filter_then_the_refusal_names_it_and_what_outlook_understands():
    with pytest.raises(InvalidRequest) as refused:
        parse_query("cc:ann@example.com", now_s=0)
    assert (
        refused.value.message
        == f"The Outlook backend cannot search for 'cc:ann@example.com'. It understands: {SUPPORTED}."
    )
    assert refused.value.details == {"field": "query", "term": "cc:ann@example.com"}


@pytest.mark.parametrize("value", ["<m-1@h0.test>", "m-1@h0.test", '" <m-1@h0.test> "'])
def test_a_message_id_is_filtered_on_in_its_angle_brackets_however_it_was_given(value: str):
    assert parse_query(f"rfc822msgid:{value}", now_s=0).filters == ["internetMessageId eq '<m-1@h0.test>'"]
