"""Fixtures for the interop tests: third-party MCP clients installed from npm, once."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.interop import npmtools


@pytest.fixture(scope="session")
def npm_cache(request: pytest.FixtureRequest) -> Path:
    try:
        npmtools.node_and_npm()
    except npmtools.NpmUnavailable as exc:
        pytest.skip(str(exc))
    explicit = os.environ.get("H0_INTEROP_NPM_DIR")
    if explicit:
        return Path(explicit)
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        return Path(cache.mkdir("h0-interop-npm"))
    # pytest's cache plugin is off (-p no:cacheprovider): a git-ignored folder of the repo.
    return Path(__file__).resolve().parents[2] / "node_modules" / ".h0-interop-npm"


def _install(tool: npmtools.NpmTool, cache: Path) -> Path:
    started = time.monotonic()
    binary = npmtools.ensure(tool, cache)
    print(f"[interop] {tool.package}@{tool.version}: {binary} ({time.monotonic() - started:.1f} s)")
    return binary


@pytest.fixture(scope="session")
def inspector_bin(npm_cache: Path) -> Path:
    """The MCP Inspector CLI (`mcp-inspector --cli …`)."""
    return _install(npmtools.INSPECTOR, npm_cache)


@pytest.fixture(scope="session")
def claude_bin(npm_cache: Path) -> Path:
    """Claude Code's `claude` command."""
    return _install(npmtools.CLAUDE_CODE, npm_cache)
