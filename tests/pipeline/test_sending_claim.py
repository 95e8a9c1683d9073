"""One computer sends a synced vault's drafts (h0.vault.sending_computer, h0.pipeline.sending_claim).

H0 remembers its sends on each computer, outside the vault, so a second computer running `h0 watch` on the
same synced vault would send every approved draft again. The claim in Logs/H0_Sender.md — written into the
vault, carried by the sync tool — names the one computer that sends. Here the other computer is a claim
written as its daemon writes it (what the sync tool brings), a real daemon on a real directory is this one,
and the outbox backend counts what is sent."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from h0.cli import main
from h0.config import load_settings
from h0.pipeline.daemon import Daemon
from h0.platform.machine import Machine
from h0.report.collect import collect_status
from h0.report.text import render_status
from h0.vault import Vault
from h0.vault.sending_computer import SENDER_NOTE, STALE_AFTER, read_claim, write_claim
from tests.pipeline.harness import FakeClocks, counting_sweeps, events, running_daemon, wait_until

LAPTOP = Machine("laptop-5f1e", "Mara's laptop")
DESKTOP = Machine("desktop-9a7c", "DESKTOP-MARA")
NOW = dt.datetime.now(dt.UTC)
SETTLE = 120.0  # SENDING_CLAIM_SETTLE_SECONDS's default


def approve_new(vault_dir: Path, name: str) -> None:
    (vault_dir / "Drafts" / name).write_text(f"---\nto: dana@example.com\nsubject: Lunch {name}\n---\nThursday?\n")
    (vault_dir / "Drafts" / name).rename(vault_dir / "Approved" / name)


@contextmanager
def desktop_left_a_draft(
    vault_dir: Path, clock: FakeClocks | None = None, name: str = "lunch.md"
) -> Iterator[tuple[Daemon, Callable[[int], bool]]]:
    """The desktop's daemon (on `clock`, when given), a draft approved and swept twice: what it did with it is
    the test's to say. Yields the daemon and its sweeps' counter (`counting_sweeps`)."""
    clocks = {} if clock is None else {"clocks": clock.clocks}
    with (
        running_daemon(vault_dir, machine=DESKTOP, sweep_interval_seconds=0.3, **clocks) as daemon,
        counting_sweeps(daemon) as sweeps,
    ):
        approve_new(vault_dir, name)
        daemon.sweep("test")
        assert sweeps(2)
        yield daemon, sweeps


def sent(vault_dir: Path) -> int:
    return len(list((vault_dir / "Outbox").glob("*.eml")))


def status_text(vault_dir: Path) -> str:
    return render_status(collect_status(load_settings(vault_path=vault_dir)))


def test_given_another_computers_live_claim_then_drafts_wait_until_this_computer_takes_sending(
    vault_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The laptop claimed sending (its claim synced in); the desktop's daemon sends nothing, says where the
    drafts are sent from, and sends them at once when the owner runs `h0 sending take` on it."""
    write_claim(Vault(vault_dir), LAPTOP, NOW)
    with desktop_left_a_draft(vault_dir) as (daemon, _):
        assert sent(vault_dir) == 0 and (vault_dir / "Approved" / "lunch.md").exists()
        assert [e["sent_from"] for e in events(vault_dir, event="sending_elsewhere")] == ["Mara's laptop"]
        said = status_text(vault_dir)
        assert "sent from Mara's laptop" in said and "h0 sending take" in said

        monkeypatch.setenv("H0_MACHINE", "desktop-9a7c")  # `h0 sending take` on the desktop
        monkeypatch.setenv("SENDING_CLAIM_SETTLE_SECONDS", "0")  # the laptop is known to be off: at once
        assert main(["sending", "take", "--vault", str(vault_dir)]) == 0
        assert "sends this vault's approved drafts from now on" in capsys.readouterr().out
        assert daemon.sending is not None and daemon.sending.look() is True
        assert wait_until(lambda: sent(vault_dir) == 1, timeout=30)
    assert len(events(vault_dir, event="sending_elsewhere")) == 1, "said once, not at every look"


