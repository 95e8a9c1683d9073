"""`h0 doctor`: check the configuration, the vault, the rules file and both MCP servers.

Each check is a line with ✓ (fine), ! (works, but look at this) or ✗ (broken, with what
to do). The servers are started exactly as `h0 watch` starts them and asked for their
health_check, so a ✓ there means the daemon will connect too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from h0.vault.layout import FOLDERS, WORK_FOLDERS, is_h0_vault

if TYPE_CHECKING:
    from h0.config import Settings

OK, WARN, FAIL = "✓", "!", "✗"


@dataclass
class Check:
    mark: str
    what: str
    detail: str = ""

    def line(self) -> str:
        return f"{self.mark} {self.what}" + (f" — {self.detail}" if self.detail else "")


def _private_folders(settings: Settings, root: Path) -> list[Check]:
    """A record of the private folders that cannot be read keeps every note private (h0.vault.disclosure)."""
    from h0.vault.disclosure import Disclosure

    unreadable = Disclosure.for_vault(root, settings.private_folders).unreadable
    return [Check(FAIL, "private folders", unreadable)] if unreadable else []


def _sending(root: Path, named: str) -> list[Check]:
    """Which computer sends this vault's drafts (h0.vault.sending_computer): a warning when it is not this one."""
    import datetime as dt

    from h0.platform.machine import Machine
    from h0.vault import Vault
    from h0.vault.sending_computer import not_sent_here

    why = not_sent_here(Vault(root), Machine.this(named), dt.datetime.now(dt.UTC))
    return [Check(WARN, "approved drafts are not sent from this computer", why)] if why else []


def run_checks(settings: Settings, *, servers: bool = True) -> list[Check]:
    from h0.config import unknown_settings, using_bundled_vault, vault_unset

    checks: list[Check] = [
        Check(FAIL, f"{name} is not an H0 setting", f"did you mean {close}? H0 ignores {name}")
        for name, close in unknown_settings()
    ]
    unset = vault_unset(settings)
    if unset is not None:
        return checks + [Check(FAIL, "vault", unset)]
    root = Path(settings.vault_path)
    if not root.is_dir():
        return checks + [Check(FAIL, f"vault {root}", "the folder does not exist; set VAULT_PATH and run `h0 init`")]
    if using_bundled_vault(settings):
        checks.append(
            Check(
                FAIL,
                f"vault {root}",
                "this is the demo vault bundled with H0, because VAULT_PATH is not "
                "set: set VAULT_PATH to your Obsidian vault (in .env or the "
                "environment), then run `h0 init`",
            )
        )
    elif not is_h0_vault(root):
        return checks + [
            Check(
                FAIL,
                f"vault {root}",
                f"not an H0 vault: none of H0's folders ({', '.join(f + '/' for f in WORK_FOLDERS)}) is here. Set "
                f"VAULT_PATH to your vault, or run `h0 init {root}` to add them",
            )
        ]
    else:
        checks.append(Check(OK, f"vault {root}"))
    missing = missing_folders(root)
    checks.append(
        Check(FAIL, "folders", f"missing {', '.join(f + '/' for f in missing)}: run `h0 init {root}` to add them")
        if missing
        else Check(OK, "folders", ", ".join(FOLDERS))
    )
    writable = os.access(root, os.W_OK)
    checks.append(Check(OK if writable else FAIL, "vault is writable" if writable else "vault is not writable"))
    checks.append(
        Check(OK, "opened in Obsidian")
        if (root / ".obsidian").is_dir()
        else Check(WARN, "no .obsidian/ folder", "open the vault in Obsidian to approve drafts by dragging them")
    )
    checks += _private_folders(settings, root)
    checks += _sending(root, settings.h0_machine)
    checks += _triage(settings)
    checks += _drafting(settings)
    checks += mail_checks(settings)
    if servers:
        checks += _servers(settings)
    from h0.pipeline.lock import daemon_holder

    holder = daemon_holder(root)
    checks.append(
        Check(OK, "daemon running", f"pid {holder.get('pid')}")
        if holder
        else Check(WARN, "daemon not running", "start it with `h0 watch`")
    )
    return checks


def missing_folders(root: Path) -> list[str]:
    """H0's folders that the vault lacks (a folder that never had `h0 init`)."""
    return [name for name in FOLDERS if not (root / name).is_dir()]


def _triage(settings: Settings) -> list[Check]:
    try:
        from h0.triage import Triager, rules_path

        triager = Triager.from_settings(settings, settings.vault_path)
    except ValueError as exc:
        return [Check(FAIL, f"triage ({settings.llm_provider})", str(exc))]
    checks = [
        Check(OK, f"triage: {triager.provider_name}" + (f" ({triager.model_name})" if triager.model_name else ""))
    ]
    path = rules_path(Path(settings.vault_path))
    if not path.exists():
        checks.append(
            Check(WARN, "rules file", f"{path.name} is missing: built-in defaults apply (`h0 init` writes it)")
        )
    else:
        problems = list(triager.rules.ruleset().problems)
        checks.append(Check(WARN if problems else OK, f"rules file {path.name}", "; ".join(problems)))
    return checks


