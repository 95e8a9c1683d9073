"""The owner's past replies while a watcher reports every note (the daemon): Done/ is listed once, then
only what the watcher reports is read again — and a reply edited, made private or removed since it was
read is seen as it is now, never served from the earlier read."""

from __future__ import annotations

from pathlib import Path

import pytest

from h0.config import Settings
from h0.drafting.past import PastReplies
from h0.drafting.service import Drafting
from h0.vault import init_vault
from tests.drafting.conftest import sent_by_h0

TOM = "tom@fischer.example"


def sent(root: Path, name: str, text: str, *, private: bool = False) -> Path:
    path = root / "Done" / f"{name}.md"
    path.write_text(
        f"---\nto: {TOM}\nsubject: 'Re: plans'\nstatus: sent\nsent_at: 2026-01-05T10:00:00Z\n"
        f"rfc822_message_id: <{name}@berg.example>\n{'private: true' + chr(10) if private else ''}---\n{text}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    init_vault(root)
    sent(root, "to-tom-1", "Hi Tom,\n\nSounds good, see you then.\n\n— J.")
    return root


def watched_replies(root: Path) -> PastReplies:
    past = PastReplies(root, owner=sent_by_h0(root, Settings(vault_path=root).h0_state_dir))
    past.watched_by(lambda: True)
    return past


def texts(past: PastReplies) -> list[str]:
    return [reply.text for reply in past.to_address(TOM, 10)]


def test_given_a_watched_vault_when_a_read_reply_is_made_private_then_it_is_no_longer_a_past_reply(vault):
    past = watched_replies(vault)
    assert texts(past) == ["Hi Tom,\n\nSounds good, see you then.\n\n— J."]

    path = sent(vault, "to-tom-1", "Hi Tom,\n\nSounds good, see you then.\n\n— J.", private=True)
    past.changed(str(path))

    assert texts(past) == []


def test_given_a_watched_vault_when_a_read_reply_is_edited_then_its_new_words_are_learned(vault):
    past = watched_replies(vault)
    assert len(texts(past)) == 1

    path = sent(vault, "to-tom-1", "Hi Tom,\n\nFriday it is, then.\n\n— J.")
    sent_by_h0(vault, Settings(vault_path=vault).h0_state_dir)  # its content changed: vouched for again
    past.changed(str(path))

    assert texts(past) == ["Hi Tom,\n\nFriday it is, then.\n\n— J."]


def test_given_a_watched_vault_when_a_reply_is_filed_or_removed_then_the_report_is_enough(vault):
    past = watched_replies(vault)
    assert len(texts(past)) == 1

    later = sent(vault, "to-tom-2", "Hi Tom,\n\nThe draft is attached.\n\n— J.")
    sent_by_h0(vault, Settings(vault_path=vault).h0_state_dir)
    past.changed(str(later))
    assert len(texts(past)) == 2

    (vault / "Done" / "to-tom-1.md").unlink()
    past.changed(str(vault / "Done" / "to-tom-1.md"))
    assert texts(past) == ["Hi Tom,\n\nThe draft is attached.\n\n— J."]


def test_given_lost_events_when_the_watcher_says_so_then_done_is_listed_again(vault):
    past = watched_replies(vault)
    assert len(texts(past)) == 1

    sent(vault, "to-tom-1", "Hi Tom,\n\nSounds good, see you then.\n\n— J.", private=True)  # never reported
    past.changed(None)  # the watcher lost events (an inotify overflow)

    assert texts(past) == []


def test_given_a_folder_spelled_otherwise_when_a_note_there_is_reported_then_done_is_listed_again(vault):
    past = watched_replies(vault)
    assert len(texts(past)) == 1

    sent(vault, "to-tom-1", "Hi Tom,\n\nSounds good, see you then.\n\n— J.", private=True)
    past.changed(str(vault.parent / "elsewhere" / "Done" / "to-tom-1.md"))  # a symlinked vault's other spelling

    assert texts(past) == []


def test_given_a_watcher_feeds_drafting_when_a_reply_is_made_private_then_drafting_forgets_it(vault):
    state = Settings(vault_path=vault).h0_state_dir
    drafting = Drafting(vault, owner=sent_by_h0(vault, state), watched=lambda: True)
    assert [r.path for r in drafting.past.to_address(TOM)] == ["Done/to-tom-1.md"]

    path = sent(vault, "to-tom-1", "Hi Tom,\n\nSounds good, see you then.\n\n— J.", private=True)
    drafting.note_changed(str(path))  # what the daemon's watcher reports (h0.pipeline.daemon)

    assert drafting.past.to_address(TOM) == []


def test_given_a_running_daemon_its_watcher_s_reports_reach_its_drafting_state(vault):
    """Given the daemon (its native watcher feeds the drafting state it holds), when a past reply is made
    private on disk, then that drafting state forgets it — told by the daemon, not by a look at the vault."""
    from tests.pipeline.harness import running_daemon, wait_until

    with running_daemon(vault) as daemon:
        sent_by_h0(vault, daemon.settings.h0_state_dir)
        drafting = daemon.started_context().drafting_state()
        assert drafting.watched()
        assert [r.path for r in drafting.past.to_address(TOM)] == ["Done/to-tom-1.md"]

        sent(vault, "to-tom-1", "Hi Tom,\n\nSounds good, see you then.\n\n— J.", private=True)

        assert wait_until(lambda: drafting.past.to_address(TOM) == [])
    assert not drafting.watched()  # the daemon stopped: drafting compares its index with the vault again
