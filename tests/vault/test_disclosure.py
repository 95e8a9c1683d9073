"""The disclosure gate on its own (h0.vault.disclosure): thread keys, what counts as un-privating, the
diary folders a vault is found to have, and (issue 40) a note it could not read, a private person's mail
and a conversation's privacy asked in one call."""

from __future__ import annotations

from pathlib import Path

from h0.vault.disclosure import Disclosure, thread_keys
from h0.vault.private_folders import diary_folders

GATE = Disclosure(("journal",))


def test_notes_of_one_conversation_share_a_key_and_others_do_not():
    email = thread_keys("Done/EMAIL_1.md", {"type": "email", "thread_id": "T1", "message_id": "<m1>"})
    draft = thread_keys("Drafts/REPLY_EMAIL_1.md", {"source": "Needs_Action/EMAIL_1.md"})
    reply = thread_keys("Done/REPLY_x.md", {"reply_to_message_id": "m1"})
    stranger = thread_keys("Needs_Action/EMAIL_2.md", {"type": "email", "thread_id": "T1", "message_id": "m2"})
    note = thread_keys("Notes/EMAIL_1.md", {"title": "not an email"})
    assert email & draft and email & reply and email & stranger
    assert not note and not thread_keys("Notes/a.md", {"thread_id": True, "source": ["x"]})


def test_privacy_is_inherited_along_a_thread_and_never_from_an_unrelated_note():
    secret = ("Done/EMAIL_1.md", {"type": "email", "thread_id": "T1", "private": "yes"})
    keys = GATE.private_keys([secret, ("Notes/open.md", {"thread_id": "T2"})])
    assert GATE.private("Needs_Action/EMAIL_2.md", {"type": "email", "thread_id": "T1"}, keys)
    assert not GATE.private("Needs_Action/EMAIL_3.md", {"type": "email", "thread_id": "T2"}, keys)
    shown = GATE.shown([secret, ("Done/REPLY.md", {"thread_id": "T1"}), ("Done/other.md", {"thread_id": "T3"})])
    assert [rel for rel, _ in shown] == ["Done/other.md"]


def test_what_makes_a_note_less_private_and_what_does_not():
    marked = ("Notes/a.md", {"private": True})
    assert GATE.unprivating(marked, ("Notes/a.md", {}))
    assert GATE.unprivating(marked, ("Notes/a.md", {"Private": "no"}))
    assert GATE.unprivating(("Journal/a.md", {"private": True}), ("Journal/a.md", {}))  # the mark stays, even there
    assert GATE.unprivating(("Journal/a.md", {}), ("Notes/a.md", {}))
    assert GATE.unprivating(("Notes/t.md", {"tags": ["private"]}), ("Notes/t.md", {"tags": ["x"]}))
    thread = frozenset({"t:T1"})
    assert GATE.unprivating(("Done/E.md", {"thread_id": "T1"}), ("Done/E.md", {"thread_id": "T9"}), thread)
    assert GATE.unprivating(marked, ("Journal/a.md", {"private": "yes"})) is None
    assert GATE.unprivating(("Notes/b.md", {}), ("Notes/b.md", {"private": False})) is None
    assert GATE.unprivating(None, ("Notes/new.md", {})) is None


def test_diary_folders_are_found_by_name_and_by_obsidians_daily_notes_setting(tmp_path: Path):
    for name in ("DIARY", "Daily Notes", "Projects"):
        (tmp_path / name).mkdir()
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian/daily-notes.json").write_text('{"folder": "Notes/Days/"}')
    assert diary_folders(tmp_path) == ["DIARY", "Daily Notes", "Notes/Days"]
    (tmp_path / ".obsidian/daily-notes.json").write_text('{"folder": "../../etc"}')  # hostile: ignored
    assert diary_folders(tmp_path) == ["DIARY", "Daily Notes"]
    (tmp_path / ".obsidian/daily-notes.json").write_text("not json [")
    assert diary_folders(tmp_path) == ["DIARY", "Daily Notes"]


def test_given_a_private_email_when_its_draft_links_it_unquoted_or_with_a_heading_then_the_draft_is_private():
    """Given a private email and drafts whose `source:` is an unquoted [[EMAIL_1]] (YAML: a list in a list)
    or a link with a heading, When the gate judges the drafts, Then they are in the private thread: the gate
    reads `source:` as the note model does (h0.vault.model.source_key)."""
    secret = ("Needs_Action/EMAIL_1.md", {"type": "Email", "private": True})
    keys = GATE.private_keys([secret])
    assert GATE.private("Drafts/REPLY_1.md", {"source": [["EMAIL_1"]]}, keys)
    assert GATE.private("Drafts/REPLY_2.md", {"source": "[[Needs_Action/EMAIL_1#Body|the email]]"}, keys)
    assert not GATE.private("Drafts/REPLY_3.md", {"source": "[[EMAIL_2]]"}, keys)


THERAPIST = "quinn@care.example"


