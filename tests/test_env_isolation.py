"""The suite's settings come from each test, never from the shell that runs it.

tests/conftest.py clears every setting the settings model defines; these tests run pytest on
`test_nothing_from_the_shell_reaches_a_test` in a shell that sets each of them (in mixed case
too, since names are case-insensitive) and expect it to see only defaults.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from h0.config import Settings, load_settings

ROOT = Path(__file__).resolve().parent.parent
SET_BY_CONFTEST = {"H0_STATE_DIR": None, "APPROVAL_FRESH_SECONDS": 0.0}  # tests/conftest.py _clean_env
DEFAULTS = {name: field.get_default(call_default_factory=True) for name, field in Settings.model_fields.items()}


def test_nothing_from_the_shell_reaches_a_test(tmp_path: Path):
    leaked = sorted(n for n in os.environ if n.lower() in Settings.model_fields and n not in SET_BY_CONFTEST)
    assert leaked == [], leaked
    assert {n: os.environ[n] for n in SET_BY_CONFTEST} == {
        "H0_STATE_DIR": str(tmp_path / "h0-state"),
        "APPROVAL_FRESH_SECONDS": "0",
    }
    settings = load_settings(vault_path=tmp_path)
    expected = {**DEFAULTS, "approval_fresh_seconds": SET_BY_CONFTEST["APPROVAL_FRESH_SECONDS"]}
    differs = {
        n: getattr(settings, n)
        for n in DEFAULTS
        if n not in ("vault_path", "h0_state_dir") and getattr(settings, n) != expected[n]
    }
    assert differs == {}


def test_a_shell_setting_every_setting_leaks_none_into_the_suite(tmp_path: Path):
    env = dict(os.environ)
    for index, name in enumerate(Settings.model_fields):
        if name in ("vault_path", "h0_state_dir"):
            continue
        env[name.upper() if index % 2 else name.capitalize()] = "leaked"
    env["SMTP_FROM"] = "leak@example.com"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--no-header",
            f"tests/{Path(__file__).name}::test_nothing_from_the_shell_reaches_a_test",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]


def test_a_module_scoped_fixture_never_writes_to_the_real_per_user_state_folder(tmp_path: Path):
    """Given a shell whose home is a fresh folder and that sets no H0_STATE_DIR nor XDG_STATE_HOME,
    when a module-scoped fixture (which runs before the per-test `_clean_env`) opens a vault's state
    database, then nothing is written under that home: the session is isolated at configure time."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("H0_STATE_DIR", "XDG_STATE_HOME", "LOCALAPPDATA")}
    env["HOME"] = str(home)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--no-header",
            "tests/isolation_probe.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert not any(p.startswith((".local", "Library", "AppData")) for p in written), written


def test_the_session_state_folder_is_set_before_module_fixtures(module_state_dir: str):
    assert module_state_dir
    assert Path(module_state_dir).resolve() != (Path.home() / ".local" / "state" / "h0").resolve()


@pytest.fixture(scope="module")
def module_state_dir() -> str:
    return os.environ.get("H0_STATE_DIR", "")