def _drafting(settings: Settings) -> list[Check]:
    """H0_Profile.md and H0_Memory.md: read as drafting reads them; a problem means the defaults are used."""
    from h0.drafting.memory import load_memory
    from h0.drafting.profile import load_profile
    from h0.vault.layout import MEMORY_NOTE, PROFILE_NOTE

    root = Path(settings.vault_path)
    profile, memory = load_profile(root), load_memory(root)
    checks = []
    if not profile.exists:
        checks.append(
            Check(
                WARN,
                "profile",
                f"{PROFILE_NOTE} is missing: drafts use plain defaults (`h0 init` writes one to fill in)",
            )
        )
    else:
        checks.append(
            Check(
                WARN if profile.problems else OK,
                f"profile {PROFILE_NOTE}",
                "; ".join(p.message for p in profile.problems),
            )
        )
    if memory.exists and memory.problems:
        checks.append(Check(WARN, f"lessons {MEMORY_NOTE}", "; ".join(p.message for p in memory.problems)))
    from h0.vault import Vault
    from h0.vault.control import CONFIRM
    from h0.vault.control_watch import proposals

    for proposal in proposals(Vault(root)):  # an agent's change to a control note (h0.vault.control)
        checks.append(
            Check(
                WARN,
                f"proposed change {proposal.path}",
                f"an agent's change to {proposal.note} ({proposal.proposed_by}) waits for you: read it, then set "
                f"{CONFIRM}: true to apply it, or delete it"
                + (f" — not applied: {proposal.error}" if proposal.error else ""),
            )
        )
    return checks + _calendar(settings)


def _calendar(settings: Settings) -> list[Check]:
    """Each calendar source's last read (nothing is fetched here): a failing one serves its last good copy."""
    from h0.calendar.cache import calendar_states

    checks = []
    for state in calendar_states(settings):
        if state.error is None:
            detail = f"read {state.last_good_at}" if state.last_good_at else "not read yet (the daemon reads it)"
            checks.append(Check(OK, f"calendar {state.name}", detail))
        elif state.last_good_at:
            detail = f"{state.error}; H0 uses the last good copy, from {state.last_good_at}"
            checks.append(Check(WARN, f"calendar {state.name}", detail))
        else:
            checks.append(Check(FAIL, f"calendar {state.name}", f"{state.error}; no time is proposed until it reads"))
    return checks


def mail_setup_problem(settings: Settings) -> str | None:
    """Why the configured mail backend cannot send at all, as one line saying what to do — or None.

    Checked without the network: a Gmail token that is missing, unreadable or incomplete
    (run `h0 auth gmail`), SMTP settings that are missing. A token Google has revoked is only
    known when it is used: the daemon then pauses sending and says so once. `h0 watch` and
    `h0 sweep` refuse to start with this line (exit 1); `h0 doctor` shows the same line."""
    backend = settings.mail_backend
    if backend == "smtp":
        from h0.mail.providers.smtp import SmtpBackend

        problems = SmtpBackend(settings).problems()
        if problems:
            return f"MAIL_BACKEND=smtp but SMTP is not configured: {'; '.join(problems)} (see .env.example)."
        return None
    if backend == "imap":
        from h0.mail.providers.imap import ImapBackend

        problems = ImapBackend(settings).problems()
        if problems:
            return f"MAIL_BACKEND=imap but it is not configured: {'; '.join(problems)} (see .env.example)."
        return None
    if backend == "outlook":
        from h0.mail.providers.outlook_auth import MicrosoftSignIn

        sign_in = MicrosoftSignIn.from_settings(settings)
        if not sign_in.client_id or sign_in.state() in ("missing", "revoked"):
            return f"MAIL_BACKEND=outlook but {sign_in.problems()[0]}."
        return None
    if backend == "gmail":
        from h0.errors import AuthRequired
        from h0.mail.providers.auth import TokenStore

        token = Path(settings.gmail_token_path).expanduser()
        try:
            TokenStore(token).credentials()
        except AuthRequired as exc:
            why = exc.details.get("reason") or "it cannot be used"
            return f"MAIL_BACKEND=gmail but there is no usable Gmail token at {token} ({why}): run `h0 auth gmail`."
    return None


def mail_checks(settings: Settings) -> list[Check]:
    """The mail backend's lines of `h0 doctor`: its setup, and for IMAP a login that names the folders."""
    backend = settings.mail_backend
    if backend == "outbox":
        return [Check(WARN, "mail backend: outbox", "a dry run — messages go to Outbox/, nothing is really sent")]
    problem = mail_setup_problem(settings)
    if problem is not None:
        return [Check(FAIL, f"mail backend: {backend}", problem)]
    if backend == "smtp":
        return [Check(OK, "mail backend: smtp", f"{settings.smtp_host}:{settings.smtp_port} ({settings.smtp_secure})")]
    if backend == "imap":
        return _imap(settings)
    if backend == "outlook":
        return _outlook(settings)
    return [Check(OK, "mail backend: gmail", f"token at {Path(settings.gmail_token_path).expanduser()}")]


