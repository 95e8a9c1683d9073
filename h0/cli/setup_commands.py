"""The commands that set H0 up: `h0 init`, `h0 auth gmail|outlook`, `h0 service …`, `h0 demo reset`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from h0.cli.common import EXIT_FAILED, EXIT_LOCKED, EXIT_OK, settings_for, vault_exists


def cmd_init(args: argparse.Namespace) -> int:
    from h0.vault import FOLDERS, init_vault

    root = Path(args.path).expanduser() if args.path else settings_for(args).vault_path
    try:
        created = init_vault(root)
    except FileNotFoundError as exc:
        print(f"h0 init: {exc}", file=sys.stderr)
        return EXIT_FAILED
    from h0.triage import RULES_FILENAME, ensure_rules_file

    if ensure_rules_file(root):
        created.append(RULES_FILENAME)
    from h0.drafting.profile import ensure_profile_file

    if ensure_profile_file(root):
        created.append("H0_Profile.md")
    private = _propose_private_folders(root)
    if created:
        print(f"Created in {root}:")
        for name in created:
            print(f"  {name}" if name.endswith(".md") else f"  {name}/")
    else:
        print(
            f"{root} already has every H0 folder ({', '.join(FOLDERS)}), {RULES_FILENAME} and H0_Profile.md; "
            "nothing to do."
        )
    for line in private:
        print(line)
    print(
        "\nNext:\n"
        f"  1. Point H0 at this vault: put VAULT_PATH={root} in .env (or the environment).\n"
        "  2. Try it on your own mail without an account: `h0 import mail.mbox` (or .eml files), then `h0 sweep`;\n"
        "     or connect your mailbox: MAIL_BACKEND=gmail after `h0 auth gmail` (or imap/smtp: see .env.example).\n"
        "  3. Run `h0 doctor` to check everything, then `h0 watch`."
    )
    return EXIT_OK


def _propose_private_folders(root: Path) -> list[str]:
    """Propose the vault's diary folders as private (h0.vault.disclosure) and record them in
    .h0/private-folders, unless a choice is recorded already; the lines that say so."""
    from h0.vault.private_folders import RECORD_FILE, diary_folders, record_folders, recorded_folders

    where = "/".join(RECORD_FILE)
    try:
        recorded = recorded_folders(root)
    except OSError as exc:  # left as it is: the owner's file, whatever is wrong with it
        return [
            f"\nWARNING: {where} cannot be read ({exc.strerror or type(exc).__name__}). It may name any folder, "
            + "so H0 keeps every note private",
            f"  (no model or MCP client sees any) until it can. Make {where} a readable file again, or delete it.",
        ]
    if recorded is not None:
        shown = ", ".join(f"{name}/" for name in recorded) or "none"
        return [f"\nPrivate folders (from {where}): {shown}. Their notes never reach a model or an MCP client."]
    found = diary_folders(root)
    if not found:
        return [
            "\nNo diary folder found (Journal, Diary, Daily, Daily Notes, Obsidian's daily notes). A folder like that,",
            f"made later, is private until you record a choice in {where}; PRIVATE_FOLDERS in .env adds your own.",
        ]
    record_folders(root, found)
    return [
        f"\nPrivate folders: {', '.join(f'{name}/' for name in found)} (a diary: found in this vault).",
        f"  Recorded in {where}: their notes never reach a model or an MCP client. Edit that file to change it.",
    ]


def cmd_auth(args: argparse.Namespace) -> int:
    """`h0 auth gmail`: the one-time browser consent that writes token.json (0600); `h0 auth outlook`: msal's
    device code flow that writes OUTLOOK_TOKEN_PATH (0600)."""
    if args.provider == "outlook":
        return _auth_outlook(args)
    from h0.errors import H0Error
    from h0.mail.providers.auth import GMAIL_SCOPES, TESTING_APP_NOTE, run_consent_flow
    from h0.mail.providers.xoauth2 import GOOGLE_IMAP_SCOPES

    settings = settings_for(args, vault=False)
    credentials = Path(args.credentials).expanduser() if args.credentials else settings.gmail_credentials_path
    token = Path(args.token).expanduser() if args.token else settings.gmail_token_path
    # Gmail's IMAP with XOAUTH2 (IMAP_AUTH=oauth2) takes only the full-mail scope; the API takes gmail.modify.
    scopes = GOOGLE_IMAP_SCOPES if settings.imap_auth == "oauth2" else GMAIL_SCOPES
    print(f"Asking Google for access to your Gmail (scope: {', '.join(scopes)}).")
    try:
        run_consent_flow(credentials, token, open_browser=not args.no_browser, port=args.port, scopes=scopes)
    except H0Error as exc:
        print(f"h0 auth gmail: {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - oauthlib / the local redirect server: say what failed, not a traceback
        print(f"h0 auth gmail: the consent did not complete: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"Saved {token} (readable by you only). H0's mail server will use and refresh it.")
    print(TESTING_APP_NOTE)
    return EXIT_OK


def _auth_outlook(args: argparse.Namespace) -> int:
    """The device code flow (h0.mail.providers.outlook_auth): a URL and a code, the owner signs in anywhere."""
    from h0.errors import H0Error
    from h0.mail.providers.outlook_auth import GRAPH_SCOPES, IMAP_SCOPES, MicrosoftSignIn, scopes_for

    settings = settings_for(args, vault=False)
    scopes = {"graph": GRAPH_SCOPES, "imap": IMAP_SCOPES}.get(args.scopes or "", scopes_for(settings))
    if args.token:
        settings = settings.model_copy(update={"outlook_token_path": Path(args.token).expanduser()})
    sign_in = MicrosoftSignIn.from_settings(settings, scopes)
    print(f"Asking {settings.outlook_authority} for access to your mailbox (permissions: {', '.join(scopes)}).")
    try:
        account = sign_in.sign_in(lambda prompt: print(prompt, flush=True))
    except H0Error as exc:
        print(f"h0 auth outlook: {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    print(f"Signed in as {account}. Saved {sign_in.path} (readable by you only); H0 refreshes it by itself.")
    return EXIT_OK


def cmd_service(args: argparse.Namespace) -> int:
    """`h0 service install|uninstall|status|logs`: `h0 watch` at login (h0/platform/service.py)."""
    from h0.errors import H0Error
    from h0.platform import service

    try:
        if args.action == "install":
            vault = Path(args.vault).expanduser() if args.vault else settings_for(args).vault_path
            report = service.install(vault, platform=args.platform, force=args.force, dry_run=args.dry_run)
        elif args.action == "uninstall":
            report = service.uninstall(platform=args.platform, purge=args.purge, dry_run=args.dry_run)
        elif args.action == "status":
            report = service.status(platform=args.platform)
        else:
            report = service.logs(platform=args.platform, follow=args.follow)
    except H0Error as exc:
        print(f"h0 service {args.action}: {exc.message}", file=sys.stderr)
        return EXIT_FAILED
    for line in report.lines:
        print(line)
    return EXIT_OK if report.ok else EXIT_FAILED


def cmd_demo(args: argparse.Namespace) -> int:
    """`h0 demo reset`: the demo vault as shipped again (h0/cli/demo.py says what it refuses)."""
    from h0.cli.demo import refusal, reset_demo
    from h0.pipeline.lock import AlreadyRunning, VaultLock

    settings = settings_for(args)
    root = Path(settings.vault_path)
    if not vault_exists(settings):
        return EXIT_FAILED
    refused = refusal(root, settings)
    if refused is not None:
        print(f"h0 demo reset: {refused}", file=sys.stderr)
        return EXIT_FAILED
    lock = VaultLock(root)
    try:
        lock.acquire()  # no daemon may file notes while the demo is put back
    except AlreadyRunning as exc:
        print(f"h0 demo reset: {exc}. Stop it first (Ctrl-C), then reset.", file=sys.stderr)
        return EXIT_LOCKED
    try:
        report = reset_demo(root, settings)
    finally:
        lock.release()
    print(report.line(root))
    print("Drag Drafts/reply-example-001.md into Approved/ (with `h0 watch` running) to watch a send again.")
    return EXIT_OK
