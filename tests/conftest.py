"""Shared fixtures: a real temporary vault, settings pointing at it, and a clean environment."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import mcp.client.stdio  # noqa: F401 - see below
import pytest

from h0.config import Settings
from h0.vault import Vault, init_vault
from tests.mail.outlook_fixtures import authority, graph, outlook_settings, outlook_token  # noqa: F401 - fixtures
from tests.platform.markers import pytest_collection_modifyitems, pytest_ignore_collect  # noqa: F401 - hooks
from tests.properties import register_profiles

register_profiles()  # before hypothesis's plugin reads --hypothesis-profile (tests/properties.py)

# mcp.client.stdio binds `errlog=sys.stderr` when it is first imported. Imported here, that is
# pytest's global capture (a real file); imported lazily inside a test using capsys, it would be
# capsys's buffer, which has no fileno, and every later MCP server spawn in that worker would fail.

ROOT = Path(__file__).resolve().parent.parent
H0_BIN = str(Path(sys.executable).with_name("h0"))

# Settings must come from each test, never from a developer's own .env or shell: every field of
# the settings model (read from the model, so a new setting is cleared without editing this
# list; names are case-insensitive) and the few variables H0 reads outside it.
_H0_ENV = frozenset(name.upper() for name in Settings.model_fields) | {"H0_DAEMON_CHILD"}


def pytest_configure(config: pytest.Config) -> None:
    """Isolate the whole session before any fixture of any scope runs.

    `_clean_env` below is function-scoped, so a module- or session-scoped fixture (an IMAP server,
    a fuzzed vault) runs before it: with the shell's environment, and with H0's state folder
    falling back to the real per-user one (~/.local/state/h0). Here, at configure time, the
    settings from the shell are cleared and every per-user state location points into one
    temporary folder for the session; `_clean_env` then gives each test its own.
    """
    for name in [n for n in os.environ if n.upper() in _H0_ENV]:
        del os.environ[name]
    session_state = Path(tempfile.mkdtemp(prefix="h0-test-session-"))
    os.environ["H0_ENV_FILE"] = ""
    os.environ["H0_STATE_DIR"] = str(session_state / "h0-state")
    # The OS fallbacks (h0.platform.fs.user_state_root) too, for code that bypasses H0_STATE_DIR.
    os.environ["XDG_STATE_HOME"] = str(session_state / "xdg-state")
    os.environ["LOCALAPPDATA"] = str(session_state / "localappdata")
    # With workers (-n), xdist's work stealing: a worker that runs out takes queued tests from a busy one,
    # so a long end-to-end test queued late does not leave the others idle at the end of the run. (Here,
    # not in addopts: a run with `-p no:xdist` would not know the option.)
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "worksteal"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` starts two workers a CPU (4 on 2 CPUs).

    The slow tests wait more than they compute — MCP servers starting, settle periods, interval
    sweeps, a fake Gmail answering late — so one worker per CPU left the CPUs ~40 % idle. On 2 CPUs,
    quiet: 2 workers 4.3 min; 3 workers 4:01–4:25 (three runs); 4 workers 3:44 with no more CPU time
    in all. PYTEST_XDIST_AUTO_NUM_WORKERS still decides when it is set.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "").isdigit():
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 2 * cpus


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in [n for n in os.environ if n.upper() in _H0_ENV]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("H0_ENV_FILE", "")
    # H0's state database and secret live outside the vault; each test gets its own.
    monkeypatch.setenv("H0_STATE_DIR", str(tmp_path / "h0-state"))
    # The tests play a human who approves a draft the moment it exists; a person takes longer
    # than APPROVAL_FRESH_SECONDS to read it. The tests of that rule set it themselves
    # (tests/security/test_seen_before_approval.py).
    monkeypatch.setenv("APPROVAL_FRESH_SECONDS", "0")
    # A .env in the working directory must not leak into tests either.
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def _daemon_servers_in_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every daemon a test starts in this process — `running_daemon`'s, and the one `h0.cli.main(["sweep"])`
    builds — serves its two MCP servers in process (h0.mcp.servers: `in_process_servers`, built as `h0 mcp` builds them):
    the same servers, tools and client session, without two Python start-ups per daemon.

    Real child processes where they are the point: `h0 …` run as a subprocess, `running_daemon(spawned=True)`,
    and tests marked `spawned_servers` (their in-process daemons spawn `h0 mcp vault` / `h0 mcp gmail`)."""
    if request.node.get_closest_marker("spawned_servers") is not None:
        return
    import h0.pipeline.daemon
    from h0.mcp.servers import in_process_servers

    monkeypatch.setattr(h0.pipeline.daemon, "spawned_servers", in_process_servers)


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    init_vault(root)
    return root


@pytest.fixture
def vault(vault_dir: Path) -> Vault:
    return Vault(vault_dir)


@pytest.fixture
def gmail():
    """A running fake Gmail (tests/fakes/fake_gmail.py), stopped after the test."""
    from tests.fakes.fake_gmail import FakeGmail

    with FakeGmail() as fake:
        yield fake


@pytest.fixture
def token_path(gmail, tmp_path: Path) -> Path:
    """A token.json the fake Gmail accepts."""
    folder = tmp_path / "secrets"
    folder.mkdir()
    return gmail.write_token(folder / "token.json")


def subprocess_env(**overrides: str) -> dict[str, str]:
    """An environment for child processes: no H0 settings inherited but the test's state folder, then the
    overrides."""
    env = {k: v for k, v in os.environ.items() if k not in _H0_ENV}
    if os.environ.get("H0_STATE_DIR"):
        # The test's own state folder (_clean_env): a child must never use the real per-user one, where
        # a ledger left by an earlier run for the same temporary vault path would say "already sent".
        env["H0_STATE_DIR"] = os.environ["H0_STATE_DIR"]
    env["H0_ENV_FILE"] = ""
    env["APPROVAL_FRESH_SECONDS"] = "0"  # as in-process (see _clean_env)
    env.update(overrides)
    return env


@pytest.fixture
def loguru_restored():
    """For tests running `h0.cli.main` in-process: `main` points loguru at the sys.stderr of the
    moment (capsys's buffer); put it back on the real stderr afterwards."""
    from loguru import logger

    yield
    logger.remove()
    logger.add(sys.stderr, level="WARNING")


@pytest.fixture
def caplog_loguru():
    """The messages loguru logs during the test (WARNING and up), as a list of strings."""
    from loguru import logger

    messages: list[str] = []
    sink = logger.add(lambda message: messages.append(str(message.record["message"])), level="WARNING")
    yield messages
    logger.remove(sink)
