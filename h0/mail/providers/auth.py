"""Gmail OAuth: reuse token.json, refresh it, persist the refresh, and the one-time consent.

The server never opens a browser: a missing or revoked token is an `auth_required` error
telling the human to run `h0 auth gmail` (every message names that one command;
`scripts/gmail_auth.py` is an alias), which does the installed-app consent flow once and
writes token.json with mode 0600.

Scope: `gmail.modify` alone. It covers every call H0 makes — read and search
(messages.list/get, users.getProfile), labels (labels.list/create, messages.modify) and
send (messages.send accepts gmail.modify) — while withholding permanent deletion and
settings, which `mail.google.com/` would grant. Adding `gmail.send` would add nothing.

google-auth ignores the `token_uri` stored in token.json and always refreshes at Google's
endpoint (a tampered file must not send the refresh token elsewhere); `GMAIL_TOKEN_URI`
is the explicit, deliberate override (tests, proxies).
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.auth.exceptions import RefreshError
from google.oauth2.credentials import Credentials

from h0.errors import AuthRequired, InvalidRequest
from h0.mail.models import TokenState
from h0.platform.fileio import readable_by_others, write_secret

GMAIL_SCOPES = ["https://www.googleapis.com/auth/gmail.modify"]
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
REAUTH_MESSAGE = "Run `h0 auth gmail` to re-authenticate"
TESTING_APP_NOTE = (
    "Note: while your Google Cloud OAuth app is in the 'Testing' publishing state, Google expires its "
    "refresh tokens after 7 days, and H0 will ask you to run this again. Publish the app "
    "('In production'; for personal use no verification is needed) to keep the token."
)


# google-auth's Credentials has no annotations: the two of its methods called here, typed once.
_init_credentials: Callable[..., None] = Credentials.__init__
_refresh_credentials: Callable[[Credentials, Any], None] = Credentials.refresh


class RefreshingCredentials(Credentials):
    """User credentials whose refresh is serialised across threads and persisted.

    The MCP SDK runs tools in worker threads, each with its own Http, but all share these
    credentials: without the lock, an expired token would be refreshed once per thread.
    """

    def __init__(self, *args: Any, on_refresh: Callable[[RefreshingCredentials], None], **kwargs: Any) -> None:
        _init_credentials(self, *args, **kwargs)
        self._refresh_lock = threading.Lock()
        self._on_refresh = on_refresh
        self.revoked = False

    def refresh(self, request: Any) -> None:
        seen = self.token
        with self._refresh_lock:
            if self.token != seen and self.valid:
                return  # another thread refreshed while we waited
            try:
                _refresh_credentials(self, request)
            except RefreshError as exc:
                if "invalid_grant" in str(exc):
                    self.revoked = True
                raise
            self._on_refresh(self)


class TokenStore:
    """token.json on disk: load credentials, report their state, write refreshed tokens."""

    def __init__(self, path: Path, *, token_uri: str | None = None) -> None:
        self.path = Path(path).expanduser()
        self.token_uri = token_uri
        self._credentials: RefreshingCredentials | None = None
        self._lock = threading.Lock()

    def credentials(self) -> RefreshingCredentials:
        """The loaded credentials (cached), or AuthRequired if there is no usable token."""
        with self._lock:
            if self._credentials is not None and self._credentials.revoked:
                raise AuthRequired(
                    REAUTH_MESSAGE, reason="the refresh token was revoked or expired", token_path=str(self.path)
                )
            if self._credentials is None:
                self._credentials = self._load()
            return self._credentials

    def _read(self) -> dict[str, Any]:
        try:
            info = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise AuthRequired(REAUTH_MESSAGE, reason="token.json is missing", token_path=str(self.path)) from None
        except (OSError, ValueError) as exc:
            raise AuthRequired(
                REAUTH_MESSAGE, reason=f"token.json is unreadable: {exc}", token_path=str(self.path)
            ) from None
        if not isinstance(info, dict):
            raise AuthRequired(REAUTH_MESSAGE, reason="token.json is not a JSON object", token_path=str(self.path))
        return info

    def _load(self) -> RefreshingCredentials:
        info = self._read()
        missing = [k for k in ("refresh_token", "client_id", "client_secret") if not info.get(k)]
        if missing:
            raise AuthRequired(
                REAUTH_MESSAGE, reason=f"token.json lacks {', '.join(missing)}", token_path=str(self.path)
            )
        scopes = info.get("scopes")
        return RefreshingCredentials(
            token=info.get("token"),
            refresh_token=info["refresh_token"],
            token_uri=self.token_uri or GOOGLE_TOKEN_URI,
            client_id=info["client_id"],
            client_secret=info["client_secret"],
            scopes=scopes.split() if isinstance(scopes, str) else scopes,
            expiry=_parse_expiry(info.get("expiry")),
            on_refresh=self._persist,
        )

    def _persist(self, creds: Credentials) -> None:
        """Write the refreshed access token back, keeping every other field of the file."""
        try:
            info = self._read()
        except AuthRequired:
            info = {}
        info["token"] = creds.token
        if creds.refresh_token:
            info["refresh_token"] = creds.refresh_token
        if creds.expiry is not None:
            info["expiry"] = creds.expiry.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
        write_token_file(self.path, info)

    def state(self) -> TokenState:
        """valid | expired_refreshable | missing | revoked — from the file, without network."""
        if self._credentials is not None and self._credentials.revoked:
            return "revoked"
        try:
            info = self._read()
        except AuthRequired:
            return "missing"
        if not info.get("refresh_token"):
            return "missing"
        expiry = _parse_expiry(info.get("expiry"))
        if info.get("token") and expiry is not None and expiry > _utcnow_naive() + dt.timedelta(seconds=60):
            return "valid"
        return "expired_refreshable"

    def problems(self) -> list[str]:
        """What a person should fix about the token, from the file alone (no network)."""
        state = self.state()
        if state == "missing":
            return [f"no usable Gmail token at {self.path}: {REAUTH_MESSAGE}"]
        if state == "revoked":
            return [f"Google refused the refresh token (revoked, or a 7-day 'Testing' app token): {REAUTH_MESSAGE}"]
        loose = readable_by_others(self.path)
        return [loose] if loose else []


def refresh_failure(exc: RefreshError) -> AuthRequired:
    """The typed error for a failed refresh (invalid_grant: revoked, or a 7-day Testing token)."""
    reason = (
        "the refresh token was revoked or expired" if "invalid_grant" in str(exc) else f"token refresh failed: {exc}"
    )
    return AuthRequired(REAUTH_MESSAGE, reason=reason)


def write_token_file(path: Path, info: dict[str, Any]) -> None:
    write_secret(path, json.dumps(info, indent=2) + "\n")


def _parse_expiry(value: object) -> dt.datetime | None:
    # google-auth compares naive UTC datetimes; token.json stores "2026-01-01T10:00:00.123456Z".
    if not isinstance(value, str) or not value:
        return None
    try:
        stamp = dt.datetime.fromisoformat(value.rstrip("Z").split("+")[0])
    except ValueError:
        return None
    return stamp.replace(tzinfo=None)


def _utcnow_naive() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def run_consent_flow(
    credentials_path: Path,
    token_path: Path,
    *,
    open_browser: bool = True,
    port: int = 0,
    scopes: list[str] | None = None,
) -> dict[str, Any]:
    """The installed-app OAuth flow: a browser consent, then token.json. Returns its info. `scopes`: GMAIL_SCOPES
    by default; Gmail's IMAP with XOAUTH2 (IMAP_AUTH=oauth2) needs `https://mail.google.com/` instead."""
    from google_auth_oauthlib.flow import InstalledAppFlow

    credentials_path = Path(credentials_path).expanduser()
    if not credentials_path.is_file():
        raise InvalidRequest(
            f"{credentials_path} not found. In Google Cloud Console: APIs & Services → Credentials → "
            "Create credentials → OAuth client ID → Desktop app; download the JSON to that path "
            "(or set GMAIL_CREDENTIALS_PATH).",
            path=str(credentials_path),
        )
    flow = InstalledAppFlow.from_client_secrets_file(str(credentials_path), scopes=scopes or GMAIL_SCOPES)
    # prompt=consent + offline access: Google returns a refresh token even if this
    # client was authorised before (it omits it otherwise, and the server could never refresh).
    creds = flow.run_local_server(
        port=port,
        open_browser=open_browser,
        prompt="consent",
        access_type="offline",
        authorization_prompt_message="Open this URL in a browser to let H0 use your Gmail:\n{url}\n",
        success_message="H0 is authorised. You can close this tab.",
    )
    info: dict[str, Any] = json.loads(creds.to_json())
    write_token_file(token_path, info)
    return info
