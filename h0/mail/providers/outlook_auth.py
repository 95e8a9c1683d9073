"""Microsoft sign-in (Outlook.com, Hotmail, Microsoft 365): msal's device code flow, its token cache in a file.

`h0 auth outlook` runs the device code flow against OUTLOOK_AUTHORITY with OUTLOOK_CLIENT_ID: it prints a
URL and a code, the owner signs in on any device (SSH, no browser on this machine), and msal's token cache
is written to OUTLOOK_TOKEN_PATH atomically, readable by the owner only. The servers never prompt: they ask
msal for a token silently (`acquire_token_silent_with_error`, which refreshes with the refresh token), and
an expired or revoked grant is `auth_required` naming that one command.

Scopes, one resource per sign-in (Microsoft refuses a token request that names two):
- `MAIL_BACKEND=outlook`, Microsoft Graph: `Mail.ReadWrite` (read mail, set categories, move to Archive),
  `Mail.Send` (send), `User.Read` (the account's address); msal adds `offline_access` (the refresh token),
  `openid` and `profile` (the account's name in the cache) itself.
- `IMAP_AUTH=oauth2` on a Microsoft mailbox: `IMAP.AccessAsUser.All` and `SMTP.Send` of outlook.office.com.

msal is told `instance_discovery=False`: the authority is the one the owner configured, and msal then asks
it (its OIDC discovery document) for its endpoints instead of asking login.microsoftonline.com whether the
host is known. TLS is verified against REQUESTS_CA_BUNDLE (or CURL_CA_BUNDLE) when set, else the system's
store — msal's own `verify=` option.

Every process that sends or reads (the daemon's mail server, Claude Code's) loads the file and reloads it
when it changed on disk, so a new `h0 auth outlook` takes effect without a restart.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from h0.errors import AuthRequired, InternalError
from h0.mail.models import TokenState
from h0.platform.fileio import readable_by_others, write_secret

if TYPE_CHECKING:
    import msal

    from h0.config import Settings

GRAPH_SCOPES = ("Mail.ReadWrite", "Mail.Send", "User.Read")
IMAP_SCOPES = ("https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send")
REAUTH_MESSAGE = "Run `h0 auth outlook` to sign in to Microsoft again"
# Errors of a refresh that only a new sign-in mends (RFC 6749 §5.2 and Microsoft's additions).
_GRANT_GONE = frozenset({"invalid_grant", "interaction_required", "consent_required", "login_required"})
_CONFIG_WRONG = frozenset({"invalid_client", "unauthorized_client", "invalid_scope"})
VALID_MARGIN_S = 60.0


def ca_bundle() -> str | bool:
    """What TLS is verified against: REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE when set, else the system's store."""
    return os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True


def scopes_for(settings: Settings) -> tuple[str, ...]:
    """The permissions the configured backend needs: Graph's, or IMAP's and SMTP's for IMAP_AUTH=oauth2."""
    imap = settings.mail_backend in ("imap", "smtp") and settings.imap_auth == "oauth2"
    return IMAP_SCOPES if imap else GRAPH_SCOPES


def _scope_name(scope: str) -> str:
    return scope.rsplit("/", 1)[-1].casefold()


