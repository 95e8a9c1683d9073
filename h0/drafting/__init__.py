"""Drafting: replies worth sending — grounded in the vault, in the owner's voice, learning from edits.

    drafting = Drafting.build(settings)                   # kept by its holder (HandlerContext.drafting_state)
    context = drafting.context_for_email(note.facts, text, to)   # DraftContext: profile, lessons, people, …
    outcome = triager.triage(email, context.reply_context())

Modules: `context` (the typed context and its budget), `knowledgenotes` (the KnowledgeSource
protocol, one note read and judged), `knowledge` (a scan of the vault), `indexed` (the vault
index as a KnowledgeSource; what never enters a prompt is h0.vault.disclosure's), `profile` and `memory`
(H0_Profile.md, H0_Memory.md), `past` and `voice` (the owner's sent replies and how they write), `replytext` (quoted history and signatures cut), `grounding` (what a draft stood
on, placeholders, quotes), `revise` (rewrites the owner asks for), `learning` (edits compared,
lessons, the send-ready rate).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from h0.lazy import lazy_names

if TYPE_CHECKING:
    from h0.drafting.context import ContextItem, DraftContext
    from h0.drafting.knowledge import VaultKnowledge
    from h0.drafting.knowledgenotes import KnowledgeNote, KnowledgeSource, RelatedKnowledge
    from h0.drafting.profile import DEFAULT_PROFILE_TEXT, Profile, load_profile
    from h0.drafting.service import Drafting
    from h0.vault.layout import DRAFTING_STREAM

__all__ = [
    "DEFAULT_PROFILE_TEXT",
    "DRAFTING_STREAM",
    "ContextItem",
    "DraftContext",
    "Drafting",
    "KnowledgeNote",
    "KnowledgeSource",
    "Profile",
    "RelatedKnowledge",
    "VaultKnowledge",
    "load_profile",
]

# Loaded when first asked for (PEP 562): `h0 status` reads the drafting log (h0.drafting.learning)
# without loading the context assembly, the calendar and the triage models.
_HOMES = {
    "ContextItem": "h0.drafting.context",
    "DraftContext": "h0.drafting.context",
    "VaultKnowledge": "h0.drafting.knowledge",
    "KnowledgeNote": "h0.drafting.knowledgenotes",
    "KnowledgeSource": "h0.drafting.knowledgenotes",
    "RelatedKnowledge": "h0.drafting.knowledgenotes",
    "DEFAULT_PROFILE_TEXT": "h0.drafting.profile",
    "Profile": "h0.drafting.profile",
    "load_profile": "h0.drafting.profile",
    "DRAFTING_STREAM": "h0.vault.layout",
    "Drafting": "h0.drafting.service",
}

__getattr__ = lazy_names(__name__, _HOMES)
