"""`h0 …`: the argument parser, one sub-command per library function, and `main`."""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from h0.cli.common import EXIT_FAILED, EXIT_USAGE, Command
from h0.cli.evaluate import cmd_eval
from h0.cli.readonly_commands import cmd_doctor, cmd_log, cmd_status
from h0.cli.run_commands import cmd_import, cmd_ingest, cmd_mcp, cmd_sweep, cmd_watch
from h0.cli.sending import cmd_sending
from h0.cli.setup_commands import cmd_auth, cmd_demo, cmd_init, cmd_service


def _workers(text: str) -> int:
    """--workers: 1 to 64 (0 workers would wait forever for a pass that never runs)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 64:
        raise argparse.ArgumentTypeError(f"{value} is out of range: use 1 to 64")
    return value


def _seconds(text: str) -> float:
    """--timeout: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds above 0")
    return value


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


class _SuggestingParser(argparse.ArgumentParser):
    """An argument parser whose "invalid choice" names the nearest valid one (`h0 stauts` → status).

    Python 3.14's `suggest_on_error` does this; H0 supports older Pythons, so `error` (argparse's
    documented hook for how a usage error is reported) adds the suggestion to argparse's own message.
    Sub-command parsers are made with the class of their parent, so every choice gets it.
    """

    def error(self, message: str) -> NoReturn:
        found = _INVALID_CHOICE.search(message)
        if found:
            names = re.findall(r"'([^']*)'", found.group(2)) or [n.strip() for n in found.group(2).split(",")]
            nearest = difflib.get_close_matches(found.group(1), names, n=1, cutoff=0.6)
            if nearest:
                message = f"{message} — did you mean {nearest[0]!r}?"
        super().error(message)


VAULT_HELP = "the vault folder (default: VAULT_PATH)"


@dataclass(frozen=True)
class CommandDoc:
    """One command as the reference shows it: `service install`, what it does, its parser."""

    name: str
    summary: str
    parser: argparse.ArgumentParser


