"""The two MCP servers built from settings: the one factory `h0 mcp vault|gmail` and the in-process harness share.

`h0 mcp vault` and `h0 mcp gmail` (h0.cli) build their server here and serve it over stdio; the
in-process targets (`in_process_servers`, the daemon's `ServerTargets` for tests and benchmarks)
build the same servers here and serve them over the SDK's in-memory transport. So the settings a
server takes, and what the daemon's own child may do, cannot drift between the two.

The daemon's own child (H0_DAEMON_CHILD=1 in its environment, set only by the daemon, whose stdio
pipes are its alone) may file notes out of Approved/ and take the daemon's word for how a note
arrived there; a server an MCP client starts from .mcp.json never has it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from h0.config import Settings
from h0.mcp.base import H0Server
from h0.mcp.client import InProcessServer, ServerCommand
from h0.mcp.vault_server import build_vault_server, daemon_filing_from_env

if TYPE_CHECKING:  # the mail stack is imported by the mail server only: ~8 MB of a vault server's memory
    from h0.mail import MailService


def vault_server(settings: Settings, *, daemon_child: bool) -> H0Server:
    """The server `h0 mcp vault` serves: the settings' vault, calendar, state, privacy, watcher and draft budget.
    The iCalendar stack (~4 MB of the server's memory) is imported only when a calendar is configured."""
    calendar = None
    if settings.calendar_configured:
        from h0.calendar import OwnerCalendar

        calendar = OwnerCalendar.for_settings(settings)
    return build_vault_server(
        settings.vault_path,
        daemon_filing=daemon_child,
        calendar=calendar,
        state_dir=settings.h0_state_dir,
        private_folders=settings.private_folders,  # with the vault's own (h0.vault.disclosure)
        watcher=settings.h0_watcher,
        draft_tokens=settings.draft_context_tokens,
    )


def mail_service(settings: Settings, *, daemon_child: bool) -> MailService:
    """The mail service behind `h0 mcp gmail` (its SIGTERM handler finishes this service's sends). The outbox's
    dry-run messages carry the owner's name from H0_Profile.md (h0.mail.providers.outbox)."""
    from h0.drafting.profile import load_profile
    from h0.mail import MailService
    from h0.mail.providers.outbox import OutboxBackend

    service = MailService(settings, trusted_caller=daemon_child)
    if isinstance(service.backend, OutboxBackend):
        service.backend.owner_name = lambda: load_profile(settings.vault_path).name
    return service


def mail_server(settings: Settings, service: MailService) -> H0Server:
    """The server `h0 mcp gmail` serves, on `service` (from `mail_service`)."""
    from h0.mcp.mail_server import build_mail_server

    return build_mail_server(settings, service)


def in_process_servers(settings: Settings, env: Mapping[str, str]) -> dict[str, ServerCommand | InProcessServer]:
    """The daemon's two servers (h0.pipeline.daemon's `ServerTargets`) served in this process: built as
    `h0 mcp vault` / `h0 mcp gmail` build them, the daemon's own child read from `env` as that process
    reads it from its environment. Each session gets a fresh server, as a restarted process would."""
    child = daemon_filing_from_env(env)

    def vault() -> H0Server:
        return vault_server(settings, daemon_child=child)

    def mail() -> H0Server:
        return mail_server(settings, mail_service(settings, daemon_child=child))

    return {"vault": InProcessServer("vault", vault), "mail": InProcessServer("mail", mail)}
