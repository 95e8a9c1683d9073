"""The rules briefing's answers on the world, scored against the notes a good reply needs.

For every person's email that asks something, the reply's context is assembled as H0 drafts it (the
persona's vault, read by a scan: `Drafting.context_for_email`), and the briefing's answers are asked of
`h0.drafting.briefing.answers`, in the sender's language as their People note says it. The notes the
briefing cites under the email's questions are compared with the notes the truth says a good reply needs
(`Truth.notes`): precision is the share of cited notes that are needed, recall the share of needed notes
cited (the sender's own People note, in every label for the greeting and the voice, counts when it is cited
and is not missed when it is not). The labels are coarse — a note is "needed" by the message, not by one question, and a meeting note
holding the same fact as the project note counts as not needed — so the figure is a floor, and `note`
says how many of the needed notes the context held at all (the briefing cites only what the context has).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from email.utils import parseaddr
from pathlib import Path

from h0.drafting import Drafting, VaultKnowledge
from h0.drafting.briefing import answers
from h0.mail.incoming.email_views import email_full
from h0.vault.disclosure import Disclosure
from h0.vault.model import note_facts
from scripts.world.judge import Read, Score


def judge_briefings(reads: Sequence[Read], vault: Path) -> Score:
    """The "briefing notes" judgment on the person mail of `reads` that asks something (see the module)."""
    score = Score("briefing notes")
    needed = held = 0
    with tempfile.TemporaryDirectory(prefix="h0-world-briefing-") as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(vault, root)
        gate = Disclosure.for_vault(root)
        drafting = Drafting(root, disclosure=gate, knowledge=VaultKnowledge(root, gate))
        for read in reads:
            if read.truth.sent or read.truth.category != "person" or not read.truth.questions:
                continue
            full = email_full(read.message.fetched)
            context = drafting.context_for_email(
                note_facts("", {"from": full.sender, "subject": full.subject}), full.body
            )
            language = drafting.person_language(parseaddr(full.sender)[1].lower())
            found = answers(context, full.body, full.subject, language)
            cited = {line.path for answer in found for line in answer.lines if line.path}
            truth = set(read.truth.notes)
            answering = {note for note in truth if not note.startswith("People/")}
            needed += len(answering)
            held += len(answering & {item.path for item in context.items if item.path})
            for note in sorted(cited | truth):
                if note.startswith("People/") and note not in cited:
                    continue  # the sender's People note is needed for the greeting and the voice, not an answer
                score.count(note in truth, note in cited, f"{read.truth.name}: {note}")
    score.note = f"needed notes (not People) in the context: {held} of {needed}"
    return score