def build_parser(docs: list[CommandDoc] | None = None) -> argparse.ArgumentParser:
    """The parser of `h0 …`; with `docs`, each command (and each `service` action) is also listed there."""
    parser = _SuggestingParser(prog="h0", description="H0 — your AI employee in an Obsidian vault.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    listed = docs if docs is not None else []

    def add(name: str, handler: Command, help_text: str, *, vault: bool = True) -> argparse.ArgumentParser:
        """The command `name`; with `vault`, its first option is --vault."""
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.set_defaults(handler=handler)
        if vault:
            command.add_argument("--vault", help=VAULT_HELP)
        if name != "service":  # listed by its actions instead
            listed.append(CommandDoc(name, help_text, command))
        return command

    init = add(
        "init",
        cmd_init,
        "Create H0's folders, H0_Rules.md and H0_Profile.md inside an existing vault (touches nothing that exists).",
        vault=False,
    )
    init.add_argument("path", nargs="?", help="the vault folder (default: VAULT_PATH)")

    watch = add("watch", cmd_watch, "Run H0 in the foreground: triage new mail, send approved drafts.")
    watch.add_argument("--workers", type=_workers, default=4, help="parallel handlers (default: 4)")

    sweep = add("sweep", cmd_sweep, "One pass over the vault (send approved drafts, triage, archive), then exit.")
    sweep.add_argument("--workers", type=_workers, default=4, help="parallel handlers (default: 4)")
    sweep.add_argument("-v", "--verbose", action="store_true", help="say what the pass does, line by line (stderr)")
    sweep.add_argument(
        "--timeout",
        type=_seconds,
        default=600.0,
        help="stop waiting for the pass after this many seconds (default: 600; exit 1)",
    )

    sending = add(
        "sending",
        cmd_sending,
        "Which computer sends this vault's approved drafts (one does, in a synced vault); 'take' moves it here.",
    )
    sending.add_argument("action", nargs="?", choices=["take"], help="take: send from this computer from now on")

    add("ingest", cmd_ingest, "Look for new mail once (GMAIL_QUERY) and write it to Needs_Action/.")

    imp = add(
        "import",
        cmd_import,
        "Import mail from files (.eml, .mbox, or folders of them): recent mail you have not answered "
        "becomes notes in Needs_Action/; older mail and your sent mail are kept as history H0 learns from. "
        "Ctrl-C stops it; the same command resumes.",
    )
    imp.add_argument("files", nargs="+", metavar="FILE", help=".eml files, .mbox mailboxes, or folders of them")
    imp.add_argument(
        "--as-notes", action="store_true", help="also file history (older mail, your sent mail) as notes in Done/"
    )
    imp.add_argument("-v", "--verbose", action="store_true", help="say what the import does, line by line (stderr)")

    status = add(
        "status",
        cmd_status,
        "The mailbox H0 is connected to and its sign-in, what needs you, drafts waiting, why approved drafts "
        "wait, send caps, recent sends and errors, daemon state (the data of H0_Dashboard.md).",
    )
    status.add_argument("--json", action="store_true", help="machine-readable output")

    log = add(
        "log",
        cmd_log,
        "What H0 sent (oldest first, the newest last), or with NOTE that note's trail from ingest to filing.",
    )
    log.add_argument("note", nargs="?", metavar="NOTE", help="a note's path or name (Done/x.md, x, [[x]])")
    log.add_argument("--since", metavar="DATE", help="from this local date (YYYY-MM-DD) or time")
    log.add_argument("--until", metavar="DATE", help="up to this local date (the whole day) or time")
    log.add_argument("--today", action="store_true", help="since midnight")
    log.add_argument("--days", type=int, metavar="N", help="the last N days")
    log.add_argument("--to", metavar="TEXT", help="sends to a recipient containing TEXT (any case)")
    log.add_argument("--note", dest="note_filter", metavar="TEXT", help="sends whose note's path contains TEXT")
    log.add_argument("--limit", type=int, default=50, help="show the newest N sends (default 50; 0: all)")
    log.add_argument("--all", action="store_true", help="NOTE: also the vault server's writes and moves")
    log.add_argument("--json", action="store_true", help="machine-readable output (a JSON array)")

    evaluate = add(
        "eval",
        cmd_eval,
        "How good would H0's drafts be on your own mail? Each reply you sent is hidden, drafted again "
        "from the email and the vault, and compared with what you sent; a table, and a report note in Logs/.",
    )
    evaluate.add_argument("--limit", type=int, default=20, help="your newest N replies (default: 20)")
    evaluate.add_argument("--model", help="draft with this model instead of LLM_MODEL (compare models)")
    evaluate.add_argument("--json", action="store_true", help="machine-readable output")
    evaluate.add_argument("--no-note", action="store_true", help="write no report note into Logs/")

    doctor = add("doctor", cmd_doctor, "Check configuration, vault, rules, mail backend and both MCP servers.")
    doctor.add_argument("--no-servers", action="store_true", help="skip starting the MCP servers")

    service = add(
        "service",
        cmd_service,
        "Run `h0 watch` at login: a systemd user unit (Linux) or launchd agent (macOS).",
        vault=False,
    )
    service_common = _SuggestingParser(add_help=False)
    service_common.add_argument(
        "--platform",
        choices=["linux", "macos", "windows"],
        help="act as on this OS (default: this machine's); with --dry-run, a preview",
    )
    service_actions = service.add_subparsers(dest="action", metavar="ACTION", required=True)

    def service_action(name: str, help_text: str) -> argparse.ArgumentParser:
        return service_actions.add_parser(name, parents=[service_common], help=help_text, description=help_text)

    service_install = service_action(
        "install", "Write the unit/agent for `h0 watch --vault VAULT` and start it now and at every login."
    )
    service_install.add_argument("--vault", help=VAULT_HELP)
    service_install.add_argument("--force", action="store_true", help="replace a unit/agent with different content")
    service_install.add_argument(
        "--dry-run", action="store_true", help="print what would be written and run; touch nothing"
    )
    service_uninstall = service_action("uninstall", "Stop, disable and remove the unit/agent.")
    service_uninstall.add_argument("--purge", action="store_true", help="also remove its settings file / log folder")
    service_uninstall.add_argument("--dry-run", action="store_true", help="print what would be run; touch nothing")
    service_action("status", "Is the service installed? Is it running?")
    service_logs = service_action("logs", "The service's last 100 log lines.")
    service_logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    for action_name, action_parser in service_actions.choices.items():
        listed.append(CommandDoc(f"service {action_name}", action_parser.description or "", action_parser))

    mcp = add("mcp", cmd_mcp, "Run an MCP server on stdio (for Claude Code and H0 itself).")
    mcp.add_argument("server", choices=["vault", "gmail"], help="vault: notes; gmail: mail (any MAIL_BACKEND)")

    auth = add(
        "auth",
        cmd_auth,
        "Authorise H0 to use your mailbox once: Gmail (a browser consent; writes token.json) or Outlook and "
        "Microsoft 365 (a device code: a URL and a code to enter on any device; writes OUTLOOK_TOKEN_PATH).",
        vault=False,
    )
    auth.add_argument("provider", choices=["gmail", "outlook"], help="the account to authorise")
    auth.add_argument("--credentials", help="gmail: OAuth client JSON (default: GMAIL_CREDENTIALS_PATH)")
    auth.add_argument(
        "--token", help="where to write the token (default: GMAIL_TOKEN_PATH, or OUTLOOK_TOKEN_PATH for outlook)"
    )
    auth.add_argument(
        "--scopes",
        choices=["graph", "imap"],
        help="outlook: Microsoft Graph's mail permissions (MAIL_BACKEND=outlook) or IMAP and SMTP's "
        "(IMAP_AUTH=oauth2); default: what MAIL_BACKEND needs",
    )
    auth.add_argument("--no-browser", action="store_true", help="print the URL instead of opening a browser")
    auth.add_argument("--port", type=int, default=0, help="local port for Google's redirect (default: any free one)")

    demo = add(
        "demo", cmd_demo, "The bundled demo vault: `h0 demo reset` puts its examples back as shipped.", vault=False
    )
    demo.add_argument(
        "action",
        choices=["reset"],
        help="reset: restore the examples, delete what the demo wrote, forget its sends (only in H0's demo vault)",
    )
    demo.add_argument("--vault", help="the demo vault (default: VAULT_PATH, i.e. the bundled vault/)")
    return parser


def _version() -> str:
    from h0 import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    from pydantic import ValidationError

    from h0.errors import H0Error

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
    except ValidationError as exc:
        from h0.config import setting_problems

        lines = setting_problems(exc)
        print(f"h0: {len(lines)} setting(s) to fix (environment or .env; .env.example explains each):", file=sys.stderr)
        for line in lines:
            print(f"  {line}", file=sys.stderr)
        return EXIT_FAILED
    except ValueError as exc:  # e.g. an unknown LLM_PROVIDER, raised with a message for a person
        print(f"h0: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except H0Error as exc:  # a typed error already says what went wrong and what to do
        print(f"h0 {args.command}: {exc.message}", file=sys.stderr)
        return EXIT_FAILED
