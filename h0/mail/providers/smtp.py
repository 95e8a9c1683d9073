"""The SMTP backend: the standard library's smtplib, STARTTLS or implicit TLS. Send-only.

One connection per send (a relay may drop idle sessions at any time, and sends are rare).
Failures are sorted by where they happened: while connecting or logging in nothing was
sent (retryable); a definite SMTP reply code decides the rest (4xx retryable, 5xx not, a
rejected recipient is a bounce); a connection lost after DATA leaves the outcome unknown.
SMTP cannot be asked afterwards whether a message went out, so `find_sent` is not supported.
Certificates are verified against the system store (`SSL_CERT_FILE` adds a private CA).
"""

from __future__ import annotations

import smtplib
import socket
import ssl
from email.message import EmailMessage
from typing import TYPE_CHECKING, overload

from h0.errors import AuthRequired, NotSupported, SendFailed
from h0.mail.providers.backend import MailSender, Sent
from h0.vault.values import addresses

if TYPE_CHECKING:
    from h0.config import Settings


def _reply_text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


# 550/551/553 are mailbox answers ("no such user", "not local", "mailbox name invalid"),
# which some servers give only after DATA.
_MAILBOX_CODES = (550, 551, 553)


def _definite(code: int, text: str, what: str) -> SendFailed:
    """A refusal with a reply code: nothing was sent; 4xx may pass later, 5xx will not."""
    permanent = code >= 500
    bounce = permanent and (what == "recipient" or (what == "message" and code in _MAILBOX_CODES))
    return SendFailed(
        f"The SMTP server refused the {what}: {code} {text}",
        smtp_code=code,
        retryable=not permanent,
        bounce=bounce,
        outcome="not_sent",
    )


class SmtpBackend(MailSender):
    name = "smtp"

    def __init__(self, settings: Settings) -> None:
        self.host = settings.smtp_host
        self.port = settings.smtp_port
        self.security = settings.smtp_secure
        self.oauth2 = settings.imap_auth == "oauth2"  # XOAUTH2 with the owner's sign-in (h0.mail.providers.xoauth2)
        self.user = settings.smtp_user or (settings.imap_user if self.oauth2 else None)
        self.password = settings.smtp_pass.get_secret_value() if settings.smtp_pass else None
        self.sender = settings.smtp_from or settings.smtp_user
        self.timeout = settings.smtp_timeout_seconds
        self.settings = settings

    def problems(self) -> list[str]:
        problems = []
        if not self.host:
            problems.append("SMTP_HOST is not set")
        if "@" not in (self.account(0) or ""):
            problems.append("set SMTP_FROM (or SMTP_USER) to the sending address")
        if self.user and not self.password and not self.oauth2:
            problems.append("SMTP_USER is set but SMTP_PASS is not")
        if self.oauth2 and not self.user:
            problems.append("IMAP_AUTH=oauth2 needs SMTP_USER (or IMAP_USER): the account that signs in")
        return problems

    def account(self, timeout: float) -> str | None:
        found = addresses(self.sender)
        return found[0] if found else None

    def _connect(self, timeout: float) -> smtplib.SMTP:
        """An authenticated session, or an error that says nothing was sent. With IMAP_AUTH=oauth2 a refused
        token is refreshed and tried once more on a new connection (a server may end one after a failed AUTH)."""
        problems = self.problems()
        if problems:
            # Not the draft's fault: like missing credentials, it pauses sending until fixed.
            raise AuthRequired(f"SMTP is not configured: {'; '.join(problems)} (see .env.example).", problems=problems)
        if not (self.oauth2 and self.user):
            return self._open(timeout, None)
        from h0.mail.providers.xoauth2 import access_token, refused

        for attempt in (0, 1):
            client = self._open(timeout, access_token(self.settings, force_refresh=attempt > 0))
            if client is not None:
                return client
        raise refused(self.settings, "SMTP", self.user)

    @overload
    def _open(self, timeout: float, token: None) -> smtplib.SMTP: ...
    @overload
    def _open(self, timeout: float, token: str) -> smtplib.SMTP | None: ...

    def _open(self, timeout: float, token: str | None) -> smtplib.SMTP | None:
        """A session logged in with the password, or with `token` by XOAUTH2 (None: the server refused it)."""
        from h0.mail.providers.xoauth2 import sasl_string

        host = self.host or ""  # not empty: problems() says so above
        context = ssl.create_default_context()
        try:
            if self.security == "ssl":
                client: smtplib.SMTP = smtplib.SMTP_SSL(host, self.port, timeout=timeout, context=context)
            else:
                client = smtplib.SMTP(host, self.port, timeout=timeout)
                if self.security == "starttls":
                    client.starttls(context=context)
            if token is not None and self.user:
                client.ehlo_or_helo_if_needed()
                first = sasl_string(self.user, token)
                # An error challenge (334 with the reason) is answered with an empty line, as XOAUTH2 asks.
                try:
                    client.auth("XOAUTH2", lambda challenge=None: "" if challenge else first)
                except smtplib.SMTPAuthenticationError:
                    client.close()
                    return None
            elif self.user:
                client.login(self.user, self.password or "")
        except smtplib.SMTPAuthenticationError as exc:
            raise AuthRequired(
                f"The SMTP server refused the login for {self.user}: check SMTP_USER / SMTP_PASS "
                "(Gmail needs an app password).",
                smtp_code=exc.smtp_code,
            ) from None
        except smtplib.SMTPNotSupportedError as exc:
            raise SendFailed(
                f"The SMTP server does not support this: {exc}", retryable=False, outcome="not_sent"
            ) from None
        except ssl.SSLError as exc:
            raise SendFailed(
                f"TLS with {self.host}:{self.port} failed: {exc}", retryable=False, outcome="not_sent"
            ) from None
        except (OSError, smtplib.SMTPException) as exc:
            raise SendFailed(
                f"Could not reach {self.host}:{self.port}: {exc}", retryable=True, outcome="not_sent"
            ) from None
        return client

    def send(self, message: EmailMessage, *, thread_id: str | None = None) -> Sent:
        if "From" not in message and self.sender:
            message["From"] = self.sender
        client = self._connect(self.timeout)
        try:
            refused = client.send_message(message)
        except smtplib.SMTPRecipientsRefused as exc:
            code, text = next(iter(exc.recipients.values()))
            raise _definite(code, _reply_text(text), "recipient") from None
        except smtplib.SMTPSenderRefused as exc:
            raise _definite(exc.smtp_code, _reply_text(exc.smtp_error), "sender") from None
        except smtplib.SMTPDataError as exc:
            raise _definite(exc.smtp_code, _reply_text(exc.smtp_error), "message") from None
        except smtplib.SMTPResponseException as exc:
            raise _definite(exc.smtp_code, _reply_text(exc.smtp_error), "message") from None
        except (OSError, smtplib.SMTPException) as exc:
            what = "timed out" if isinstance(exc, socket.timeout) else "was lost"
            raise SendFailed(
                f"The SMTP connection {what} during the send, so the message may or may not have gone out. "
                "It was not re-sent: check your Sent folder before sending again.",
                retryable=False,
                outcome="unknown",
                cause=str(exc),
            ) from None
        finally:
            try:
                client.quit()
            except (OSError, smtplib.SMTPException):
                client.close()
        warnings = tuple(f"{addr} refused: {code} {_reply_text(text)}" for addr, (code, text) in refused.items())
        return Sent(str(message["Message-ID"]), thread_id, warnings)

    def find_sent(self, rfc822_message_id: str) -> Sent | None:
        raise NotSupported(f"The {self.name} backend cannot look up sent messages.")
