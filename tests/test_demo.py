"""The demo tells the truth: the first run puts the examples in place (git tracks only the demo vault's
skeleton, so running the demo never leaves the checkout dirty), one email gets one reply, approving it sends,
and `h0 demo reset` puts it all back (and forgets the send, so a second approval sends again) — but only in
H0's demo vault, on the outbox backend, with no daemon running and no real mail ever sent from it. Through
`h0.cli.main`, in-process."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from h0.cli import EXIT_FAILED, EXIT_LOCKED, EXIT_OK, main
from h0.cli.demo import EXAMPLES, MARKER, SEEDED, seed_demo, shipped
from h0.vault.layout import FOLDERS
from tests.conftest import ROOT
from tests.pipeline.harness import frontmatter, outbox, running_daemon

BUNDLED = ROOT / "vault"
SHIPPED = shipped()
REPLY = "Drafts/reply-example-001.md"
HAS_GIT = shutil.which("git") is not None and (ROOT / ".git").exists()


pytestmark = pytest.mark.usefixtures("loguru_restored")


def skeleton(root: Path) -> Path:
    """A copy of what git tracks of the bundled vault: its folders, .gitkeep files and the marker (not
    whatever a local `h0 watch` on the checkout may have left there)."""
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
        if (BUNDLED / folder / ".gitkeep").exists():
            shutil.copy2(BUNDLED / folder / ".gitkeep", root / folder / ".gitkeep")
    shutil.copy2(BUNDLED / MARKER, root / MARKER)
    return root


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo vault as its first run leaves it before doing anything: the skeleton and the examples."""
    root = skeleton(tmp_path / "demo")
    seed_demo(root)
    monkeypatch.setenv("VAULT_PATH", str(root))
    monkeypatch.setenv("LOG_LEVEL", "WARNING")
    return root


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def approve_reply(root: Path) -> None:
    """The human drags the reply into Approved/ (a rename). `h0 sweep` cannot see that it was a
    move, so the note must also be past the settle period for in-place writes."""
    then = time.time() - 60
    os.utime(root / REPLY, (then, then))
    (root / REPLY).rename(root / "Approved/reply-example-001.md")


def files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()}


# -- the bundled vault --------------------------------------------------------------------------


def test_the_first_run_puts_exactly_what_demo_reset_restores_in_place_once(tmp_path: Path, capsys, monkeypatch):
    root = skeleton(tmp_path / "demo")
    assert not any((root / rel).exists() for rel in SHIPPED if rel != MARKER)
    monkeypatch.setenv("VAULT_PATH", str(root))
    code, _, err = run(capsys, "sweep")  # the first command that runs the demo
    assert code == EXIT_OK, err
    assert (root / SEEDED).is_file()
    assert frontmatter(root, "Needs_Action/EMAIL_example-001.md")["draft"] == REPLY  # triaged: no second reply
    assert frontmatter(root, REPLY)["source"] == "Needs_Action/EMAIL_example-001.md"
    assert frontmatter(root, "Done/EMAIL_example-002.md")["decision"] == "archive"  # the newsletter, at once
    (root / "Done/EMAIL_example-002.md").unlink()
    assert seed_demo(root) == []  # once: what a run moved or deleted is not put back but by `h0 demo reset`

    fresh = skeleton(tmp_path / "fresh")
    assert sorted(seed_demo(fresh)) == sorted(rel for rel in SHIPPED if rel != MARKER)
    for rel, text in SHIPPED.items():
        assert (fresh / rel).read_bytes() == text.encode("utf-8"), rel


def test_a_checkout_whose_demo_ran_before_the_examples_were_untracked_gets_no_second_copy(tmp_path: Path):
    root = skeleton(tmp_path / "demo")
    (root / "Done/reply-example-001.md").write_text(EXAMPLES[REPLY], encoding="utf-8")
    assert seed_demo(root) == [] and not (root / REPLY).exists() and (root / SEEDED).exists()


def test_a_vault_without_the_marker_is_never_seeded(vault_dir: Path):
    assert seed_demo(vault_dir) == [] and not (vault_dir / SEEDED).exists()
    assert not (vault_dir / "Needs_Action/EMAIL_example-001.md").exists()


