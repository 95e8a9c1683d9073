"""Which mailbox H0 is connected to, for `h0 status` and the dashboard: the backend, the owner's account, and
whether the sign-in is good — only from what is known without a network call, so the status stays fast and works
offline.

Where each fact comes from:
- the account: as the provider's own profile named it when the mail sync last signed in (Gmail's users.getProfile
  emailAddress, Graph's /me), recorded in H0's state database by the owner authority (h0.mail.owner:
  `OwnerAuthority.mailbox`); before the first sync, Outlook's sign-in as msal's cache names it; for IMAP and SMTP
  the settings (SMTP_FROM, else IMAP_USER / SMTP_USER); for the outbox the From it writes (h0.mail.providers.outbox);
- the sign-in: the token file or cache as it is now (`token_state`: present, expired but refreshable, missing),
  and the provider's last refusal as the sync recorded it.

Nothing here comes from a note or a message: the address shown is the owner's own, never a correspondent's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from h0.config import Settings
from h0.errors import H0Error
from h0.mail.models import TokenState
from h0.mail.owner import OwnerAuthority, SignedIn, plain_account
from h0.report.fields import iso_epoch
from h0.state import DB_FILE, StateDB, state_dir_for
from h0.vault.values import split_addresses

SYNC_COMMAND = "h0 watch"  # the daemon signs in and syncs at its first poll (`h0 ingest` once does too)

MailboxState = Literal["ok", "not_signed_in", "refused", "not_synced", "unchecked", "local"]


def collect_mailbox(
    settings: Settings, state_db: StateDB | None = None, *, daemon_running: bool = False
) -> dict[str, Any]:
    """The mailbox line's facts as plain JSON-ready data (see the module's docstring); `state_db` is opened when
    it exists and none is given (a vault that never synced has none: then nothing is created)."""
    backend = settings.mail_backend
    record = _record(settings, state_db, backend)
    token, account, origin, server = _local(settings, state_db)
    if record is not None and record.account and backend in ("gmail", "outlook"):
        account, origin = record.account, "profile"
    state = _state(backend, token, record)
    auth = _auth_command(settings)
    next_step = {
        "not_signed_in": auth,
        "refused": auth,
        "not_synced": None if daemon_running else SYNC_COMMAND,
    }.get(state)
    return {
        "backend": backend,
        "account": account,
        "account_from": origin,  # profile | sign_in | settings | owner | None
        "server": server,
        "sign_in": token,
        "state": state,
        "confirmed_at": iso_epoch(record.confirmed_at) if record else None,
        "refused_at": iso_epoch(record.refused_at) if record and record.refused else None,
        "refusal": record.refusal if record and record.refused else None,
        "next_step": next_step,
    }


def mailbox_marks(settings: Settings, state_db: StateDB | None) -> tuple[tuple[int, int] | None, ...]:
    """Cheap signs that the mailbox line changed, for the dashboard's writer: the token file's (mtime, size) and
    the sync's record (when it last confirmed, when the provider last refused: milliseconds)."""
    token = {"gmail": settings.gmail_token_path, "outlook": settings.outlook_token_path}.get(settings.mail_backend)
    marks: list[tuple[int, int] | None] = [None, None]
    if token is not None:
        try:
            info = Path(token).expanduser().stat()
            marks[0] = (info.st_mtime_ns, info.st_size)
        except OSError:
            pass
    if state_db is not None and settings.mail_backend in ("gmail", "outlook", "imap"):
        try:
            record = OwnerAuthority(state_db).mailbox(settings.mail_backend)
        except H0Error:
            record = None
        if record is not None:
            marks[1] = (round((record.confirmed_at or 0) * 1000), round((record.refused_at or 0) * 1000))
    return tuple(marks)


def _state(backend: str, token: TokenState, record: SignedIn | None) -> MailboxState:
    if backend == "outbox":
        return "local"
    if token == "missing":
        return "not_signed_in"
    if record is not None and record.refused:
        return "refused"
    if backend == "smtp":
        return "unchecked"  # no mailbox to sync: the sign-in is checked at each send
    return "ok" if record is not None and record.confirmed_at is not None else "not_synced"


