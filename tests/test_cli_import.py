"""`h0 import` (issue 24): the user's own mail from files — .eml, .mbox, folders of them — becomes
notes exactly as ingest writes them, with no mailbox connected; the owner's own messages are filed
as sent mail; every unreadable file is a line saying why, never a crash; importing twice adds nothing."""

from __future__ import annotations

import mailbox
from email.message import EmailMessage
from pathlib import Path

import pytest

from h0.cli import EXIT_OK, EXIT_WORK_FAILED, main
from h0.vault import Vault

pytestmark = pytest.mark.usefixtures("loguru_restored")


def message(
    sender: str,
    subject: str,
    body: str,
    *,
    to: str = "me@example.com",
    cc: str | None = None,
    html: str | None = None,
    charset: str = "utf-8",
    msg_id: str | None = None,
    reply_to: str | None = None,
    attachment: bytes | None = None,
    date: str = "Tue, 24 Nov 2026 09:30:00 +0000",
) -> EmailMessage:
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = sender, to, subject
    mail["Date"] = date
    mail["Message-ID"] = msg_id or f"<{abs(hash(subject + sender))}@mail.example>"
    if cc:
        mail["Cc"] = cc
    if reply_to:
        mail["In-Reply-To"] = mail["References"] = reply_to
    if html is not None and not body:
        mail.set_content(html, subtype="html")
    else:
        mail.set_content(body, charset=charset)
        if html is not None:
            mail.add_alternative(html, subtype="html")
    if attachment is not None:
        mail.add_attachment(attachment, maintype="application", subtype="pdf", filename="quote.pdf")
    return mail


@pytest.fixture
def imports(vault_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("OWNER_EMAILS", "me@example.com")

    def run(*paths: Path) -> tuple[int, list[str]]:
        code = main(["import", *map(str, paths)])
        return code, capsys.readouterr().out.splitlines()

    return run


def test_a_mailbox_of_varied_mail_becomes_notes_as_ingest_writes_them(vault_dir: Path, tmp_path: Path, imports):
    box = mailbox.mbox(tmp_path / "export.mbox")
    box.add(
        message(
            "Dana Rivera <dana@acme.example>",
            "Friday review",
            "Could we move it to Friday?",
            cc="Lee <lee@acme.example>",
            msg_id="<first@acme.example>",
        )
    )
    box.add(
        message(
            "Lee <lee@acme.example>",
            "Re: Friday review",
            "Friday works for me.",
            msg_id="<second@acme.example>",
            reply_to="<first@acme.example>",
            date="Tue, 24 Nov 2026 11:00:00 +0000",
        )
    )
    box.add(message("News <news@shop.example>", "Deals", "", html="<p>Our <b>weekly</b> deals</p>"))
    box.add(message("Jörg <joerg@example.de>", "Grüße", "Schöne Grüße aus Köln", charset="iso-8859-1"))
    box.add(message("Sam <sam@example.com>", "Quote", "Attached.", attachment=b"%PDF-1.4 quote"))
    mine = message("Me <me@example.com>", "Re: Friday review", "Friday 10:00 it is.", to="dana@acme.example")
    mine["X-Gmail-Labels"] = "Sent,Opened"  # how Google Takeout marks the owner's sent mail (a From alone is not)
    box.add(mine)
    box.flush()
    code, out = imports(tmp_path / "export.mbox")
    assert code == EXIT_OK, out
    # Dana's question (the owner's reply to her started a thread of its own) is owed a reply at once: `h0 status`
    # lists it right after the import, as after `h0 sweep`.
    assert out[0] == (
        "h0 import: 5 new in Needs_Action/, 1 kept as history (1 of them yours), replies owed: 1, awaited: 0"
    )
    vault = Vault(vault_dir)
    notes = {n.path: vault.read_note(n.path) for n in vault.list_notes("Needs_Action").notes}
    by_subject = {n.frontmatter["subject"]: n for n in notes.values()}
    first, reply = by_subject["Friday review"], by_subject["Re: Friday review"]
    assert first.frontmatter["type"] == "email" and first.frontmatter["status"] == "pending"
    assert first.frontmatter["cc"] == ["Lee <lee@acme.example>"]
    assert first.frontmatter["rfc822_message_id"] == "<first@acme.example>"
    assert reply.frontmatter["thread"]  # linked to the earlier message of its thread
    assert "weekly deals" in by_subject["Deals"].body
    assert "Schöne Grüße aus Köln" in by_subject["Grüße"].body
    assert by_subject["Quote"].frontmatter["attachment_names"] == ["quote.pdf"]
    assert vault.list_notes("Done").notes == []  # the owner's sent mail is history, not a note
    again, out = imports(tmp_path / "export.mbox")
    assert again == EXIT_OK and out[0] == "h0 import: 0 new in Needs_Action/"  # the file is known: nothing read


def test_single_eml_files_and_folders_of_them(vault_dir: Path, tmp_path: Path, imports):
    folder = tmp_path / "saved"
    (folder / "sub").mkdir(parents=True)
    (folder / "one.eml").write_bytes(bytes(message("A <a@example.org>", "One", "first")))
    (folder / "sub" / "two.eml").write_bytes(bytes(message("B <b@example.org>", "Two", "second")))
    (folder / "notes.txt").write_text("not mail, not read")
    code, out = imports(folder)
    assert code == EXIT_OK and out[0] == "h0 import: 2 new in Needs_Action/"


def test_files_that_are_not_mail_are_named_with_the_reason_and_the_rest_is_imported(
    vault_dir: Path, tmp_path: Path, imports
):
    (tmp_path / "empty.eml").write_bytes(b"")
    (tmp_path / "binary.eml").write_bytes(bytes(range(256)) * 40)
    (tmp_path / "broken.mbox").write_text("this is not a mailbox\nat all\n")
    (tmp_path / "huge.eml").write_bytes(b"From: a@example.org\nSubject: big\n\n" + b"x" * (26 * 1024 * 1024))
    (tmp_path / "good.eml").write_bytes(bytes(message("C <c@example.org>", "Fine", "a real one")))
    code, out = imports(
        tmp_path / "empty.eml",
        tmp_path / "binary.eml",
        tmp_path / "broken.mbox",
        tmp_path / "huge.eml",
        tmp_path / "good.eml",
    )
    assert code == EXIT_WORK_FAILED
    assert out[0] == "h0 import: 1 new in Needs_Action/, 4 not imported"
    reasons = "\n".join(out[1:])
    assert "empty.eml: the file is empty" in reasons
    assert "binary.eml: not an email message" in reasons
    assert "broken.mbox: no message in this mailbox" in reasons
    assert "huge.eml: larger than 25 MB" in reasons


def test_a_missing_file_is_a_usage_error_and_nothing_is_written(vault_dir: Path, tmp_path: Path, imports, capsys):
    code = main(["import", str(tmp_path / "nope.mbox")])
    assert code == 1 and "no such file or folder" in capsys.readouterr().err
    assert Vault(vault_dir).list_notes("Needs_Action").notes == []