def test_the_gate_fails_closed_on_a_note_it_could_not_read_and_answers_thread_and_person_in_one_call():
    gate = Disclosure(("journal",)).with_people(lambda: frozenset({THERAPIST}))
    assert gate.private("Notes/a.md", None) and gate.own_private("Notes/a.md", None)
    assert gate.why("Notes/a.md", None) and "line" not in (gate.why("Notes/a.md", None) or "")
    assert gate.address_private(" Quinn@Care.example ") and not gate.address_private("dana@acme.example")
    email = ("Needs_Action/E.md", {"type": "email", "thread_id": "T", "from": "ann@x.example"}, "hi")
    therapist = ("Done/T.md", {"type": "email", "thread_id": "T", "from": f"Dr Q <{THERAPIST}>"}, "")
    other = ("Done/O.md", {"type": "email", "thread_id": "U", "to": THERAPIST}, "")
    assert gate.own_private(*therapist) and gate.own_private(*other) and not gate.own_private(*email)
    assert gate.thread_private(email, [therapist]) and not gate.thread_private(email, [other])
    assert gate.thread_private(None, [email, therapist]) and not gate.thread_private(None, [email])
    assert gate.thread_private(email, [("Done/broken.md", None)])  # a member that could not be read
    assert gate.thread_private(("Notes/n.md", {}, "so #private"), []) and gate.shown([email, other]) == [email]
    # Without an index, a gate knows no private person (documented); the tags and marks still count.
    assert not Disclosure().address_private(THERAPIST)


def test_given_a_private_folders_record_that_cannot_be_read_then_every_note_is_private_and_says_why(tmp_path: Path):
    """`.h0/private-folders` exists but is a FIFO, or a folder: H0 cannot tell which folders it names, so every
    note is private (fail closed) — not only the diary defaults — with the reason naming the file; a missing record
    still means the diary defaults, and a readable one its folders."""
    import os

    (tmp_path / "Journal").mkdir()
    (tmp_path / ".h0").mkdir()
    record = tmp_path / ".h0" / "private-folders"
    assert Disclosure.for_vault(tmp_path).never("Journal/a.md")  # nothing recorded: the diary by default
    assert not Disclosure.for_vault(tmp_path).never("Health/a.md")
    record.write_text("Health\n", encoding="utf-8")
    assert Disclosure.for_vault(tmp_path).never("Health/a.md") and not Disclosure.for_vault(tmp_path).never(
        "Notes/a.md"
    )
    for unreadable in ("fifo", "folder"):
        record.unlink() if record.is_fifo() or record.is_file() else record.rmdir()
        os.mkfifo(record) if unreadable == "fifo" else record.mkdir()
        gate = Disclosure.for_vault(tmp_path, "Extra")
        for rel in ("Health/a.md", "Notes/a.md", "Journal/a.md", "H0_Profile.md"):
            assert gate.never(rel) and gate.own_private(rel, {"subject": "hi"}), (unreadable, rel)
        assert gate.covers("Notes")
        why = gate.why("Notes/a.md", {"subject": "hi"})
        assert why is not None and ".h0/private-folders" in why, why


def test_an_unparseable_notes_thread_keys_are_read_from_its_frontmatter_lines_only():
    """Raw and bounded: the lines of the frontmatter block, in any quoting, a comment cut; never the body."""
    from h0.vault.disclosure import thread_keys, unparsed_thread_keys

    text = (
        "\ufeff---\ntitle: Therapy: session 3\n'thread_id': \"T-9\"  # the call\nmessage_id: <m-9@x>\n"
        "source: [[EMAIL_7|the email]]\ntype: Email\n---\nthread_id: T-body\n"
    )
    assert unparsed_thread_keys("Done/EMAIL_9.md", text) == {"t:T-9", "m:m-9@x", "n:email_7", "n:email_9"}
    assert unparsed_thread_keys("Done/EMAIL_9.md", "thread_id: T-1\n") == frozenset()  # no frontmatter block
    assert unparsed_thread_keys("a.md", "---\nsubject: x\n") == frozenset()
    assert thread_keys("a.md", {"thread_id": "T-9"}) <= unparsed_thread_keys("a.md", "---\nthread_id: T-9\nx: : :\n")


def test_a_message_that_is_not_a_note_is_private_by_its_thread_or_its_people_and_fails_closed():
    """Given a provider's message (issue 42: one call for every consumer), then the gate hides it when its
    thread holds a private note, when it is mail from or to a private person, and when the vault cannot say."""
    gate = GATE.with_people(lambda: frozenset({"secret@example.com"}))
    keys = thread_keys("", {"thread_id": "T1", "message_id": "m9"})
    held = GATE.private_keys([("Done/EMAIL_1.md", {"type": "email", "thread_id": "T1", "private": True})])
    assert gate.message_private(keys, ["a@example.com"], held)
    assert gate.message_private(thread_keys("", {"thread_id": "T2"}), ["Secret@Example.com "], held)
    assert gate.message_private(thread_keys("", {"thread_id": "T2"}), ["a@example.com"], None)
    assert not gate.message_private(thread_keys("", {"thread_id": "T2"}), ["a@example.com"], held)


def test_a_batch_of_notes_is_judged_with_one_question_to_the_vault():
    """Given a batch (an email, a note of its thread private only elsewhere in the vault, an unrelated note),
    then the vault is asked once for all their keys and each note gets the gate's answer; a vault that
    cannot say makes every one private."""
    asked: list[frozenset[str]] = []

    def vault_keys(keys: frozenset[str]) -> frozenset[str]:
        asked.append(keys)
        return frozenset(k for k in keys if "T1" in k)  # a private note elsewhere holds thread T1

    email = ("Needs_Action/EMAIL_1.md", {"type": "email", "thread_id": "T1"}, None)
    other = ("Needs_Action/EMAIL_2.md", {"type": "email", "thread_id": "T2"}, None)
    tagged = ("Notes/x.md", {"thread_id": "T3"}, "body with #private")
    private = GATE.batch([email, other, tagged], vault_keys)
    assert len(asked) == 1
    assert [private(n) for n in (email, other, tagged)] == [True, False, True]
    closed = GATE.batch([other], lambda _keys: None)
    assert closed(other)
