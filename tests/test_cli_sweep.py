"""`h0 sweep` as a person runs it: one pass, one summary line on stdout, an exit code that says
whether something it tried failed (0 done, 4 some work failed, 1 could not run, 2 usage), and
mail that cannot work at all said in one actionable line — in-process through `h0.cli.main`,
and as real processes where the exit status and stderr of the real command are the point."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from h0.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, EXIT_WORK_FAILED, main
from tests.conftest import H0_BIN, subprocess_env
from tests.pipeline.harness import events, frontmatter, write_draft

EMAIL = """\
---
type: email
status: pending
message_id: m-1
from: "Dana <dana@example.com>"
to: you@example.com
subject: Can we meet on Friday?
---
```text
Could we meet on Friday at 10:00?
```
"""


pytestmark = pytest.mark.usefixtures("loguru_restored")


@pytest.fixture
def sweep_env(monkeypatch: pytest.MonkeyPatch, vault_dir: Path):
    monkeypatch.setenv("VAULT_PATH", str(vault_dir))
    monkeypatch.setenv("LOG_LEVEL", "INFO")
    monkeypatch.setenv("RETRY_DELAY_MS", "50")
    return monkeypatch


def sweep(capsys, *args: str) -> tuple[int, list[str], str]:
    code = main(["sweep", *args])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_given_a_send_a_rejection_and_an_email_when_swept_then_one_line_says_so_and_it_exits_0(
    vault_dir: Path, sweep_env, capsys
):
    write_draft(vault_dir, "Approved", "go.md")
    write_draft(vault_dir, "Rejected", "no.md")
    (vault_dir / "Needs_Action/EMAIL_m-1.md").write_text(EMAIL)
    code, out, err = sweep(capsys)
    assert code == EXIT_OK, err
    assert out == [
        "h0 sweep: 1 sent, 1 rejected (filed in Done/), 1 triaged",
        "  ✉ Approved/go.md → to bob@example.com",
    ]
    assert frontmatter(vault_dir, "Done/go.md")["status"] == "sent"
    assert frontmatter(vault_dir, "Done/no.md")["decision"] == "rejected"
    assert frontmatter(vault_dir, "Needs_Action/EMAIL_m-1.md")["status"] == "awaiting_approval"
    assert "retry in" not in err and "Traceback" not in err


def test_given_nothing_to_do_when_swept_then_it_says_nothing_to_do_and_exits_0(vault_dir: Path, sweep_env, capsys):
    write_draft(vault_dir, "Drafts", "later.md", status="pending_approval")  # waits for the human, not for H0
    code, out, err = sweep(capsys)
    assert code == EXIT_OK, err
    assert out == ["h0 sweep: nothing to do"]
    assert (vault_dir / "Drafts/later.md").exists()


def test_given_a_draft_without_a_recipient_then_it_goes_back_to_drafts_and_that_is_not_a_failure(
    vault_dir: Path, sweep_env, capsys
):
    """A refused draft is done as designed (the reason is on it, the human fixes it): exit 0."""
    bad = vault_dir / "Approved/bad.md"
    bad.write_text("---\nsubject: nobody to send to\n---\nHello\n")
    write_draft(vault_dir, "Approved", "good.md")
    os.utime(bad, (time.time() - 60, time.time() - 60))
    code, out, err = sweep(capsys)
    assert code == EXIT_OK, err
    assert out == [
        "h0 sweep: 1 sent, 1 refused (back in Drafts/) — see h0 status",
        "  ✉ Approved/good.md → to bob@example.com",
    ]
    assert frontmatter(vault_dir, "Drafts/bad.md")["h0_error_code"] == "invalid_request"


def test_given_an_smtp_server_that_is_down_when_swept_then_it_exits_4_naming_the_draft(vault_dir: Path):
    """The real command in a real process: the send fails (one attempt: the mail server answers at once),
    the draft stays in Approved/ for the next pass, the summary counts the failure, and nothing
    promises a retry this process won't make."""
    write_draft(vault_dir, "Approved", "down.md")
    env = subprocess_env(
        VAULT_PATH=str(vault_dir),
        MAIL_BACKEND="smtp",
        SMTP_HOST="127.0.0.1",
        SMTP_PORT=str(closed_port()),
        SMTP_SECURE="none",
        SMTP_FROM="me@example.com",
        LOG_LEVEL="INFO",
    )
    result = subprocess.run([H0_BIN, "sweep"], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == EXIT_WORK_FAILED == 4, result.stderr
    assert result.stdout.splitlines() == ["h0 sweep: 1 failed — see h0 status"]
    assert (vault_dir / "Approved/down.md").exists()
    (failed,) = [line for line in result.stderr.splitlines() if "send failed" in line]
    assert "Approved/down.md" in failed and "the next `h0 sweep` or `h0 watch` retries" in failed
    assert "retry in" not in result.stderr and "Traceback" not in result.stderr
    assert events(vault_dir, event="send_failed")[0]["path"] == "Approved/down.md"


def test_given_a_revoked_gmail_token_when_swept_then_sending_pauses_once_says_h0_auth_gmail_and_exits_4(
    vault_dir: Path, sweep_env, capsys, gmail, token_path: Path
):
    """The token looks fine on disk (so the sweep starts) but Google refuses it at the first send."""
    gmail.write_token(token_path, expired=True)
    gmail.revoke_refresh_token()
    for env, value in {
        "MAIL_BACKEND": "gmail",
        "GMAIL_TOKEN_PATH": str(token_path),
        "GMAIL_API_ENDPOINT": gmail.api_endpoint,
        "GMAIL_TOKEN_URI": gmail.token_uri,
    }.items():
        sweep_env.setenv(env, value)
    for name in ("a.md", "b.md", "c.md"):
        write_draft(vault_dir, "Approved", name)
    code, out, err = sweep(capsys)
    assert code == EXIT_WORK_FAILED, err
    assert out[0].startswith("h0 sweep: 3 failed")
    paused = [line for line in err.splitlines() if "sending paused" in line]
    assert len(paused) == 1 and "h0 auth gmail" in paused[0]
    assert any(
        f"Approved/{name} and the drafts approved meanwhile wait" in paused[0] for name in ("a.md", "b.md", "c.md")
    )
    assert "Traceback" not in err and gmail.sent == []
    assert sorted(p.name for p in (vault_dir / "Approved").glob("*.md")) == ["a.md", "b.md", "c.md"]


def test_given_a_cap_of_one_an_hour_and_three_approved_drafts_then_the_cap_is_said_once_naming_the_setting(
    vault_dir: Path, sweep_env, capsys
):
    sweep_env.setenv("RATE_LIMIT_PER_HOUR", "1")
    for name in ("a.md", "b.md", "c.md"):  # three messages (the same words would be one message and two copies)
        write_draft(vault_dir, "Approved", name, body=f"Message {name}\n")
    code, out, err = sweep(capsys)
    assert code == EXIT_OK, err  # a cap the human set is working, not failing
    summary, sent = out
    assert sent.startswith("  ✉ Approved/") and sent.endswith(" → to bob@example.com")
    assert summary.startswith("h0 sweep: 1 sent, 2 waiting for the send cap (RATE_LIMIT_PER_HOUR; sending resumes at ")
    cap_lines = [line for line in err.splitlines() if "RATE_LIMIT_PER_HOUR" in line]
    assert len(cap_lines) == 1, err
    assert "sending paused: the hourly send cap is reached (RATE_LIMIT_PER_HOUR=1); sending resumes at " in cap_lines[0]
    assert "sending resumed" not in err  # the send that took the last slot does not end the pause
    assert len(list((vault_dir / "Outbox").glob("*.eml"))) == 1
    deferred = events(vault_dir, event="send_deferred")
    assert deferred and all(d["details"]["setting"] == "RATE_LIMIT_PER_HOUR" and d["resumes_at"] for d in deferred)
    assert all(d["severity"] == "warning" for d in deferred)  # not one error per draft

    code, out, err = sweep(capsys)  # the next pass, still inside the hour: said once again, nothing sent
    assert code == EXIT_OK
    assert out[0].startswith("h0 sweep: 2 waiting for the send cap (RATE_LIMIT_PER_HOUR; sending resumes at ")
    assert len([line for line in err.splitlines() if "RATE_LIMIT_PER_HOUR" in line]) == 1
    assert len(list((vault_dir / "Outbox").glob("*.eml"))) == 1


def test_given_a_daemon_already_on_the_vault_when_swept_then_exit_3(vault_dir: Path, sweep_env, capsys):
    from h0.pipeline.lock import VaultLock

    lock = VaultLock(vault_dir)
    lock.acquire()
    try:
        code, out, err = sweep(capsys)
    finally:
        lock.release()
    assert code == 3 and out == [] and "it already does this work" in err


@pytest.mark.parametrize(
    "args",
    [
        ["--workers", "0"],
        ["--workers", "many"],
        ["--workers", "100000"],
        ["--timeout", "-1"],
        ["--timeout", "nan"],
        ["--timeout", "inf"],
    ],
)
def test_hostile_arguments_are_usage_errors_not_a_sweep_that_never_ends(vault_dir: Path, sweep_env, capsys, args):
    with pytest.raises(SystemExit) as exited:
        main(["sweep", *args])
    assert exited.value.code == EXIT_USAGE
    assert "h0 sweep: error: argument" in capsys.readouterr().err


# -- mail that cannot work at all: one line at start, never a traceback ---------------------------


def test_given_gmail_without_a_token_then_watch_and_sweep_refuse_to_start_with_one_line(
    vault_dir: Path, tmp_path: Path
):
    """`h0 watch` does not start with sends paused: it says what to run and exits 1 (so a service
    manager shows the failure instead of a daemon that silently never sends)."""
    env = subprocess_env(
        VAULT_PATH=str(vault_dir), MAIL_BACKEND="gmail", GMAIL_TOKEN_PATH=str(tmp_path / "missing" / "token.json")
    )
    for command in ("watch", "sweep"):
        result = subprocess.run([H0_BIN, command], env=env, capture_output=True, text=True, timeout=60, check=False)
        assert result.returncode == EXIT_FAILED
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"h0 {command}: MAIL_BACKEND=gmail but there is no usable Gmail token at ")
        assert line.endswith("run `h0 auth gmail`.") and "token.json is missing" in line
        assert result.stdout == ""


