"""IMAP and SMTP with OAuth2 (XOAUTH2): an access token instead of a password, for `IMAP_AUTH=oauth2`.

Microsoft turned password logins off for Outlook.com and Microsoft 365; an admin may still allow IMAP and SMTP
with OAuth2 where Graph is not allowed. Gmail's IMAP takes XOAUTH2 too. The token comes from the sign-in the
owner already made: `h0 auth outlook` (msal, the scopes `IMAP.AccessAsUser.All` and `SMTP.Send` of
outlook.office.com) or `h0 auth gmail` (Google's `https://mail.google.com/` scope, which only IMAP and SMTP
need). Which one is IMAP_OAUTH_PROVIDER, by default read from IMAP_HOST. A login the server refuses is tried
once more with a refreshed token; then it is `auth_required` naming the command to run.

The SASL string is Google's and Microsoft's documented one: `user=U ^A auth=Bearer T ^A ^A`, base64-encoded
by the protocol libraries (imapclient's `oauth2_login`, smtplib's `auth`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from h0.errors import AuthRequired, InternalError
from h0.mail.providers.outlook_auth import IMAP_SCOPES, MicrosoftSignIn

if TYPE_CHECKING:
    from h0.config import Settings

Provider = Literal["microsoft", "google"]
GOOGLE_IMAP_SCOPES = ["https://mail.google.com/"]
_GOOGLE_HOSTS = ("gmail.com", "googlemail.com")


def provider_of(settings: Settings) -> Provider:
    """Whose sign-in gives the token: IMAP_OAUTH_PROVIDER, else Google for Gmail's hosts, else Microsoft."""
    if settings.imap_oauth_provider is not None:
        return settings.imap_oauth_provider
    host = (settings.imap_host or settings.smtp_host or "").lower().rstrip(".")
    return "google" if any(host == h or host.endswith("." + h) for h in _GOOGLE_HOSTS) else "microsoft"


def reauth_command(settings: Settings) -> str:
    return "h0 auth gmail" if provider_of(settings) == "google" else "h0 auth outlook"


def access_token(settings: Settings, *, force_refresh: bool = False) -> str:
    """A valid access token for IMAP and SMTP (AuthRequired naming the command when there is none)."""
    if provider_of(settings) == "microsoft":
        return MicrosoftSignIn.from_settings(settings, IMAP_SCOPES).access_token(force_refresh=force_refresh)
    import google.auth.exceptions
    from google.auth.transport.requests import Request

    from h0.mail.providers.auth import TokenStore, refresh_failure

    credentials = TokenStore(settings.gmail_token_path, token_uri=settings.gmail_token_uri).credentials()
    if force_refresh or not credentials.valid:
        try:
            credentials.refresh(Request())
        except google.auth.exceptions.RefreshError as exc:
            raise refresh_failure(exc) from None
        except google.auth.exceptions.TransportError as exc:
            raise InternalError(f"Could not reach Google's token endpoint: {exc}", retryable=True) from None
    token = credentials.token
    if not isinstance(token, str) or not token:
        raise AuthRequired("Run `h0 auth gmail` to re-authenticate", reason="no access token")
    return token


def sasl_string(user: str, token: str) -> str:
    """The XOAUTH2 initial response, before the protocol's base64."""
    return f"user={user}\x01auth=Bearer {token}\x01\x01"


def refused(settings: Settings, server: str, user: str) -> AuthRequired:
    command = reauth_command(settings)
    return AuthRequired(
        f"The {server} server refused the OAuth2 login for {user}: run `{command}` to sign in again "
        "(and check that the mailbox allows IMAP/SMTP with OAuth2).",
        setting="IMAP_AUTH",
    )