@pytest.mark.skipif(not HAS_GIT, reason="needs a git checkout")
def test_git_tracks_the_skeleton_and_the_marker_and_ignores_all_a_demo_run_writes_or_moves():
    tracked = subprocess.run(["git", "ls-files", "vault"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert {line for line in tracked.stdout.splitlines() if not line.endswith("/.gitkeep")} == {f"vault/{MARKER}"}

    def ignored(rel: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", f"vault/{rel}"], cwd=ROOT, check=False).returncode == 0

    runtime = [
        *(rel for rel in SHIPPED if rel != MARKER),
        "Logs/h0_2026-01-01.jsonl",
        "Outbox/x.eml",
        "Done/x.md",
        "Needs_Action/EMAIL_x.md",
        "Drafts/REPLY_EMAIL_x.md",
        "Approved/x.md",
        "Rejected/x.md",
        "Logs/failed/x.md",
        "H0_Dashboard.md",
        "Briefings/2026-01-01.md",
        ".h0/daemon.lock",
        SEEDED,
        "H0_Memory.md",
    ]
    assert [rel for rel in runtime if not ignored(rel)] == []


@pytest.mark.skipif(not HAS_GIT, reason="needs git")
def test_running_the_demo_then_resetting_it_leaves_the_checkout_clean(tmp_path: Path, capsys, monkeypatch):
    """A checkout as cloned (the repo's .gitignore and what git tracks of vault/), the README's demo run in it:
    triage, an approval, a send, `h0 demo reset` — and `git status` shows nothing to commit at each step."""
    checkout = tmp_path / "checkout"
    skeleton(checkout / "vault")
    shutil.copy2(ROOT / ".gitignore", checkout / ".gitignore")

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=checkout,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "as cloned")
    monkeypatch.setenv("VAULT_PATH", str(checkout / "vault"))
    root = checkout / "vault"
    assert run(capsys, "sweep")[0] == EXIT_OK
    approve_reply(root)
    assert run(capsys, "sweep")[0] == EXIT_OK and len(outbox(root)) == 1
    assert git("status", "--porcelain", "--untracked-files=all") == ""
    assert run(capsys, "demo", "reset")[0] == EXIT_OK
    assert git("status", "--porcelain", "--untracked-files=all") == ""


def test_a_demo_cloned_again_at_the_same_path_sends_its_example_again(tmp_path: Path, capsys, monkeypatch):
    """H0's ledger lives outside the vault, by the vault's path: a demo deleted and cloned again at the same
    path would find its example 'already sent'. Its first run forgets the former demo's sends."""
    root = skeleton(tmp_path / "demo")
    monkeypatch.setenv("VAULT_PATH", str(root))
    assert run(capsys, "sweep")[0] == EXIT_OK
    approve_reply(root)
    assert run(capsys, "sweep")[0] == EXIT_OK and len(outbox(root)) == 1
    shutil.rmtree(root)
    skeleton(root)  # the clone again, where the first one was
    assert run(capsys, "sweep")[0] == EXIT_OK
    approve_reply(root)
    code, out, err = run(capsys, "sweep")
    assert code == EXIT_OK, err
    assert out.startswith("h0 sweep: 1 sent") and len(outbox(root)) == 1
    assert frontmatter(root, "Done/reply-example-001.md")["status"] == "sent"


# -- one email, one reply; approve sends -------------------------------------------------------


def test_given_the_demo_when_swept_then_each_email_gets_at_most_one_reply_and_approving_sends_it(demo: Path, capsys):
    code, out, err = run(capsys, "sweep")
    assert code == EXIT_OK, err
    assert out.strip() == "h0 sweep: 1 triaged"  # the newsletter; Dana's email was triaged already
    assert sorted(p.name for p in (demo / "Drafts").glob("*.md")) == ["reply-example-001.md"]
    assert frontmatter(demo, "Done/EMAIL_example-002.md")["decision"] == "archive"
    assert frontmatter(demo, "Needs_Action/EMAIL_example-001.md")["draft"] == REPLY

    approve_reply(demo)
    code, out, err = run(capsys, "sweep")
    assert code == EXIT_OK, err
    assert out.strip() == "h0 sweep: 1 sent\n  ✉ Approved/reply-example-001.md → to dana.rivera@example.com"
    (message,) = outbox(demo)
    assert message["To"] == "dana.rivera@example.com" and "Friday at 10:00 works for me" in message.get_content()
    assert "not sent below" not in message.get_content()
    assert frontmatter(demo, "Done/reply-example-001.md")["status"] == "sent"
    assert frontmatter(demo, "Done/EMAIL_example-001.md")["replied_with"] == "Done/reply-example-001.md"
    assert not list((demo / "Needs_Action").glob("*.md"))


def test_given_the_demo_under_h0_watch_then_dana_gets_no_second_draft(demo: Path):
    from h0.config import load_settings
    from h0.triage import Triager
    from tests.pipeline.harness import wait_until

    with running_daemon(demo, triager=Triager.from_settings(load_settings(vault_path=demo), demo)):
        assert wait_until(lambda: (demo / "Done/EMAIL_example-002.md").exists())
    assert sorted(p.name for p in (demo / "Drafts").glob("*.md")) == ["reply-example-001.md"]


# -- h0 demo reset ------------------------------------------------------------------------------


def test_demo_reset_restores_the_shipped_files_deletes_what_the_demo_wrote_and_forgets_the_send(
    demo: Path, capsys, tmp_path: Path
):
    approve_reply(demo)
    assert run(capsys, "sweep")[:2] == (
        EXIT_OK,
        ("h0 sweep: 1 sent, 1 triaged\n  ✉ Approved/reply-example-001.md → to dana.rivera@example.com\n"),
    )
    assert (demo / "H0_Dashboard.md").exists() and list((demo / "Briefings").glob("*.md"))
    assert list((demo / "Logs").glob("*.jsonl")) and len(outbox(demo)) == 1
    # What else a person may have done to the demo: new notes, an edited rules file, a link out.
    (demo / "Needs_Action/EMAIL_mine.md").write_text("---\nstatus: pending\n---\nmine\n")
    (demo / "Logs/failed/bounced.md").write_text("---\nstatus: failed\n---\n")
    (demo / "H0_Rules.md").write_text("edited\n")
    outside = tmp_path / "outside.md"
    outside.write_text("not the demo's\n")
    (demo / "Drafts/link.md").symlink_to(outside)
    (demo / "Done/sub").mkdir()  # a folder a person made: reset deletes files H0 wrote, not folders
    (demo / "Done/sub/keep.md").write_text("x\n")

    code, out, err = run(capsys, "demo", "reset")
    assert code == EXIT_OK, err
    assert out.startswith(f"Reset the demo vault {demo}: restored 4 example file(s), removed ")
    assert "forgot 1 send(s)" in out
    for rel, text in SHIPPED.items():
        assert (demo / rel).read_bytes() == text.encode("utf-8"), rel
    left = {f for f in files(demo) - set(SHIPPED) if not f.endswith(".gitkeep") and not f.startswith(".h0/")}
    assert left == {"Done/sub/keep.md"}
    assert outside.read_text() == "not the demo's\n"  # the link went, never what it pointed at
    assert all((demo / folder / ".gitkeep").exists() for folder in FOLDERS if (BUNDLED / folder / ".gitkeep").exists())

    # The ledger forgot the send: approving the example again sends it again.
    approve_reply(demo)
    code, out, err = run(capsys, "sweep")
    assert code == EXIT_OK and out.splitlines()[0] == "h0 sweep: 1 sent, 1 triaged", err
    assert len(outbox(demo)) == 1 and frontmatter(demo, "Done/reply-example-001.md")["status"] == "sent"


def test_demo_reset_on_a_vault_as_shipped_changes_nothing(demo: Path, capsys):
    before = {rel: (demo / rel).read_bytes() for rel in files(demo) if not rel.startswith(".h0/")}
    code, out, _ = run(capsys, "demo", "reset")
    assert code == EXIT_OK
    assert "restored 0 example file(s), removed 0 file(s)" in out and "forgot 0 send(s)" in out
    assert {rel: (demo / rel).read_bytes() for rel in files(demo) if not rel.startswith(".h0/")} == before


def test_demo_reset_refuses_a_vault_without_the_marker(vault_dir: Path, capsys, monkeypatch):
    """A real vault (`h0 init` never writes the marker) is never wiped."""
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    (vault_dir / "Needs_Action/EMAIL_real.md").write_text("---\nstatus: pending\n---\nreal mail\n")
    (vault_dir / "Done/old.md").write_text("---\nstatus: sent\n---\n")
    before = files(vault_dir)
    code, out, err = run(capsys, "demo", "reset")
    assert code == EXIT_FAILED and out == ""
    assert err.startswith(f"h0 demo reset: {vault_dir} is not H0's demo vault (it has no {MARKER} file)")
    assert files(vault_dir) == before


def test_demo_reset_refuses_a_marker_that_is_a_symlink(demo: Path, capsys, tmp_path: Path):
    (demo / MARKER).unlink()
    (tmp_path / "elsewhere").write_text("x")
    (demo / MARKER).symlink_to(tmp_path / "elsewhere")
    (demo / "Done/keep.md").write_text("---\nstatus: sent\n---\n")
    code, _, err = run(capsys, "demo", "reset")
    assert code == EXIT_FAILED and "is not H0's demo vault" in err
    assert (demo / "Done/keep.md").exists()


def test_demo_reset_refuses_a_vault_set_to_send_real_mail(demo: Path, capsys, monkeypatch):
    (demo / "Done/keep.md").write_text("---\nstatus: sent\n---\n")
    monkeypatch.setenv("MAIL_BACKEND", "smtp")
    code, _, err = run(capsys, "demo", "reset")
    assert code == EXIT_FAILED
    assert err.startswith("h0 demo reset: MAIL_BACKEND=smtp: the demo runs on the outbox backend")
    assert (demo / "Done/keep.md").exists()


def test_demo_reset_refuses_a_vault_that_once_sent_real_mail(demo: Path, capsys, monkeypatch):
    """The marker and the outbox backend are not enough: the ledger remembers a real SMTP send."""
    from aiosmtpd.controller import Controller

    class Sink:
        async def handle_DATA(self, server, session, envelope):  # aiosmtpd's hook name
            return "250 OK"

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    controller = Controller(Sink(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        for name, value in {
            "MAIL_BACKEND": "smtp",
            "SMTP_HOST": "127.0.0.1",
            "SMTP_PORT": str(port),
            "SMTP_SECURE": "none",
            "SMTP_FROM": "me@example.com",
        }.items():
            monkeypatch.setenv(name, value)
        approve_reply(demo)
        code, out, err = run(capsys, "sweep")
        assert code == EXIT_OK and "1 sent" in out, err
    finally:
        controller.stop()
    for name in ("SMTP_HOST", "SMTP_PORT", "SMTP_SECURE", "SMTP_FROM"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("MAIL_BACKEND", "outbox")
    code, _, err = run(capsys, "demo", "reset")
    assert code == EXIT_FAILED
    assert "has sent real mail (1 send(s) through gmail or smtp" in err
    assert frontmatter(demo, "Done/reply-example-001.md")["status"] == "sent"  # left alone


def test_demo_reset_refuses_while_a_daemon_holds_the_vault(demo: Path, capsys):
    with running_daemon(demo):
        (demo / "Done/keep.md").write_text("---\nstatus: sent\n---\n")
        code, _, err = run(capsys, "demo", "reset")
        assert code == EXIT_LOCKED
        assert err.startswith("h0 demo reset: ") and "Stop it first" in err
        assert (demo / "Done/keep.md").exists()


def test_the_readme_restores_the_demo_with_h0_demo_reset_not_git():
    text = " ".join((ROOT / "README.md").read_text().split())
    assert "git checkout vault/" not in text and "git clean" not in text
    assert "run `.venv/bin/h0 demo reset`" in text and "`.h0-demo` marker" in text


@pytest.mark.parametrize("folder", ["Done", "Logs", "Outbox", "Needs_Action", "Briefings"])
def test_demo_reset_refuses_a_vault_whose_folder_links_elsewhere(demo: Path, capsys, tmp_path: Path, folder: str):
    """A symlinked folder would make "delete what the demo wrote" delete someone else's files."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.md").write_text("not the demo's\n")
    (elsewhere / "precious.jsonl").write_text("{}\n")
    (elsewhere / "precious.eml").write_text("x\n")
    shutil.rmtree(demo / folder, ignore_errors=True)
    (demo / folder).symlink_to(elsewhere, target_is_directory=True)
    code, out, err = run(capsys, "demo", "reset")
    assert code == EXIT_FAILED and out == ""
    assert err.startswith(f"h0 demo reset: {folder} in {demo} is a link to another folder")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["precious.eml", "precious.jsonl", "precious.md"]