@pytest.mark.parametrize(
    "token_text, why",
    [
        ("{not json", "unreadable"),
        ('{"token": "only an access token"}', "lacks refresh_token"),
        ("[]", ""),
    ],
)
def test_given_a_broken_token_file_then_watch_says_one_line_naming_h0_auth_gmail(
    vault_dir: Path, sweep_env, tmp_path: Path, capsys, token_text: str, why: str
):
    token = tmp_path / "token.json"
    token.write_text(token_text)
    sweep_env.setenv("MAIL_BACKEND", "gmail")
    sweep_env.setenv("GMAIL_TOKEN_PATH", str(token))
    assert main(["watch"]) == EXIT_FAILED
    _, err = capsys.readouterr()
    (line,) = err.splitlines()
    assert line.startswith("h0 watch: MAIL_BACKEND=gmail") and why in line and "run `h0 auth gmail`" in line


def test_given_smtp_without_a_host_then_watch_says_what_to_set(vault_dir: Path, sweep_env, capsys):
    sweep_env.setenv("MAIL_BACKEND", "smtp")
    assert main(["watch"]) == EXIT_FAILED
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("h0 watch: MAIL_BACKEND=smtp but SMTP is not configured: SMTP_HOST is not set")


def test_given_gmail_without_a_token_then_doctor_shows_one_fail_line_naming_h0_auth_gmail(
    vault_dir: Path, sweep_env, tmp_path: Path, capsys
):
    sweep_env.setenv("MAIL_BACKEND", "gmail")
    sweep_env.setenv("GMAIL_TOKEN_PATH", str(tmp_path / "token.json"))
    assert main(["doctor", "--no-servers"]) == EXIT_FAILED
    out, err = capsys.readouterr()
    failures = [line for line in out.splitlines() if line.startswith("✗")]
    assert failures == [
        (
            f"✗ mail backend: gmail — MAIL_BACKEND=gmail but there is no usable Gmail token at "
            f"{tmp_path / 'token.json'} (token.json is missing): run `h0 auth gmail`."
        )
    ]
    assert "1 problem(s) to fix." in out and "Traceback" not in out + err


