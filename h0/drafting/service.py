"""`Drafting`: one vault's drafting state — its knowledge, past replies, profile and memory — kept
warm for a process, and the one call that assembles a reply's context.

Handlers, the MCP servers and the benchmarks ask `Drafting.for_settings(settings)` and get the
same object for the same vault, so the catalogue of notes is built once per process and then
only brought up to date. The knowledge source is a constructor argument: the vault index
(h0/vault/index) plugs in there.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loguru import logger

from h0.config import Settings
from h0.drafting.context import DraftContext, assemble, recipient_of
from h0.drafting.knowledge import VaultKnowledge
from h0.drafting.knowledgenotes import KnowledgeSource
from h0.drafting.memory import Memory, load_memory
from h0.drafting.past import SENT_CACHE_FILE, PastReplies
from h0.drafting.privacy import MEMORY_NOTE, PROFILE_NOTE
from h0.drafting.profile import Profile, load_profile
from h0.drafting.voice import VOICE_WINDOW, voice_for
from h0.triage.models import ReplyContext
from h0.vault.audit import AuditLog
from h0.vault.layout import LOGS

DRAFTING_STREAM = "drafting"  # Logs/drafting_<date>.jsonl: what H0 wrote, what was sent, how alike
# (mtime_ns, size, inode) of a note's file, None when it cannot be stat'ed: re-read when it changes.
FileSignature = tuple[int, int, int] | None
_instances: dict[tuple[str, tuple[str, ...], int, str], Drafting] = {}
_instances_lock = threading.Lock()
_fed: dict[str, int] = {}  # vault root -> watchers reporting its every note (see `watching`)


class Drafting:
    def __init__(
        self,
        root: Path,
        *,
        private_folders: Sequence[str] = (),
        budget_tokens: int = 3000,
        knowledge: KnowledgeSource | None = None,
        sent_cache: Path | None = None,
    ) -> None:
        self.root = Path(root)
        self.budget_tokens = budget_tokens
        self.knowledge: KnowledgeSource = knowledge or VaultKnowledge(self.root, private_folders)
        self.sent_cache = sent_cache
        self.past = PastReplies(self.root, sent_cache)
        self.log = AuditLog(self.root / LOGS, DRAFTING_STREAM)
        self._lock = threading.Lock()
        self._profile: tuple[FileSignature, Profile] | None = None
        self._memory: tuple[FileSignature, Memory] | None = None

    @classmethod
    def for_settings(cls, settings: Settings, root: Path | None = None) -> Drafting:
        """The process's Drafting for this vault and these settings (built on first use), its knowledge
        answered by the vault index (a scan of the vault when the index cannot be opened)."""
        root = Path(root or settings.vault_path)
        private = tuple(settings.private_folder_list)
        key = (str(root), private, settings.draft_context_tokens, str(settings.h0_state_dir))
        with _instances_lock:
            found = _instances.get(key)
            if found is None:
                found = _instances[key] = cls(
                    root,
                    private_folders=private,
                    budget_tokens=settings.draft_context_tokens,
                    sent_cache=sent_cache_path(root, settings.h0_state_dir),
                    knowledge=indexed_knowledge(root, settings.h0_state_dir, private),
                )
            return found

    def note_changed(self, path: str | None) -> None:
        """A watcher saw this note (absolute path) change, or any note (None): the next context sees it."""
        changed = getattr(self.knowledge, "changed", None)
        if changed is not None:
            changed(path)

    def profile(self) -> Profile:
        """The profile note as it is now (re-read only when its file changed)."""
        signature = _signature(self.root / PROFILE_NOTE)
        cached = self._profile
        if cached is not None and cached[0] == signature:
            return cached[1]
        profile = load_profile(self.root)
        self._profile = (signature, profile)
        return profile

    def memory(self) -> Memory:
        signature = _signature(self.root / MEMORY_NOTE)
        cached = self._memory
        if cached is not None and cached[0] == signature:
            return cached[1]
        memory = load_memory(self.root)
        self._memory = (signature, memory)
        return memory

    def context(
        self, *, reply_to: str, sender: str, subject: str, body: str, exclude: Sequence[str] = ()
    ) -> DraftContext:
        """Everything a reply to `reply_to` answering this email may draw on (h0.drafting.context)."""
        freshen = getattr(self.knowledge, "freshen", None)
        if freshen is not None:
            freshen(fed=_fed.get(os.path.normcase(os.path.abspath(self.root)), 0) > 0)
        return assemble(
            reply_to=reply_to,
            sender=sender,
            subject=subject,
            body=body,
            profile=self.profile(),
            memory=self.memory(),
            knowledge=self.knowledge,
            past=self.past,
            budget_tokens=self.budget_tokens,
            exclude=exclude,
        )

    def voice_context(self, reply_to: str | None, sender: str) -> ReplyContext:
        """Just the greeting and sign-off of a reply (what a rules template needs): the profile and the
        owner's last replies to this address, nothing else looked up."""
        name, address = recipient_of(sender)
        address = (reply_to or address).strip().lower()
        voice = voice_for(address, name, self.profile(), self.past.to_address(address, VOICE_WINDOW))
        return ReplyContext(greeting=voice.greeting, sign_off=voice.sign_off)

    def voice_for_people(self, people: Sequence[tuple[str, str]]) -> tuple[str | None, str | None]:
        """(greeting, sign-off) of a mail to these (display name, address) people: to one, as the owner's
        last replies to them (else the profile); to several, no greeting of theirs ("Hi all,") and the
        owner's sign-off. None where H0 has nothing (the caller's default)."""
        if not people:
            return None, None
        name, address = people[0]
        voice = self.voice_context(address, f"{name} <{address}>" if name else address)
        return (voice.greeting or None) if len(people) == 1 else None, voice.sign_off or None

    def context_for_email(
        self, frontmatter: dict[str, Any], text: str, reply_to: str | None = None, exclude: Sequence[str] = ()
    ) -> DraftContext:
        """The context for an email note's frontmatter and its words (`text`: the body's email text);
        `exclude`: vault paths already given otherwise (the email's thread), never repeated as notes."""
        sender = str(frontmatter.get("from") or "")
        address = reply_to or recipient_of(sender)[1]
        return self.context(
            reply_to=address,
            sender=sender,
            subject=str(frontmatter.get("subject") or ""),
            body=text,
            exclude=exclude,
        )


