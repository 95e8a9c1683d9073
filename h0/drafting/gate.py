"""The disclosure gate a handler asks (h0.vault.disclosure): drafting's, which knows the private people of its
vault index. A gate built from the settings alone knows none, so a step that asks before any triage built
drafting (a follow-up pass) gets drafting built here."""

from __future__ import annotations

from pathlib import Path

from loguru import logger

from h0.config import Settings
from h0.drafting.service import Drafting
from h0.vault.disclosure import Disclosure


def gate_of(settings: Settings, root: Path, drafting: Drafting | None) -> tuple[Drafting | None, Disclosure]:
    """(drafting, the disclosure gate) for a handler: drafting's gate, which knows the private people of its vault
    index — drafting built here when no step has yet (a follow-up pass may ask before any triage) — or, for
    settings that cannot build drafting (a test's stub), the settings' gate alone, which knows no private person."""
    if drafting is None:
        try:
            drafting = Drafting.for_settings(settings, root)
        except Exception as exc:  # noqa: BLE001 - settings without the drafting fields
            logger.debug("drafting unavailable, the gate knows no private people: {}", exc)
            return None, Disclosure.for_vault(root, settings.private_folders)
    return drafting, drafting.disclosure
