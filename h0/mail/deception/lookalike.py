"""Look-alike domains: a recipient whose domain can pass for one the vault has corresponded with is held.

`ceo@bаnk.com` (a Cyrillic а), `paypa1.com`, `arnazon.com` or `xn--bnk-6cd.com` look like a
bank, PayPal or Amazon the human has written to or heard from, and are someone else. A
domain's *skeleton* is what it looks like (Unicode's UTS #39 confusables: letters, marks and
digits, from the table in `_confusables.py`; then accents dropped and case folded, punycode
read as the Unicode it stands for): two different domains with one skeleton are confusable.

"Corresponded with" (`Correspondents`) is every domain in the state database's send ledger
(the To of each message sent) and in the `from`/`to`/`cc`/`bcc` of the notes in
Needs_Action/ and Done/ (email notes and sent drafts). Known domains are only ever a reason to
hold, never to let through: a stranger who writes from a look-alike adds its domain to the
set, and the real one is still there to be mistaken for. The ledger is asked at every check
(one indexed query); the two folders are re-listed at most every FOLDER_REFRESH_S, reading only
notes not seen before (a note is a few hundred bytes of frontmatter; the first pass over a
10,000-note vault runs on a background thread while the mail server waits for work).

`checked_recipients` is what the send path calls for an approved draft: the draft's To, Cc
and Bcc parsed (h0.mail.compose.addresses) with the domains its note confirms (`confirm_domains:`),
and a look-alike that is not confirmed held with a warning naming both domains. `new_domains`
tells reports which recipients are the first message to a domain.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import threading
import time
import unicodedata
from collections.abc import Iterable
from email.headerregistry import Address
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loguru import logger

from h0.errors import H0Error, Refusal, refuse
from h0.mail.compose.addresses import parse_recipients
from h0.mail.deception._confusables import TABLE
from h0.state import StateDB
from h0.vault.layout import DONE, NEEDS_ACTION
from h0.vault.values import addresses

if TYPE_CHECKING:
    from h0.mail.deception.known import Known

FOLDER_REFRESH_S = 10.0
HEAD_BYTES = 16 * 1024  # an email note's frontmatter fits; addresses further down are not read
_TARGETS = dict(line.split("\t", 1) for line in TABLE.splitlines())
# Cyrillic palochka: UTS #39 maps it to i, but in a lower-case domain it is a dotless stroke that
# passes for l (аррӏе.com, the best-known homograph of apple.com).
_TARGETS["\u04cf"] = "l"
_KEYS = re.compile(r"^(?:from|to|cc|bcc|sender|reply_to)\s*:(.*)$", re.IGNORECASE)
_DOMAIN = re.compile(r"@([^\s@<>()\[\]\"',;:\\]+)")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


# ------------------------------------------------------------------------------ what a domain looks like


def ascii_domain(domain: str) -> str:
    """The domain as it travels (punycode for other scripts), lower case; the text itself if it cannot be."""
    text = domain.strip().rstrip(".").lower()
    try:
        return text.encode("idna").decode("ascii").lower() if not text.isascii() else text
    except UnicodeError:
        return text


def unicode_domain(domain: str) -> str:
    """The domain as it looks: each punycode label (`xn--…`) read as the Unicode it stands for."""
    labels = []
    for label in domain.strip().rstrip(".").lower().split("."):
        if label.startswith("xn--"):
            try:
                label = label[4:].encode("ascii").decode("punycode")
            except (UnicodeError, ValueError):
                pass
        labels.append(label)
    return ".".join(labels)


def skeleton(domain: str) -> str:
    """What `domain` looks like: confusable characters mapped to their prototype, accents dropped, case folded."""
    # Asked of the same few domains for every email of a batch: remembered, those a domain can be (≤ 253).
    return _remembered_skeleton(domain) if len(domain) <= 255 else _skeleton(domain)


@functools.lru_cache(maxsize=4096)
def _remembered_skeleton(domain: str) -> str:
    return _skeleton(domain)


def _skeleton(domain: str) -> str:
    text = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", unicode_domain(domain)).casefold())
    text = unicodedata.normalize("NFD", "".join(_TARGETS.get(ch, ch) for ch in text))
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Mn")
    return "".join(_TARGETS.get(ch, ch) for ch in text.casefold())


def shown(domain: str) -> str:
    """'bаnk.com (xn--bnk-6cd.com)' for a domain in another script, else the domain."""
    looks, travels = unicode_domain(domain), ascii_domain(domain)
    return f"{looks} ({travels})" if looks != travels else travels


# ------------------------------------------------------------------------------ whom the vault knows


class Correspondents:
    """The domains one vault has corresponded with (see the module), kept fresh incrementally. Thread-safe."""

    def __init__(self, vault_root: Path, state: StateDB | None, *, warm: bool = False) -> None:
        self.root = Path(vault_root)
        self.state = state
        self._lock = threading.Lock()
        self._domains: set[str] = set()  # ascii forms
        self._by_skeleton: dict[str, set[str]] = {}
        self._ledger_after = 0.0
        self._seen: dict[str, set[str]] = {NEEDS_ACTION: set(), DONE: set()}
        self._folder_mtime: dict[str, int] = {}
        self._scanned_at = float("-inf")
        if warm:
            threading.Thread(target=self._warm, name="h0-correspondents", daemon=True).start()

    def _warm(self) -> None:
        try:
            self.known()
        except Exception:  # noqa: BLE001 - a failed warm-up is redone by the first check
            logger.opt(exception=True).debug("reading the domains corresponded with failed; the first send retries")

    def known(self) -> dict[str, set[str]]:
        """{skeleton: {ascii domain, …}} of every domain corresponded with, as of now."""
        with self._lock:
            self._read_ledger()
            if time.monotonic() - self._scanned_at >= FOLDER_REFRESH_S:
                for folder in (NEEDS_ACTION, DONE):
                    self._scan(folder)
                self._scanned_at = time.monotonic()
            return self._by_skeleton

    def domains(self) -> set[str]:
        self.known()
        return self._domains

    def _add(self, domains: Iterable[str]) -> None:
        for domain in domains:
            ascii_form = ascii_domain(domain)
            if ascii_form and "." in ascii_form and ascii_form not in self._domains:
                self._domains.add(ascii_form)
                self._by_skeleton.setdefault(skeleton(ascii_form), set()).add(ascii_form)

    def _read_ledger(self) -> None:
        if self.state is None:
            return
        try:
            rows = self.state.sent_recipients(self._ledger_after)
        except H0Error:
            return
        for sent_epoch, recipients in rows:
            self._add(addr.rpartition("@")[2] for addr in addresses(recipients) if "@" in addr)
            self._ledger_after = max(self._ledger_after, sent_epoch or 0.0)

    def _scan(self, folder: str) -> None:
        """Read the addresses of the notes of `folder` not seen before (only if the folder changed)."""
        path = self.root / folder
        try:
            mtime = os.stat(path).st_mtime_ns
            if self._folder_mtime.get(folder) == mtime:
                return
            names = [name for name in os.listdir(path) if name.endswith(".md")]
        except OSError:
            return
        seen = self._seen[folder]
        for name in names:
            if name not in seen:
                seen.add(name)
                self._add(_note_domains(path / name))
        self._folder_mtime[folder] = mtime


def _note_domains(path: Path) -> list[str]:
    """The domains in a note's from/to/cc/bcc lines (and their list items), read from its first bytes.

    Only a regular file is read (never a FIFO or a device named `.md`), without following a link.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        head = os.read(fd, HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return []
    finally:
        os.close(fd)
    if not head.startswith("---"):
        return []
    end = head.find("\n---", 3)
    lines = head[: end if end != -1 else len(head)].splitlines()
    found: list[str] = []
    in_key = False
    for line in lines[1:]:
        match = _KEYS.match(line)
        if match:
            in_key = True
            found += _DOMAIN.findall(match.group(1))
        elif in_key and line[:1] in (" ", "\t", "-"):
            found += _DOMAIN.findall(line)
        else:
            in_key = False
    return [domain.strip(".>") for domain in found]


# ------------------------------------------------------------------------------ the send path


def confirmed_domains(value: Any) -> frozenset[str]:
    """A note's `confirm_domains:` (a domain or a list of them) as ascii domains."""
    items = [value] if isinstance(value, str) else value if isinstance(value, (list, tuple)) else []
    return frozenset(ascii_domain(str(item).strip().lstrip("@")) for item in items if str(item).strip())


def checked_recipients(
    draft: Any, known: Correspondents, owner: Known | None = None
) -> tuple[list[Address], list[Address], list[Address]]:
    """A draft's To, Cc and Bcc, parsed for sending with the domains its note confirms; a look-alike of
    a domain corresponded with (or one letter away from a domain the owner wrote to: `owner`, see
    `lookalikes`), not confirmed, is held (h0.mail.sending.hold) naming both."""
    confirmed = confirmed_domains(getattr(draft, "confirm_domains", ()))
    lists = tuple(
        parse_recipients(name, list(value), confirmed_domains=confirmed)
        for name, value in (("to", draft.to), ("cc", draft.cc), ("bcc", draft.bcc))
    )
    clashes = lookalikes((a.domain for addresses in lists for a in addresses), known, confirmed, owner)
    if clashes:
        domain, like = clashes[0]
        others = f" (and {len(clashes) - 1} more look-alike domain(s))" if len(clashes) > 1 else ""
        raise refuse(
            Refusal.LOOKALIKE_DOMAIN,
            {"shown": shown(domain), "shown_like": shown(like), "others": others, "domain_as_written": domain},
            path=getattr(draft, "path", None),
            domain=ascii_domain(domain),
            looks_like=like,
            lookalikes=[[d, k] for d, k in clashes],
        )
    return lists  # type: ignore[return-value]


def lookalikes(
    domains: Iterable[str],
    known: Correspondents,
    confirmed: frozenset[str] = frozenset(),
    owner: Known | None = None,
) -> list[tuple[str, str]]:
    """(domain, the known domain it looks like) for each domain confusable with a different known one.

    With `owner` (whom the owner knows: h0.mail.deception.known), a domain the owner writes to is never held —
    an attacker's look-alike in the inbox must not make the real client look like the impostor — and a
    domain one letter away from one the owner knows is held too (`Known.resembles`)."""
    by_skeleton = known.known()
    found = []
    for domain in dict.fromkeys(ascii_domain(d) for d in domains):
        if domain in confirmed or (owner is not None and owner.knows_domain(domain)):
            continue
        like = sorted(by_skeleton.get(skeleton(domain), set()) - {domain})
        resembles = owner.resembles(domain) if owner is not None and not like else None
        if like or resembles is not None:
            found.append((domain, like[0] if like else resembles.known if resembles is not None else ""))
    return found


def new_domains(addresses: Iterable[str], known: Correspondents) -> list[str]:
    """The domains among `addresses` this vault has never corresponded with (first messages), in order."""
    domains = known.domains()
    fresh = []
    for address in addresses:
        domain = ascii_domain(address.rpartition("@")[2]) if "@" in address else ""
        if domain and domain not in domains and domain not in fresh:
            fresh.append(domain)
    return fresh