def _record(settings: Settings, state_db: StateDB | None, backend: str) -> SignedIn | None:
    if backend not in ("gmail", "outlook", "imap"):
        return None
    try:
        if state_db is None:
            if not (state_dir_for(settings.vault_path, settings.h0_state_dir) / DB_FILE).exists():
                return None
            state_db = StateDB.for_vault(settings.vault_path, settings.h0_state_dir)
        return OwnerAuthority(state_db).mailbox(backend)
    except H0Error:
        return None


def _local(settings: Settings, state_db: StateDB | None) -> tuple[TokenState, str | None, str | None, str | None]:
    """(the sign-in's state, the account, where that name comes from, the server) from files and settings alone."""
    backend = settings.mail_backend
    if backend == "gmail":
        from h0.mail.providers.auth import TokenStore

        return TokenStore(settings.gmail_token_path).state(), None, None, None
    if backend == "outlook":
        from h0.mail.providers.outlook_auth import MicrosoftSignIn

        tokens = MicrosoftSignIn.from_settings(settings)
        name = plain_account(tokens.account())
        return tokens.state(), name, "sign_in" if name else None, None
    if backend == "outbox":
        return "n/a", *_outbox_account(settings, state_db), None
    token = _xoauth2_state(settings) if settings.imap_auth == "oauth2" else "n/a"
    user = settings.imap_user if backend == "imap" else settings.smtp_user
    address = next((a for a in (_address(v) for v in (settings.smtp_from, user)) if "@" in a), None)
    account = plain_account(address or user)
    host = settings.imap_host if backend == "imap" else settings.smtp_host
    return token, account, "settings" if account else None, plain_account(host)


def _outbox_account(settings: Settings, state_db: StateDB | None) -> tuple[str | None, str | None]:
    """The address the outbox writes as From (h0.mail.providers.outbox.owner_from), and whence: None when it would
    be the placeholder."""
    from h0.mail.providers.outbox import OUTBOX_SENDER, owner_from

    senders: set[str] = set()
    try:
        if state_db is None and (state_dir_for(settings.vault_path, settings.h0_state_dir) / DB_FILE).exists():
            state_db = StateDB.for_vault(settings.vault_path, settings.h0_state_dir)
        if state_db is not None:
            senders = OwnerAuthority(state_db).senders()
    except H0Error:
        senders = set()
    sender = owner_from(settings, sent_from=senders)
    if sender == OUTBOX_SENDER:
        return None, None
    address = plain_account(_address(sender))
    written = owner_from(settings) != OUTBOX_SENDER  # from the settings, else the owner's recorded sent mail
    return address, ("settings" if written else "owner") if address else None


def _xoauth2_state(settings: Settings) -> TokenState:
    """IMAP_AUTH=oauth2: the token file IMAP and SMTP log in with (h0.mail.providers.xoauth2), checked locally."""
    from h0.mail.providers.xoauth2 import provider_of

    if provider_of(settings) == "microsoft":
        from h0.mail.providers.outlook_auth import IMAP_SCOPES, MicrosoftSignIn

        return MicrosoftSignIn.from_settings(settings, IMAP_SCOPES).state()
    from h0.mail.providers.auth import TokenStore

    return TokenStore(settings.gmail_token_path).state()


def _auth_command(settings: Settings) -> str:
    """What the owner runs to sign in again."""
    backend = settings.mail_backend
    if backend in ("gmail", "outlook"):
        return f"h0 auth {backend}"
    if settings.imap_auth == "oauth2":
        from h0.mail.providers.xoauth2 import reauth_command

        return reauth_command(settings)
    return "h0 doctor"  # a password: check IMAP_USER / IMAP_PASS (SMTP_*), which `h0 doctor` tries


def _address(written: str | None) -> str:
    """The first address a setting's text names ("" when none), read by the one address reader."""
    found = split_addresses([written or ""])
    return found[0][1] if found else ""
