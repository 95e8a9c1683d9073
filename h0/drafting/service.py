"""`Drafting`: one vault's drafting state — its knowledge, past replies, profile and memory — kept
warm by whoever holds it, and the one call that assembles a reply's context.

`Drafting.build(settings)` makes one; the handlers' context holds its own (`HandlerContext.drafting_state`,
built on first use), and the daemon tells that one what its watcher sees (`note_changed`) and whether the
watcher reports every change (`watched`). The knowledge source is a constructor argument: the vault index
(h0/vault/index) plugs in there.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from loguru import logger

from h0.calendar import OwnerCalendar
from h0.calendar.phrases import asks_to_meet
from h0.config import Settings
from h0.drafting.briefing import questions
from h0.drafting.commercial import audience_of
from h0.drafting.context import Answering, DraftContext, assemble
from h0.drafting.knowledge import VaultKnowledge
from h0.drafting.knowledgenotes import KnowledgeSource
from h0.drafting.memory import Memory, load_memory
from h0.drafting.past import SENT_CACHE_FILE, PastReplies
from h0.drafting.profile import Profile, load_profile
from h0.drafting.relevance import email_thread_keys
from h0.drafting.replyvoice import FinishedReply, ReplyVoice, choose_voice, finish, person_language
from h0.drafting.scheduling import scheduling_for_email
from h0.errors import H0Error
from h0.mail.owner import OwnerAuthority
from h0.platform.fileio import FileSignature, file_signature
from h0.state import StateDB
from h0.state.history import MailHistory
from h0.triage.models import ReplyContext
from h0.vault.audit import AuditLog
from h0.vault.disclosure import Disclosure
from h0.vault.layout import DRAFTING_STREAM, LOGS, MEMORY_NOTE, PROFILE_NOTE
from h0.vault.model import NoteFacts
from h0.vault.private_threads import IndexThreads, PrivateThreads, ScannedThreads

if TYPE_CHECKING:
    from h0.triage.llm import LLMTriage

T = TypeVar("T")


def _never() -> bool:
    return False


class _ReadOnChange(Generic[T]):
    """An owner's note as `load` reads it, read again only when its file changed (h0.platform.fileio's signature)."""

    def __init__(self, path: Path, load: Callable[[], T]) -> None:
        self.path, self.load = path, load
        self._held: tuple[FileSignature, T] | None = None

    def get(self) -> T:
        signature = file_signature(self.path)
        held = self._held
        if held is None or held[0] != signature:
            held = self._held = (signature, self.load())
        return held[1]


class Drafting:
    def __init__(
        self,
        root: Path,
        *,
        disclosure: Disclosure | None = None,
        budget_tokens: int = 3000,
        knowledge: KnowledgeSource | None = None,
        sent_cache: Path | None = None,
        history: MailHistory | None = None,
        calendar: OwnerCalendar | None = None,
        owner: OwnerAuthority | None = None,
        watched: Callable[[], bool] = _never,
    ) -> None:
        self.root = Path(root)
        self._watched = watched  # whether a watcher of this process reports every note changing (the daemon's)
        self.calendar = calendar  # None: no calendar source, and no reply proposes a time
        self.budget_tokens = budget_tokens
        index = getattr(knowledge, "index", None)  # the vault index behind the knowledge, when there is one
        self.disclosure = disclosure if disclosure is not None else Disclosure.for_vault(self.root)
        if index is not None:
            self.disclosure = index.gate  # the same gate, knowing the private people the index holds
        self.knowledge: KnowledgeSource = knowledge or VaultKnowledge(self.root, self.disclosure)
        self.sent_cache = sent_cache
        self.owner = owner  # the owner's identity: which notes hold the owner's words (h0.mail.owner)
        # Which thread keys private notes hold, anywhere in the vault: the index's answer (a walk without it).
        self.threads: PrivateThreads = (
            IndexThreads(index) if index is not None else ScannedThreads(self.root, self.disclosure)
        )
        self.past = PastReplies(self.root, sent_cache, self.disclosure, owner, history, threads=self.threads)
        self.past.watched_by(self.watched)
        self.log = AuditLog(self.root / LOGS, DRAFTING_STREAM)
        self._lock = threading.Lock()
        self._profile = _ReadOnChange(self.root / PROFILE_NOTE, lambda: load_profile(self.root))
        self._memory = _ReadOnChange(self.root / MEMORY_NOTE, lambda: load_memory(self.root))
        self._looked = threading.local()  # `looked_once` on this thread: contexts do not look at the vault again

    def people(self) -> list[tuple[str, str]]:
        """(name, address) of the owner's People notes (through the vault index; none without it)."""
        index = getattr(self.knowledge, "index", None)
        if index is None:
            return []
        try:
            people: list[tuple[str, str]] = index.people()
        except H0Error as error:
            logger.debug("People notes' addresses unavailable: {}", error.message)
            return []
        return people

    @classmethod
    def build(
        cls,
        settings: Settings,
        root: Path | None = None,
        disclosure: Disclosure | None = None,
        *,
        watched: Callable[[], bool] = _never,
    ) -> Drafting:
        """A new Drafting for this vault and these settings, its knowledge answered by the vault index (a scan of
        the vault when the index cannot be opened). `watched`: as the constructor's."""
        root = Path(root or settings.vault_path)
        disclosure = disclosure or Disclosure.for_vault(root, settings.private_folders)
        return cls(
            root,
            disclosure=disclosure,
            budget_tokens=settings.draft_context_tokens,
            sent_cache=sent_cache_path(root, settings.h0_state_dir),
            history=mail_history(root, settings.h0_state_dir),
            knowledge=indexed_knowledge(root, settings.h0_state_dir, disclosure),
            calendar=OwnerCalendar.for_settings(settings, root),
            owner=owner_authority(root, settings.h0_state_dir),
            watched=watched,
        )

    def note_changed(self, path: str | None) -> None:
        """A watcher saw this note (absolute path) change, or any note (None): the next context sees it."""
        changed = getattr(self.knowledge, "changed", None)
        if changed is not None:
            changed(path)
        self.past.changed(path)

    def watched(self) -> bool:
        """Whether a watcher of this process reports every note of this vault changing: drafting then trusts its
        index between the watcher's reports (`note_changed`) instead of comparing it with the vault first."""
        return self._watched()

    def profile(self) -> Profile:
        """The profile note as it is now (re-read only when its file changed)."""
        return self._profile.get()

    def memory(self) -> Memory:
        """The memory note as it is now (re-read only when its file changed)."""
        return self._memory.get()

    def _freshen(self) -> None:
        freshen = getattr(self.knowledge, "freshen", None)
        if freshen is not None:
            freshen(fed=self.watched())

    @contextlib.contextmanager
    def looked_once(self) -> Iterator[None]:
        """The contexts this thread assembles inside take the vault as one look now found it: without a
        watcher (`h0 sweep`) a batch of emails costs one comparison of the vault with the index, not one
        an email (a walk of the vault per message)."""
        self._freshen()
        self._looked.inside = True
        try:
            yield
        finally:
            self._looked.inside = False

    def context(self, asked: Answering) -> DraftContext:
        """Everything the reply `asked` for may draw on (h0.drafting.context)."""
        if not getattr(self._looked, "inside", False):
            self._freshen()
        return assemble(
            asked,
            profile=self.profile(),
            memory=self.memory(),
            knowledge=self.knowledge,
            past=self.past,
            budget_tokens=self.budget_tokens,
        )

    def voice_context(self, reply_to: str | None, sender: str, text: str = "") -> ReplyContext:
        """Just the greeting and sign-off of a reply (what a rules template needs): the profile and the
        owner's last replies that spoke to this address; with the email's `text`, in its language and register."""
        chosen = self.reply_voice(reply_to, sender, text)
        return ReplyContext(
            greeting=chosen.voice.greeting,
            sign_off=chosen.voice.sign_off,
            language=chosen.language,
            address=chosen.address,
        )

    def reply_voice(
        self, reply_to: str | None, sender: str, text: str = "", email: NoteFacts | None = None
    ) -> ReplyVoice:
        """The greeting, sign-off, language and address form of a reply to `reply_to` answering `text` from
        `sender` (`email`: its note's facts, when there is one): h0.drafting.replyvoice.choose_voice."""
        return choose_voice(self.profile(), self.past, self.knowledge, reply_to, sender, text, email)

    def person_language(self, address: str) -> str | None:
        """The `language:` of this address's People note (h0.drafting.replyvoice.person_language)."""
        return person_language(self.knowledge, address)

    def finish_reply(self, reply: str, chosen: ReplyVoice, llm: LLMTriage | None = None) -> FinishedReply:
        """A model's reply made the owner's (h0.drafting.replyvoice.finish): greeting and sign-off, language, form."""
        return finish(self.profile(), reply, chosen, llm)

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
        self,
        email: NoteFacts,
        text: str,
        reply_to: str | None = None,
        exclude: Sequence[str] = (),
        audience: Iterable[str] | None = None,
    ) -> DraftContext:
        """The context for an email note (`email`: its typed facts, `Note.facts`) and its words (`text`: the
        body's email text); `exclude`: vault paths already given otherwise (the email's thread), never
        repeated as notes; `audience`: who else the reply concerns (h0.drafting.commercial.audience_of)."""
        address = reply_to or email.sender
        context = self.context(
            Answering(
                reply_to=address,
                sender=email.sender_text,
                subject=email.subject,
                body=text,
                exclude=exclude,
                audience=audience_of(email, (), ()) if audience is None else audience,
                thread=email_thread_keys(email),
                to_meet=only_to_meet(email.subject, text),
            )
        )
        scheduling = scheduling_for_email(
            self.calendar, self.profile(), self.knowledge, email, text, address, datetime.now(UTC)
        )
        return dataclasses.replace(context, scheduling=scheduling) if scheduling is not None else context