def _outlook(settings: Settings) -> list[Check]:
    """The sign-in (a token from msal, refreshed if need be), the permissions it was granted, and the mailbox
    (its address and well-known folders, from Graph)."""
    from h0.errors import H0Error
    from h0.mail.providers.outlook import OutlookBackend
    from h0.mail.providers.outlook_wire import FOLDER_LABELS

    backend = OutlookBackend(settings, timeout=10)
    try:
        try:
            backend.tokens.access_token()
        except H0Error as exc:
            why = exc.details.get("reason")
            return [Check(FAIL, "mail backend: outlook", f"{exc.message}" + (f" ({why})" if why else ""))]
        cache = Path(settings.outlook_token_path).expanduser()
        checks = [Check(OK, "mail backend: outlook", f"signed in as {backend.tokens.account() or '?'} ({cache})")]
        missing = backend.tokens.missing_scopes()
        granted = ", ".join(sorted(backend.tokens.granted_scopes())) or "none named"
        checks.append(
            Check(
                FAIL, "Outlook permissions", f"missing {', '.join(missing)} (granted: {granted}): run `h0 auth outlook`"
            )
            if missing
            else Check(OK, "Outlook permissions", f"granted: {granted}")
        )
        try:
            address = backend.account(10)
            found = set(backend.folders.labels().values())
        except H0Error as exc:
            return [*checks, Check(FAIL, "Outlook mailbox", exc.message)]
        if address is None:
            return [*checks, Check(FAIL, "Outlook mailbox", f"{settings.graph_api_endpoint} did not answer /me")]
        shown = [label for label in FOLDER_LABELS.values() if label in found]
        lacking = "" if "Archive" in found else "; no Archive folder yet (H0 makes one at the first move there)"
        checks.append(Check(OK, "Outlook mailbox", f"{address}: {', '.join(shown)}{lacking}"))
        return checks
    finally:
        backend.close()


def _imap(settings: Settings) -> list[Check]:
    """Log in to the IMAP server and name its folders; say whether it keeps H0's keyword."""
    from h0.errors import H0Error
    from h0.mail.providers.imap_wire import connect, keyword

    where = f"{settings.imap_user} at {settings.imap_host}"
    try:
        client = connect(settings, timeout=10)
    except H0Error as exc:
        return [Check(FAIL, "mail backend: imap", exc.message)]
    try:
        folders = [name for _, _, name in client.list_folders()]
        allowed = {
            f.decode() if isinstance(f, bytes) else str(f)
            for f in client.select_folder("INBOX").get(b"PERMANENTFLAGS", ())
        }
    except Exception as exc:  # noqa: BLE001 — any failure here is the line's answer
        return [Check(FAIL, "mail backend: imap", f"logged in as {where}, then: {exc}")]
    finally:
        client.logout() if client else None
    checks = [
        Check(OK, "mail backend: imap", f"logged in as {where}; folders: {', '.join(folders)}"),
        Check(
            OK, "sending: smtp", f"{settings.smtp_host}:{settings.smtp_port} ({settings.smtp_secure}), a copy to Sent"
        ),
    ]
    mark = keyword(settings.gmail_ingested_label)
    if "\\*" not in allowed and mark not in allowed:
        checks.append(
            Check(
                WARN,
                "IMAP keywords",
                f"the server keeps no custom keywords (only "
                f"{', '.join(sorted(allowed)) or 'none'}), so the mailbox itself "
                f"is not marked {mark}: H0 records what it ingested in its own "
                "state database instead and ingests normally",
            )
        )
    return checks


def _servers(settings: Settings) -> list[Check]:
    from h0.errors import H0Error
    from h0.mcp.client import McpConnection, ServerCommand, settings_env

    env = {**settings_env(settings), "LOG_LEVEL": "ERROR"}
    checks = []
    for name, server in (("vault", "vault"), ("mail", "gmail")):
        # The servers' stderr (the outbox's banner, start-up lines) is not doctor's to print: what they
        # say that matters is in their health_check, and doctor's verdict stays the last line.
        quiet = open(os.devnull, "w")  # noqa: SIM115 - closed in finally below, with the connection
        connection = McpConnection(ServerCommand.h0(name, server, env), call_timeout=10, errlog=quiet).start()
        try:
            if not connection.wait_ready(20):
                checks.append(Check(FAIL, f"MCP server `h0 mcp {server}`", connection.last_error or "did not start"))
                continue
            health = connection.call("health_check", {})
            problems = health.get("problems") or []
            status = health.get("status", "?")
            detail = "; ".join(problems) or ", ".join(
                f"{k}: {health[k]}" for k in ("account", "token") if health.get(k) is not None
            )
            checks.append(Check(OK if status == "ok" else WARN, f"MCP server `h0 mcp {server}`: {status}", detail))
        except H0Error as exc:
            checks.append(Check(FAIL, f"MCP server `h0 mcp {server}`", exc.message))
        finally:
            connection.close()
            quiet.close()
    return checks