def indexed_knowledge(root: Path, state_dir: Path | None, private: Sequence[str]) -> KnowledgeSource | None:
    """The vault index as drafting's knowledge (None: it cannot be opened here; the scan is used)."""
    from h0.drafting.indexed import IndexKnowledge
    from h0.vault.index import VaultIndex

    try:
        return IndexKnowledge(VaultIndex.open(root, state_dir, private), private)
    except Exception as exc:  # noqa: BLE001 - drafting still works from a scan of the vault
        logger.warning("the vault index could not be opened for drafting ({}); scanning the vault instead", exc)
        return None


def watching(root: Path, on: bool) -> None:
    """A watcher of this process reports every note of `root` changing (the daemon's, with native
    events): drafting trusts the index between its reports instead of checking the vault each time."""
    key = os.path.normcase(os.path.abspath(root))
    with _instances_lock:
        _fed[key] = _fed.get(key, 0) + (1 if on else -1)


def vault_changed(root: Path, path: str | None) -> None:
    """Tell this process's Drafting objects for `root` that a note changed (None: any may have)."""
    key = os.path.normcase(os.path.abspath(root))
    with _instances_lock:
        found = [d for k, d in _instances.items() if os.path.normcase(os.path.abspath(k[0])) == key]
    for drafting in found:
        drafting.note_changed(path)


def sent_cache_path(root: Path, state_dir: Path | None) -> Path | None:
    """Where the provider's sent mail is cached: H0's state folder for this vault (never the vault)."""
    from h0.state import state_dir_for

    try:
        return state_dir_for(Path(root), state_dir) / SENT_CACHE_FILE
    except Exception:  # noqa: BLE001 - no state folder (read-only home): no provider sent mail, the vault still counts
        return None


def _signature(path: Path) -> FileSignature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def owner_voice(settings: Settings, root: Path, people: Sequence[tuple[str, str]]) -> tuple[str | None, str | None]:
    """(greeting, sign-off) of the owner's mail to these people (`Drafting.voice_for_people`); (None, None)
    when the vault's drafting state cannot be read: the caller's defaults, never a failure."""
    try:
        return Drafting.for_settings(settings, root).voice_for_people(people)
    except Exception as exc:  # noqa: BLE001 - a follow-up is still drafted, in the default words
        logger.debug("the owner's voice could not be read ({})", exc)
        return None, None
