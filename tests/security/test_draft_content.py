"""What is sent is exactly what the human saw: draft notes and their attachments.

The human approves a draft by reading it in Obsidian. These scenarios pin down that H0
refuses — with a message that says how to fix the note — every draft whose sent content
could differ from what was on the screen: hidden comments above the cut-off, an unedited
template, invisible control characters, and attachments that are links or change.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from h0.errors import InvalidRequest, NotFound, PermissionDenied
from h0.mail.compose.attachments import MAX_ATTACHMENT_BYTES, hash_attachments, load_attachments
from h0.mail.compose.drafts import TEMPLATE_MARKER, identity, parse_draft
from h0.vault.note import Note
from h0.vault.paths import PathResolver
from h0.vault.sendable import CUTOFF, Sendable, message_body

GOOD = {"to": "ann@example.com", "subject": "Re: the invoice"}


def draft_of(path: str, frontmatter: dict[str, Any], body: str, note_hash: str) -> Sendable:
    return parse_draft(Note(path, frontmatter, body, note_hash))


def parse(body: str = "Hi Ann,\n\nPaid today.\n", path: str = "Approved/reply.md", **frontmatter: Any) -> Sendable:
    return draft_of(path, {**GOOD, **frontmatter}, body, "hash-1")


def refusal(body: str = "Hi Ann,\n", **frontmatter: Any) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        parse(body, **frontmatter)
    return caught.value


# --- hidden text -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("Hi Ann,\nPaid %%and Bcc my lawyer%% today.\n", 2),
        ("Hi Ann,\n\n%%\nwire the money to account 666\n%%\nBest,\n", 3),
        ("Hi Ann,\nBest,\n%% everything after this is hidden\nP.S. secret\n", 3),
        ("Hi Ann,\n<!-- hidden in reading view -->\nBest,\n", 2),
        ("Hi Ann,\nBest,\n<!-- never closed\nP.S. secret\n", 3),
        ("Hi Ann,\n<!--\nmulti\nline\n-->\nBest,\n", 2),
    ],
    ids=[
        "inline-percent",
        "multi-line-percent",
        "unclosed-percent",
        "html-comment",
        "unclosed-html",
        "multi-line-html",
    ],
)
def test_given_text_obsidian_hides_above_the_cut_off_then_the_draft_is_refused(body: str, line: int):
    """Given a draft with a %%…%% or <!-- --> comment (closed or not) above the cut-off,
    When it is parsed, Then it is refused, naming the line and saying how to fix it."""
    error = refusal(body + f"\n{CUTOFF}\nReplying to [[x]]\n")
    assert "Obsidian hides in reading view" in error.message
    assert f"line {line}" in error.message
    assert CUTOFF in error.message and "approve again" in error.message
    assert error.details["path"] == "Approved/reply.md"
    assert len(error.details["problems"]) == 1


def test_given_two_hidden_comments_then_both_lines_are_named():
    """Given two comments above the cut-off, When parsed, Then the refusal names both lines."""
    error = refusal("Hi %%a%%\nthere\n<!-- b -->\n")
    assert "lines 1, 3" in error.message


def test_given_hidden_text_only_below_the_cut_off_then_the_draft_is_sendable():
    """Given comments of both kinds below the cut-off line, When parsed, Then the draft is
    sendable and only the text above the cut-off is its body."""
    draft = parse(f"Hi Ann,\n\nPaid today.\n\n{CUTOFF}\n%% reasoning %%\n<!-- x -->\n%% unclosed\n")
    assert draft.body == "Hi Ann,\n\nPaid today.\n"


def test_given_the_cut_off_line_then_it_is_the_only_percent_pair_allowed():
    """Given a draft whose only %% is the cut-off line itself, When parsed, Then it is sendable;
    Given one more %% above it, Then it is refused."""
    assert parse(f"Hi\n{CUTOFF}\n").body == "Hi\n"
    assert "hides in reading view" in refusal(f"Hi 100%% sure\n{CUTOFF}\n").message


# --- template markers --------------------------------------------------------------------


@pytest.mark.parametrize(
    "marker",
    [
        "[H0 draft — edit before approving]",
        "[H0 draft — write your reply here before approving]",
        "[H0 draft – edit before approving]",  # en dash
        "[h0 draft - edit before approving]",  # hyphen, lower case
        "   [H0 draft — edit before approving]   ",
    ],
)
def test_given_an_unedited_template_marker_above_the_cut_off_then_the_draft_is_refused(marker: str):
    """Given a draft that still carries H0's template marker line, When parsed, Then it is
    refused: nobody edited the reply."""
    error = refusal(f"{marker}\nHi Ann,\n\nThanks for your message.\n\n{CUTOFF}\nReplying to [[x]]\n")
    assert "template marker" in error.message
    assert "delete that line" in error.message and "line 1" in error.message


def test_given_the_markers_triage_writes_then_they_match_the_exported_pattern():
    """Given the markers the rules-based triage writes, When matched against TEMPLATE_MARKER,
    Then they match, so the send path recognises every one of them."""
    from h0.triage.safety import DEFAULT_REPLY, DRAFT_MARKER

    assert TEMPLATE_MARKER.match(DRAFT_MARKER)
    assert TEMPLATE_MARKER.match(DEFAULT_REPLY.splitlines()[0])
    assert TEMPLATE_MARKER.match("[H0 draft — write your reply here before approving]")


def test_given_a_template_marker_only_below_the_cut_off_then_the_draft_is_sendable():
    """Given the marker below the cut-off line, When parsed, Then the draft is sendable."""
    assert parse(f"Hi Ann,\nDone.\n{CUTOFF}\n[H0 draft — edit before approving]\n").body == "Hi Ann,\nDone.\n"


@pytest.mark.parametrize(
    "line",
    [
        "I deleted the [H0 draft — edit before approving] line as asked.",
        "The label [H0 draft] appears mid-sentence here.",
        "[H0 draft — edit before approving] and then more words",
        "[H0 drafts are great]",
    ],
)
def test_given_prose_that_mentions_the_marker_then_the_draft_is_sendable(line: str):
    """Given a body that mentions "[H0 draft" in prose, not as a line of its own, When parsed,
    Then the draft is sendable."""
    assert line in parse(f"Hi Ann,\n{line}\n").body


# --- control characters --------------------------------------------------------------------


@pytest.mark.parametrize(
    "subject",
    [
        "Hi\r\nBcc: evil@x.com",
        "Hi\nthere",
        "Hi\rthere",
        "Hi\x00",
        "Hi\tthere",
        "Hi\x1b[2J",
        "Hi\x85there",
        "Hi\u2028there",
        "Hi\x7f",
    ],
)
def test_given_a_control_character_in_the_subject_then_the_draft_is_refused(subject: str):
    """Given a subject with CR, LF, NUL, TAB or another C0/C1 control, When parsed, Then it is
    refused (never stripped)."""
    error = refusal(subject=subject)
    assert "`subject`" in error.message and "control character" in error.message


@pytest.mark.parametrize("field", ["to", "cc", "bcc"])
@pytest.mark.parametrize(
    "value",
    ["ann@example.com\nBcc: evil@x.com", "ann@example.com\x00", ["ok@example.com", "b@x.com\r"], "ann@example.com\x9b"],
)
def test_given_a_control_character_in_an_address_then_the_draft_is_refused(field: str, value: Any):
    """Given a recipient field with a line break or another control character, When parsed,
    Then it is refused with the field named."""
    error = refusal(**{field: value})
    assert f"`{field}`" in error.message and "control character" in error.message


@pytest.mark.parametrize("bad", ["\x00", "\x1b", "\x07", "\x7f", "\x85", "lone\rreturn"])
def test_given_a_control_character_in_the_body_then_the_draft_is_refused(bad: str):
    """Given a body with NUL, ESC, BEL, DEL, a C1 control or a lone CR, When parsed, Then it is
    refused with the line named."""
    error = refusal(f"Hi Ann,\nPaid {bad} today.\n")
    assert "control characters at line 2" in error.message


def test_given_tabs_and_crlf_line_ends_in_the_body_then_the_draft_is_sendable():
    """Given a body with tabs and CRLF line ends, When parsed, Then it is sendable as is."""
    assert parse("Hi Ann,\r\n\tPaid today.\r\n").body == "Hi Ann,\r\n\tPaid today.\n"


def test_given_a_control_character_only_below_the_cut_off_then_the_draft_is_sendable():
    """Given an escape character below the cut-off line, When parsed, Then nothing of it is sent."""
    assert parse(f"Hi Ann,\n{CUTOFF}\n\x1b[31m\n").body == "Hi Ann,\n"


def test_given_a_line_break_in_the_reply_header_fields_then_the_draft_is_refused():
    """Given reply_to_message_id or thread_id with a line break, When parsed, Then it is refused."""
    assert "`reply_to_message_id`" in refusal(reply_to_message_id="<a@b>\nBcc: x@y").message
    assert "`thread_id`" in refusal(thread_id="t1\r\nX: y").message


# --- missing and malformed fields ------------------------------------------------------------


def test_given_a_draft_missing_everything_then_all_problems_are_listed_together():
    """Given a note with no `to`, no `subject` and an empty message, When parsed, Then one
    refusal lists all three, each with a fix."""
    with pytest.raises(InvalidRequest) as caught:
        draft_of("Approved/empty.md", {}, f"\n\n{CUTOFF}\nnotes\n", "h")
    error = caught.value
    problems = error.details["problems"]
    assert len(problems) == 3
    assert any("`to:`" in p for p in problems) and any("`subject:`" in p for p in problems)
    assert any("message is empty" in p for p in problems)
    assert error.message.startswith("This draft has 3 problems:")
    assert all(p in error.message for p in problems)
    assert error.details["path"] == "Approved/empty.md"


def test_given_problems_of_every_kind_then_they_are_listed_together():
    """Given a marker, a hidden comment, a bad subject and bad attachments at once, When parsed,
    Then every problem is in the one refusal."""
    with pytest.raises(InvalidRequest) as caught:
        draft_of(
            "Approved/x.md",
            {"to": "a@example.com", "subject": "a\nb", "attachments": 3},
            "[H0 draft — edit before approving]\nHi %%x%%\n",
            "h",
        )
    assert len(caught.value.details["problems"]) == 4


@pytest.mark.parametrize("value", [{"file": "a.pdf"}, [1, 2], ["ok.pdf", None], [""], 7])
def test_given_attachments_that_are_not_paths_then_the_draft_is_refused(value: Any):
    """Given `attachments` that is not a path or a list of paths, When parsed, Then it is refused."""
    assert "`attachments`" in refusal(attachments=value).message


@pytest.mark.parametrize("value", [{"name": "a@example.com"}, ["a@example.com", 3], 42])
def test_given_recipients_that_are_not_text_then_the_draft_is_refused(value: Any):
    """Given `to` that is neither an address nor a list of addresses, When parsed, Then it is refused."""
    assert "`to` must be an address" in refusal(to=value).message


def test_given_a_complete_draft_then_every_field_is_read():
    """Given a draft note with every field, When parsed, Then the strict view carries each of them."""
    draft = draft_of(
        "Approved/reply.md",
        {
            "to": "Ann <ann@example.com>, bob@example.com",
            "cc": ["c@example.com"],
            "bcc": "d@example.com",
            "subject": 2024,
            "attachments": "Files/a.pdf",
            "reply_to_message_id": " <m@x> ",
            "thread_id": "t1",
            "source": "[[Needs_Action/mail.md|the mail]]",
            "draft_id": "d-1",
            "send_anyway": "Yes",
            "drafted_at": "2024-05-01T10:00:00Z",
        },
        f"\n\nHi Ann,\n\nSee attached.  \n\n{CUTOFF}\nReplying to [[Needs_Action/mail]]\n",
        "sha-of-note",
    )
    assert (draft.path, draft.note_hash) == ("Approved/reply.md", "sha-of-note")
    assert (draft.to, draft.cc, draft.bcc) == (
        ("Ann <ann@example.com>", "bob@example.com"),
        ("c@example.com",),
        ("d@example.com",),
    )
    assert (draft.subject, draft.body, draft.attachments) == ("2024", "Hi Ann,\n\nSee attached.\n", ("Files/a.pdf",))
    assert (draft.reply_to_message_id, draft.thread_id, draft.problems) == ("<m@x>", "t1", ())
    facts = draft.facts  # the rest is what the note model says, the same for every reader
    assert (facts.source, facts.draft_id, facts.send_anyway) == ("Needs_Action/mail.md", "d-1", True)
    assert facts.drafted_at == dt.datetime(2024, 5, 1, 10, tzinfo=dt.UTC).timestamp()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        ("true", True),
        ("YES", True),
        ("1", True),
        (1, True),
        (False, False),
        ("no", False),
        (None, False),
        ("maybe", False),
    ],
)
def test_given_send_anyway_spellings_then_only_true_ones_count(value: Any, expected: bool):
    """Given `send_anyway` as a YAML bool or a string, When parsed, Then true/yes/1 mean yes."""
    assert parse(send_anyway=value).facts.send_anyway is expected


def test_given_a_body_and_a_cut_off_then_the_message_body_is_the_trimmed_text_above_it():
    """Given bodies with and without a cut-off, When message_body is taken, Then it is the text
    above the cut-off, without leading blank lines or trailing space, ending in one newline."""
    assert message_body("\n\nHi\n\nBye  \n\n") == "Hi\n\nBye\n"
    assert message_body(f"Hi\n{CUTOFF}\nnotes") == "Hi\n"
    assert message_body(f"  \n{CUTOFF}\nnotes") == ""
    assert message_body("") == ""


# --- identity ----------------------------------------------------------------------------------


BASE_NOTE = {
    "to": "ann@example.com",
    "cc": "c@example.com",
    "bcc": "b@example.com",
    "subject": "Re: x",
    "attachments": ["Files/a.pdf"],
    "reply_to_message_id": "<m@x>",
    "draft_id": "d-1",
}
BASE_BODY = f"Hi Ann,\nPaid.\n{CUTOFF}\nreasoning\n"


def identity_of(
    hashes: tuple[str, ...] = ("h-a",), body: str = BASE_BODY, path: str = "Approved/r.md", **changes: Any
) -> bytes:
    return identity(draft_of(path, {**BASE_NOTE, **changes}, body, "note-hash"), hashes)


@pytest.mark.parametrize(
    "change",
    [
        {"to": "zed@example.com"},
        {"cc": "z@example.com"},
        {"bcc": ""},
        {"subject": "Re: y"},
        {"attachments": ["Files/b.pdf"]},
        {"reply_to_message_id": "<n@x>"},
        {"source": "Needs_Action/EMAIL_2.md"},
        {"send_anyway": True},
        {"body": f"Hi Ann,\nNot paid.\n{CUTOFF}\nreasoning\n"},
        {"hashes": ("h-b",)},
    ],
    ids=lambda change: next(iter(change)),
)
def test_given_any_sent_field_or_attachment_hash_changes_then_the_identity_changes(change: dict[str, Any]):
    """Given an approved draft, When a recipient, the subject, the body, an attachment (path or
    bytes), the reply header, the email it answers or `send_anyway` changes, Then its identity is different."""
    assert identity_of(**change) != identity_of()


@pytest.mark.parametrize(
    "path",
    [
        "Approved/r 2.md",
        "Approved/r.sync-conflict-20261128-101010-ABCDEFG.md",
        "Approved/r (conflicted copy 2026-11-28).md",
        "Approved/r (Mara's iPhone).md",
        "Approved/r (1).md",
        "Approved/another name.md",
    ],
)
def test_given_a_copy_under_another_name_or_id_then_the_identity_is_the_same(path: str):
    """Given an approved draft, When a sync tool's copy of it (or any note with the same message) is read
    under another name, with another draft id, thread, note hash, folder or notes below the cut-off, Then its
    identity is the same: a copy is the same message."""
    same = draft_of(
        path,
        {**BASE_NOTE, "draft_id": "d-2", "thread_id": "t9", "source": None},
        f"Hi Ann,\nPaid.\n{CUTOFF}\nother reasoning %% x %%\n",
        "other-hash",
    )
    assert identity(same, ("h-a",)) == identity_of()


def test_given_send_anyway_then_the_draft_id_or_the_name_without_a_copy_mark_counts():
    """Given `send_anyway: true` (the owner's "a message of its own"), When two drafts differ only by draft id or
    by file name, Then their identities differ; When one is a sync tool's copy of the other, Then they are the same."""
    assert identity_of(send_anyway=True, draft_id="d-2") != identity_of(send_anyway=True)
    mine = {"draft_id": None, "send_anyway": True}
    assert identity_of(path="Approved/invite.md", **mine) != identity_of(path="Approved/invite-again.md", **mine)
    for copy in ("Approved/Invite 2.md", "Approved/invite.sync-conflict-20261128-101010-ABCDEFG.md"):
        assert identity_of(path=copy, **mine) == identity_of(path="Approved/invite.md", **mine)


def test_given_a_draft_then_its_identity_is_canonical_json_of_what_is_sent():
    """Given a draft without a draft id, When its identity is taken, Then it is compact UTF-8
    JSON of the recipients, subject, body, attachment hashes, reply header and the email it answers —
    no file name."""
    note = {"to": "a@example.com", "subject": "Grüße", "attachments": ["F/a.pdf"], "source": "[[EMAIL_1]]"}
    draft = draft_of("Approved/réponse.md", note, "Hallo\n", "h")
    raw = identity(draft, ["ab" * 32])
    canonical = [["a@example.com"], [], [], "Grüße", "Hallo\n", [["F/a.pdf", "ab" * 32]], None, "email_1"]
    assert raw == json.dumps(canonical, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    anyway = draft_of("Approved/réponse 2.md", {**note, "send_anyway": True}, "Hallo\n", "h")
    assert identity(anyway, ["ab" * 32]) == json.dumps(
        [*canonical, ["send_anyway", "réponse.md"]], ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8")
    with pytest.raises(ValueError):
        identity(draft, [])


# --- attachments -------------------------------------------------------------------------------


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_given_a_plain_file_then_it_is_loaded_with_its_path_and_the_sha256_of_its_bytes(vault_dir: Path):
    """Given a regular file in the vault, When it is loaded or hashed, Then the attachment carries
    its vault path and the sha256 of exactly the bytes that are sent."""
    (vault_dir / "Done" / "report.pdf").write_bytes(b"%PDF-1.4 report")
    resolver = PathResolver(vault_dir)
    [loaded] = load_attachments(resolver, ["Done/report.pdf"])
    assert (loaded.rel, loaded.filename, loaded.data) == ("Done/report.pdf", "report.pdf", b"%PDF-1.4 report")
    assert loaded.sha256 == sha(b"%PDF-1.4 report")
    assert hash_attachments(resolver, ["./Done/report.pdf"]) == {"Done/report.pdf": sha(b"%PDF-1.4 report")}


def test_given_an_attachment_whose_bytes_change_then_its_sha256_changes(vault_dir: Path):
    """Given an approved attachment, When its bytes change, Then its hash differs, so the
    approval no longer matches what would be sent."""
    file = vault_dir / "Done" / "a.txt"
    file.write_bytes(b"version 1")
    resolver = PathResolver(vault_dir)
    before = hash_attachments(resolver, ["Done/a.txt"])
    file.write_bytes(b"version 2")
    after = hash_attachments(resolver, ["Done/a.txt"])
    assert before["Done/a.txt"] != after["Done/a.txt"] == sha(b"version 2")


@pytest.mark.parametrize("load", [load_attachments, hash_attachments])
def test_given_a_symlink_inside_the_vault_then_it_is_refused(vault_dir: Path, load):
    """Given a symlink in the vault pointing at another vault file, When attached, Then it is
    refused: its target could change after approval."""
    (vault_dir / "Done" / "real.txt").write_text("x")
    os.symlink(vault_dir / "Done" / "real.txt", vault_dir / "Done" / "link.txt")
    with pytest.raises(PermissionDenied) as caught:
        load(PathResolver(vault_dir), ["Done/link.txt"])
    assert "symbolic link" in caught.value.message and "copy" in caught.value.message


def test_given_a_symlink_out_of_the_vault_then_it_is_refused(vault_dir: Path, tmp_path: Path):
    """Given a symlink in the vault pointing at a file outside it, When attached, Then it is refused."""
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "secret.txt", vault_dir / "Done" / "link.txt")
    with pytest.raises(PermissionDenied):
        load_attachments(PathResolver(vault_dir), ["Done/link.txt"])


def test_given_a_file_inside_a_symlinked_folder_then_it_is_refused(vault_dir: Path):
    """Given a folder in the vault that is a symlink to another vault folder, When a file through it
    is attached, Then it is refused."""
    (vault_dir / "Files").mkdir()
    (vault_dir / "Files" / "a.txt").write_text("x")
    os.symlink(vault_dir / "Files", vault_dir / "Linked", target_is_directory=True)
    with pytest.raises(PermissionDenied) as caught:
        load_attachments(PathResolver(vault_dir), ["Linked/a.txt"])
    assert "symbolic link" in caught.value.message


@pytest.mark.parametrize("load", [load_attachments, hash_attachments])
def test_given_a_hard_link_to_a_file_outside_the_vault_then_it_is_refused(vault_dir: Path, tmp_path: Path, load):
    """Given a hard link in the vault to a file outside it, When attached, Then it is refused and the
    human is told to attach a copy."""
    outside = tmp_path / "private.key"
    outside.write_bytes(b"-----BEGIN PRIVATE KEY-----")
    os.link(outside, vault_dir / "Done" / "harmless.txt")
    with pytest.raises(PermissionDenied) as caught:
        load(PathResolver(vault_dir), ["Done/harmless.txt"])
    assert "hard link" in caught.value.message and "copy" in caught.value.message


def test_given_a_folder_then_it_is_refused(vault_dir: Path):
    """Given a folder path in `attachments`, When attached, Then it is refused as not a file."""
    (vault_dir / "Files").mkdir()
    with pytest.raises(InvalidRequest) as caught:
        load_attachments(PathResolver(vault_dir), ["Files"])
    assert "is a folder" in caught.value.message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_given_a_named_pipe_then_it_is_refused_without_waiting_for_a_writer(vault_dir: Path):
    """Given a FIFO in the vault, When attached, Then it is refused at once (opening it does not block)."""
    os.mkfifo(vault_dir / "Done" / "pipe.txt")
    with pytest.raises(InvalidRequest) as caught:
        load_attachments(PathResolver(vault_dir), ["Done/pipe.txt"])
    assert "not a regular file" in caught.value.message


@pytest.mark.parametrize("load", [load_attachments, hash_attachments])
def test_given_an_executable_by_name_or_by_content_then_it_is_refused(vault_dir: Path, load):
    """Given an .exe, or an ELF program renamed to .pdf, When attached, Then it is refused."""
    (vault_dir / "Done" / "setup.exe").write_bytes(b"MZ\x90\x00")
    (vault_dir / "Done" / "invoice.pdf").write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 100)
    for path in ("Done/setup.exe", "Done/invoice.pdf"):
        with pytest.raises(InvalidRequest) as caught:
            load(PathResolver(vault_dir), [path])
        assert "executable" in caught.value.message


@pytest.mark.parametrize("load", [load_attachments, hash_attachments])
def test_given_attachments_over_25_mb_in_total_then_they_are_refused(vault_dir: Path, load):
    """Given two files that together exceed 25 MB, When attached, Then they are refused."""
    for name in ("a.bin", "b.bin"):
        with (vault_dir / "Done" / name).open("wb") as handle:
            handle.truncate(MAX_ATTACHMENT_BYTES // 2 + 1)
    with pytest.raises(InvalidRequest) as caught:
        load(PathResolver(vault_dir), ["Done/a.bin", "Done/b.bin"])
    assert caught.value.details["limit_bytes"] == MAX_ATTACHMENT_BYTES


def test_given_hidden_or_missing_files_then_they_are_refused(vault_dir: Path):
    """Given a file in .obsidian/ or a path that does not exist, When attached, Then each is refused."""
    (vault_dir / ".obsidian").mkdir(exist_ok=True)
    (vault_dir / ".obsidian" / "data.json").write_text("{}")
    resolver = PathResolver(vault_dir)
    with pytest.raises(PermissionDenied):
        hash_attachments(resolver, [".obsidian/data.json"])
    with pytest.raises(NotFound):
        hash_attachments(resolver, ["Done/missing.pdf"])
    (vault_dir / "Done" / "file.txt").write_text("x")
    with pytest.raises(NotFound):
        hash_attachments(resolver, ["Done/file.txt/inner.txt"])
