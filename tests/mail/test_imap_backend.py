"""The IMAP backend against real IMAP servers (pymap, and Dovecot when it is installed; maildir, on loopback)
and a real SMTP relay (aiosmtpd). Each test taking `imap` runs once per server (tests.mail.imap_fixtures).

Ingest runs the real path — MailService (sync, cursor in the state database) under
`ingest_new_mail` — so what is checked is what lands in Needs_Action/ and what the server keeps.
"""

# ruff: noqa: F811 — the IMAP fixtures are imported from tests.mail.imap_fixtures, then named as parameters
from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from h0.errors import InvalidRequest, NotFound, SendFailed
from h0.handlers.ingest import ingest_new_mail
from h0.mail import MailService
from h0.mail.api import LocalMail
from h0.mail.models import DirectSend
from h0.mail.providers.imap_connection import ImapConnection
from h0.mail.providers.imap_idle import IdleWatcher
from h0.mail.providers.imap_query import SUPPORTED, parse_query
from h0.mail.providers.imap_send import SentCopy
from h0.mail.providers.imap_wire import keyword
from h0.mcp.mail_server import SERVER_NAME
from h0.retry import Backoff
from h0.state import StateDB
from h0.vault import Vault
from tests.fakes.imap_server import FaultyLink, PymapServer
from tests.mail.imap_fixtures import (  # noqa: F401
    SERVERS,
    imap,
    imap_server,
    imap_settings,
    raw_message,
    relay,
    sent_of,
    smtp_box,
    start_server,
    stop_server,
)
from tests.security.conftest import handler_context
from tests.security.test_header_injection import HOSTILE_SUBJECTS
from tests.security.test_untrusted_mail import PLAIN_BODIES, fenced

WAIT_S = 15.0  # generous: a missed wake-up fails the test, a slow machine does not


@pytest.fixture
def service(vault_dir: Path, imap: PymapServer, relay):
    mail = MailService(imap_settings(vault_dir, imap, relay[0]), trusted_caller=True)
    yield mail
    mail.close()


def ingest(vault_dir: Path, service: MailService):
    return ingest_new_mail(handler_context(vault_dir, LocalMail(service)))


