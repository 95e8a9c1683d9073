"""Triage of a batch (h0.handlers.triage.triage_emails): the same decisions as one note at a time,
a handful of vault calls for the whole batch, and one note's trouble kept to that note."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from h0.config import load_settings
from h0.errors import H0Error
from h0.handlers.context import HandlerContext, NoteOps
from h0.handlers.outcome import Outcome
from h0.handlers.triage import triage_email, triage_emails
from h0.triage import Triager, ensure_rules_file
from h0.vault import Vault, init_vault
from h0.vault.api import Change, LocalVault

DANA = "Dana Rivera <dana@example.com>"


def email(
    vault_dir: Path,
    name: str,
    *,
    thread: str,
    received: str = "2026-11-21T09:00:00Z",
    status: str = "pending",
    sender: str = DANA,
    subject: str = "Can we move Thursday's review?",
) -> str:
    text = (
        f"---\ntype: email\nstatus: {status}\nmessage_id: m-{name}\nthread_id: {thread}\nfrom: {sender!r}\n"
        f"subject: {subject!r}\nreceived: {received}\n---\nCould we move the review to Friday at 10?\n"
    )
    (vault_dir / "Needs_Action" / f"{name}.md").write_text(text)
    return f"Needs_Action/{name}.md"


class CountingVault(LocalVault):
    """The local vault, counting calls; `before_apply` runs once before the first batch of changes."""

    def __init__(self, vault: Vault, before_apply: Any = None) -> None:
        super().__init__(vault)
        self.calls: Counter[str] = Counter()
        self.before_apply = before_apply

    def read(self, path: str):
        self.calls["read"] += 1
        return super().read(path)

    def read_many(self, paths: Sequence[str]):
        self.calls["read_many"] += 1
        return super().read_many(paths)

    def list(self, *args: Any, **kwargs: Any):
        self.calls["list"] += 1
        return super().list(*args, **kwargs)

    def apply(self, changes: Sequence[Change]):
        self.calls["apply"] += 1
        if self.before_apply is not None:
            hook, self.before_apply = self.before_apply, None
            hook()
        return super().apply(changes)


def context(vault_dir: Path, api: LocalVault) -> HandlerContext:
    ensure_rules_file(vault_dir)
    settings = load_settings(vault_path=vault_dir)
    ctx = HandlerContext.local(settings, Vault(vault_dir), triager=Triager.from_settings(settings, vault_dir))
    ctx.notes = NoteOps(api)
    return ctx


def test_a_batch_costs_a_handful_of_vault_calls_whatever_its_size(vault_dir: Path):
    paths = [email(vault_dir, f"e{i:02}", thread=f"t{i}") for i in range(30)]
    api = CountingVault(Vault(vault_dir))
    results = triage_emails(paths, context(vault_dir, api))
    assert {r.action for r in results.values()} == {"triaged"}
    # one read of the batch, one thread look-up (a single walk) for all 30 threads, drafts, then the emails
    assert api.calls == Counter({"read_many": 1, "list": 1, "apply": 2})
    for path in paths:
        note = Vault(vault_dir).read_note(path)
        assert note.frontmatter["status"] == "awaiting_approval"
        assert Vault(vault_dir).exists(note.frontmatter["draft"])


def test_a_batch_decides_as_one_note_at_a_time_would(vault_dir: Path, tmp_path: Path):
    """The same emails, triaged as a batch and one by one in two vaults: the same notes result
    (drafts, statuses, the older email's draft marked stale by the newer one in its thread)."""
    other = tmp_path / "other"
    other.mkdir()
    init_vault(other)
    outcomes = {}
    for root, batch in ((vault_dir, True), (other, False)):
        paths = [
            email(root, "first", thread="t1", received="2026-11-21T09:00:00Z"),
            email(root, "second", thread="t1", received="2026-11-21T10:00:00Z"),
            email(
                root,
                "news",
                thread="t2",
                sender="Weekly Digest <newsletter@news.example.com>",
                subject="Top stories this week",
            ),
        ]
        ctx = context(root, LocalVault(Vault(root)))
        got = triage_emails(paths, ctx) if batch else {p: triage_email(p, ctx) for p in paths}
        outcomes[batch] = {p: (o.action, o.detail) for p, o in got.items()}
    assert outcomes[True] == outcomes[False]
    for rel in ("Drafts/REPLY_first.md", "Drafts/REPLY_second.md"):
        batch_fm, single_fm = (Vault(r).read_note(rel).frontmatter for r in (vault_dir, other))
        drop = {"drafted_at"}
        assert {k: v for k, v in batch_fm.items() if k not in drop} == {
            k: v for k, v in single_fm.items() if k not in drop
        }
    assert Vault(vault_dir).read_note("Drafts/REPLY_first.md").frontmatter.get("stale") is True
    assert "stale" not in Vault(vault_dir).read_note("Drafts/REPLY_second.md").frontmatter


def test_each_note_gets_its_own_answer_gone_corrupt_done_or_failed(vault_dir: Path):
    ok = email(vault_dir, "ok", thread="t1")
    done = email(vault_dir, "done", thread="t2", status="needs_info")
    (vault_dir / "Needs_Action/corrupt.md").write_text("---\nstatus: [unclosed\n---\n")
    blocked = email(vault_dir, "blocked", thread="t3")
    (vault_dir / "Drafts/REPLY_blocked.md").symlink_to(
        vault_dir.parent / "elsewhere.md"
    )  # its draft cannot be written there
    before = (vault_dir / blocked).read_bytes()
    results = triage_emails(
        [ok, done, "Needs_Action/corrupt.md", "Needs_Action/gone.md", blocked],
        context(vault_dir, LocalVault(Vault(vault_dir))),
    )
    assert results[ok].action == "triaged"
    assert (results[done].action, results["Needs_Action/corrupt.md"].action) == ("skipped", "waiting")
    assert results["Needs_Action/gone.md"].action == "gone"
    assert isinstance(results[blocked], H0Error)  # the pipeline logs it and retries this note only
    assert (vault_dir / blocked).read_bytes() == before  # never `awaiting_approval` without its draft
    with pytest.raises(H0Error):
        triage_email(blocked, context(vault_dir, LocalVault(Vault(vault_dir))))


def test_an_email_the_human_edits_during_triage_keeps_the_edit_and_gets_the_decision(vault_dir: Path):
    path = email(vault_dir, "edited", thread="t1")

    def human_saves() -> None:
        note = vault_dir / path
        note.write_text(note.read_text().replace("Could we move", "PS: call me. Could we move"))

    api = CountingVault(Vault(vault_dir), before_apply=human_saves)
    (result,) = triage_emails([path], context(vault_dir, api)).values()
    assert isinstance(result, Outcome) and result.action == "triaged"
    note = Vault(vault_dir).read_note(path)
    assert note.frontmatter["status"] == "awaiting_approval" and "PS: call me." in note.body


def test_given_a_later_email_typed_in_capitals_when_the_earlier_one_is_triaged_then_its_draft_is_stale(
    vault_dir: Path,
):
    """`type: Email` is an email (h0.vault.model): the thread has moved on past the earlier one."""
    first = email(vault_dir, "first", thread="t1", received="2026-11-21T09:00:00Z")
    later = vault_dir / email(vault_dir, "later", thread="t1", received="2026-11-21T10:00:00Z", status="done")
    later.write_text(later.read_text().replace("type: email", "type: Email"))
    result = triage_email(first, context(vault_dir, LocalVault(Vault(vault_dir))))
    assert result.action == "triaged"
    draft = Vault(vault_dir).read_note("Drafts/REPLY_first.md").frontmatter
    assert draft["stale"] is True and draft["stale_since"] == "[[later]]"


def test_notes_the_pipeline_has_just_read_are_not_read_again_and_their_hash_guards_the_write(vault_dir: Path):
    """The pipeline's look before a batch reads each note; triage takes those reads (one read a note)
    and reads only the ones it was not given. A human's save after the look is not overwritten: the
    look's hash guards the write, and the decision is merged into the note as it is now."""
    looked, other = email(vault_dir, "looked", thread="t1"), email(vault_dir, "other", thread="t2")
    seen = {looked: Vault(vault_dir).read_note(looked)}
    (vault_dir / looked).write_text((vault_dir / looked).read_text().replace("Could we", "PS: call me. Could we"))
    reads: list[list[str]] = []

    class Recording(CountingVault):
        def read_many(self, paths: Sequence[str]):
            reads.append(list(paths))
            return super().read_many(paths)

    results = triage_emails([looked, other], context(vault_dir, Recording(Vault(vault_dir))), seen)
    assert reads == [[other]]
    assert {r.action for r in results.values() if isinstance(r, Outcome)} == {"triaged"}
    note = Vault(vault_dir).read_note(looked)
    assert note.facts.status.word == "awaiting_approval" and "PS: call me." in note.body


def test_while_a_batch_is_written_another_is_planned_and_written_to_the_end(vault_dir: Path):
    """Two workers' batches never wait for each other: while one batch's changes are applied, another
    batch is read, planned and written to the end."""
    import threading

    first = [email(vault_dir, f"a{i:02}", thread=f"ta{i}") for i in range(5)]
    second = [email(vault_dir, f"b{i:02}", thread=f"tb{i}") for i in range(5)]
    answers: dict[str, Outcome | Exception] = {}

    def second_batch() -> None:
        answers.update(triage_emails(second, ctx))

    def while_the_first_is_written() -> None:
        other = threading.Thread(target=second_batch)
        other.start()
        other.join(10)
        assert not other.is_alive(), "the second batch could not plan while the first was being written"

    api = CountingVault(Vault(vault_dir), before_apply=while_the_first_is_written)
    ctx = context(vault_dir, api)
    answers.update(triage_emails(first, ctx))
    assert sorted(answers) == sorted(first + second)
    assert all(isinstance(answer, Outcome) and answer.action == "triaged" for answer in answers.values()), answers
