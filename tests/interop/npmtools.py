"""Install the third-party npm clients the interop tests drive, once, into a cache.

Each tool is installed with `npm install --prefix <cache>/<name>-<version>` (pinned, so
every machine drives the same client) and reused while its package.json says the pinned
version. The cache is pytest's own (`.pytest_cache/d/h0-interop-npm`, git-ignored) unless
H0_INTEROP_NPM_DIR names another folder; an exclusive file lock makes concurrent
installs (pytest-xdist workers) wait for one another. No node or npm: the caller skips.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

INSTALL_TIMEOUT = float(os.environ.get("H0_INTEROP_NPM_TIMEOUT", "420"))


@dataclass(frozen=True)
class NpmTool:
    package: str
    version: str
    bin: str

    @property
    def dirname(self) -> str:
        return f"{self.package.replace('@', '').replace('/', '-')}-{self.version}"


# The MCP Inspector's CLI; 0.15.0 is the last release that runs on Node 20 (later ones
# need Node >= 22) and has the `--cli … --method …` interface the tests use.
INSPECTOR = NpmTool(
    "@modelcontextprotocol/inspector", os.environ.get("H0_INTEROP_INSPECTOR_VERSION", "0.15.0"), "mcp-inspector"
)
CLAUDE_CODE = NpmTool("@anthropic-ai/claude-code", os.environ.get("H0_INTEROP_CLAUDE_VERSION", "2.1.197"), "claude")


class NpmUnavailable(Exception):
    """node or npm is not installed: the interop tests skip."""


def node_and_npm() -> tuple[str, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        raise NpmUnavailable(
            "the interop tests need node and npm on PATH (Debian: apt-get install -y nodejs npm); CI has them"
        )
    return node, npm


def installed_version(prefix: Path, tool: NpmTool) -> str | None:
    try:
        meta = json.loads((prefix / "node_modules" / tool.package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return meta.get("version")


def ensure(tool: NpmTool, cache: Path) -> Path:
    """Return the path of `tool`'s executable, installing the pinned version first if needed."""
    _, npm = node_and_npm()
    prefix = cache / tool.dirname
    binary = prefix / "node_modules" / ".bin" / tool.bin
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed_version(prefix, tool) == tool.version and binary.exists():
            return binary
        env = {
            **os.environ,
            "npm_config_update_notifier": "false",
            "npm_config_fund": "false",
            "npm_config_audit": "false",
        }
        try:
            proc = subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(prefix),
                    "--no-save",
                    "--loglevel=error",
                    f"{tool.package}@{tool.version}",
                ],
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"npm install {tool.package}@{tool.version} took over {INSTALL_TIMEOUT:.0f} s") from exc
        if proc.returncode != 0 or not binary.exists():
            raise RuntimeError(
                f"npm install {tool.package}@{tool.version} into {prefix} failed (exit {proc.returncode}):\n"
                f"{proc.stderr[-2000:]}"
            )
        return binary
