"""`h0 …` — the command line. Each command is a thin shell over a library function.

Exit codes: 0 success, 1 the command failed (the message says why and what to do),
2 usage error, 3 another H0 daemon already holds the vault.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_LOCKED = 3

Command = Callable[[argparse.Namespace], int]


def _settings(args: argparse.Namespace):
    from h0.config import load_settings

    overrides = {}
    if getattr(args, "vault", None):
        overrides["vault_path"] = Path(args.vault)
    return load_settings(**overrides)


def _setup_logging(settings) -> None:
    from h0.logsetup import setup_logging

    setup_logging(settings.log_level)


def cmd_init(args: argparse.Namespace) -> int:
    from h0.vault import FOLDERS, init_vault

    root = Path(args.path).expanduser() if args.path else _settings(args).vault_path
    try:
        created = init_vault(root)
    except FileNotFoundError as exc:
        print(f"h0 init: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if created:
        print(f"Created in {root}:")
        for name in created:
            print(f"  {name}/")
    else:
        print(f"{root} already has every H0 folder ({', '.join(FOLDERS)}); nothing to do.")
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _setup_logging(settings)
    if args.server == "vault":
        from h0.mcp.vault_server import main as serve_vault

        serve_vault(settings.vault_path)
        return EXIT_OK
    from h0.mcp.mail_server import main as serve_mail

    serve_mail(settings)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="h0", description="H0 — your AI employee in an Obsidian vault.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, handler: Command, help_text: str) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.set_defaults(handler=handler)
        return command

    init = add("init", cmd_init, "Create H0's folders inside an existing vault (touches nothing that exists).")
    init.add_argument("path", nargs="?", help="the vault folder (default: VAULT_PATH)")

    mcp = add("mcp", cmd_mcp, "Run an MCP server on stdio (for Claude Code and H0 itself).")
    mcp.add_argument("server", choices=["vault", "gmail"], help="vault: notes; gmail: mail (any MAIL_BACKEND)")
    mcp.add_argument("--vault", help="the vault folder (default: VAULT_PATH)")
    return parser


def _version() -> str:
    from h0 import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
