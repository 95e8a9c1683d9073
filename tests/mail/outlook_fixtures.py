"""Fixtures for the Outlook tests: a fake Graph, a fake HTTPS authority msal trusts, a signed-in token cache.

Import the fixtures into a test module (`from tests.mail.outlook_fixtures import *`-style, by name). The
sign-in is msal's real device code flow against the fake authority (h0.mail.providers.outlook_auth), so every
test starts from a cache msal itself wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from h0.config import Settings, load_settings
from h0.mail.providers.outlook_auth import MicrosoftSignIn
from tests.fakes.fake_authority import FakeAuthority
from tests.fakes.fake_graph import FakeGraph

FAST_RETRIES = {"max_retries": 3, "retry_delay_ms": 1, "retry_backoff_multiplier": 2.0}


@pytest.fixture
def graph() -> Iterator[FakeGraph]:
    with FakeGraph() as fake:
        yield fake


@pytest.fixture
def authority(graph: FakeGraph, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAuthority]:
    """The fake authority, trusted by msal through REQUESTS_CA_BUNDLE (its `verify=`)."""
    with FakeAuthority(graph=graph, username=graph.address) as fake:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(fake.ca_file))
        yield fake


def outlook_values(vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, token_path: Path) -> dict[str, object]:
    return {
        "vault_path": vault_dir,
        "mail_backend": "outlook",
        "outlook_authority": authority.authority,
        "outlook_client_id": authority.client_id,
        "outlook_token_path": token_path,
        "graph_api_endpoint": graph.api_endpoint,
    }


def outlook_env(
    vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, token_path: Path, **extra: str
) -> dict[str, str]:
    """Environment variables for an H0 child process against the fakes."""
    env = {key.upper(): str(value) for key, value in outlook_values(vault_dir, graph, authority, token_path).items()}
    env.update(REQUESTS_CA_BUNDLE=str(authority.ca_file), MAX_RETRIES="3", RETRY_DELAY_MS="1", LOG_LEVEL="WARNING")
    env.update(extra)
    return env


def sign_in(settings: Settings) -> str:
    """`h0 auth outlook`'s sign-in, in process (the fake authority approves at once)."""
    return MicrosoftSignIn.from_settings(settings).sign_in(lambda _: None)


@pytest.fixture
def outlook_token(tmp_path: Path, vault_dir: Path, graph: FakeGraph, authority: FakeAuthority) -> Path:
    """A token cache written by msal's device code flow against the fake authority."""
    path = tmp_path / "secrets" / "outlook_token.json"
    sign_in(load_settings(**outlook_values(vault_dir, graph, authority, path)))
    return path


@pytest.fixture
def outlook_settings(vault_dir: Path, graph: FakeGraph, authority: FakeAuthority, outlook_token: Path) -> Settings:
    return load_settings(**outlook_values(vault_dir, graph, authority, outlook_token), **FAST_RETRIES)