class MicrosoftSignIn:
    """One account's sign-in: the token cache file, msal's public client, silent tokens. Thread-safe."""

    def __init__(
        self,
        path: Path,
        *,
        authority: str,
        client_id: str | None,
        scopes: Sequence[str] = GRAPH_SCOPES,
        timeout: float = 30.0,
    ) -> None:
        self.path = Path(path).expanduser()
        self.authority = authority.rstrip("/")
        self.client_id = (client_id or "").strip()
        self.scopes = list(scopes)
        self.timeout = timeout
        self._lock = threading.RLock()
        self._cache: msal.SerializableTokenCache | None = None
        self._stamp: tuple[int, int] | None = None  # (mtime_ns, size) of the file the cache was read from
        self._app: msal.PublicClientApplication | None = None
        self.revoked = False  # the last refresh was refused: only a new sign-in mends it

    @classmethod
    def from_settings(cls, settings: Settings, scopes: Sequence[str] | None = None) -> MicrosoftSignIn:
        return cls(
            settings.outlook_token_path,
            authority=settings.outlook_authority,
            client_id=settings.outlook_client_id,
            scopes=scopes if scopes is not None else scopes_for(settings),
        )

    # -- the cache file ------------------------------------------------------------------

    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            info = self.path.stat()
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size

    def _current_cache(self) -> msal.SerializableTokenCache:
        """The cache as the file holds it now (read again when another process or a new sign-in wrote it)."""
        import msal

        stamp = self._file_stamp()
        if self._cache is not None and stamp == self._stamp:
            return self._cache
        cache = msal.SerializableTokenCache()
        if stamp is not None:
            try:
                cache.deserialize(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise AuthRequired(
                    REAUTH_MESSAGE,
                    reason=f"the token cache {self.path} is unreadable: {exc}",
                    token_path=str(self.path),
                ) from None
        self._cache, self._stamp = cache, stamp
        self._app = None  # an app holds its cache: a new one for the new cache
        self.revoked = False
        return cache

    def _persist(self, cache: msal.SerializableTokenCache) -> None:
        """The cache written back once msal changed it (a refresh): atomically, owner-only."""
        if not cache.has_state_changed:
            return
        write_secret(self.path, cache.serialize())
        cache.has_state_changed = False
        self._stamp = self._file_stamp()

    def _entries(self, kind: str) -> list[dict[str, Any]]:
        """The cache's entries of one kind (AccessToken, RefreshToken, Account), read from the file without msal."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        section = data.get(kind) if isinstance(data, dict) else None
        return [v for v in section.values() if isinstance(v, dict)] if isinstance(section, dict) else []

    # -- msal ------------------------------------------------------------------------------

    def _application(self, cache: msal.SerializableTokenCache) -> msal.PublicClientApplication:
        """msal's public client for the authority (its OIDC discovery is the first network call)."""
        import msal
        import requests

        if self._app is not None:
            return self._app
        if not self.client_id:
            raise AuthRequired(
                "OUTLOOK_CLIENT_ID is not set: register H0 as an app in Microsoft Entra (docs/mailboxes.md), "
                "set OUTLOOK_CLIENT_ID, then run `h0 auth outlook`.",
                setting="OUTLOOK_CLIENT_ID",
            )
        try:
            self._app = msal.PublicClientApplication(
                self.client_id,
                authority=self.authority,
                token_cache=cache,
                instance_discovery=False,
                verify=ca_bundle(),
                timeout=self.timeout,
            )
        except (requests.RequestException, OSError) as exc:
            raise InternalError(
                f"Could not reach the Microsoft sign-in service at {self.authority}: {exc}", retryable=True
            ) from None
        except ValueError as exc:  # msal: an authority it cannot use (not https, no tenant, no discovery document)
            raise AuthRequired(
                f"OUTLOOK_AUTHORITY {self.authority!r} cannot be used: {exc}", setting="OUTLOOK_AUTHORITY"
            ) from None
        return self._app

    def access_token(self, *, force_refresh: bool = False) -> str:
        """A valid access token for the scopes, refreshed by msal when needed (`force_refresh`: after a 401).
        AuthRequired when there is no sign-in or the grant is gone; InternalError (retryable) when the
        sign-in service cannot be reached."""
        import requests

        with self._lock:
            cache = self._current_cache()
            if self._stamp is None:
                raise AuthRequired(REAUTH_MESSAGE, reason="no sign-in yet", token_path=str(self.path))
            if self.revoked:
                raise AuthRequired(
                    REAUTH_MESSAGE, reason="Microsoft refused the sign-in's refresh token", token_path=str(self.path)
                )
            app = self._application(cache)
            try:
                accounts = app.get_accounts()
                result = (
                    app.acquire_token_silent_with_error(self.scopes, account=accounts[0], force_refresh=force_refresh)
                    if accounts
                    else None
                )
            except (requests.RequestException, OSError) as exc:
                raise InternalError(f"Could not reach the Microsoft sign-in service: {exc}", retryable=True) from None
            if not result:
                raise AuthRequired(
                    REAUTH_MESSAGE,
                    reason="the sign-in holds no token for these permissions: " + " ".join(self.scopes),
                    token_path=str(self.path),
                )
            token = result.get("access_token")
            if isinstance(token, str) and token:
                self._persist(cache)
                return token
            error = str(result.get("error") or "unknown_error")
            described = str(result.get("error_description") or error).splitlines()[0][:300]
            if error in _GRANT_GONE:
                self.revoked = True
                raise AuthRequired(REAUTH_MESSAGE, reason=f"Microsoft refused the refresh: {described}", error=error)
            if error in _CONFIG_WRONG:
                raise AuthRequired(REAUTH_MESSAGE, reason=f"Microsoft refused H0's client: {described}", error=error)
            raise InternalError(f"The Microsoft sign-in service failed: {described}", retryable=True, error=error)

    # -- what is known locally ------------------------------------------------------------

    def account(self) -> str | None:
        """The signed-in account's name as the cache records it (no network)."""
        names = [str(a.get("username") or "") for a in self._entries("Account")]
        return next((n for n in names if n), None)

    def granted_scopes(self) -> set[str]:
        """The permissions the sign-in was granted, by name (`Mail.Send` → `mail.send`), from the cache."""
        granted: set[str] = set()
        for kind in ("RefreshToken", "AccessToken"):
            for entry in self._entries(kind):
                granted |= {_scope_name(s) for s in str(entry.get("target") or "").split()}
        return granted

    def missing_scopes(self) -> list[str]:
        granted = self.granted_scopes()
        return [s for s in self.scopes if _scope_name(s) not in granted] if granted else []

    def state(self) -> TokenState:
        """valid | expired_refreshable | missing | revoked — from the cache file, without network."""
        if self.revoked and self._file_stamp() == self._stamp:
            return "revoked"
        if not self.client_id or not self._entries("RefreshToken"):
            return "missing"
        now = time.time()
        wanted = {_scope_name(s) for s in self.scopes}
        for entry in self._entries("AccessToken"):
            names = {_scope_name(s) for s in str(entry.get("target") or "").split()}
            expires = str(entry.get("expires_on", "0"))
            if wanted <= names and expires.isdigit() and int(expires) > now + VALID_MARGIN_S:
                return "valid"
        return "expired_refreshable"

    def problems(self) -> list[str]:
        """What a person should fix, from the settings and the file alone (no network)."""
        if not self.client_id:
            return [
                "OUTLOOK_CLIENT_ID is not set: register H0 in Microsoft Entra (docs/mailboxes.md), then `h0 auth outlook`"
            ]
        state = self.state()
        if state == "missing":
            return [f"no Microsoft sign-in at {self.path}: {REAUTH_MESSAGE}"]
        if state == "revoked":
            return [f"Microsoft refused the sign-in (revoked, expired or a password change): {REAUTH_MESSAGE}"]
        found = []
        missing = self.missing_scopes()
        if missing:
            found.append(f"the sign-in lacks the permission(s) {', '.join(missing)}: {REAUTH_MESSAGE}")
        loose = readable_by_others(self.path)
        return [*found, loose] if loose else found

    # -- the one-time sign-in -------------------------------------------------------------

    def sign_in(self, say: Callable[[str], None]) -> str:
        """The device code flow: `say` is given the URL and the code to enter; blocks until the owner signed
        in (or the code expired). A fresh cache replaces the file. Returns the account's name."""
        import msal
        import requests

        with self._lock:
            cache = msal.SerializableTokenCache()
            self._app = None
            app = self._application(cache)
            try:
                flow = app.initiate_device_flow(scopes=self.scopes)
                if "user_code" not in flow:
                    raise AuthRequired(
                        "Microsoft did not start the sign-in: "
                        + str(flow.get("error_description") or flow.get("error") or flow)[:300]
                    )
                say(device_flow_prompt(flow))
                result = app.acquire_token_by_device_flow(flow)
            except requests.RequestException as exc:
                raise InternalError(f"Could not reach the Microsoft sign-in service: {exc}", retryable=True) from None
            finally:
                self._app = None
            if "access_token" not in result:
                raise AuthRequired(
                    "The sign-in did not complete: "
                    + str(result.get("error_description") or result.get("error") or "no token")[:300]
                )
            write_secret(self.path, cache.serialize())
            self._cache, self._stamp, self.revoked = None, None, False
            claims = result.get("id_token_claims") or {}
            return str(claims.get("preferred_username") or self.account() or "your account")


def device_flow_prompt(flow: dict[str, Any]) -> str:
    """The URL and the code, as the owner enters them (only printable characters from the server's answer)."""
    uri = str(flow.get("verification_uri") or flow.get("verification_url") or "")
    code = str(flow.get("user_code") or "")
    shown = "".join(ch for ch in f"{uri} {code}" if ch.isprintable())
    url, _, code = shown.partition(" ")
    return f"To sign in, open {url} in any browser and enter the code {code}"
