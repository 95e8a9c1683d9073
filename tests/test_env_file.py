"""A `.env` line H0 cannot read stops H0 with the file, the line and how to write it — never a silent
fallback (python-dotenv skipped such a line with a warning: `PRIVATE_FOLDERS="Journal, Health`, its
quote left open, was dropped and the private folders became readable). h0.envfile is the one reader."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from h0.cli import main
from h0.config import load_settings, unknown_settings
from h0.envfile import EnvFileError, read_env_file
from tests.conftest import H0_BIN, subprocess_env

# (what the file holds, the line that is wrong, words of the fix the message gives)
BAD = {
    "an open double quote": (b'LOG_LEVEL=INFO\nPRIVATE_FOLDERS="Journal, Health\nMAIL_BACKEND=outbox\n', 2, "close it"),
    "an open single quote": (b"PRIVATE_FOLDERS='Journal, Health\n", 1, "close it"),
    "a quote closed on a later line": (b'PRIVATE_FOLDERS="Journal,\nHealth"\n', 1, "a value is one line"),
    "a line without =": (b"LOG_LEVEL=INFO\n\nPRIVATE_FOLDERS Journal\n", 3, "NAME=value"),
    "a Windows path in double quotes": (b'VAULT_PATH="C:\\Users\\me\\Vault"\n', 1, "single quotes"),
    "a line break escape": (b'SMTP_FROM="me@example.com\\n"\n', 1, "write a backslash as \\\\"),
    "a backslash at the end of a quoted value": (b'SMTP_PASS="secret\\"\n', 1, "close it"),
    "text after the closing quote": (b'PRIVATE_FOLDERS="Journal", Health\n', 1, "inside the quotes"),
    "a name with a space": (b"PRIVATE FOLDERS=Journal\n", 1, "not a setting name"),
    "a name set twice": (b"PRIVATE_FOLDERS=Journal\nLOG_LEVEL=INFO\nprivate_folders=\n", 3, "first on line 1"),
    "a variable set nowhere": (b"VAULT_PATH=${H0_TEST_NOWHERE}/Vault\n", 1, "set neither in the environment"),
    "an unclosed ${": (b"VAULT_PATH=${HOME/Vault\n", 1, "closing }"),
    "bytes that are not UTF-8": (b"LOG_LEVEL=INFO\nSMTP_FROM=caf\xe9@example.com\n", 2, "save the file as UTF-8"),
    "a control character": (b"LOG_LEVEL=INFO\x1b[2J\n", 1, "control character"),
}


@pytest.mark.parametrize(("data", "line", "fix"), BAD.values(), ids=BAD.keys())
def test_given_a_line_h0_cannot_read_then_the_command_stops_naming_the_file_the_line_and_the_fix(
    tmp_path: Path, vault_dir: Path, capsys, monkeypatch, data: bytes, line: int, fix: str
):
    env = tmp_path / "settings.env"
    env.write_bytes(data)
    monkeypatch.setenv("H0_ENV_FILE", str(env))
    with pytest.raises(EnvFileError) as raised:
        load_settings()
    assert raised.value.details["line"] == line
    assert main(["status", "--vault", str(vault_dir)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err  # one line, and no report from settings H0 half read
    assert err.startswith(f"h0 status: {env}, line {line}: ") and fix in err


def test_given_an_open_quote_in_private_folders_then_the_vault_server_never_starts(tmp_path: Path, vault_dir: Path):
    """The .env of the folder the server starts in (as Claude Code starts it) keeps a quote open: the server
    exits 1 with the line, before it could answer any client — the Journal is never served as public."""
    (vault_dir / "Journal").mkdir()
    (vault_dir / "Journal" / "today.md").write_text("Dear diary\n", encoding="utf-8")
    (tmp_path / ".env").write_text(f'VAULT_PATH={vault_dir}\nPRIVATE_FOLDERS="Journal, Health\n', encoding="utf-8")
    env = subprocess_env()
    del env["H0_ENV_FILE"]  # read the default files, ./.env among them
    run = subprocess.run(
        [H0_BIN, "mcp", "vault"], cwd=tmp_path, env=env, input="", capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 1 and run.stdout == ""
    assert f'{tmp_path / ".env"}, line 2: PRIVATE_FOLDERS: the " opened here is not closed' in run.stderr
    assert "Traceback" not in run.stderr


def test_given_a_bom_and_crlf_line_ends_then_every_line_reads_as_written(tmp_path: Path, monkeypatch):
    """Windows Notepad saves a byte order mark and CRLF: the first setting is not lost behind the mark and
    no value ends in a carriage return."""
    env = tmp_path / "windows.env"
    env.write_bytes(
        b"\xef\xbb\xbfVAULT_PATH=C:/Users/me/Vault\r\nPRIVATE_FOLDERS=Journal, Health\r\nLOG_LEVEL=debug\r\n"
    )
    monkeypatch.setenv("H0_ENV_FILE", str(env))
    settings = load_settings()
    assert settings.vault_path.as_posix().endswith("C:/Users/me/Vault")
    assert settings.private_folders == "Journal, Health" and settings.log_level == "DEBUG"


def test_the_forms_h0_reads(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("H0_TEST_HOME", "/home/me")
    env = tmp_path / "forms.env"
    env.write_text(
        "# a comment\n"
        "   \n"
        "export VAULT_PATH=${H0_TEST_HOME}/Vault\n"
        "PRIVATE_FOLDERS = Journal, Health   # my diary and my health\n"
        "SMTP_PASS='p@ss#word \\n ${NOT_FILLED}'\n"
        'SMTP_FROM="Me \\"the owner\\" <me@example.com> \\\\ ${H0_TEST_HOME}" # comment\n'
        "GMAIL_QUERY=is:unread#inline\n"
        "LLM_MODEL=\n",
        encoding="utf-8",
    )
    values = read_env_file(env)
    assert values == {
        "VAULT_PATH": "/home/me/Vault",
        "PRIVATE_FOLDERS": "Journal, Health",
        "SMTP_PASS": "p@ss#word \\n ${NOT_FILLED}",
        "SMTP_FROM": 'Me "the owner" <me@example.com> \\ /home/me',
        "GMAIL_QUERY": "is:unread#inline",
        "LLM_MODEL": "",
    }
    monkeypatch.setenv("H0_ENV_FILE", str(env))
    settings = load_settings()
    assert settings.private_folders == "Journal, Health" and str(settings.vault_path) == "/home/me/Vault"


def test_the_environment_still_wins_over_the_file(tmp_path: Path, monkeypatch):
    env = tmp_path / "a.env"
    env.write_text("PRIVATE_FOLDERS=Journal\nLOG_LEVEL=debug\n", encoding="utf-8")
    monkeypatch.setenv("H0_ENV_FILE", str(env))
    monkeypatch.setenv("PRIVATE_FOLDERS", "Journal, Health")
    settings = load_settings()
    assert settings.private_folders == "Journal, Health" and settings.log_level == "DEBUG"


def test_given_h0_env_file_naming_a_missing_file_then_h0_stops(tmp_path: Path, monkeypatch, capsys, vault_dir: Path):
    monkeypatch.setenv("H0_ENV_FILE", str(tmp_path / "missing.env"))
    assert main(["status", "--vault", str(vault_dir)]) == 1
    assert "missing.env: does not exist (H0_ENV_FILE names it)" in capsys.readouterr().err


def test_a_misspelt_name_in_the_file_is_found_by_the_same_reader(tmp_path: Path):
    env = tmp_path / "a.env"
    env.write_text("export RATE_LIMIT_PER_HOURS = 10\n", encoding="utf-8")
    assert unknown_settings({}, (env,)) == [("RATE_LIMIT_PER_HOURS", "RATE_LIMIT_PER_HOUR")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_given_a_fifo_named_env_then_h0_stops_without_waiting_for_a_writer(tmp_path: Path, monkeypatch):
    os.mkfifo(tmp_path / ".env")
    monkeypatch.setenv("H0_ENV_FILE", str(tmp_path / ".env"))
    with pytest.raises(EnvFileError, match="is not a regular file"):
        load_settings()


@pytest.mark.parametrize(
    ("given", "read"),
    [("true", "ssl"), ("1", "ssl"), (" TLS ", "ssl"), ("False", "starttls"), ("0", "starttls"), ("none", "none")],
)
def test_smtp_and_imap_security_take_the_same_words(tmp_path: Path, given: str, read: str):
    settings = load_settings(vault_path=tmp_path, smtp_secure=given, imap_secure=given)
    assert settings.smtp_secure == settings.imap_secure == read


def test_an_unknown_security_word_is_refused_for_either(tmp_path: Path):
    from pydantic import ValidationError

    for field in ("smtp_secure", "imap_secure"):
        with pytest.raises(ValidationError, match=field):
            load_settings(vault_path=tmp_path, **{field: "yes please"})
