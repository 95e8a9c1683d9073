"""Hostile notes through the real daemon and `h0 sweep`: every failure typed and reported once on the
note itself, paths from notes confined, and the servers running the installed H0 only.

The passes run in process (tests.pipeline.harness.sweep_once: the daemon `h0 sweep` builds); the
`h0 sweep` command itself runs as a real process where its processes are the point (the servers it
spawns run the installed H0)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from h0.vault import Vault
from h0.vault.values import inbox_source
from tests.conftest import H0_BIN, subprocess_env
from tests.pipeline.harness import (
    approve,
    events,
    frontmatter,
    outbox,
    running_daemon,
    sweep_once,
    wait_until,
    write_draft,
)


def sweep(vault_dir: Path, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [H0_BIN, "sweep"],
        env=subprocess_env(VAULT_PATH=str(vault_dir), LOG_LEVEL="INFO", **env),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    "draft",
    [
        {"to": "bob@gmial.com"},  # a typo domain
        {"to": "not-an-address"},  # a bad address
        {"to": "bob@example.com", "cc": "carol@@example.com"},  # a bad cc
        {"to": "bob@example.com", "attachments": "[Files/missing.pdf]"},  # a missing attachment
    ],
)
def test_given_an_unsendable_draft_when_swept_repeatedly_then_it_is_reported_once_on_the_note_and_never_crashes(
    vault_dir: Path, draft: dict
):
    """Given an approved draft that can never be sent as it is, when `h0 sweep` runs three times, then
    no handler error happens, nothing is sent, the draft is back in Drafts/ with `h0_error` and
    `h0_error_at`, the refusal is logged once, and an ordinary draft beside it is sent."""
    write_draft(vault_dir, "Approved", "bad.md", **draft)
    write_draft(vault_dir, "Approved", "fine.md", to="amy@example.org")
    for _ in range(3):
        assert not sweep_once(vault_dir).tally.failed  # `h0 sweep` exits 0: no handler crashed, nothing failed
    returned = frontmatter(vault_dir, "Drafts/bad.md")
    assert returned["h0_error"] and returned["h0_error_at"] and returned["status"] == "not_sent"
    assert len(events(vault_dir, event="send_refused")) == 1
    assert not events(vault_dir, event="handler_error")
    assert [m["To"] for m in outbox(vault_dir)] == ["amy@example.org"]


def test_given_a_fixed_draft_when_approved_again_then_it_is_sent_and_the_error_is_cleared(vault_dir: Path):
    write_draft(vault_dir, "Drafts", "d.md", to="bob@gmial.com")
    with running_daemon(vault_dir):
        approve(vault_dir, "d.md")
        assert wait_until(lambda: events(vault_dir, event="send_refused"))
        path = vault_dir / "Drafts/d.md"
        path.write_text(path.read_text().replace("bob@gmial.com", "bob@gmail.com"))
        approve(vault_dir, "d.md")
        assert wait_until(lambda: (vault_dir / "Done/d.md").exists())
    done = frontmatter(vault_dir, "Done/d.md")
    assert done["status"] == "sent" and not {"h0_error", "h0_error_code", "h0_error_at"} & set(done)
    assert [m["To"] for m in outbox(vault_dir)] == ["bob@gmail.com"]


@pytest.mark.parametrize(
    "source",
    [
        "Needs_Action/../H0_Rules.md",
        "[[Needs_Action/../H0_Rules]]",
        "Drafts/other.md",
        "Needs_Action/sub/../../Drafts/other.md",
        "/etc/passwd",
        "[[../H0_Rules]]",
    ],
)
def test_given_a_source_outside_needs_action_when_the_reply_is_sent_then_nothing_else_is_filed(
    vault_dir: Path, source: str
):
    """Given a draft whose `source:` points outside Needs_Action/ (by `..`, a wikilink, an absolute
    path), when it is sent, then only the draft moves to Done/: the rules file and other notes stay
    byte-identical where they are."""
    (vault_dir / "Drafts/other.md").write_text("---\nto: x@example.com\nsubject: s\n---\nother\n")
    before = {p: p.read_bytes() for p in (vault_dir / "H0_Rules.md", vault_dir / "Drafts/other.md") if p.exists()}
    write_draft(vault_dir, "Approved", "reply.md", source=repr(source))
    assert not sweep_once(vault_dir).tally.failed
    assert (vault_dir / "Done/reply.md").exists()
    assert {p: p.read_bytes() for p in before} == before
    assert events(vault_dir, event="source_not_filed")


def test_given_source_spellings_of_an_email_note_then_they_resolve_inside_needs_action(vault_dir: Path):
    paths = Vault(vault_dir).paths
    assert inbox_source(paths, "Needs_Action/EMAIL_1.md") == "Needs_Action/EMAIL_1.md"
    assert inbox_source(paths, "[[EMAIL_1]]") == "Needs_Action/EMAIL_1.md"
    assert inbox_source(paths, "[[Needs_Action/EMAIL_1|the email]]") == "Needs_Action/EMAIL_1.md"
    assert inbox_source(paths, "Needs_Action/./EMAIL_1.md") == "Needs_Action/EMAIL_1.md"
    (vault_dir / "Needs_Action/linked.md").symlink_to(vault_dir / "H0_Rules.md")
    assert inbox_source(paths, "Needs_Action/linked.md") is None
    assert inbox_source(paths, ["Needs_Action/EMAIL_1.md"]) is None


def test_given_an_h0_package_in_the_working_folder_then_the_servers_run_the_installed_h0(
    vault_dir: Path, tmp_path: Path
):
    """Given a folder holding an `h0/` package and an `h0.py` that would leave a mark if imported, when
    `h0 sweep` runs from there, then the mark never appears and the ordinary draft is sent."""
    trap = tmp_path / "trap"
    (trap / "h0").mkdir(parents=True)
    mark = tmp_path / "imported.txt"
    payload = f"open({str(mark)!r}, 'a').write('imported\\n')\n"
    (trap / "h0" / "__init__.py").write_text(payload)
    (trap / "h0" / "__main__.py").write_text(payload)
    (trap / "h0.py").write_text(payload)
    write_draft(vault_dir, "Approved", "ok.md")
    result = sweep(vault_dir, cwd=trap)
    assert result.returncode == 0, result.stderr
    assert not mark.exists()
    assert (vault_dir / "Done/ok.md").exists()


def test_given_a_control_character_subject_then_send_refuses_once_without_a_retry_loop(vault_dir: Path):
    note = vault_dir / "Approved/bel.md"
    note.write_text('---\nto: bob@example.com\nsubject: "Ring\\aring \\e[31mred"\n---\nHi\n')  # YAML escapes: BEL, ESC
    os.utime(note, (time.time() - 60, time.time() - 60))
    assert "\x07" in frontmatter(vault_dir, "Approved/bel.md")["subject"]
    for _ in range(2):  # the second pass finds nothing left to retry (run_once's timeout catches a loop)
        assert not sweep_once(vault_dir, timeout=60).tally.failed
    assert frontmatter(vault_dir, "Drafts/bel.md")["h0_error_code"] == "invalid_request"
    assert outbox(vault_dir) == [] and not events(vault_dir, event="handler_error")
