"""What an MCP client of the mail server may see of the mailbox: the disclosure gate (h0.vault.disclosure)
asked of each message with the vault index (h0.mcp.live_index) — as the vault server answers for notes.

An email is private when the vault says so: its note (in any folder) is private by its mark, its tag or its
folder, it is from or to a private person (only private People notes name the address), or a note private by
itself shares its thread (the thread keys: the provider's thread id, the message's
own id; h0.vault.disclosure.thread_keys) — so a stranger's new message in a private thread, which has no note
yet, is private too. The mail server knows a message by the provider's ids; the index knows which of those
keys private notes hold (one look-up a call, never a walk of the vault). A private email is answered as the
vault server answers a private note: never listed (list_emails, list_new_emails leave it out, without a
count), refused by name (get_email, create_draft replying to it: permission_denied, `details.reason`
"private"), so no answer carries its subject, sender, snippet or body. When the index cannot say (not built
yet, unusable), nothing is shown: a retryable error, never a guess.

The daemon's own mail server, whose one client is H0 on this machine, sees everything: ingest writes a private
thread's new message as a note like any other (then triages it with the local rules alone).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from h0.errors import InternalError, NotSupported, PermissionDenied
from h0.mail.agent_drafts import email_note
from h0.mail.models import EmailFull, EmailList, EmailSummary, NewEmails
from h0.vault.disclosure import Disclosure, thread_keys
from h0.vault.index import VaultIndex
from h0.vault.private_threads import IndexThreads
from h0.vault.values import addresses

INDEX_WAIT_S = 60.0  # a first build of a large vault takes a few seconds; the vault server waits as long
WHY = "it belongs to a private note or conversation in the vault (its mark, its tag, its folder or its thread)"


def email_keys(email: EmailSummary | EmailFull) -> frozenset[str]:
    """The thread keys of a provider's message: the fields its note carries (ingest writes the provider's ids)."""
    return thread_keys("", {"thread_id": email.thread_id, "message_id": email.id})


class MailView:
    def __init__(
        self, gates: Callable[[], Disclosure], *, trusted: bool, index: Callable[[float], VaultIndex | None]
    ) -> None:
        self.gates = gates  # the gate of the private folders as they are now (h0.mcp.gate_now.GateNow)
        self.trusted = trusted  # the daemon's own server: everything is shown
        self.wait = index  # the live index once built, waited for up to the given seconds; None: not available

    def private_ids(self, emails: Sequence[EmailSummary | EmailFull]) -> set[str]:
        """The ids of those of `emails` an MCP client may not see (one index look-up for all of them)."""
        if self.trusted or not emails:
            return set()
        keyed = [(email.id, email_keys(email)) for email in emails]
        index, found = self._judged(frozenset().union(*(keys for _, keys in keyed)))
        gate = index.gate  # the private folders of now, knowing the index's private people
        hidden = set()
        for (message_id, keys), email in zip(keyed, emails):
            named = [email.sender, *((email.to, email.cc) if isinstance(email, EmailFull) else ())]
            if gate.message_private(keys, (a for value in named for a in addresses(value)), found):
                hidden.add(message_id)
        return hidden

    def _judged(self, keys: frozenset[str]) -> tuple[VaultIndex, frozenset[str]]:
        """The live index, judging by the private folders of now (`.h0/private-folders` as it is at this call),
        and those of `keys` private notes hold, as it says; when it cannot say, nothing is shown."""
        index = self.wait(INDEX_WAIT_S)
        if index is not None:
            index.use_disclosure(self.gates())
        found = IndexThreads(index).private_keys(keys) if index is not None else None
        if found is None:
            raise InternalError(
                "H0 cannot tell yet which emails are private (the vault index is not available), so none is shown; "
                "ask again in a few seconds.",
                retryable=True,
                retry_after=5,
            )
        assert index is not None  # found is None without one
        return index, found

    def listed(self, found: EmailList) -> EmailList:
        """list_emails' answer without the private emails (not counted: the vault's list_notes does the same)."""
        hidden = self.private_ids(found.emails)
        return EmailList(emails=[e for e in found.emails if e.id not in hidden]) if hidden else found

    def new(self, batch: NewEmails) -> NewEmails:
        """list_new_emails' answer without the private emails, received or sent."""
        hidden = self.private_ids([*batch.emails, *batch.sent])
        if not hidden:
            return batch
        return batch.model_copy(
            update={
                "emails": [e for e in batch.emails if e.id not in hidden],
                "sent": [e for e in batch.sent if e.id not in hidden],
            }
        )

    def shown(self, email: EmailFull) -> EmailFull:
        """get_email's answer, or permission_denied naming only the id the client gave."""
        if self.private_ids([email]):
            raise _refusal(email.id)
        return email

    def may_answer(self, message_id: str, read: Callable[[str], EmailFull], vault: Path, backend: str) -> None:
        """Refuse create_draft replying to a private email before anything is written (its subject would be
        the draft's, in the answer). A backend that reads no mail knows the email by its note in the vault."""
        if self.trusted:
            return
        try:
            email = read(message_id)
        except NotSupported:  # no mailbox: the email's note (its path, its thread) holds its keys
            path, thread, _ = email_note(vault, message_id, backend)
            keys = thread_keys(path, {"type": "email", "thread_id": thread, "message_id": message_id})
            index, found = self._judged(keys)
            if index.gate.keys_private(keys, found):
                raise _refusal(message_id) from None
            return
        self.shown(email)


def _refusal(message_id: str) -> PermissionDenied:
    return PermissionDenied(
        f"Email {message_id} is private: {WHY}. H0 never shows it to an MCP client, nor drafts a reply to it for one; "
        "only its owner can share it, in Obsidian.",
        message_id=message_id,
        reason="private",
    )