# -- what the README promises -------------------------------------------------------------------


def test_the_readme_documents_the_exit_codes_the_commands_use():
    from tests.conftest import ROOT

    text = (ROOT / "README.md").read_text()
    (line,) = [para for para in text.split("\n\n") if para.startswith("Exit codes:")]
    for code, words in (
        (EXIT_OK, "success"),
        (EXIT_FAILED, "failed"),
        (EXIT_USAGE, "usage"),
        (3, "another"),
        (EXIT_WORK_FAILED, "(`h0 sweep`) the pass ran but some of its work failed"),
    ):
        assert f"{code} {words}" in " ".join(line.split())
    assert "RATE_LIMIT_PER_HOUR" in line and "RATE_LIMIT_PER_DAY" in line


def test_a_missing_llm_sdk_says_how_to_install_the_extra_from_pypi_and_from_a_checkout():
    from h0.triage.providers.base import import_sdk

    with pytest.raises(ValueError) as caught:
        import_sdk("h0_no_such_sdk_module", "openai")
    message = str(caught.value)
    assert "pip install 'h0[llm]'" in message and "pip install -e '.[llm]'" in message
    assert "LLM_PROVIDER=openai needs the h0_no_such_sdk_module package" in message


def test_given_a_note_dropped_into_rejected_a_moment_before_the_sweep_then_the_same_pass_files_it(
    vault_dir: Path, sweep_env, capsys
):
    """A note younger than the stability window (still possibly being written) is waited for within
    the pass, not left for the next cron run (this failed under load: the pass ended first)."""
    path = write_draft(vault_dir, "Rejected", "fresh.md")
    os.utime(path)  # written this very moment
    code, out, _ = sweep(capsys)
    assert code == 0 and out == ["h0 sweep: 1 rejected (filed in Done/)"]
    assert frontmatter(vault_dir, "Done/fresh.md")["decision"] == "rejected"


@pytest.mark.parametrize("word", ["Rejected", " REJECTED"])
def test_given_a_draft_whose_status_says_rejected_in_another_case_then_the_sweep_files_it(
    vault_dir: Path, sweep_env, capsys, word
):
    """The sweep reads the typed status, as the watcher does: `status: Rejected` is rejected."""
    (vault_dir / "Drafts" / "no.md").write_text(f"---\nto: a@b.c\nsubject: s\nstatus: '{word}'\n---\nNo.\n")
    code, out, _ = sweep(capsys)
    assert code == 0 and out == ["h0 sweep: 1 rejected (filed in Done/)"]
    assert frontmatter(vault_dir, "Done/no.md")["decision"] == "rejected"
    assert not (vault_dir / "Outbox").exists() or not list((vault_dir / "Outbox").glob("*.eml"))