def test_given_h0_sending_take_then_sending_begins_once_the_other_computer_had_time_to_see_it(
    vault_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The laptop sends; the owner takes sending on the desktop. The laptop may still send a draft approved
    before the new claim reaches it, so the desktop's sending begins after the settle period, and not before."""
    write_claim(Vault(vault_dir), LAPTOP, NOW)
    monkeypatch.setenv("H0_MACHINE", "desktop-9a7c")
    assert main(["sending", "take", "--vault", str(vault_dir)]) == 0
    assert "sends this vault's approved drafts from " in capsys.readouterr().out
    claim = read_claim(Vault(vault_dir))
    assert claim is not None and claim.names(DESKTOP) and claim.sends_from is not None
    assert SETTLE - 5 < (claim.sends_from - dt.datetime.now(dt.UTC)).total_seconds() <= SETTLE
    assert main(["sending", "--vault", str(vault_dir)]) == 0
    assert "it begins sending at" in capsys.readouterr().out
    assert main(["sending", "take", "--vault", str(vault_dir)]) == 0  # again: the same start, not a later one
    again = read_claim(Vault(vault_dir))
    assert again is not None and again.sends_from == claim.sends_from
    far = dt.datetime(2099, 1, 1, tzinfo=dt.UTC)  # a start written by hand, years away: taking resets it
    write_claim(Vault(vault_dir), DESKTOP, dt.datetime.now(dt.UTC), far)
    assert main(["sending", "take", "--vault", str(vault_dir)]) == 0
    reset = read_claim(Vault(vault_dir))
    assert reset is not None and reset.sends_from is not None
    assert reset.sends_from <= dt.datetime.now(dt.UTC) + dt.timedelta(seconds=SETTLE)


@pytest.mark.parametrize("whose", [LAPTOP, DESKTOP], ids=["another-computers", "its-own-after-hours-off"])
def test_given_a_claim_not_refreshed_for_hours_then_this_computer_takes_it_and_sends_once_it_settled(
    vault_dir: Path, whose: Machine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim went stale overnight (the laptop, or this desktop itself, was off). The desktop takes it, and
    sends what waited once the settle period passed with no other computer's claim arriving."""
    write_claim(Vault(vault_dir), whose, NOW - STALE_AFTER - dt.timedelta(minutes=5))
    monkeypatch.setenv("H0_MACHINE", DESKTOP.id)  # `h0 status` on the desktop
    clock = FakeClocks()
    with desktop_left_a_draft(vault_dir, clock) as (daemon, _):
        assert sent(vault_dir) == 0 and (vault_dir / "Approved" / "lunch.md").exists()
        assert "sending starts here in" in status_text(vault_dir)
        assert daemon.sending is not None and daemon.sending.look() is False
        clock.advance(SETTLE)
        assert daemon.sending.look() is True
        assert wait_until(lambda: sent(vault_dir) == 1, timeout=30)
    claim = read_claim(Vault(vault_dir))
    assert claim is not None and claim.machine == DESKTOP.id and claim.host == "DESKTOP-MARA"
    taken = [e["stale_claim_of"] for e in events(vault_dir, event="sending_taken")]
    assert taken == (["Mara's laptop"] if whose == LAPTOP else [])
    assert len(events(vault_dir, event="sending_settles")) == 1


def test_given_two_computers_waking_together_then_the_claim_the_sync_tool_keeps_sends_and_the_other_never(
    vault_dir: Path,
) -> None:
    """Both computers were off overnight; both find the laptop's claim stale and take it, each before the sync
    tool brought the other's. The sync tool keeps the laptop's (it overwrites the desktop's, or makes it a
    conflict copy): the desktop, still settling, yields, and the draft approved overnight is never sent here."""
    write_claim(Vault(vault_dir), LAPTOP, NOW - STALE_AFTER - dt.timedelta(hours=8))
    clock = FakeClocks()
    with desktop_left_a_draft(vault_dir, clock, "overnight.md") as (daemon, sweeps):
        mine = (vault_dir / SENDER_NOTE).read_text()
        (vault_dir / "Logs" / "H0_Sender.sync-conflict-20261128-080012-DSKTP01.md").write_text(mine)
        laptop_woke = dt.datetime.fromtimestamp(clock.clocks.wall(), dt.UTC)
        write_claim(Vault(vault_dir), LAPTOP, laptop_woke, laptop_woke + dt.timedelta(seconds=SETTLE))
        assert daemon.sending is not None and daemon.sending.look() is False
        daemon.sweep("test")
        assert sweeps(4)
        assert sent(vault_dir) == 0 and (vault_dir / "Approved" / "overnight.md").exists()
        assert "sent from Mara's laptop" in status_text(vault_dir)
        clock.advance(SETTLE)  # the desktop's own settle period is over: the laptop's claim still holds
        assert daemon.sending.look() is False and daemon.sending.elsewhere is not None
    assert sent(vault_dir) == 0


def test_given_the_sending_computer_when_another_takes_sending_then_it_stops_sending(vault_dir: Path) -> None:
    """The desktop sends (its own claim); the owner takes sending on the laptop, whose claim the sync tool
    brings: at its next look the desktop leaves approved drafts alone."""
    with (
        running_daemon(vault_dir, machine=DESKTOP, sweep_interval_seconds=0.3) as daemon,
        counting_sweeps(daemon) as sweeps,
    ):
        approve_new(vault_dir, "first.md")
        assert wait_until(lambda: sent(vault_dir) == 1, timeout=30)
        mine = read_claim(Vault(vault_dir))
        assert mine is not None and mine.names(DESKTOP)
        write_claim(Vault(vault_dir), LAPTOP, dt.datetime.now(dt.UTC))
        assert daemon.sending is not None and daemon.sending.look() is False
        approve_new(vault_dir, "second.md")
        daemon.sweep("test")
        assert sweeps(2)
        assert sent(vault_dir) == 1 and (vault_dir / "Approved" / "second.md").exists()


@pytest.mark.parametrize(
    "claim",
    [
        "---\nmachine: [unclosed\n---\n",  # frontmatter that does not parse
        "---\nhost: somewhere\n---\n",  # no machine named
        "---\nmachine: ''\nhost: x\n---\n",
        f"---\nmachine: laptop-5f1e\nhost: x\nseen: {(NOW - dt.timedelta(days=3)).year + 5}-01-01T00:00:00Z\n---\n",
    ],
    ids=["unparsable", "no-machine", "empty-machine", "seen-in-the-future"],
)
def test_given_a_claim_that_cannot_be_read_or_is_future_dated_then_this_computer_does_not_send(
    vault_dir: Path, claim: str
) -> None:
    """Fail closed: a claim note an agent or a sync conflict mangled holds until it is fixed or taken."""
    (vault_dir / SENDER_NOTE).write_text(claim)
    with desktop_left_a_draft(vault_dir) as (daemon, _):
        assert sent(vault_dir) == 0
        assert daemon.sending is not None and daemon.sending.elsewhere is not None
    assert (vault_dir / SENDER_NOTE).read_text() == claim, "another computer's claim is never overwritten"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_given_a_fifo_named_as_the_claim_then_the_daemon_starts_and_does_not_send(vault_dir: Path) -> None:
    os.mkfifo(vault_dir / SENDER_NOTE)
    with running_daemon(vault_dir, machine=DESKTOP) as daemon:
        assert daemon.sending is not None and daemon.sending.elsewhere is not None
        assert "cannot be read" in status_text(vault_dir)


def test_h0_sending_says_which_computer_sends(vault_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sending", "--vault", str(vault_dir)]) == 0
    assert "No computer has claimed sending yet" in capsys.readouterr().out
    write_claim(Vault(vault_dir), LAPTOP, NOW)
    assert main(["sending", "--vault", str(vault_dir)]) == 0
    assert "sent from Mara's laptop" in capsys.readouterr().out


def test_this_machine_is_the_same_each_time_and_h0_machine_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    first = Machine.this()
    assert first == Machine.this() and len(first.id) == 16 and first.name
    assert Machine.this(" studio-mac ") == Machine("studio-mac", "studio-mac")
    monkeypatch.setenv("H0_MACHINE", "studio-mac")
    assert load_settings().h0_machine == "studio-mac"


def test_h0_doctor_warns_when_another_computer_sends(vault_dir: Path) -> None:
    import subprocess

    from tests.conftest import H0_BIN, subprocess_env

    args = [H0_BIN, "doctor", "--no-servers"]
    env = subprocess_env(VAULT_PATH=str(vault_dir))
    before = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    assert "not sent from this computer" not in before.stdout
    write_claim(Vault(vault_dir), LAPTOP, NOW)
    after = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    assert "! approved drafts are not sent from this computer — drafts are sent from Mara's laptop" in after.stdout


def test_h0_sweep_on_a_computer_that_does_not_send_leaves_drafts_and_is_no_failure(vault_dir: Path) -> None:
    """`h0 sweep` (a cron job, say) on the computer that does not send: the draft waits, the pass says so, and
    the exit is not "work failed" — the other computer sends it."""
    from tests.pipeline.harness import sweep_once

    write_claim(Vault(vault_dir), LAPTOP, NOW)
    (vault_dir / "Approved" / "lunch.md").write_text("---\nto: dana@example.com\nsubject: Lunch\n---\nThursday?\n")
    old = NOW.timestamp() - 120
    os.utime(vault_dir / "Approved" / "lunch.md", (old, old))
    daemon = sweep_once(vault_dir, h0_machine=DESKTOP.id)
    assert sent(vault_dir) == 0 and (vault_dir / "Approved" / "lunch.md").exists()
    assert not daemon.tally.failed
    assert daemon.tally.counts_line() == "h0 sweep: 1 left in Approved/ (sent from Mara's laptop)"