def only_to_meet(subject: str, text: str) -> bool:
    """Whether all an email asks is to meet: it asks to (h0.calendar.phrases.asks_to_meet, on its subject and
    words as scheduling reads them: a reply to it proposes times from the calendar) and each question of its
    words (h0.drafting.briefing.questions) is that request."""
    return asks_to_meet(f"{subject}\n{text}") and all(asks_to_meet(question) for question in questions(text))


def indexed_knowledge(root: Path, state_dir: Path | None, disclosure: Disclosure) -> KnowledgeSource | None:
    """The vault index as drafting's knowledge (None: it cannot be opened here; the scan is used)."""
    from h0.drafting.indexed import IndexKnowledge
    from h0.vault.index import VaultIndex

    try:
        return IndexKnowledge(VaultIndex.shared(root, state_dir, disclosure))  # the process's one (its reports' too)
    except Exception as exc:  # noqa: BLE001 - drafting still works from a scan of the vault
        logger.warning("the vault index could not be opened for drafting ({}); scanning the vault instead", exc)
        return None


def sent_cache_path(root: Path, state_dir: Path | None) -> Path | None:
    """Where the provider's sent mail is cached: H0's state folder for this vault (never the vault)."""
    from h0.state import state_dir_for

    try:
        return state_dir_for(Path(root), state_dir) / SENT_CACHE_FILE
    except Exception:  # noqa: BLE001 - no state folder (read-only home): no provider sent mail, the vault still counts
        return None


def owner_authority(root: Path, state_dir: Path | None) -> OwnerAuthority | None:
    """The owner's identity for this vault (None: no state database here — then no note is vouched for)."""
    return _over_state(
        root,
        state_dir,
        OwnerAuthority,
        "the owner's identity cannot be read ({}); past replies from the vault are left out",
    )


def mail_history(root: Path, state_dir: Path | None) -> MailHistory | None:
    """The mail kept as history for this vault (h0.state.history); None when the state folder cannot be opened."""
    return _over_state(
        root, state_dir, MailHistory, "the mail history cannot be read ({}); past replies from the vault alone"
    )


def _over_state(root: Path, state_dir: Path | None, reader: Callable[[StateDB], T], unread: str) -> T | None:
    """`reader` over this vault's state database; None (and `unread` logged) when it cannot be opened."""
    try:
        return reader(StateDB.for_vault(Path(root), state_dir))
    except H0Error as error:
        logger.warning(unread, error)
        return None
