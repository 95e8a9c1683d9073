"""Hostile MIME (issue 29): a 1,000-deep multipart, a header block of 100,000 fields, 100,000
recipients — each costs one line for that message, quickly; the rest of the import or ingest goes on."""

from __future__ import annotations

import mailbox
import time
from pathlib import Path

import pytest

from h0.cli import main
from h0.errors import ParseError
from h0.mail.headers import clean_address_header
from h0.mail.incoming.importer import FileMessage, MailFile, Problem, mail_files, messages_of
from h0.mail.incoming.mimebounds import MAX_ADDRESS_LIST_CHARS
from h0.mail.providers.gmail_wire import fetched_or_error
from h0.mail.providers.imap_wire import fetched_from_raw

HEAD = b"From: a@b.example\r\nTo: me@example.com\r\nDate: Tue, 24 Nov 2026 09:30:00 +0000\r\n"


def nested(depth: int) -> bytes:
    opened = b"".join(
        f'Content-Type: multipart/mixed; boundary="b{i}"\r\n\r\n--b{i}\r\n'.encode() for i in range(depth)
    )
    closed = b"".join(f"\r\n--b{i}--\r\n".encode() for i in reversed(range(depth)))
    return (
        HEAD
        + b"Subject: deep\r\nMessage-ID: <deep@x>\r\nMIME-Version: 1.0\r\n"
        + opened
        + b"Content-Type: text/plain\r\n\r\nhello"
        + closed
    )


def many_headers(count: int) -> bytes:
    return (
        HEAD
        + b"Subject: many\r\nMessage-ID: <many@x>\r\n"
        + b"".join(b"X-H%d: v\r\n" % i for i in range(count))
        + b"\r\nbody"
    )


def recipients(count: int) -> bytes:
    to = b", ".join(b"u%d@x.example" % i for i in range(count))
    return b"From: a@b.example\r\nSubject: crowd\r\nMessage-ID: <crowd@x>\r\nTo: " + to + b"\r\n\r\nbody"


def good(n: int) -> bytes:
    return HEAD + f"Subject: fine {n}\r\nMessage-ID: <fine{n}@x>\r\n\r\nHello {n}\r\n".encode()


HOSTILE = {
    "1,000-deep multipart": nested(1000),
    "100,000 header fields": many_headers(100_000),
    "5,000 header fields": many_headers(5_000),
    "100,000 recipients": recipients(100_000),
}


def read(raw: bytes):
    return fetched_from_raw("1", raw, folder="INBOX", flags=(), internal_date=None, sent_folder=None, full=True)


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_mime_is_a_typed_error_in_well_under_a_second(raw: bytes):
    started = time.perf_counter()
    with pytest.raises(ParseError) as caught:
        read(raw)
    assert time.perf_counter() - started < 1.0
    assert "not read" in caught.value.message and caught.value.details["reason"].startswith("mime_")


def test_a_deep_but_plausible_message_is_still_read():
    assert read(nested(20)).text == "hello"


def test_30_000_recipients_are_read_quickly_with_the_first_ones_kept():
    started = time.perf_counter()
    fetched = read(recipients(30_000))
    assert time.perf_counter() - started < 2.0
    to = str(fetched.headers.get("To"))
    assert to.startswith("u0@x.example, u1@x.example") and len(to) <= MAX_ADDRESS_LIST_CHARS


def test_an_address_list_is_split_in_bounded_time_wherever_it_comes_from():
    started = time.perf_counter()
    cleaned = clean_address_header(", ".join(f"u{i}@x.example" for i in range(100_000)))
    assert time.perf_counter() - started < 2.0 and cleaned.startswith("u0@x.example")


def test_gmail_resources_with_hostile_shapes_are_one_error_each():
    many = {
        "id": "m1",
        "payload": {"mimeType": "text/plain", "headers": [{"name": f"X-{i}", "value": "v"} for i in range(100_000)]},
    }
    part: dict = {"mimeType": "text/plain", "body": {"data": "aGk"}}
    for _ in range(1_000):
        part = {"mimeType": "multipart/mixed", "parts": [part]}
    deep = {"id": "m2", "payload": part}
    for resource in (many, deep):
        started = time.perf_counter()
        answer = fetched_or_error(resource)
        assert isinstance(answer, ParseError) and time.perf_counter() - started < 1.0


def test_an_mbox_with_hostile_messages_costs_one_line_each_and_the_rest_is_read(tmp_path: Path):
    path = tmp_path / "mail.mbox"
    box = mailbox.mbox(path)
    for raw in (good(1), *HOSTILE.values(), good(2)):
        box.add(raw)
    box.flush()
    box.close()
    started = time.perf_counter()
    (file,) = [f for f in mail_files([path]) if isinstance(f, MailFile)]
    found = list(messages_of(file))
    assert time.perf_counter() - started < 10.0
    assert [f.fetched.headers["Subject"] for f in found if isinstance(f, FileMessage)] == ["fine 1", "fine 2"]
    problems = [f for f in found if isinstance(f, Problem)]
    assert len(problems) == len(HOSTILE) and all("not" in p.reason for p in problems)


def test_h0_import_of_hostile_mime_writes_the_good_messages(
    tmp_path: Path, vault_dir: Path, monkeypatch, capsys, loguru_restored
):
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    path = tmp_path / "mail.mbox"
    box = mailbox.mbox(path)
    for raw in (good(1), nested(1000), recipients(100_000), good(2)):
        box.add(raw)
    box.flush()
    box.close()
    main(["import", str(path)])
    out = capsys.readouterr()
    notes = sorted(p.read_text() for p in (vault_dir / "Needs_Action").glob("*.md"))
    assert len(notes) == 2 and any("fine 1" in n for n in notes) and any("fine 2" in n for n in notes)
    assert out.out.count("  ✗ ") == 2  # one line each