def until(condition, timeout: float = WAIT_S) -> None:
    """Wait for `condition` (polled); fail if it never holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)


def notes(vault_dir: Path) -> list[str]:
    return sorted(p.name for p in (vault_dir / "Needs_Action").glob("EMAIL_*.md"))


# -- ingest ---------------------------------------------------------------------------------------


def test_given_new_mail_in_inbox_when_ingested_then_one_note_each_and_the_keyword_marks_them(vault_dir, imap, service):
    """Given three messages in INBOX, When ingest runs twice, Then three notes exist, each message carries the
    H0-ingested keyword, the second pass writes nothing, and a fourth message is picked up from the UID cursor."""
    uids = [imap.deliver(raw_message(f"Message {i}", f"Body {i}")) for i in range(3)]
    first = ingest(vault_dir, service)
    assert len(first.written) == 3 and first.failed == 0
    assert all("H0-ingested" in imap.flags(uid) for uid in uids)
    assert all("\\Seen" not in imap.flags(uid) for uid in uids)  # nothing is marked read
    assert ingest(vault_dir, service).written == []
    later = imap.deliver(raw_message("Later", "Arrived after"))
    third = ingest(vault_dir, service)
    assert third.mode == "history" and len(third.written) == 1
    note = Vault(vault_dir).read_note(third.written[0])
    assert note.frontmatter["subject"] == "Later" and note.frontmatter["from"] == "Ann <ann@example.org>"
    assert "INBOX" in note.frontmatter["labels"] and "UNREAD" in note.frontmatter["labels"]
    assert fenced(note.body)[0] == "Arrived after"
    assert "H0-ingested" in imap.flags(later)


def test_given_a_message_already_marked_ingested_then_no_note_is_written(vault_dir, imap, service):
    """The keyword on the server is the truth: a fresh state database (lost cursor) writes nothing twice."""
    imap.deliver(raw_message("Done before"), flags=["H0-ingested"])
    imap.deliver(raw_message("New"))
    report = ingest(vault_dir, service)
    assert [Vault(vault_dir).read_note(p).frontmatter["subject"] for p in report.written] == ["New"]


@pytest.mark.parametrize("kind", SERVERS)
def test_given_the_server_renumbers_inbox_then_ingest_catches_up_without_duplicates(vault_dir, tmp_path, relay, kind):
    """Given two ingested messages, When the server loses its UID list (new UIDVALIDITY, every UID reassigned)
    and one more message arrives, Then the next pass notices the cursor is from another UIDVALIDITY, catches up
    by query, and writes exactly one note: the new message."""
    server = start_server(kind, tmp_path / "own")
    try:
        mail = MailService(imap_settings(vault_dir, server, relay[0]), trusted_caller=True)
        for i in range(2):
            server.deliver(raw_message(f"Old {i}"))
        assert len(ingest(vault_dir, mail).written) == 2
        assert ingest(vault_dir, mail).mode == "history"
        mail.close()
        server.renumber()
        server.deliver(raw_message("After the renumbering"))
        mail = MailService(imap_settings(vault_dir, server, relay[0]), trusted_caller=True)
        report = ingest(vault_dir, mail)
        assert report.mode == "catch_up" and report.failed == 0
        assert [Vault(vault_dir).read_note(p).frontmatter["subject"] for p in report.written] == [
            "After the renumbering"
        ]
        assert len(notes(vault_dir)) == 3
        assert ingest(vault_dir, mail).written == []
        mail.close()
    finally:
        stop_server(server)


ODD_RAW = {
    "no message-id, no date": b"From: x@example.org\r\nSubject: bare\r\n\r\nbare body\r\n",
    "unknown charset": b"From: x@example.org\r\nSubject: charset\r\nContent-Type: text/plain; charset=x-klingon\r\n\r\nq\xfcx\r\n",
    "8-bit header": "From: Jos\u00e9 <jose@example.org>\r\nSubject: Caf\u00e9 \u2615\r\n\r\nol\u00e9\r\n".encode(),
    "broken multipart": (
        b"From: x@example.org\r\nSubject: broken\r\nContent-Type: multipart/mixed; boundary=zzz\r\n\r\n"
        b"--zzz\r\nContent-Type: text/plain\r\n\r\npart one\r\n--zz"
    ),
    "empty body": b"From: x@example.org\r\nSubject: empty\r\n\r\n",
    "header without value": b"From: x@example.org\r\nSubject:\r\nX-Weird:\r\n\tfolded\r\n\r\nbody\r\n",
}


def test_given_the_hostile_corpus_when_ingested_then_every_message_is_an_inert_note(vault_dir, imap, service):
    """The bodies and subjects the Gmail tests use, plus malformed mail: each becomes a note, the plain bodies
    word for word inside one fenced block, no subject holds a control character, nothing fails."""
    for case, text in PLAIN_BODIES.items():
        imap.deliver(raw_message(f"body: {case}", text))
    for subject in HOSTILE_SUBJECTS:
        imap.deliver(b"From: m@example.net\r\nSubject: " + subject.encode() + b"\r\n\r\nhi\r\n")
    for raw in ODD_RAW.values():
        imap.deliver(raw)
    report = ingest(vault_dir, service)
    assert report.failed == 0 and report.skipped == 0
    assert len(report.written) == len(PLAIN_BODIES) + len(HOSTILE_SUBJECTS) + len(ODD_RAW)
    vault = Vault(vault_dir)
    by_subject = {}
    for path in report.written:
        note = vault.read_note(path)
        subject = note.frontmatter["subject"]
        assert not any(ord(c) < 32 or c in "\u2028\u2029" for c in subject), subject
        by_subject[subject] = note
    for case, text in PLAIN_BODIES.items():
        inside, after = fenced(by_subject[f"body: {case}"].body)
        assert after.strip() == ""
        assert "h0: not sent below" not in inside or case == "cut-off marker"
        if case != "cut-off marker":
            assert inside == text.replace("\r\n", "\n")
    assert fenced(by_subject["Café ☕"].body)[0] == "olé"
    assert fenced(by_subject["broken"].body)[0].startswith("part one")  # read as far as it goes


# -- IDLE -----------------------------------------------------------------------------------------


def test_given_an_idle_watcher_when_mail_arrives_then_it_wakes_ingest(vault_dir, imap, service):
    """Given the watcher idling on INBOX, When a message is delivered, Then the callback runs and the ingest it
    triggers writes the note."""
    woken = threading.Event()
    watcher = IdleWatcher(service.settings, woken.set).start()
    try:
        assert watcher.idling.wait(WAIT_S) and watcher.running
        woken.clear()  # the wake-up every new session makes
        imap.deliver(raw_message("Pushed"))
        assert woken.wait(WAIT_S), "IDLE did not report the new message"
        assert [Vault(vault_dir).read_note(p).frontmatter["subject"] for p in ingest(vault_dir, service).written] == [
            "Pushed"
        ]
    finally:
        watcher.stop()
    assert not watcher.running


def test_given_h0_watch_on_imap_when_mail_arrives_then_idle_not_the_poll_brings_the_note(vault_dir, imap):
    """Given the daemon with MAIL_BACKEND=imap and an hour-long poll, When a message is delivered, Then its
    note appears (only the daemon's IDLE watcher can have asked), and stop() closes the watcher."""
    from h0.pipeline.daemon import Daemon

    settings = imap_settings(vault_dir, imap, gmail_poll_seconds=3600.0)
    daemon = Daemon(settings, workers=1, ingest=True)
    daemon.start(watch=False, sweep=False)
    stop = threading.Event()
    loop = threading.Thread(target=daemon.run, args=(stop,), daemon=True)
    loop.start()
    try:
        watcher = daemon.idle
        assert watcher is not None and watcher.idling.wait(WAIT_S)
        until(lambda: daemon.last_ingest is not None)  # the first pass (catch-up) is over
        imap.deliver(raw_message("Via IDLE"))
        until(lambda: len(notes(vault_dir)) == 1)
        assert Vault(vault_dir).read_note(f"Needs_Action/{notes(vault_dir)[0]}").frontmatter["subject"] == "Via IDLE"
    finally:
        stop.set()
        loop.join(5)
        daemon.stop()
    assert daemon.idle is None and not watcher.running


@pytest.mark.parametrize("imap_server", ["pymap"], indirect=True)  # the daemon's own setting: one server is enough
def test_given_imap_idle_off_then_the_daemon_holds_no_idle_connection(vault_dir, imap):
    from h0.pipeline.daemon import Daemon

    daemon = Daemon(imap_settings(vault_dir, imap, imap_idle=False), workers=1, ingest=True)
    daemon.start(watch=False, sweep=False)
    try:
        assert daemon.idle is None
    finally:
        daemon.stop()


def test_given_the_connection_drops_during_idle_then_the_watcher_reconnects_and_still_wakes(vault_dir, imap):
    """Given the watcher idling through a link that then drops every connection, When mail arrives after,
    Then the watcher has reconnected (a second session, after backoff) and the new mail still wakes it."""
    link = FaultyLink(imap.host, imap.port)
    woken = threading.Event()
    settings = imap_settings(vault_dir, imap, imap_port=link.port)
    watcher = IdleWatcher(settings, woken.set, backoff=Backoff(0.05, cap=0.2)).start()
    try:
        assert watcher.idling.wait(WAIT_S)
        link.cut()
        until(lambda: watcher.connects >= 2 and watcher.idling.is_set())
        woken.clear()
        imap.deliver(raw_message("After the drop"))
        assert woken.wait(WAIT_S)
    finally:
        watcher.stop()
        link.close()


# Dovecot's restart is the case to see (its BYE to IDLE sessions); pymap's plain close is FaultyLink's test above.
@pytest.mark.parametrize("imap_server", ["dovecot"], indirect=True)
def test_given_the_server_restarts_during_idle_then_the_watcher_reconnects_and_still_wakes(vault_dir, imap):
    """Given the watcher idling, When the server restarts (Dovecot says BYE to its IDLE sessions, then refuses
    connections for a moment), Then the watcher reconnects once the server is back and new mail still wakes it."""
    woken = threading.Event()
    watcher = IdleWatcher(imap_settings(vault_dir, imap), woken.set, backoff=Backoff(0.05, cap=0.2)).start()
    try:
        assert watcher.idling.wait(WAIT_S)
        imap.restart()
        until(lambda: watcher.connects >= 2 and watcher.idling.is_set())
        woken.clear()
        imap.deliver(raw_message("After the restart"))
        assert woken.wait(WAIT_S)
    finally:
        watcher.stop()


def _scripted_imap_server(listener: socket.socket) -> None:
    """One IMAP session whose first IDLE answer carries news in the same write as its "+ idling" — what
    Dovecot sends when mail arrived between a DONE and the next IDLE."""
    conn, _ = listener.accept()
    with conn, conn.makefile("rb") as lines:
        conn.sendall(b"* OK [CAPABILITY IMAP4rev1 IDLE] scripted\r\n")
        idles, idle_tag = 0, b""
        for line in lines:
            tag, _, rest = line.strip().partition(b" ")
            command = rest.split(b" ")[0].upper()
            if tag.upper() == b"DONE":
                conn.sendall(idle_tag + b" OK Idle completed\r\n")
            elif command == b"IDLE":
                idles, idle_tag = idles + 1, tag
                conn.sendall(b"+ idling\r\n" + (b"* 2 EXISTS\r\n* 1 RECENT\r\n" if idles == 1 else b""))
            elif command in (b"EXAMINE", b"SELECT"):
                conn.sendall(
                    b"* 1 EXISTS\r\n* 0 RECENT\r\n* OK [UIDVALIDITY 7] ok\r\n* OK [UIDNEXT 2] ok\r\n"
                    + tag
                    + b" OK [READ-ONLY] done\r\n"
                )
            elif command == b"CAPABILITY":
                conn.sendall(b"* CAPABILITY IMAP4rev1 IDLE\r\n" + tag + b" OK done\r\n")
            elif command == b"LOGOUT":
                conn.sendall(b"* BYE bye\r\n" + tag + b" OK done\r\n")
                return
            else:
                conn.sendall(tag + b" OK [CAPABILITY IMAP4rev1 IDLE] done\r\n")


def test_given_news_in_the_same_packet_as_the_idle_continuation_then_the_watcher_still_wakes():
    """Given a server whose "+ idling" arrives together with "* 2 EXISTS" (read into the client's buffer by the
    IDLE command, where a poll() of the socket cannot see it), Then the watcher still calls back for it, with
    nothing more arriving on the socket. (Found against Dovecot: such mail waited for the next packet.)"""
    from imapclient import IMAPClient

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    threading.Thread(target=_scripted_imap_server, args=(listener,), daemon=True).start()

    def connect() -> IMAPClient:
        client = IMAPClient("127.0.0.1", port, ssl=False, timeout=5)
        client.login("h0", "secret")
        return client

    woken = threading.Semaphore(0)
    watcher = IdleWatcher(None, woken.release, connect_to=connect).start()  # type: ignore[arg-type]
    try:
        assert woken.acquire(timeout=WAIT_S)  # the wake-up every new session makes
        assert woken.acquire(timeout=WAIT_S), "the EXISTS behind '+ idling' was never seen"
        until(lambda: watcher.idling.is_set())  # and IDLE is open again on the same connection
        assert watcher.connects == 1
    finally:
        watcher.stop()
        listener.close()


def test_given_idle_is_due_for_renewal_then_it_is_renewed_on_the_same_connection(vault_dir, imap):
    """Servers end an IDLE after ~29 minutes: the watcher ends and reopens it well before (here: at once)."""
    woken = threading.Event()
    watcher = IdleWatcher(imap_settings(vault_dir, imap), woken.set, renew_s=0.2).start()
    try:
        assert watcher.idling.wait(WAIT_S)
        until(lambda: watcher.renewals >= 3)
        watcher.renew_s = 600  # pymap looks for new mail once a second in an IDLE: let one last
        until(lambda: watcher.idling.is_set())
        woken.clear()
        imap.deliver(raw_message("After renewals"))
        assert woken.wait(WAIT_S)
        assert watcher.connects == 1
    finally:
        watcher.stop()


# -- sending --------------------------------------------------------------------------------------


def test_given_a_send_then_smtp_gets_it_once_and_sent_holds_a_settled_copy(vault_dir, imap, service, smtp_box):
    incoming = imap.deliver(raw_message("Question", message_id="<q1@example.org>"))
    original = service.backend.message_ids("subject:Question", 1)[0]
    assert original.endswith(f"-{incoming}")
    request = DirectSend(
        to="ann@example.org",
        subject="Re: Question",
        body="Yes.",
        reply_to_message_id=original,
        idempotency_key="k-reply",
    )
    result = service.send_email(request)
    assert len(smtp_box.received) == 1
    wire = smtp_box.received[0].content.decode()
    assert "In-Reply-To: <q1@example.org>" in wire and "References: <q1@example.org>" in wire
    (copy,) = imap.messages(sent_of(imap))
    assert result.rfc822_message_id.encode() in copy
    (uid,) = imap.uids(sent_of(imap))
    assert "\\Draft" not in imap.flags(uid, sent_of(imap)) and "\\Seen" in imap.flags(uid, sent_of(imap))
    found = service.backend.find_sent(result.rfc822_message_id)
    assert found is not None and found.thread_id == "<q1@example.org>"
    again = service.send_email(request)  # the same request again: the ledger answers, SMTP is not asked
    assert again.already_sent is True and len(smtp_box.received) == 1


class Crash(BaseException):
    """The process dies here (not an error anything catches)."""


def test_given_a_crash_after_smtp_accepted_before_the_copy_was_settled_then_nothing_is_sent_again(
    vault_dir, imap, relay, smtp_box, monkeypatch
):
    """Given SMTP accepted the message and H0 died before marking the Sent copy done, When the same send is tried
    again (a new process), Then it is refused with outcome unknown and the relay still has one message."""
    settings = imap_settings(vault_dir, imap, relay[0])
    first = MailService(settings)

    def die(*args, **kwargs):
        raise Crash

    monkeypatch.setattr(SentCopy, "mark_sent", die)
    with pytest.raises(Crash):
        first.send_email(
            DirectSend(to="bob@example.org", subject="Invoice", body="Attached.", idempotency_key="k-crash")
        )
    monkeypatch.undo()
    assert len(smtp_box.received) == 1
    second = MailService(settings)
    with pytest.raises(SendFailed) as refused:
        second.send_email(
            DirectSend(to="bob@example.org", subject="Invoice", body="Attached.", idempotency_key="k-crash")
        )
    assert refused.value.details["outcome"] == "unknown"
    assert len(smtp_box.received) == 1
    first.close()
    second.close()


def test_given_a_crash_after_the_send_was_complete_then_the_sent_search_recovers_it(
    vault_dir, imap, relay, smtp_box, monkeypatch
):
    """Given the send and its Sent copy completed but H0 died before recording it, When tried again, Then the
    Sent folder answers "sent" (already_sent) and SMTP is not used again."""
    settings = imap_settings(vault_dir, imap, relay[0])
    first = MailService(settings)

    def die(*args, **kwargs):
        raise Crash

    monkeypatch.setattr(StateDB, "mark_sent", die)  # the process dies as it records the completed send
    with pytest.raises(Crash):
        first.send_email(DirectSend(to="bob@example.org", subject="Report", body="Here.", idempotency_key="k-done"))
    monkeypatch.undo()
    second = MailService(settings)
    result = second.send_email(
        DirectSend(to="bob@example.org", subject="Report", body="Here.", idempotency_key="k-done")
    )
    assert result.already_sent is True and len(smtp_box.received) == 1
    first.close()
    second.close()


def test_given_a_crash_before_the_copy_reached_sent_then_the_retry_sends_once(
    vault_dir, imap, relay, smtp_box, monkeypatch
):
    settings = imap_settings(vault_dir, imap, relay[0])
    first = MailService(settings)

    def die(*args, **kwargs):
        raise Crash

    monkeypatch.setattr(ImapConnection, "run", die)  # the first IMAP call dies with the process
    with pytest.raises(Crash):
        first.send_email(DirectSend(to="bob@example.org", subject="Plan", body="B.", idempotency_key="k-early"))
    monkeypatch.undo()
    assert smtp_box.received == [] and imap.uids(sent_of(imap)) == []
    second = MailService(settings)
    result = second.send_email(DirectSend(to="bob@example.org", subject="Plan", body="B.", idempotency_key="k-early"))
    assert result.already_sent is False and len(smtp_box.received) == 1 and len(imap.uids(sent_of(imap))) == 1
    first.close()
    second.close()


def test_given_smtp_refuses_the_recipient_then_the_sent_copy_is_removed(vault_dir, imap, service, smtp_box):
    with pytest.raises(SendFailed) as refused:
        service.send_email(DirectSend(to="nobody@example.org", subject="Hi", body="x", idempotency_key="k-refused"))
    assert refused.value.details["outcome"] == "not_sent" and smtp_box.received == []
    assert imap.uids(sent_of(imap)) == []


# -- the mail tools -------------------------------------------------------------------------------


def test_given_mail_when_listed_with_gmail_syntax_then_the_imap_search_matches(vault_dir, imap, service):
    imap.deliver(raw_message("Invoice 42", "Please pay", sender="Billing <billing@acme.example>"))
    imap.deliver(raw_message("Lunch", "Friday?", sender="Bob <bob@example.org>"), flags=["\\Seen", "Clients"])
    imap.deliver(raw_message("Old news", "pineapple"), flags=["\\Seen"])

    def subjects(query: str) -> list[str]:
        return sorted(e.subject for e in service.list_emails(query, 10).emails)

    assert subjects("from:acme.example") == ["Invoice 42"]
    assert subjects("is:unread") == ["Invoice 42"]
    assert subjects("-is:unread") == ["Lunch", "Old news"]
    assert subjects('subject:"Invoice 42"') == ["Invoice 42"]
    assert subjects("label:Clients") == ["Lunch"]
    assert subjects("pineapple in:inbox") == ["Old news"]
    assert subjects("newer_than:1d") == ["Invoice 42", "Lunch", "Old news"]
    assert subjects("after:2000/01/01 -label:Clients") == ["Invoice 42", "Old news"]
    assert subjects("in:sent") == []
    listed = service.list_emails("from:bob@example.org", 10).emails[0]
    assert {"INBOX", "Clients"} <= set(listed.labels) and "UNREAD" not in listed.labels
    assert listed.snippet == "Friday?"


@pytest.mark.parametrize(
    "query",
    [
        "from:a OR from:b",
        "{from:a from:b}",
        "has:attachment",
        "in:anywhere",
        "category:social",
        "larger:5M",
        "newer_than:soon",
        'subject:"open',
        "in:a in:b",
    ],
)
def test_given_a_query_outside_the_subset_then_a_typed_invalid_request(query):
    with pytest.raises(InvalidRequest) as refused:
        parse_query(query, now_s=1_800_000_000)
    assert refused.value.details["field"] == "query"


def test_given_a_term_outside_the_subset_then_the_refusal_names_it_and_what_imap_understands():
    with pytest.raises(InvalidRequest) as refused:
        parse_query("in:a in:b", now_s=0)
    assert refused.value.message.startswith("The IMAP backend cannot search for 'in:b' (one folder at a time).")
    assert refused.value.message.endswith(f"It understands: {SUPPORTED}.") and refused.value.details["term"] == "in:b"


def test_given_gmail_terms_then_the_imap_criteria_are_the_documented_ones():
    q = parse_query('from:ann -subject:"big sale" is:unread label:H0/ingested in:Archive words', now_s=0)
    assert q.folder == "Archive"
    assert q.criteria == [
        "FROM",
        "ann",
        "NOT",
        "SUBJECT",
        "big sale",
        "UNSEEN",
        "KEYWORD",
        "H0-ingested",
        "TEXT",
        "words",
    ]
    assert keyword("H0/ingested") == "H0-ingested" and keyword("a b(c)") == "a-b-c"


def test_given_a_message_when_labelled_and_moved_then_keywords_and_folders_change_on_the_server(
    vault_dir, imap, service
):
    uid = imap.deliver(raw_message("File me"))
    (msg_id,) = service.backend.message_ids("subject:File", 1)
    labelled = service.add_label(msg_id, "Clients")
    assert "Clients" in labelled.labels and "Clients" in imap.flags(uid)
    email = service.get_email(msg_id)
    assert email.subject == "File me" and "Clients" in email.labels
    moved = service.move_email(msg_id, "Archive")
    assert moved.labels == ["Archive"]
    assert imap.uids("INBOX") == [] and len(imap.uids("Archive")) == 1
    with pytest.raises(NotFound):
        service.backend.get_message(msg_id)  # the UID belonged to INBOX
    (archived,) = service.backend.message_ids("in:Archive subject:File", 1)
    assert archived.startswith("Archive/") and service.get_email(archived).subject == "File me"


def test_given_imap_settings_then_doctor_logs_in_and_names_the_folders(vault_dir, imap, relay):
    from h0.cli.doctor import OK, mail_checks

    checks = mail_checks(imap_settings(vault_dir, imap, relay[0]))
    line = " | ".join(c.line() for c in checks)
    assert all(c.mark == OK for c in checks), line
    assert "INBOX" in line and sent_of(imap) in line and "Archive" in line


def test_given_a_wrong_password_then_doctor_says_what_to_fix(vault_dir, imap, relay):
    from h0.cli.doctor import FAIL, mail_checks

    checks = mail_checks(imap_settings(vault_dir, imap, relay[0], imap_pass="wrong"))
    assert any(c.mark == FAIL and "IMAP_PASS" in c.detail for c in checks), [c.line() for c in checks]


def test_given_health_check_then_the_imap_login_is_confirmed(vault_dir, imap, service):
    health = service.health(SERVER_NAME)
    assert health.backend == "imap" and health.status == "ok", health.problems
    assert health.account == imap.user
    assert {"INBOX", sent_of(imap), "Archive"} <= set(service.backend.folders)


@pytest.mark.parametrize("thread_id", ["", "   ", "<t@x>\r\nX-Evil: yes", "<t\u2028@x>", "t" * 1001])
def test_given_a_malformed_thread_id_then_invalid_request_naming_the_field(service, thread_id):
    """Given an empty, multi-line or overlong thread id, when its messages are read over IMAP, then
    InvalidRequest names the field (nothing is searched for it)."""
    with pytest.raises(InvalidRequest) as caught:
        service.backend.thread_messages(thread_id)
    assert caught.value.details["field"] == "thread_id"


@pytest.mark.parametrize("value", ["<m-1@h0.test>", "m-1@h0.test", '" <m-1@h0.test> "'])
def test_a_message_id_is_searched_for_in_its_angle_brackets_however_it_was_given(value: str):
    assert parse_query(f"rfc822msgid:{value}", now_s=0).criteria == ["HEADER", "Message-ID", "<m-1@h0.test>"]


def test_a_word_with_a_colon_that_is_no_operator_is_searched_for_as_a_word():
    assert parse_query("10:30", now_s=0).criteria == ["TEXT", "10:30"]
